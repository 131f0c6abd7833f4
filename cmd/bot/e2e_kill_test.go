package main

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

// TestKillDuringLoad kills the bot (SIGKILL: no shutdown at all) every
// one and a half to three seconds while approvals arrive, their cards
// and a ladder step's replies drain at Slack's pace, and a person clicks Approve on
// half of them, restarting it each time on the same SQLite file. A click
// the bot answered 200 is recorded: it must end as that person's
// approval at the backend, never as the deadline's "nobody answered".
// A click whose connection died with the bot is made again, as a person
// does. A kill repeats at most the one effect it interrupted, per kill.
func TestKillDuringLoad(t *testing.T) {
	const (
		approvals = 60
		channels  = 20
	)
	deadline := 16 * time.Second
	clickEnd := 10 * time.Second // every click is made well before the deadline
	if raceEnabled {
		// A raced binary starts several times slower: the same number of
		// kills needs a longer load.
		deadline, clickEnd = 28*time.Second, 16*time.Second
	}
	dir := t.TempDir()
	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e", PostRate: 1, PostBurst: 3})
	for c := range channels {
		sl.AddChannel(killChannel(c), strings.ToLower(killChannel(c)), true)
	}
	sl.AddUser("U0KEVIN")
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	args := readArguments(t, "a-merge1.json")
	for i := range approvals {
		fake.AddApproval(killApproval(i), 1, args, false)
	}
	var tools strings.Builder
	for c := range channels {
		fmt.Fprintf(&tools, "      \"kill.c%02d\": {post: [slack:%s]}\n", c, killChannel(c))
	}
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
tick: 1s
lease: 5s
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
    deadline: %s
    post: [slack:%s]
    ladders:
      default:
        - after: 2s
          mention: [slack:U0KEVIN]
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
    tools:
%s`, filepath.Join(dir, "bot.db"), fake.URL(), sl.APIURL(), deadline, killChannel(0), tools.String())
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)

	var current atomic.Pointer[botProc]
	current.Store(startBot(t, path))
	events := eventsNow(t)
	start := time.Now()

	// The killer: SIGKILL and restart, every 1.5–3 s, until the clicks end.
	var kills atomic.Int64
	stopKiller := make(chan struct{})
	killerDone := make(chan struct{})
	go func() {
		defer close(killerDone)
		rnd := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stopKiller:
				return
			case <-time.After(1500*time.Millisecond + time.Duration(rnd.Int64N(int64(1500*time.Millisecond)))):
			}
			bot := current.Load()
			_ = bot.cmd.Process.Kill()
			<-bot.done
			kills.Add(1)
			current.Store(startBot(t, path))
		}
	}()

	// The events, sent as the backend does: again until a bot answers 2xx.
	var sendWG sync.WaitGroup
	for i := range approvals {
		sendWG.Go(func() {
			body, err := events.requestedAt(start, "merge.json", func(e map[string]any) {
				data := e["data"].(map[string]any)
				e["id"] = fmt.Sprintf("evt-kill%03d", i)
				data["id"] = killApproval(i)
				data["call"].(map[string]any)["function"] = fmt.Sprintf("kill.c%02d", i%channels)
				delete(data, "deadline")
			})
			if err != nil {
				t.Error(err)
				return
			}
			for try := 0; time.Since(start) < clickEnd; try++ {
				if status := postEvent(current.Load().base, body); status == http.StatusAccepted || status == http.StatusOK {
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
			t.Errorf("event %d was never accepted", i)
		})
	}
	sendWG.Wait()

	// Kevin approves every other approval, spread over the first seconds;
	// a click that reaches no live bot is made again.
	var clickWG sync.WaitGroup
	answered := make([]atomic.Bool, approvals)
	answerURL := make([]atomic.Value, approvals) // the response_url of the click answered 200
	for i := 0; i < approvals; i += 2 {
		when := start.Add(time.Second + time.Duration(i)*(clickEnd-2*time.Second)/approvals)
		clickWG.Go(func() {
			time.Sleep(time.Until(when))
			for time.Since(start) < clickEnd {
				if status, respURL, err := killClick(current.Load().base, sl, i); err == nil && status == http.StatusOK {
					answered[i].Store(true)
					answerURL[i].Store(respURL)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		})
	}
	clickWG.Wait()
	close(stopKiller)
	<-killerDone

	// Every approval decided at the backend: the clicked by kevin, the
	// rest by the deadline.
	pollUntil(t, deadline+40*time.Second, "every approval decided at the backend", func() bool {
		for i := range approvals {
			if status, _ := fake.Status(killApproval(i)); status == "pending" || status == "" {
				return false
			}
		}
		return true
	}, func() string { return fmt.Sprintf("%d decisions", len(fake.Decisions())) })
	// A 200 is the click recorded unless the person was told otherwise
	// (the bot answers 200 and says "Nothing was sent" through the
	// response_url when it could not record it).
	refusedBy := map[string]bool{}
	for _, m := range sl.MessagesBy("response_url") {
		if strings.Contains(m.AllText(), "Nothing was sent") || strings.Contains(m.AllText(), "nothing was sent") {
			refusedBy[m.ResponseURL] = true
		}
	}
	lostClicks, refused := 0, 0
	for i := range approvals {
		status, actor := fake.Status(killApproval(i))
		if u, _ := answerURL[i].Load().(string); answered[i].Load() && refusedBy[u] {
			refused++
			continue
		}
		if answered[i].Load() && (status != "approved" || actor != "user:kevin") {
			lostClicks++
			t.Errorf("%s: kevin's click was answered 200, yet it ended %s by %s", killApproval(i), status, actor)
		}
		if i%2 == 1 && actor != "system:deadline" {
			t.Errorf("%s: nobody clicked, yet it ended %s by %s", killApproval(i), status, actor)
		}
	}
	// A kill repeats at most the one effect in flight: each channel holds
	// a card for every approval it was given, and cards posted again are
	// bounded by the kills. (A card posted after its click shows the
	// outcome and no buttons, so cards are counted by channel, not by the
	// approval their buttons name.)
	repeats := 0
	for c := range channels {
		want := 0
		for i := range approvals {
			if i%channels == c {
				want++
			}
		}
		got := 0
		for _, m := range sl.Channel(killChannel(c)) {
			if m.Method == "chat.postMessage" && m.ThreadTS == "" {
				got++
			}
		}
		if got < want {
			t.Errorf("%s holds %d cards, want one for each of its %d approvals", killChannel(c), got, want)
		}
		repeats += max(got-want, 0)
	}
	if k := int(kills.Load()); repeats > k*8 {
		// Eight chat workers may each be in the middle of one post.
		t.Errorf("%d cards posted again over %d kills: more than one effect in flight per worker and kill", repeats, k)
	}
	if kills.Load() < 2 {
		t.Errorf("only %d kills during the load", kills.Load())
	}
	if refused > 2 {
		t.Errorf("%d clicks answered 200 were told nothing was sent", refused)
	}
	t.Logf("%d kills; %d clicks answered 200 (%d of them told nothing was sent), %d lost; %d cards posted twice",
		kills.Load(), countTrue(answered), refused, lostClicks, repeats)
}

func killChannel(i int) string  { return fmt.Sprintf("C0KILL%02d", i) }
func killApproval(i int) string { return fmt.Sprintf("a-kill%03d", i) }

func countTrue(bs []atomic.Bool) int {
	n := 0
	for i := range bs {
		if bs[i].Load() {
			n++
		}
	}
	return n
}

// postEvent signs and posts one event, returning the status (0 when the
// bot could not be reached).
func postEvent(base string, body []byte) int {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/events", bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(e2eEventsSecret), time.Now(), body))
	res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	if err != nil {
		return 0
	}
	res.Body.Close()
	return res.StatusCode
}

// killClick is kevin's signed Approve of approval i, with its own
// response_url.
func killClick(base string, sl *slacktest.Server, i int) (int, string, error) {
	act := templates.EncodeAction(templates.Action{Kind: templates.ActionApprove, ApprovalID: killApproval(i), Revision: 1})
	ch := killChannel(i % 20)
	respURL := sl.ResponseURL(ch, "U0KEVIN")
	status, err := postSlackInteraction(&http.Client{Timeout: 5 * time.Second}, base, map[string]any{
		"type": "block_actions", "trigger_id": "trig-" + killApproval(i), "api_app_id": "A0APP",
		"user":         map[string]any{"id": "U0KEVIN"},
		"channel":      map[string]any{"id": ch},
		"container":    map[string]any{"type": "message", "channel_id": ch, "message_ts": "1700000000.000001"},
		"response_url": respURL,
		"actions":      []any{map[string]any{"type": "button", "block_id": "b1", "action_id": act, "value": act}},
	})
	return status, respURL, err
}
