package slack_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/adapters/logsurface"
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// TestFailuresAreClassified: the surface says which failures the outbox
// should wait on (Slack's Retry-After), give up on, or retry, beyond the
// ones every surface meets (TestConformance).
func TestFailuresAreClassified(t *testing.T) {
	h := newHarness(t)
	card := threadstest.Card(t, "merge.json")
	type want struct {
		permanent bool
		after     time.Duration
	}
	cases := []struct {
		name  string
		setup func(ch string)
		want  want
		plain bool // a plain error: retried with backoff
	}{
		{"429 without Retry-After", func(ch string) { h.slack.FailStatus("chat.postMessage", 1, 429, 0) }, want{after: 30 * time.Second}, false},
		{"ratelimited in the body", func(ch string) { h.slack.Fail("chat.postMessage", 1, "ratelimited") }, want{after: 30 * time.Second}, false},
		{"not_in_channel", func(ch string) { h.slack.AddChannel(ch, "outside", false) }, want{permanent: true}, false},
		{"is_archived", func(ch string) { h.slack.ArchiveChannel(ch) }, want{permanent: true}, false},
		{"account_inactive", func(ch string) { h.slack.Fail("chat.postMessage", 1, "account_inactive") }, want{permanent: true}, false},
		{"internal_error", func(ch string) { h.slack.Fail("chat.postMessage", 1, "internal_error") }, want{}, true},
		{"500", func(ch string) { h.slack.FailStatus("chat.postMessage", 1, 500, 0) }, want{}, true},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := fmt.Sprintf("C0CASE%d", i)
			h.slack.AddChannel(ch, "case", true)
			c.setup(ch)
			_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "slack:" + ch, Card: card})
			if err == nil {
				t.Fatal("no error")
			}
			permanent, after, classified := threadstest.Delivery(err)
			if c.plain {
				if classified {
					t.Fatalf("%v classified as permanent=%v after=%s, want a plain error", err, permanent, after)
				}
				return
			}
			if !classified || permanent != c.want.permanent || after != c.want.after {
				t.Fatalf("%v: permanent=%v after=%s, want %+v", err, permanent, after, c.want)
			}
			if strings.Contains(err.Error(), botToken) {
				t.Fatal("the error carries the token")
			}
		})
	}

	t.Run("network error", func(t *testing.T) {
		o := h.opts
		o.APIURL = "http://127.0.0.1:1/"
		down, err := slackad.NewSurface(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = down.Post(context.Background(), threads.PostRequest{Target: "slack:C0APPROVALS", Card: card})
		if _, _, classified := threadstest.Delivery(err); err == nil || classified {
			t.Fatalf("%v: want a plain error", err)
		}
	})

	t.Run("a card for a user group", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "slack:S0ONCALL", Card: card})
		if permanent, _, _ := threadstest.Delivery(err); !permanent {
			t.Fatalf("%v: want permanent", err)
		}
	})

	t.Run("a DM to an unknown user", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "slack:U0GHOST", Card: card})
		if permanent, _, _ := threadstest.Delivery(err); !permanent || !strings.Contains(err.Error(), "user_not_found") {
			t.Fatalf("%v: want permanent user_not_found", err)
		}
	})

	// A channel Slack asked to wait is held by the outbox in the store
	// (OutboxRetryParams.Hold, proved by storetest's held-key cases), not
	// by the adapter: the 429 cases above are what the adapter owes it.
}

// inProcessAdapter is a fresh adapter on the harness's options that
// calls the fake in process (slacktest.Transport), its posts budgeted at
// limit per channel with burst (zero: the defaults; rate.Inf: unpaced).
// Built inside a testing/synctest bubble, the outbox's pacing of its rows
// and the fake's pace then read the same clock, the bubble's.
func inProcessAdapter(t *testing.T, h *harness, limit rate.Limit, burst int) *slackad.Adapter {
	t.Helper()
	return inProcessAdapterWith(t, h, h.svc, func(o *slackad.Options) { o.PerChannelRate, o.Burst = limit, burst })
}

// inProcessAdapterWith is inProcessAdapter with the options edited, its
// clicks going to svc.
func inProcessAdapterWith(t *testing.T, h *harness, svc slackad.Service, edit func(*slackad.Options)) *slackad.Adapter {
	t.Helper()
	o := h.opts
	edit(&o)
	o.HTTPClient = &http.Client{Transport: h.slack.Transport()}
	surface, err := slackad.NewSurface(o)
	if err != nil {
		t.Fatal(err)
	}
	ad, err := slackad.New(surface, svc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ad.Close)
	return ad
}

// bubbleClock is the bubble's clock moved to the harness's date, so the
// fixtures' times read as they do in the harness while time.Now, and so
// the outbox's timers and the fake's pace, keep to virtual time.
type bubbleClock struct{ offset time.Duration }

func (c bubbleClock) Now() time.Time { return time.Now().Add(c.offset) }

// burstBot is the bot's outbound path for real, built inside a
// testing/synctest bubble: threads on a SQLite store of its own (opened in
// the bubble, so its pool's goroutine is the bubble's and closes with it),
// its Slack surface an in-process adapter whose rows threads paces by
// PaceKey and Pace.
type burstBot struct {
	svc *threads.Service
	st  store.Store
}

func newBurstBot(t *testing.T, h *harness, limit rate.Limit, burst int) burstBot {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "burst.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	ad := inProcessAdapter(t, h, limit, burst)
	svc, err := threads.New(threads.Options{Store: st, Tenants: h.cfg,
		Clock:    bubbleClock{offset: time.Until(h.clock.Now())},
		Surfaces: map[string]threads.Surface{"slack": ad}, Logger: slog.New(slog.DiscardHandler),
		Fallback: logsurface.New(logsurface.Options{Out: io.Discard, Renderer: threadstest.Renderer(t)})})
	if err != nil {
		t.Fatal(err)
	}
	return burstBot{svc: svc, st: st}
}

// ingestCards ingests n approvals of merge.json, each its own card for
// the tenant's channel, all before the outbox runs: one burst.
func (b burstBot) ingestCards(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("a-burst%03d", i)
		threadstest.Ingest(t, b.svc, "merge.json", func(ev map[string]any) {
			ev["id"] = fmt.Sprintf("evt-burst-%03d", i)
			ev["data"].(map[string]any)["id"] = ids[i]
		})
	}
	return ids
}

// runUntil runs the outbox, as `bot serve` does, until channel holds want
// messages or an hour of virtual time has passed, and stops it.
func (b burstBot) runUntil(t *testing.T, h *harness, channel string, want int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	// The chat lane looks for rows with room once a pace interval (the
	// default is ten times as often): a row then goes at most one
	// interval late, which the burst's bound allows, and the store is
	// polled 500 times rather than 5,000, which under -race is the
	// difference between 20 s and a minute.
	go func() { done <- b.svc.RunOutbox(ctx, threads.WorkerOptions{PacedPoll: time.Second}) }()
	for start := time.Now(); len(h.slack.Channel(channel)) < want; {
		if time.Since(start) > time.Hour {
			t.Errorf("after an hour %d of %d messages in %s", len(h.slack.Channel(channel)), want, channel)
			break
		}
		time.Sleep(time.Second) // virtual: the bubble's clock
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("RunOutbox: %v", err)
	}
}

// postedOnce checks that every approval's card reached the channel once,
// and the outbox holds nothing more: none pending, none dead.
func (b burstBot) postedOnce(t *testing.T, h *harness, channel string, ids []string) []slacktest.Message {
	t.Helper()
	msgs := h.slack.Channel(channel)
	seenTS, perApproval := map[string]bool{}, map[string]int{}
	for _, m := range msgs {
		seenTS[m.TS] = true
		if len(m.Buttons()) > 0 {
			if a, err := templates.ParseAction(m.Buttons()[0].ActionID); err == nil {
				perApproval[a.ApprovalID]++
			}
		}
	}
	if len(msgs) != len(ids) || len(seenTS) != len(ids) {
		t.Fatalf("%d messages with %d distinct ts in %s, want %d", len(msgs), len(seenTS), channel, len(ids))
	}
	for _, id := range ids {
		posts, err := b.st.PostList(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if perApproval[id] != 1 || len(posts) != 1 || posts[0].Channel != channel {
			t.Fatalf("%s: %d cards in %s, posts recorded %+v; want one", id, perApproval[id], channel, posts)
		}
	}
	stats, err := b.st.OutboxStats(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if stats.Pending != 0 || stats.Dead != 0 {
		t.Fatalf("outbox after the burst: %+v, want nothing pending or dead", stats)
	}
	return msgs
}

// TestBurstIsPacedWithoutRateLimits: 500 approvals arrive at once for one
// channel and the bot's own outbox (threads.RunOutbox, eight chat workers)
// posts their cards through the adapter, against a fake that answers 429
// to any chat.postMessage beyond Slack's pace of one a second per
// channel, bursts of three. The adapter waits for nothing: the outbox
// claims a row only when the channel's budget (PaceKey, Pace: the same
// pace) has room in the store. Under testing/synctest, the store opened
// in the bubble and the fake answering in process, the outbox's timers,
// its budget and the fake's token bucket all read the bubble's clock, so
// nothing waits out the eight minutes and the fake sees exactly the pace
// the outbox kept. What proves it is what the fake counted: no 429, one
// call per card, every card once, and by the fake's own clock the burst
// drained as fast as the pace allows and no slower than a poll behind it.
func TestBurstIsPacedWithoutRateLimits(t *testing.T) {
	const (
		cards = 500
		burst = slackad.DefaultBurst
	)
	interval := time.Duration(float64(time.Second) / float64(slackad.DefaultPerChannelRate))
	h := newHarnessWith(t, harnessOptions{
		slack: slacktest.Options{PostRate: slackad.DefaultPerChannelRate, PostBurst: burst},
	})
	synctest.Test(t, func(t *testing.T) {
		bot := newBurstBot(t, h, 0, 0)
		ids := bot.ingestCards(t, cards)
		bot.runUntil(t, h, "C0APPROVALS", cards)
		msgs := bot.postedOnce(t, h, "C0APPROVALS", ids)
		if n := h.slack.RateLimited(); n != 0 {
			t.Fatalf("%d posts met a 429", n)
		}
		if n := len(h.slack.Calls()); n != cards {
			t.Fatalf("%d calls reached the fake, want one a card: %d", n, cards)
		}
		// The fake's limiter allowed each card, so none came early; its
		// clock shows the pacing wasted no time either. The bot's burst is
		// one short of Slack's: it keeps one call in hand (Pace).
		span := msgs[len(msgs)-1].Received.Sub(msgs[0].Received)
		if least := time.Duration(cards-(burst-1)) * interval; span < least || span >= least+interval {
			t.Fatalf("the fake took %d cards over %s, want %s at one every %s", cards, span, least, interval)
		}
		t.Logf("%d cards over %s of the fake's clock at one every %s, burst %d: no 429", cards, span, interval, burst)
	})
}

// TestUnpacedBurstMeetsRateLimits proves the fake's pace bites, so the
// clean run above is the outbox's pacing and not the fake's leniency:
// with the adapter's budget switched off (rate.Inf: PaceKey still names
// the channel, Pace says unpaced) the same outbox sends a burst as fast
// as its workers go and meets 429s. Each is classified RetryAfter and
// returns its row with Slack's wait, holding the channel, without
// counting an attempt: every card still arrives exactly once and none
// dies.
func TestUnpacedBurstMeetsRateLimits(t *testing.T) {
	const cards = 100
	h := newHarnessWith(t, harnessOptions{
		slack: slacktest.Options{PostRate: slackad.DefaultPerChannelRate, PostBurst: slackad.DefaultBurst},
	})
	synctest.Test(t, func(t *testing.T) {
		bot := newBurstBot(t, h, rate.Inf, 0)
		ids := bot.ingestCards(t, cards)
		bot.runUntil(t, h, "C0APPROVALS", cards)
		bot.postedOnce(t, h, "C0APPROVALS", ids)
		limited, calls := h.slack.RateLimited(), len(h.slack.Calls())
		if limited == 0 || calls != cards+limited {
			t.Fatalf("unpaced burst: %d calls, %d 429s; want 429s, and each card's one success besides", calls, limited)
		}
		t.Logf("unpaced: %d cards took %d calls, %d of them 429", cards, calls, limited)
	})
}

func TestTellFallsBackToEphemeral(t *testing.T) {
	h := newHarness(t)
	ctx := context.Background()
	fresh := h.slack.ResponseURL("C0APPROVALS", "U0KEVIN")
	if err := h.adapter.Tell(ctx, threads.TellRequest{User: "U0KEVIN", Channel: "C0APPROVALS", Reply: fresh, Text: "one <!channel> & more"}); err != nil {
		t.Fatal(err)
	}
	m := h.told(t, "U0KEVIN", "one")
	if m.Method != "response_url" || !strings.Contains(m.Text, "&lt;!channel&gt; &amp; more") {
		t.Fatalf("answer %+v: want through the response_url, escaped", m)
	}

	expired := h.slack.URL() + "/response/999999"
	if err := h.adapter.Tell(ctx, threads.TellRequest{User: "U0LEE", Channel: "C0APPROVALS", Reply: expired, Text: "two"}); err != nil {
		t.Fatal(err)
	}
	if m := h.told(t, "U0LEE", "two"); m.Method != "chat.postEphemeral" || m.Channel != "C0APPROVALS" {
		t.Fatalf("answer %+v: want chat.postEphemeral", m)
	}

	foreign := "https://hooks.attacker.example/commands/1"
	if err := h.adapter.Tell(ctx, threads.TellRequest{User: "U0ADA", Channel: "C0APPROVALS", Reply: foreign, Text: "three"}); err != nil {
		t.Fatal(err)
	}
	if m := h.told(t, "U0ADA", "three"); m.Method != "chat.postEphemeral" {
		t.Fatalf("answer %+v", m)
	}
	if !strings.Contains(h.logs.String(), "does not point at Slack") {
		t.Error("a foreign response_url was not logged")
	}

	err := h.adapter.Tell(ctx, threads.TellRequest{User: "U0VIC", Reply: expired, Text: "four"})
	if permanent, _, _ := threadstest.Delivery(err); !permanent {
		t.Fatalf("%v: nowhere to answer is permanent", err)
	}
	if err := h.adapter.Tell(ctx, threads.TellRequest{User: "U0VIC", Channel: "C0NOWHERE", Text: "five"}); err == nil {
		t.Fatal("an answer in an unknown channel succeeded")
	} else if permanent, _, _ := threadstest.Delivery(err); !permanent {
		t.Fatalf("%v: want permanent", err)
	}
}
