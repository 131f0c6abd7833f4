package slack_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/logsurface"
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

const (
	botToken      = "xoxb-test-0123456789"
	signingSecret = "signing-secret-0123456789"
	appToken      = "xapp-test-0123456789"
	callsSecret   = "calls-secret"
)

const testConfig = `
backend:
  url: "%s"
  events_secrets: ["events-secret"]
  calls_secrets: ["calls-secret"]
slack:
  bot_token: "%s"
  signing_secret: "%s"
%s  api_url: "%s"
tenants:
  acme:
    post: [slack:C0APPROVALS]
    audit: slack:C0AUDIT
    forbid_self_approval: true
    ladders:
      default:
        - after: 15m
          mention: [slack:U0KEVIN, slack:S0ONCALL]
        - after: 1h
          dm: [slack:U0LEE]
    tools:
      "payments.*": {deadline: 2h, post: [slack:C0FINANCE]}
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
      - {user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA}
      - {user: "user:lee", role: operator, content: true, slack: U0LEE}
      - {user: "user:nocontent", role: admin, content: false, slack: U0NOC}
      - {user: "user:vic", role: viewer, slack: U0VIC}
  quiet:
    post: [slack:C0QUIET]
`

type tenants struct{ cfg *config.Config }

func (t tenants) Tenant(id string) (*config.Tenant, bool) {
	tn, ok := t.cfg.Tenants[id]
	return tn, ok
}

// syncBuffer collects log lines from every goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// harness is the bot's Slack side for real: the adapter's HTTP endpoints
// on a loopback listener, threads on SQLite in a temporary directory, the
// real backend client calling the fake job backend, and slack-go calling
// the fake Slack.
type harness struct {
	slack   *slacktest.Server
	backend *backendtest.Fake
	svc     *threads.Service
	store   store.Store
	cfg     *config.Config
	adapter *slackad.Adapter
	opts    slackad.Options
	http    *httptest.Server
	clock   *clockwork.FakeClock
	logs    *syncBuffer
}

type harnessOptions struct {
	socket  bool // configure an app token: Socket Mode
	slack   slacktest.Options
	adapter func(*slackad.Options)
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, harnessOptions{}) }

func newHarnessWith(t *testing.T, ho harnessOptions) *harness {
	t.Helper()
	ho.slack.Token = botToken
	if ho.slack.AppToken == "" {
		ho.slack.AppToken = appToken
	}
	fake := slacktest.New(t, ho.slack)
	for _, c := range []string{"C0APPROVALS", "C0AUDIT", "C0FINANCE", "C0QUIET"} {
		fake.AddChannel(c, strings.ToLower(strings.TrimPrefix(c, "C0")), true)
	}
	for _, u := range []string{"U0KEVIN", "U0ADA", "U0LEE", "U0NOC", "U0VIC", "U0STRANGER"} {
		fake.AddUser(u)
	}
	back := backendtest.New(t, backendtest.Options{Secrets: [][]byte{[]byte(callsSecret)}})
	appLine := ""
	if ho.socket {
		appLine = fmt.Sprintf("  app_token: %q\n", appToken)
	}
	cfg, err := config.Parse("bot.yaml", fmt.Appendf(nil, testConfig, back.URL(), botToken, signingSecret, appLine, fake.APIURL()),
		func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	renderer, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clock := clockwork.NewFakeClockAt(time.Date(2026, 11, 29, 18, 0, 1, 0, time.UTC))
	o := slackad.Options{Config: cfg.Slack, Tenants: func() map[string]*config.Tenant { return cfg.Tenants },
		Renderer: renderer, Store: st, Logger: log, Now: clock.Now}
	if ho.adapter != nil {
		ho.adapter(&o)
	}
	ad, err := slackad.New(o)
	if err != nil {
		t.Fatal(err)
	}
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: back.URL(), Secrets: [][]byte{[]byte(callsSecret)},
		MaxElapsed: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := threads.New(threads.Options{Store: st, Tenants: tenants{cfg}, Clock: clock, Logger: log,
		Surfaces: map[string]threads.Surface{"slack": ad}, Backend: client.ForThreads(),
		Fallback: logsurface.New(logsurface.Options{Out: io.Discard, Renderer: renderer})})
	if err != nil {
		t.Fatal(err)
	}
	ad.Bind(svc)
	mux := http.NewServeMux()
	ad.Routes(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	h := &harness{slack: fake, backend: back, svc: svc, store: st, cfg: cfg, adapter: ad, opts: o, http: srv, clock: clock, logs: logs}
	t.Cleanup(func() {
		ad.Close()
		// No secret, token or response_url ever reaches a log line.
		out := logs.String()
		for _, secret := range []string{botToken, signingSecret, appToken, callsSecret, "/response/"} {
			if strings.Contains(out, secret) {
				t.Errorf("the logs carry %q:\n%s", secret, out)
			}
		}
	})
	return h
}

// ingest feeds a fixture event to threads, with the arguments behind it
// known to the fake job backend.
func (h *harness) ingest(t *testing.T, name string) *approval.Event {
	t.Helper()
	return h.ingestWith(t, name, nil)
}

// ingestWith feeds a fixture event changed by edit (the envelope as a
// map) to threads.
func (h *harness) ingestWith(t *testing.T, name string, edit func(ev map[string]any)) *approval.Event {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		if body, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if a := ev.Approval; a != nil {
		h.backend.AddApproval(a.ID, a.Revision, arguments(t, a.ID, a.Revision), a.Content.Restricted)
		h.backend.SetFunction(a.ID, a.Call.Function)
	}
	sum := sha256.Sum256(body)
	if _, err := h.svc.Ingest(context.Background(), threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatalf("ingest %s: %v", name, err)
	}
	return ev
}

// arguments reads the backend's truth for an approval's revision.
func arguments(t *testing.T, id string, revision int) json.RawMessage {
	t.Helper()
	name := id + ".json"
	if revision > 1 {
		name = fmt.Sprintf("%s.r%d.json", id, revision)
	}
	p, err := fixtures.Path("arguments", name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var fx struct {
		Arguments json.RawMessage `json:"arguments"`
	}
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	return fx.Arguments
}

func (h *harness) drain(t *testing.T) {
	t.Helper()
	if _, err := h.svc.DrainOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// card is the message of an approval's card of a revision in a channel,
// as it stands now, found through the post threads recorded.
func (h *harness) card(t *testing.T, approvalID, channel string, revision int) slacktest.Message {
	t.Helper()
	posts, err := h.store.PostList(context.Background(), approvalID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range posts {
		if p.Channel != channel || p.Revision != revision {
			continue
		}
		for _, m := range h.slack.Channel(channel) {
			if m.TS == p.Ref {
				return m
			}
		}
		t.Fatalf("post %+v names no message in %s", p, channel)
	}
	t.Fatalf("no card of %s revision %d in %s; posts %+v", approvalID, revision, channel, posts)
	return slacktest.Message{}
}

// button finds the card's button of a kind.
func button(t *testing.T, m slacktest.Message, kind templates.ActionKind) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b.ActionID, "ab1|"+string(kind)+"|") {
			return b.ActionID
		}
	}
	t.Fatalf("no %s button on %+v", kind, m.Buttons())
	return ""
}

// sign computes Slack's v0 signature of body at ts.
func sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

type signedRequest struct {
	path   string
	body   []byte
	ts     int64
	sig    string // "" signs correctly
	noSign bool
	ctype  string
}

func (h *harness) send(t *testing.T, r signedRequest) (int, string) {
	t.Helper()
	if r.ts == 0 {
		r.ts = time.Now().Unix()
	}
	req, err := http.NewRequest(http.MethodPost, h.http.URL+r.path, bytes.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", cmpOr(r.ctype, "application/x-www-form-urlencoded"))
	if !r.noSign {
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(r.ts, 10))
		req.Header.Set("X-Slack-Signature", cmpOr(r.sig, sign(signingSecret, r.ts, r.body)))
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if d := time.Since(start); d > time.Second {
		t.Errorf("%s answered after %s: Slack wants an ack within 3 s", r.path, d)
	}
	return res.StatusCode, string(b)
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// interaction is a payload form body.
func interaction(payload any) []byte {
	b, _ := json.Marshal(payload)
	return []byte(url.Values{"payload": {string(b)}}.Encode())
}

// clickPayload is a block_actions payload as Slack sends it for a button.
func (h *harness) clickPayload(user, channel, actionID string) map[string]any {
	return map[string]any{
		"type": "block_actions", "trigger_id": "trig-" + user, "api_app_id": "A0APP",
		"user":         map[string]any{"id": user},
		"channel":      map[string]any{"id": channel},
		"container":    map[string]any{"type": "message", "channel_id": channel, "message_ts": "1700000000.000001"},
		"response_url": h.slack.ResponseURL(channel, user),
		"actions": []any{map[string]any{"type": "button", "block_id": "b1", "action_id": actionID, "value": actionID,
			"action_ts": "1700000001.000001"}},
	}
}

func (h *harness) click(t *testing.T, user, channel, actionID string) {
	t.Helper()
	status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(h.clickPayload(user, channel, actionID))})
	if status != http.StatusOK || body != "" {
		t.Fatalf("click answered %d %q", status, body)
	}
}

// told waits for the answer to one person containing want, and returns it.
func (h *harness) told(t *testing.T, user, want string) slacktest.Message {
	t.Helper()
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got = got[:0]
		for _, m := range h.slack.Messages() {
			if (m.Method == "response_url" || m.Method == "chat.postEphemeral") && m.User == user {
				if m.Method == "response_url" && (m.ResponseType != "ephemeral" || m.ReplaceOriginal) {
					t.Fatalf("an answer to %s was not ephemeral: %+v", user, m)
				}
				if strings.Contains(m.AllText(), want) {
					return m
				}
				got = append(got, m.AllText())
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was not told %q; was told %q", user, want, got)
	return slacktest.Message{}
}

// eventually waits for cond.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s did not happen", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
