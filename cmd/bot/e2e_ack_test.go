package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

// I'm looking and a repeat, end to end on a second scale: the built
// binary, Slack's Web API faked, a step that repeats every second, and a
// hold of 3s. The click is recorded before Slack gets its 200, the
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
	const pause = 3 * time.Second
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
          - after: 2s
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
	body, requested := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	card := waitMessage(t, sl, "chat.postMessage", func(m slacktest.Message) bool { return m.Channel == "C0APPROVALS" && m.ThreadTS == "" })
	look := buttonAction(t, card.Blocks, templates.ActionLook)

	clicked := time.Now()
	if at := clicked.Sub(requested); at >= 2*time.Second {
		t.Fatalf("the card came %v after the request, after the first firing (2s): the test cannot hold it", at)
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
	// Five firings (2s to 6s), the first two (at least) held and merged
	// into one reply: fewer replies than firings, more than one.
	if n := len(replies()); n < 2 || n > 4 {
		t.Errorf("%d escalation replies, want the held firings merged into one and the later ones each once:\n%s", n, dump())
	}
	t.Logf("after the request: click %v, first escalation %v, %d replies", clicked.Sub(requested).Round(time.Millisecond),
		first.Sub(requested).Round(time.Millisecond), len(replies()))
}
