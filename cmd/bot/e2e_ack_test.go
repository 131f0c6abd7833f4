package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/ladder"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
)

// I'm looking and a repeat, end to end on a second scale: the built
// binary, Slack's Web API faked, a step at 3s that repeats every second,
// and a hold of 4s. The click is recorded before Slack gets its 200, the
// clicked card says who is looking (through the click's response_url)
// and the channel's copy follows; no escalation goes out before the hold
// ends, the firings it kept waiting go out merged (none twice, none
// lost), the repetitions after it go on, and the deadline denies at its
// time as ever.
func TestAcknowledgeAndRepeatEndToEnd(t *testing.T) {
	dir := t.TempDir()
	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e"})
	sl.AddChannel("C0APPROVALS", "approvals", true)
	sl.AddUser("U0KEVIN")
	fake := ladderBackend(t)
	const pause = 4 * time.Second
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
tick: 1s
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
  api_url: %q
tenants:
  acme:
    deadline: 10s
    post: [slack:C0APPROVALS]
    ladders:
      default:
        ack_pause: %s
        steps:
          - after: 3s
            mention: [slack:U0KEVIN]
            repeat: {every: 1s, times: 4}
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
`, filepath.Join(dir, "bot.db"), fake.URL(), sl.APIURL(), pause)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)
	bot := startBot(t, path)
	// The ladder ticks at whole seconds of the clock (tick: 1s; an
	// "@every" schedule rounds to the second), a little after each. The
	// firings, whole seconds after the request, share its fraction of a
	// second: requested 300ms or more into a second (so up to 400ms ago),
	// they fall at least 300ms after a tick, each to the first tick after
	// it.
	requested := time.Now().UTC().Truncate(time.Millisecond) // the store keeps milliseconds
	if f := frac(requested); f < 300*time.Millisecond {
		requested = requested.Add(-f - 100*time.Millisecond)
	}
	body, err := eventsNow(t).requestedAt(requested, "merge.json", func(ev map[string]any) {
		delete(ev["data"].(map[string]any), "deadline") // the tenant's applies
	})
	if err != nil {
		t.Fatal(err)
	}
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	card := waitMessage(t, sl, "chat.postMessage", func(m slacktest.Message) bool { return m.Channel == "C0APPROVALS" && m.ThreadTS == "" })
	look := buttonAction(t, card.Blocks, templates.ActionLook)

	// Clicked 300-700ms into a second, so the hold ends as far from a tick
	// (ack_pause is whole seconds) and the tick that ends it is known.
	for f := frac(time.Now()); f < 300*time.Millisecond || f > 700*time.Millisecond; f = frac(time.Now()) {
		time.Sleep(10 * time.Millisecond)
	}
	clicked := time.Now()
	if at := clicked.Sub(requested); at >= 3*time.Second {
		t.Fatalf("the click came %v after the request, after the first firing (3s): the test cannot hold it", at)
	}
	status, err := postSlackInteraction(http.DefaultClient, bot.base, map[string]any{
		"type": "block_actions", "trigger_id": "trig-1", "api_app_id": "A0APP",
		"user":         map[string]any{"id": "U0KEVIN"},
		"channel":      map[string]any{"id": "C0APPROVALS"},
		"container":    map[string]any{"type": "message", "channel_id": "C0APPROVALS", "message_ts": card.TS},
		"response_url": sl.ResponseURLFor("C0APPROVALS", "U0KEVIN", card.TS),
		"actions":      []any{map[string]any{"type": "button", "block_id": "b1", "action_id": look, "value": look, "action_ts": card.TS}},
	})
	if err != nil || status != http.StatusOK {
		t.Fatalf("the click was answered %d (%v)", status, err)
	}
	const line = "user:kevin is looking since"
	waitMessage(t, sl, "response_url", func(m slacktest.Message) bool {
		return m.ReplaceOriginal && m.TS == card.TS && strings.Contains(m.AllText(), line)
	})
	waitMessage(t, sl, "chat.update", func(m slacktest.Message) bool { return m.TS == card.TS && strings.Contains(m.AllText(), line) })

	replies := func() []slacktest.Message {
		var out []slacktest.Message
		for _, m := range sl.MessagesBy("chat.postMessage") {
			if m.ThreadTS == card.TS && strings.Contains(m.Text, "<@U0KEVIN>") {
				out = append(out, m)
			}
		}
		return out
	}
	dump := func() string { return fmt.Sprintf("%+v\n%s", sl.Messages(), bot.stderr.String()) }
	first := pollUntil(t, 10*time.Second, "the first escalation", func() bool { return len(replies()) > 0 }, dump)
	if first.Before(clicked.Add(pause)) {
		t.Errorf("an escalation went out %v after the click, before the hold of %v ended", first.Sub(clicked), pause)
	}
	pollUntil(t, 15*time.Second, "the deadline's deny at the backend", func() bool { return len(fake.Decisions()) > 0 }, dump)
	checkDeadlineDeny(t, fake)
	// Stopped, so every reply the ladder asked for has gone out (or been
	// dropped as moot at the deadline, which would be a lost one) and the
	// store can be read.
	if err := bot.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := <-bot.done; err != nil {
		t.Fatalf("exit after SIGTERM: %v\n%s", err, bot.stderr.String())
	}
	held := storedHold(t, filepath.Join(dir, "bot.db"))
	if len(held.firings) != 5 || held.stepsDone != len(held.firings) {
		t.Errorf("steps done %d of %d firings planned, want all 5 (3s, then every 1s 4 more times) done by the deadline",
			held.stepsDone, len(held.firings))
	}
	if !held.until.Equal(held.since.Add(pause)) || held.since.Before(requested) {
		t.Errorf("the hold runs %v to %v, want ack_pause (%v) from the click, after the request at %v", held.since, held.until, pause, requested)
	}
	// The first tick at or after the hold's end sends every firing due by
	// then merged into one reply; each later firing, one a second, gets a
	// tick, and a reply, of its own.
	firstTick := held.until.Truncate(time.Second)
	if firstTick.Before(held.until) {
		firstTick = firstTick.Add(time.Second)
	}
	want, merged := 1, 0
	for _, f := range held.firings {
		if f.After(firstTick) {
			want++
		} else {
			merged++
		}
	}
	if merged < 2 {
		t.Fatalf("the hold (%v to %v) kept %d firings waiting, want the first two at least: the test cannot show the merge", held.since, held.until, merged)
	}
	// A tick runs a little after its second. Had the hold's end or the
	// firings fallen that little after a whole second (the request's and
	// the click's timing above keep them clear, but a loaded machine may
	// answer the click late), the tick of that second might already see
	// them: the hold's end a second early (one firing fewer merged, one
	// reply more) or a firing a tick early (merged with the one before,
	// one reply fewer). Only then is the count ambiguous, by one. A run
	// the scheduler skipped (the tick before still running) merges the
	// firings of two seconds, and the bot logs it.
	const late = 250 * time.Millisecond
	lo, hi := want, want
	if frac(held.until) <= late || frac(held.firings[0]) <= late {
		lo, hi = want-1, want+1
	}
	lo -= strings.Count(bot.stderr.String(), "a scheduled job is still running; this run is skipped")
	if n := len(replies()); n < lo || n > hi {
		t.Errorf("%d escalation replies, want %d (the %d firings held until %v merged into one, each of the %d after it alone; allowed %d to %d):\n%s",
			n, want, merged, held.until.Sub(requested).Round(time.Millisecond), want-1, lo, hi, dump())
	}
	t.Logf("after the request: click %v, hold until %v, first escalation %v, %d replies (want %d)", clicked.Sub(requested).Round(time.Millisecond),
		held.until.Sub(requested).Round(time.Millisecond), first.Sub(requested).Round(time.Millisecond), len(replies()), want)
}

// frac is how far past its whole second t is.
func frac(t time.Time) time.Duration { return t.Sub(t.Truncate(time.Second)) }

// hold is what the store kept of an acknowledged approval's ladder: the
// firings planned (each repetition once), how many were done, and the
// hold of the acknowledgement.
type hold struct {
	firings      []time.Time
	stepsDone    int
	since, until time.Time
}

// storedHold reads the hold of ladderApproval from the SQLite store at
// path, with no bot serving from it.
func storedHold(t *testing.T, path string) hold {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	row, err := st.ApprovalGet(ctx, ladderApproval)
	if err != nil {
		t.Fatal(err)
	}
	var frozen struct{ Plan ladder.Plan }
	if err := json.Unmarshal(row.Plan, &frozen); err != nil {
		t.Fatalf("the stored plan %s: %v", row.Plan, err)
	}
	var state struct {
		Looking *struct{ Since, Until time.Time }
	}
	if err := json.Unmarshal(row.LadderState, &state); err != nil || state.Looking == nil {
		t.Fatalf("the stored ladder state %s holds no acknowledgement (%v)", row.LadderState, err)
	}
	h := hold{stepsDone: row.StepsDone, since: state.Looking.Since, until: state.Looking.Until}
	for _, st := range frozen.Plan.Steps {
		h.firings = append(h.firings, st.At)
	}
	return h
}
