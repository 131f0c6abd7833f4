package main

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
)

// questionConfig is examples/bot.yaml with backend.url at backendURL.
func questionConfig(t *testing.T, backendURL string) string {
	t.Helper()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "examples", "bot.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const url = `url: "http://127.0.0.1:9090"`
	if !strings.Contains(string(b), url) {
		t.Fatalf("examples/bot.yaml has no %s", url)
	}
	p := filepath.Join(t.TempDir(), "bot.yaml")
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), url, `url: "`+backendURL+`"`, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// `bot question` tells the stand-in its question, then sends the bot a
// signed question.asked under a fresh id, with the events secret alone;
// it never prints the question's text.
func TestQuestionAsksThroughTheStandin(t *testing.T) {
	t.Parallel()
	b, err := standin.New(standin.Options{Secrets: [][]byte{[]byte("calls-secret-of-32-bytes-77b02d5f")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	cfg := questionConfig(t, srv.URL)
	sink := newEventSink(t)
	onlyEvents := map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}
	const text = "Which account should I refund? <!channel> \u202e"
	code, out, errOut := runBot(t, onlyEvents, "question", "--config", cfg, "--url", sink.url,
		"--choice", "acct-1", "--choice", "acct-2", "--free-text", "--restricted", "--private-chat", "--deadline", "2h", text)
	if code != 0 {
		t.Fatalf("bot question: exit %d\n%s%s", code, out, errOut)
	}
	sink.mu.Lock()
	bodies := sink.bodies
	sink.mu.Unlock()
	if len(bodies) != 1 {
		t.Fatalf("the bot received %d events, want 1", len(bodies))
	}
	ev, err := approval.Parse(bodies[0])
	if err != nil || ev.Type != approval.EventQuestionAsked {
		t.Fatalf("sent %s: %v", bodies[0], err)
	}
	a := ev.Approval
	q := a.Question
	if !strings.HasPrefix(a.ID, "q-cli.") || a.Revision != 1 || a.Tenant != "acme" || q.Text != text ||
		strings.Join(q.Choices, "|") != "acct-1|acct-2" || !q.FreeText || !a.Content.Restricted || !a.Job.PrivateChat ||
		a.Deadline == nil || a.Deadline.Sub(a.RequestedAt).Hours() != 2 {
		t.Errorf("asked %+v %+v", a, q)
	}
	if st, _, _ := b.QuestionStatus(a.ID); st != standin.QuestionPending {
		t.Errorf("the stand-in holds %s as %s", a.ID, st)
	}
	if strings.Contains(out, "refund") || !strings.Contains(out, "asking question "+a.ID) ||
		!strings.Contains(out, "2 choices, free text, restricted, in a private chat") {
		t.Errorf("printed:\n%s", out)
	}

	// A question the bot would refuse is not sent: a choice twice, or no
	// choices and no words.
	for _, args := range [][]string{{"--choice", "yes", "--choice", "yes", "Ship it?"}, {"Ship it?"}} {
		code, _, errOut := runBot(t, onlyEvents, append([]string{"question", "--config", cfg, "--url", sink.url}, args...)...)
		if code != 2 || !strings.Contains(errOut, "data.question") {
			t.Errorf("bot question %q: exit %d %s", args, code, errOut)
		}
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.bodies) != 1 {
		t.Errorf("%d events sent after refused questions", len(sink.bodies)-1)
	}
}
