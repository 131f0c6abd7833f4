package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

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

// readmeQuestion is the README's `bot question` command line, read as
// readmeCommand reads every README command, examples/bot.yaml swapped
// for cfg.
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
	return readmeCommand(t, string(b), "question", cfg)
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

// TestQuestionQuickStart runs the README's question as a reader would:
// `bot serve` and the stand-in `bot backend` on examples/bot.yaml (moved
// to free loopback ports, with questions among backend.features), then
// the README's `bot question`. The stand-in learns the question, and the
// bot's card shows it in the agent's words (quoted), with its choices and
// Answer…. kevin answers it on his decision page: the stand-in prints the
// one answer, the card is edited to it and its thread says it, and ada,
// answering after him from a page she opened before, is told he answered
// first. A question asked restricted
// shows none of its words or choices anywhere in the bot's output, and
// its card offers Show question instead of Answer….
func TestQuestionQuickStart(t *testing.T) {
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	listen, backendAddr := freeAddr(t), freeAddr(t)
	cfg := quickStartConfig(t, root, dir, listen, backendAddr)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	edited := string(b)
	for _, r := range [][2]string{
		{"features: [approvers]", "features: [approvers, questions]"},
		// The page takes answers where it may approve.
		{"email_decisions: deny", "email_decisions: approve"},
	} {
		if strings.Count(edited, r[0]) != 1 {
			t.Fatalf("examples/bot.yaml has no %s line to edit", r[0])
		}
		edited = strings.Replace(edited, r[0], r[1], 1)
	}
	if err := os.WriteFile(cfg, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	secrets := readmeSecrets(t, root, string(readme))
	bot := startIn(t, root, secrets, readmeCommand(t, string(readme), "serve", cfg))
	waitOutput(t, bot.stderr, `"msg":"bot serving"`, bot)
	stand := startIn(t, root, secrets, readmeCommand(t, string(readme), "backend", cfg))
	waitOutput(t, stand.stdout, "stand-in job backend at http://"+backendAddr, stand)

	ask := func(args []string) string {
		t.Helper()
		out, err := inShell(root, secrets, args).CombinedOutput()
		m := regexp.MustCompile(`(?m)^asking question (q-cli\.\S+) `).FindStringSubmatch(string(out))
		if err != nil || m == nil || !strings.Contains(string(out), "202 Accepted") {
			t.Fatalf("bot %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return m[1]
	}
	card := func(id string) string {
		t.Helper()
		var body string
		pollUntil(t, 20*time.Second, "the card of "+id+" on the log surface", func() bool {
			for _, e := range logEntries(bot.stdout.String()) {
				if strings.HasPrefix(e.header, "card log-") && strings.Contains(e.header, "(question "+id+", revision 1)") {
					body = e.body
					return true
				}
			}
			return false
		}, bot.stdout.String)
		return body
	}

	args := readmeQuestion(t, cfg)
	text := args[len(args)-1]
	id := ask(args)
	waitOutput(t, stand.stdout, "question "+id+" revision 1 asked (2 choices, free text true, restricted false)\n", stand)
	shown := card(id)
	for _, want := range []string{"Waiting for an answer", "> " + text, "1. acct-1 (Ana Ruiz, personal)", "2. acct-2 (Ruiz Trading Ltd)", "[Answer…]"} {
		if !strings.Contains(shown, want) {
			t.Errorf("the card of %s does not show %q:\n%s", id, want, shown)
		}
	}
	if strings.Contains(text, "patient") {
		t.Fatal("the README's question shares words with the restricted one below")
	}

	// kevin answers on the page his link opens: the second choice. The
	// stand-in prints it once, bound to the revision. ada, whose page was
	// open before, answers after him: she is told kevin answered first,
	// and her answer reaches no one.
	// open is user's page of the card shown, and the fields of its form
	// that answers with the choice given (or, -1, in words).
	open := func(shown, user string, choice int) (string, url.Values) {
		t.Helper()
		m := regexp.MustCompile(`(?m)^answer as ` + user + `: (http://\S+)$`).FindStringSubmatch(shown)
		if m == nil {
			t.Fatalf("the card has no link for %s:\n%s", user, shown)
		}
		resp, err := http.Get(m[1])
		if err != nil {
			t.Fatal(err)
		}
		page, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, f := range formPattern.FindAllStringSubmatch(string(page), -1) {
			v := formFields(f[1])
			if choice < 0 && v.Get("action") == "answer_text" || v.Get("action") == "answer" && v.Get("choice") == strconv.Itoa(choice) {
				return m[1], v
			}
		}
		t.Fatalf("%s's page has no form for choice %d:\n%s", user, choice, page)
		return "", nil
	}
	post := func(link string, form url.Values) string {
		t.Helper()
		resp, err := http.PostForm(link, form)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(body)
	}
	adaLink, adaForm := open(shown, "user:ada", 0)
	post(open(shown, "user:kevin", 1))
	answered := fmt.Sprintf("answered %s revision 1 by user:kevin via email (kevin@acme.example): choice 2 %q\n", id, "acct-2 (Ruiz Trading Ltd)")
	pollUntil(t, 20*time.Second, "the stand-in printing the answer", func() bool {
		return strings.Contains(stand.stdout.String(), answered)
	}, func() string { return stand.stdout.String() + bot.stderr.String() })
	pollUntil(t, 20*time.Second, "the card edited to the answer and the answer in its thread", func() bool {
		edited, replied := false, false
		for _, e := range logEntries(bot.stdout.String()) {
			switch {
			case strings.HasSuffix(e.header, " edited (question "+id+")") && strings.Contains(e.body, "Answered by user:kevin") &&
				strings.Contains(e.body, "acct-2 (Ruiz Trading Ltd)"):
				edited = true
			case strings.HasPrefix(e.header, "reply in the thread of ") && strings.Contains(e.header, id) &&
				strings.Contains(e.body, "user:kevin answered: acct-2 (Ruiz Trading Ltd)"):
				replied = true
			}
		}
		return edited && replied
	}, bot.stdout.String)
	if late := post(adaLink, adaForm); !strings.Contains(late, "user:kevin") {
		t.Errorf("ada's answer after kevin's is not told who answered:\n%s", late)
	}

	// Words as a stranger may craft them reach the job as written (the
	// stand-in's own tests hold that); the bot's card, its thread and the
	// stand-in's line show them redacted, never the secret.
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	words := ask([]string{"question", "--config", cfg, "--free-text", "Anything to add to the refund note?"})
	link, form := open(card(words), "user:kevin", -1)
	form.Set("words", "add <!channel> @everyone and GITHUB_TOKEN="+token+" to the note")
	post(link, form)
	pollUntil(t, 20*time.Second, "the stand-in printing the answer in words", func() bool {
		return strings.Contains(stand.stdout.String(), "answered "+words+" revision 1 by user:kevin via email")
	}, func() string { return stand.stdout.String() + bot.stderr.String() })
	pollUntil(t, 20*time.Second, "the answer in words in the thread", func() bool {
		return strings.Contains(bot.stdout.String(), "user:kevin answered: add ")
	}, bot.stdout.String)
	for name, out := range map[string]string{"the bot's output": bot.stdout.String() + bot.stderr.String(), "the stand-in's": stand.stdout.String()} {
		if strings.Contains(out, token) {
			t.Errorf("%s shows the answer's secret:\n%s", name, out)
		}
	}

	const secretWords = "Should I forward the diagnosis of patient 4471 to Dr. Lee?"
	private := ask([]string{"question", "--config", cfg, "--restricted", "--choice", "Forward it", "--choice", "Keep it", secretWords})
	waitOutput(t, stand.stdout, "question "+private+" revision 1 asked (2 choices, free text false, restricted true)\n", stand)
	shown = card(private)
	if !strings.Contains(shown, "[Show question]") || strings.Contains(shown, "[Answer…]") {
		t.Errorf("the restricted card of %s offers no Show question, or offers Answer…:\n%s", private, shown)
	}
	for _, leak := range []string{"patient 4471", "Forward it", "Keep it"} {
		if strings.Contains(bot.stdout.String(), leak) || strings.Contains(bot.stderr.String(), leak) {
			t.Errorf("the restricted question's %q reached the bot's shared output:\n%s", leak, shown)
		}
	}
	for _, p := range []*botProc{stand, bot} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("%s: exit after SIGTERM: %v\n%s", strings.Join(p.cmd.Args, " "), err, p.stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no exit after SIGTERM\n%s", strings.Join(p.cmd.Args, " "), p.stderr.String())
		}
	}
	if n := strings.Count(stand.stdout.String(), "answered "+id); n != 1 {
		t.Errorf("the stand-in recorded %d answers to %s, want kevin's one:\n%s", n, id, stand.stdout.String())
	}
	t.Logf("the bot printed:\n%s", bot.stdout.String())
}
