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

// readmeQuestion is the README's `bot question` command line, its
// continuation lines joined and its double quotes read as a shell does,
// examples/bot.yaml swapped for cfg.
func readmeQuestion(t *testing.T, cfg string) []string {
	t.Helper()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := strings.ReplaceAll(string(b), "\\\n", " ")
	const cmd = "go run ./cmd/bot question "
	for _, line := range strings.Split(readme, "\n") {
		if !strings.HasPrefix(line, cmd) {
			continue
		}
		var args []string
		var cur strings.Builder
		quoted, started := false, false
		for _, r := range line[len("go run ./cmd/bot "):] {
			switch {
			case r == '"':
				quoted, started = !quoted, true
			case r == ' ' && !quoted:
				if started {
					args = append(args, cur.String())
				}
				cur.Reset()
				started = false
			default:
				cur.WriteRune(r)
				started = true
			}
		}
		if started {
			args = append(args, cur.String())
		}
		if quoted {
			t.Fatalf("the README's command has an unclosed quote: %s", line)
		}
		for i, a := range args {
			if a == "examples/bot.yaml" {
				args[i] = cfg
				return args
			}
		}
		t.Fatalf("the README's command does not name examples/bot.yaml: %s", line)
	}
	t.Fatal("the README has no line that runs `go run ./cmd/bot question`")
	return nil
}

// The README's `bot question` asks the question it shows, with its
// choices and free text, through the stand-in.
func TestQuestionReadmeCommand(t *testing.T) {
	t.Parallel()
	b, err := standin.New(standin.Options{Secrets: [][]byte{[]byte("calls-secret-of-32-bytes-77b02d5f")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	sink := newEventSink(t)
	args := append(readmeQuestion(t, questionConfig(t, srv.URL)), "--url", sink.url)
	code, out, errOut := runBot(t, map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}, args...)
	if code != 0 {
		t.Fatalf("bot %q: exit %d\n%s%s", args, code, out, errOut)
	}
	sink.mu.Lock()
	defer sink.mu.Unlock()
	if len(sink.bodies) != 1 {
		t.Fatalf("the bot received %d events, want 1", len(sink.bodies))
	}
	ev, err := approval.Parse(sink.bodies[0])
	if err != nil {
		t.Fatal(err)
	}
	q := ev.Approval.Question
	if len(q.Choices) != 2 || !q.FreeText || !strings.Contains(q.Text, "Which one should I refund") {
		t.Errorf("asked %+v", q)
	}
	if st, _, _ := b.QuestionStatus(ev.Approval.ID); st != standin.QuestionPending {
		t.Errorf("the stand-in holds it as %s", st)
	}
}
