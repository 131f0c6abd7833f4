package discord_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/internal/refusal/refusaltest"
	"approvalsbot/templates"
)

// TestBadRequestsAreRefusedBeforeParsing posts to the real handler on a
// real listener: nothing that is not signed by Discord, now, and once,
// reaches the handler, and what is refused sends nothing anywhere.
func TestBadRequestsAreRefusedBeforeParsing(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	approve := button(t, h.card(t, "a-merge1", approvalTarget, 1), templates.ActionApprove)
	click := func() []byte {
		return h.discord.Payload(discordtest.Click{User: kevin, Channel: chApproval, CustomID: approve})
	}
	cases := []struct {
		name   string
		body   []byte
		at     time.Time
		edit   func(*http.Request)
		status int
	}{
		{"bad signature", click(), time.Now(), func(r *http.Request) {
			r.Header.Set("X-Signature-Ed25519", strings.Repeat("ab", 64))
		}, http.StatusUnauthorized},
		{"signature of another body", click(), time.Now(), func(r *http.Request) {
			other := click()
			r.Header.Set("X-Signature-Ed25519", h.discord.Sign(r.Header.Get("X-Signature-Timestamp"), other))
		}, http.StatusUnauthorized},
		{"no signature", click(), time.Now(), func(r *http.Request) { r.Header.Del("X-Signature-Ed25519") }, http.StatusUnauthorized},
		{"no timestamp", click(), time.Now(), func(r *http.Request) { r.Header.Del("X-Signature-Timestamp") }, http.StatusUnauthorized},
		{"signature not hex", click(), time.Now(), func(r *http.Request) { r.Header.Set("X-Signature-Ed25519", "zz") }, http.StatusUnauthorized},
		{"stale timestamp", click(), time.Now().Add(-6 * time.Minute), nil, http.StatusUnauthorized},
		{"timestamp from the future", click(), time.Now().Add(6 * time.Minute), nil, http.StatusUnauthorized},
		{"wrong content type", click(), time.Now(), func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, http.StatusUnsupportedMediaType},
		{"body over 1 MiB", bytes.Repeat([]byte(" "), 1<<20+1), time.Now(), nil, http.StatusRequestEntityTooLarge},
		{"signed, but not JSON", []byte("not json"), time.Now(), nil, http.StatusBadRequest},
		{"signed, but for another application", []byte(`{"id":"1","application_id":"1299999999999999999","type":1,"token":"t"}`), time.Now(), nil, http.StatusBadRequest},
		{"signed, but a type the bot does not take", []byte(`{"id":"1","application_id":"` + appID + `","type":9,"token":"t","user":{"id":"` + kevin + `"}}`), time.Now(), nil, http.StatusBadRequest},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := h.discord.Post(c.body, c.at, c.edit)
			if status != c.status {
				t.Fatalf("answered %d %q, want %d", status, body, c.status)
			}
		})
	}

	// Close waits for all work started after an answer, and the handler
	// starts its work before it answers: what any of these requests set
	// off has ended by now.
	h.adapter.Close()
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
	if n := len(h.discord.AllFollowups()); n != 0 {
		t.Fatalf("%d follow-ups for refused requests", n)
	}
	if !strings.Contains(h.logs.String(), "timestamp outside the 5-minute window") ||
		!strings.Contains(h.logs.String(), "signature does not match") {
		t.Errorf("refusals not logged:\n%s", h.logs.String())
	}
}

// TestRefusalsAreCountedNotEachLogged: a flood of unsigned requests from
// one source writes a line, not a line each, and the counter keeps every
// one; another reason gets its own line.
func TestRefusalsAreCountedNotEachLogged(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarnessWith(t, harnessOptions{adapter: func(o *discordad.Options) { o.Registry = reg }})
	const n = 1000
	unsigned := func(r *http.Request) { r.Header.Del("X-Signature-Ed25519") }
	for range n {
		if status, body := h.discord.Post([]byte(`{}`), time.Now(), unsigned); status != http.StatusUnauthorized {
			t.Fatalf("unsigned: %d %q, want 401", status, body)
		}
	}
	plain := func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }
	if status, body := h.discord.Post([]byte(`{}`), time.Now(), plain); status != http.StatusUnsupportedMediaType {
		t.Fatalf("signed text: %d %q, want 415", status, body)
	}
	var lines []string
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, "discord: requests refused") {
			lines = append(lines, l)
		}
	}
	// A minute may turn during the flood: then a second line counts the
	// rest.
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("%d refusals wrote %d lines, want one per reason (a second if a minute passed):\n%s", n+1, len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], `reason="signature headers missing or malformed"`) || !strings.Contains(lines[0], "refused=1 ") ||
		!strings.Contains(lines[0], "source=127.0.0.1") || !strings.Contains(lines[0], "path=/discord/interactions") {
		t.Errorf("the first line: %s, want the source, the reason, its count and the path", lines[0])
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `reason="wrong content type"`) || !strings.Contains(last, "refused=1 ") {
		t.Errorf("the last line: %s, want the other reason's own line", last)
	}
	for label, want := range map[string]float64{"bad_signature": n, "unsupported_media_type": 1, "too_large": 0, "unavailable": 0} {
		if got := refusaltest.Count(t, reg, "bot_discord_requests_refused_total", label); got != want {
			t.Errorf("bot_discord_requests_refused_total{reason=%q} = %v, want %v", label, got, want)
		}
	}
}

// TestExactReplayIsRefused sends the very same signed request twice.
func TestExactReplayIsRefused(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	body := h.discord.Payload(discordtest.Click{User: kevin, Channel: chApproval, CustomID: "ab1|launch|a-merge1|1"})
	ts := time.Now()
	var sig, stamp string
	status, _ := h.discord.Post(body, ts, func(r *http.Request) {
		sig, stamp = r.Header.Get("X-Signature-Ed25519"), r.Header.Get("X-Signature-Timestamp")
	})
	if status != http.StatusOK {
		t.Fatalf("first delivery answered %d", status)
	}
	status, _ = h.discord.Post(body, ts, func(r *http.Request) {
		r.Header.Set("X-Signature-Ed25519", sig)
		r.Header.Set("X-Signature-Timestamp", stamp)
	})
	if status != http.StatusUnauthorized {
		t.Fatalf("replay answered %d, want 401", status)
	}
}

func TestPingIsAnsweredWithPong(t *testing.T) {
	h := newHarness(t)
	res := h.discord.Ping()
	if !res.Answered() || res.Response.Type != discordgo.InteractionResponsePong {
		t.Fatalf("PING answered %+v (%s)", res.Response, res.Problem)
	}
	var raw map[string]any
	if err := json.Unmarshal([]byte(res.Body), &raw); err != nil || raw["type"] != float64(1) {
		t.Fatalf("PONG body %q", res.Body)
	}
}

func TestCommandsAreAnsweredEphemerally(t *testing.T) {
	h := newHarness(t)
	// Discord's clients do not run a command with subcommands bare, nor
	// one the bot did not register: either gets the help, at once.
	answeredAtOnce(t, h.discord.Command(kevin, chApproval, "approvals"), "/approvals list")
	answeredAtOnce(t, h.discord.Command(kevin, chApproval, "deploy"), "The bot knows no such command.")
	answeredAtOnce(t, h.discord.Subcommand(kevin, chApproval, "approvals", "launch"), "/approvals ladder")
}

func TestNoRouteWithoutPublicKey(t *testing.T) {
	h := newHarness(t)
	o := h.opts
	o.Credentials.PublicKey = ""
	ad := newAdapter(t, o, h.svc)
	mux := http.NewServeMux()
	ad.Routes(mux)
	req, _ := http.NewRequest(http.MethodPost, "/discord/interactions", nil)
	if _, pattern := mux.Handler(req); pattern != "" {
		t.Fatalf("a route %q without a public key: the gateway takes interactions then", pattern)
	}
}

// callLog refuses every call and keeps what was called.
type callLog struct {
	mu    sync.Mutex
	calls []string
}

func (c *callLog) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	c.mu.Lock()
	c.calls = append(c.calls, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
	return nil, errors.New("this test expects no answer")
}

func (c *callLog) Calls() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.calls...)
}

// TestRunWithPublicKeyWaitsForContext: with a public key, Run registers
// /approvals (one call, which it does not wait on for long: here it is
// refused, and Run goes on) and then only waits for its context, calling
// nothing else (a gateway session would start with GET /gateway). Under
// testing/synctest, once Run is durably blocked it has gone as far as it
// will before its context ends.
func TestRunWithPublicKeyWaitsForContext(t *testing.T) {
	h := newHarness(t)
	synctest.Test(t, func(t *testing.T) {
		calls := &callLog{}
		o := h.opts
		o.HTTPClient = &http.Client{Transport: calls}
		ad := newAdapter(t, o, h.svc)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- ad.Run(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Run returned before its context ended: %v", err)
		default:
		}
		if got := calls.Calls(); len(got) != 1 || got[0] != "PUT /api/v9/applications/"+appID+"/commands" {
			t.Fatalf("Run called %q, want only the registration of /approvals: interactions come over HTTP", got)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
