package slack_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/internal/refusal/refusaltest"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// TestBadRequestsAreRefusedBeforeParsing posts what Slack never sends to
// the real handler: each gets a clear answer, and nothing reaches Slack
// or the backend.
func TestBadRequestsAreRefusedBeforeParsing(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	approve := button(t, h.card(t, "a-merge1", "C0APPROVALS", 1), templates.ActionApprove)
	click := interaction(h.clickPayload("U0KEVIN", "C0APPROVALS", approve))
	// One valid click, whose exact bytes are then replayed.
	now := time.Now().Unix()
	if status, _ := h.send(t, signedRequest{path: "/slack/interactions", body: click, ts: now}); status != 200 {
		t.Fatalf("valid click: %d", status)
	}
	h.replaced(t, "C0APPROVALS", h.cardTS("C0APPROVALS", approve), "Recorded: user:kevin's approval is being sent")
	before := len(h.slack.Messages())

	tampered := []byte(strings.Replace(string(click), "U0KEVIN", "U0ADA", 1))
	huge := append([]byte("payload="), make([]byte, 1<<20)...)
	cases := []struct {
		name   string
		req    signedRequest
		status int
		want   string
	}{
		{"unsigned", signedRequest{path: "/slack/interactions", body: click, noSign: true}, 401, "not signed by Slack"},
		{"stale (6 minutes)", signedRequest{path: "/slack/interactions", body: click, ts: now - 360}, 401, "not signed by Slack"},
		{"from the future", signedRequest{path: "/slack/interactions", body: click, ts: now + 360}, 401, "not signed by Slack"},
		{"replayed with a bad signature", signedRequest{path: "/slack/interactions", body: click, ts: now,
			sig: "v0=" + strings.Repeat("ab", 32)}, 401, "not signed by Slack"},
		{"signature of another body", signedRequest{path: "/slack/interactions", body: tampered, ts: now,
			sig: sign(signingSecret, now, click)}, 401, "not signed by Slack"},
		{"signed with another secret", signedRequest{path: "/slack/interactions", body: click,
			sig: sign("not-the-secret", time.Now().Unix(), click)}, 401, "not signed by Slack"},
		{"malformed signature", signedRequest{path: "/slack/interactions", body: click, sig: "v0=zz"}, 401, "not signed by Slack"},
		{"replayed exactly", signedRequest{path: "/slack/interactions", body: click, ts: now}, 401, "sent before"},
		{"over 1 MiB", signedRequest{path: "/slack/interactions", body: huge}, 413, "over 1 MiB"},
		{"not a form", signedRequest{path: "/slack/interactions", body: []byte(`{"payload":1}`), ctype: "application/json"}, 415, "want application/x-www-form-urlencoded"},
		{"malformed payload JSON", signedRequest{path: "/slack/interactions", body: []byte(url.Values{"payload": {`{"type":"block_actions",`}}.Encode())}, 400, "not an interaction in JSON"},
		{"no payload", signedRequest{path: "/slack/interactions", body: []byte("a=b")}, 400, "no payload"},
		{"unsigned command", signedRequest{path: "/slack/commands", body: []byte("command=%2Fapprovals"), noSign: true}, 401, "not signed by Slack"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := h.send(t, c.req)
			if status != c.status || !strings.Contains(body, c.want) {
				t.Fatalf("answered %d %q, want %d %q", status, body, c.status, c.want)
			}
		})
	}
	// Close waits for all work started after an ack, and a handler starts
	// its work before it answers: what any of these requests set off has
	// ended by now.
	h.adapter.Close()
	if after := len(h.slack.Messages()); after != before {
		t.Fatalf("refused requests made Slack calls: %+v", h.slack.Messages()[before:])
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Actor != "user:kevin" {
		t.Fatalf("decisions %+v, want only the one valid click", got)
	}
}

func TestNoSigningSecretRefusesEverything(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{adapter: func(o *slackad.Options) {
		o.Credentials.SigningSecret = ""
	}})
	status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(map[string]any{"type": "block_actions"})})
	if status != http.StatusUnauthorized || !strings.Contains(body, "no Slack signing secret") {
		t.Fatalf("answered %d %q", status, body)
	}
}

func TestViewClosedAndUnknownTypesAreAckedQuietly(t *testing.T) {
	h := newHarness(t)
	for _, typ := range []string{"view_closed", "shortcut", "message_action"} {
		status, body := h.send(t, signedRequest{path: "/slack/interactions",
			body: interaction(map[string]any{"type": typ, "user": map[string]any{"id": "U0KEVIN"}})})
		if status != 200 || body != "" {
			t.Fatalf("%s answered %d %q", typ, status, body)
		}
	}
	h.adapter.Close() // waits for any work the acks started
	if n := len(h.slack.Messages()); n != 0 {
		t.Fatalf("%d messages", n)
	}
}

// slowService holds an argument look-up until released, to watch the
// work after an ack.
type slowService struct {
	*threads.Service // Receive: the bot's own receipts
	started          chan struct{}
	release          chan struct{}
}

// slowly is what slowService tells: the backend's own words.
func slowly(text string) threads.Clicked {
	return threads.Clicked{Reason: say.Reason{Kind: say.BackendSays, Message: text}}
}

func (s slowService) Click(ctx context.Context, req threads.ClickRequest) threads.Clicked {
	if req.Do != threads.ClickShow {
		return slowly("not a look-up")
	}
	select {
	case s.started <- struct{}{}:
	default:
	}
	select {
	case <-s.release:
		return slowly("the slow answer")
	case <-ctx.Done():
		return threads.Clicked{Retry: true, Reason: say.Reason{Kind: say.LookupFailed}}
	}
}

// TestCloseWaitsForWorkAfterAck: a click is acked at once; the look-up
// runs after it, and Close (which Run calls) waits for it to answer,
// while new clicks are refused.
func TestCloseWaitsForWorkAfterAck(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "big.json")
	h.drain(t)
	svc := slowService{Service: h.svc, started: make(chan struct{}, 1), release: make(chan struct{})}
	h.clicks.Use(svc)
	h.click(t, "U0KEVIN", "C0APPROVALS", "ab1|show_args|a-big1|1")
	<-svc.started
	closed := make(chan struct{})
	go func() {
		h.adapter.Close()
		close(closed)
	}()
	// New clicks refused: Close has begun, and the look-up it must wait
	// for is still held.
	threadstest.Eventually(t, "new clicks refused", func() bool {
		status, _ := h.send(t, signedRequest{path: "/slack/interactions",
			body: interaction(h.clickPayload("U0LEE", "C0APPROVALS", "ab1|show_args|a-big1|1"))})
		return status == http.StatusServiceUnavailable
	})
	select {
	case <-closed:
		t.Fatal("Close returned while a look-up was in flight")
	default:
	}
	close(svc.release)
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return after the work ended")
	}
	// Close returned after the work, answer included: it is there
	// already, without waiting for it.
	answered := false
	for _, m := range h.slack.Messages() {
		answered = answered || (m.User == "U0KEVIN" && strings.Contains(m.AllText(), "the slow answer"))
	}
	if !answered {
		t.Fatal("Close returned before the look-up's answer was sent")
	}
	h.told(t, "U0KEVIN", "the slow answer")
}

// TestRefusalsAreCountedNotEachLogged: a flood of unsigned requests from
// one source writes a line, not a line each, and the counter keeps every
// one; another reason gets its own line.
func TestRefusalsAreCountedNotEachLogged(t *testing.T) {
	reg := prometheus.NewRegistry()
	h := newHarnessWith(t, harnessOptions{adapter: func(o *slackad.Options) { o.Registry = reg }})
	const n = 1000
	for range n {
		if status, _ := h.send(t, signedRequest{path: "/slack/interactions", body: []byte("payload=%7B%7D"), noSign: true}); status != 401 {
			t.Fatalf("unsigned: %d, want 401", status)
		}
	}
	if status, _ := h.send(t, signedRequest{path: "/slack/interactions", body: []byte("{}"), ctype: "application/json"}); status != 415 {
		t.Fatalf("signed JSON: %d, want 415", status)
	}
	var lines []string
	for _, l := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(l, "slack: requests refused") {
			lines = append(lines, l)
		}
	}
	// A minute may turn during the flood: then a second line counts the
	// rest.
	if len(lines) < 2 || len(lines) > 3 {
		t.Fatalf("%d refusals wrote %d lines, want one per reason (a second if a minute passed):\n%s", n+1, len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], `reason="signature headers missing"`) || !strings.Contains(lines[0], "refused=1 ") ||
		!strings.Contains(lines[0], "source=127.0.0.1") {
		t.Errorf("the first line: %s, want the source, the reason and its count", lines[0])
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, `reason="wrong content type"`) || !strings.Contains(last, "refused=1 ") {
		t.Errorf("the last line: %s, want the other reason's own line", last)
	}
	if got := refusaltest.Count(t, reg, "bot_slack_requests_refused_total", "bad_signature"); got != n {
		t.Errorf("bad_signature counted %v, want %d", got, n)
	}
	if got := refusaltest.Count(t, reg, "bot_slack_requests_refused_total", "unsupported_media_type"); got != 1 {
		t.Errorf("unsupported_media_type counted %v, want 1", got)
	}
	if got := refusaltest.Count(t, reg, "bot_slack_requests_refused_total", "too_large"); got != 0 {
		t.Errorf("too_large counted %v, want a series at 0", got)
	}
}
