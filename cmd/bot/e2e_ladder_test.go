package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
)

// The ladder end to end: the built binary with second-scale ladders, its
// cards on the log surface (stdout), its deadline's deny at a fake job
// backend.

// ladderApproval is the approval merge.json requests.
const ladderApproval = "a-merge1"

// ladderConfig writes a configuration that ticks every second and runs
// acme's default ladder on a second scale, with no slack or smtp section:
// cards, replies and the email step's mail all go to the log surface.
// step2Mention, when set, is mentioned by the second step too.
func ladderConfig(t *testing.T, dir, backendURL string, deadline time.Duration, step2Mention string) string {
	t.Helper()
	step2 := "        - after: 4s\n          email: [leads@acme.example]\n"
	if step2Mention != "" {
		step2 += "          mention: [" + step2Mention + "]\n"
	}
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store:
  driver: sqlite
  dsn: "file:%s"
tick: 1s
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    deadline: %s
    post: [slack:C0APPROVALS]
    ladders:
      default:
        - after: 2s
          mention: [slack:U0KEVIN]
%s    members:
      - user: user:kevin
        role: operator
        content: true
        slack: U0KEVIN
      - user: user:ada
        role: owner
        content: true
        slack: U0ADA
`, filepath.Join(dir, "bot.db"), backendURL, deadline, step2)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// ladderBackend is a fake job backend that knows merge.json's approval and
// checks the calls secret the bot is given (botEnv).
func ladderBackend(t *testing.T) *backendtest.Fake {
	t.Helper()
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	fake.AddApproval(ladderApproval, 1, readArguments(t, ladderApproval+".json"), false)
	fake.SetFunction(ladderApproval, "acme_github.merge")
	return fake
}

// requestedNow is merge.json moved to now, with no deadline of its own
// (the tenant's applies), and the instant it was requested.
func requestedNow(t *testing.T) ([]byte, time.Time) {
	t.Helper()
	body := eventsNow(t).eventWith(t, "merge.json", func(ev map[string]any) {
		delete(ev["data"].(map[string]any), "deadline")
	})
	return body, instant(t, body, "data", "requested_at")
}

// logEntry is one thing the log surface printed: a header line (card …,
// card … edited, reply in the thread of …) and its text.
type logEntry struct{ header, body string }

// logEntries splits the log surface's output at its rules.
func logEntries(out string) []logEntry {
	var es []logEntry
	for _, part := range strings.Split(out, "────────────────────────────────────────────────────────────\n") {
		header, body, _ := strings.Cut(part, "\n")
		if header == "" {
			continue
		}
		es = append(es, logEntry{header: header, body: body})
	}
	return es
}

// escalations are the thread replies of the approval that mention anyone.
func escalations(out string) []logEntry {
	var es []logEntry
	for _, e := range logEntries(out) {
		if strings.HasPrefix(e.header, "reply in the thread of ") &&
			strings.HasSuffix(e.header, "(approval "+ladderApproval+")") && strings.Contains(e.body, "@") {
			es = append(es, e)
		}
	}
	return es
}

// expiredEdits are the edits of the approval's card that show the deadline's deny.
func expiredEdits(out string) []logEntry {
	var es []logEntry
	for _, e := range logEntries(out) {
		if strings.HasSuffix(e.header, "edited (approval "+ladderApproval+")") &&
			strings.Contains(e.body, "Denied: nobody answered by the deadline") {
			es = append(es, e)
		}
	}
	return es
}

// pollUntil polls ok until it holds and returns when it first did; it
// fails the test when within has passed.
func pollUntil(t *testing.T, within time.Duration, what string, ok func() bool, dump func() string) time.Time {
	t.Helper()
	deadline := time.Now().Add(within)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v\n%s", what, within, dump())
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Now()
}

// checkDeadlineDeny checks that the backend received exactly one decision
// for the approval: the deadline's deny of revision 1, signed, answered 200.
func checkDeadlineDeny(t *testing.T, fake *backendtest.Fake) {
	t.Helper()
	got := fake.Decisions()
	for _, d := range got {
		if d.Request.Decision != "deny" {
			t.Errorf("the backend received %q: nothing automatic may approve: %+v", d.Request.Decision, d.Request)
		}
	}
	if len(got) != 1 {
		t.Fatalf("the backend received %d decisions, want the deadline's one: %+v", len(got), got)
	}
	d := got[0]
	r := d.Request
	if d.ApprovalID != ladderApproval || !d.SignatureOK || d.Status != http.StatusOK || d.IdempotencyKey == "" {
		t.Errorf("decision call %s: signature ok %v, answered %d %s, key %q", d.ApprovalID, d.SignatureOK, d.Status, d.Code, d.IdempotencyKey)
	}
	if r.Decision != "deny" || r.Actor != "system:deadline" || r.Via.Surface != "deadline" || r.Via.User != "" ||
		r.Comment != "nobody answered" || r.Revision != 1 || r.ArgsSHA256 != "" {
		t.Errorf("the deadline sent %+v, want deny of revision 1 by system:deadline via deadline, comment \"nobody answered\", no digest", r)
	}
	if status, actor := fake.Status(ladderApproval); status != "denied" || actor != "system:deadline" {
		t.Errorf("the backend holds %s by %s", status, actor)
	}
}

// checkEmailOnLogSurface checks what the email step did with no smtp
// section: the log surface printed the mail (as `bot check` says), once
// per address, and the outcome mail that followed the deadline's deny,
// once, both counted as delivered; nothing was logged as an error; and
// the bot is still healthy.
func checkEmailOnLogSurface(t *testing.T, bot *botProc) {
	t.Helper()
	printed := func(kind string) int {
		n := 0
		for _, e := range logEntries(bot.stdout.String()) {
			if strings.HasPrefix(e.header, "email to leads@acme.example ("+kind+", approval "+ladderApproval+")") {
				n++
			}
		}
		return n
	}
	delivered := `bot_deliveries_total{kind="email",result="ok",surface="email"} 2` + "\n"
	pollUntil(t, 10*time.Second, "the outcome mail, counted", func() bool {
		_, metrics := bot.get(t, "/metrics")
		return printed("outcome") > 0 && strings.Contains(metrics, delivered)
	}, bot.stdout.String)
	for _, kind := range []string{"step 2", "outcome"} {
		if n := printed(kind); n != 1 {
			t.Errorf("the log surface printed the %s email %d times, want once:\n%s", kind, n, bot.stdout.String())
		}
	}
	for _, line := range strings.Split(bot.stderr.String(), "\n") {
		var l struct{ Level string }
		if json.Unmarshal([]byte(line), &l) == nil && l.Level == "ERROR" {
			t.Errorf("error logged: %s", line)
		}
	}
	select {
	case err := <-bot.done:
		t.Fatalf("the bot exited: %v\n%s", err, bot.stderr.String())
	default:
	}
	if code, body := bot.get(t, "/healthz"); code != http.StatusOK {
		t.Fatalf("healthz: %d %s", code, body)
	}
	_, metrics := bot.get(t, "/metrics")
	if !strings.Contains(metrics, delivered) {
		t.Errorf("/metrics does not count two emails delivered (the step's and the outcome):\n%s", linesWith(metrics, "bot_deliveries_total{"))
	}
}

// linesWith keeps the lines of s that contain sub.
func linesWith(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// The ladder runs on its second-scale schedule: the card at once, the
// mention after 2s, the email after 4s (no SMTP: the log surface prints
// it), and at 6s the deadline denies at the backend and the card says so.
func TestLadderAndDeadlineEndToEnd(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := ladderBackend(t)
	bot := startBot(t, ladderConfig(t, dir, fake.URL(), 6*time.Second, ""))
	body, requested := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	out := bot.stdout.String
	pollUntil(t, 5*time.Second, "the card", func() bool {
		return strings.Contains(out(), "card log-1 for slack:C0APPROVALS (approval "+ladderApproval+", revision 1)")
	}, out)

	seen := pollUntil(t, 6*time.Second, "the escalation reply", func() bool { return len(escalations(out())) > 0 }, out)
	if at := seen.Sub(requested); at < 2*time.Second || at > 5*time.Second {
		t.Errorf("the escalation reply came %v after the request, want after 2s (its step) and by the next ticks", at)
	}
	esc := escalations(out())[0]
	if !strings.Contains(esc.header, "in the thread of log-1 for slack:C0APPROVALS") || !strings.Contains(esc.body, "@kevin") {
		t.Errorf("escalation %q %q: want a reply in the card's thread mentioning @kevin", esc.header, esc.body)
	}
	if len(fake.Decisions()) != 0 {
		t.Fatalf("a decision reached the backend before the deadline: %+v", fake.Decisions())
	}

	denied := pollUntil(t, 10*time.Second, "the deadline's deny at the backend", func() bool { return len(fake.Decisions()) > 0 }, out)
	if at := denied.Sub(requested); at < 6*time.Second {
		t.Errorf("the deadline denied %v after the request, before its 6s", at)
	}
	pollUntil(t, 5*time.Second, "the card edited to the deadline's deny", func() bool { return len(expiredEdits(out())) > 0 }, out)
	if e := expiredEdits(out())[0]; !strings.HasPrefix(e.header, "card log-1 for slack:C0APPROVALS edited") {
		t.Errorf("edited %q, want the card log-1", e.header)
	}
	t.Logf("after the request: escalation %v, deny at the backend %v", seen.Sub(requested).Round(time.Millisecond),
		denied.Sub(requested).Round(time.Millisecond))
	checkDeadlineDeny(t, fake)
	if n := len(escalations(out())); n != 1 {
		t.Errorf("%d escalation replies, want 1 (only the first step mentions anyone)", n)
	}
	checkEmailOnLogSurface(t, bot)
	checkDeadlineFigures(t, bot)
}

// Killed mid-ladder and restarted after both steps were due: the missed
// steps fire once, merged into one reply mentioning everyone they tell,
// and the deadline still denies exactly once. (The deadline is 10s here so
// that the restarted bot's first tick, up to a second after it starts,
// comes before it: a step still due at the deadline is never sent, since
// the deadline denies first.)
func TestLadderMissedStepsAfterRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	fake := ladderBackend(t)
	cfg := ladderConfig(t, dir, fake.URL(), 10*time.Second, "slack:U0ADA")
	first := startBot(t, cfg)
	body, requested := requestedNow(t)
	if a := first.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	pollUntil(t, 5*time.Second, "the card", func() bool {
		return strings.Contains(first.stdout.String(), "(approval "+ladderApproval+", revision 1)")
	}, first.stdout.String)
	if err := first.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	<-first.done
	killed := time.Now()
	if at := killed.Sub(requested); at >= 2*time.Second {
		t.Fatalf("the bot was killed %v after the request, after the first step (2s): the test cannot see a missed step", at)
	}
	if n := len(escalations(first.stdout.String())); n != 0 {
		t.Fatalf("the first bot sent %d escalations before its kill", n)
	}

	// Down until both steps (2s, 4s) are due.
	time.Sleep(time.Until(requested.Add(4*time.Second + 300*time.Millisecond)))
	second := startBot(t, cfg)
	restarted := time.Now()
	out := second.stdout.String
	seen := pollUntil(t, 5*time.Second, "the missed steps' reply", func() bool { return len(escalations(out())) > 0 }, out)
	if seen.After(requested.Add(10 * time.Second)) {
		t.Fatalf("the missed steps fired %v after the request, after the deadline", seen.Sub(requested))
	}
	denied := pollUntil(t, 12*time.Second, "the deadline's deny at the backend", func() bool { return len(fake.Decisions()) > 0 }, out)
	if at := denied.Sub(requested); at < 10*time.Second {
		t.Errorf("the deadline denied %v after the request, before its 10s", at)
	}
	pollUntil(t, 5*time.Second, "the card edited to the deadline's deny", func() bool { return len(expiredEdits(out())) > 0 }, out)

	esc := escalations(out())
	if len(esc) != 1 {
		t.Fatalf("%d escalation replies after the restart, want one for both missed steps:\n%s", len(esc), out())
	}
	if !strings.Contains(esc[0].body, "@kevin") || !strings.Contains(esc[0].body, "@ada") {
		t.Errorf("merged escalation %q: want both steps' people, @kevin and @ada", esc[0].body)
	}
	if n := len(escalations(first.stdout.String())); n != 0 {
		t.Errorf("the killed bot sent %d escalations", n)
	}
	t.Logf("after the request: killed %v, restarted %v, merged escalation %v, deny at the backend %v",
		killed.Sub(requested).Round(time.Millisecond), restarted.Sub(requested).Round(time.Millisecond),
		seen.Sub(requested).Round(time.Millisecond), denied.Sub(requested).Round(time.Millisecond))
	checkDeadlineDeny(t, fake)
	checkEmailOnLogSurface(t, second)
}
