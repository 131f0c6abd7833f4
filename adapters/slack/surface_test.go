package slack_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/time/rate"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// fixtureCard is a waiting card of a fixture event, for calling the
// surface directly.
func fixtureCard(t *testing.T, name string) threads.Card {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return threads.Card{Tenant: ev.Tenant, Approval: ev.Approval, State: approval.StatePending, HeldRevision: 1,
		Now: time.Date(2026, 11, 29, 18, 0, 1, 0, time.UTC)}
}

func delivery(err error) (permanent bool, after time.Duration, classified bool) {
	var de *threads.DeliveryError
	if errors.As(err, &de) {
		return de.Permanent, de.RetryAfter, true
	}
	return false, 0, false
}

// TestFailuresAreClassified: the surface says which failures the outbox
// should wait on (Slack's Retry-After), give up on, or retry.
func TestFailuresAreClassified(t *testing.T) {
	h := newHarness(t)
	card := fixtureCard(t, "merge.json")
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
		{"429 with Retry-After", func(ch string) { h.slack.FailStatus("chat.postMessage", 1, 429, 7*time.Second) }, want{after: 7 * time.Second}, false},
		{"429 without Retry-After", func(ch string) { h.slack.FailStatus("chat.postMessage", 1, 429, 0) }, want{after: 30 * time.Second}, false},
		{"ratelimited in the body", func(ch string) { h.slack.Fail("chat.postMessage", 1, "ratelimited") }, want{after: 30 * time.Second}, false},
		{"channel_not_found", func(ch string) { h.slack.Fail("chat.postMessage", 1, "channel_not_found") }, want{permanent: true}, false},
		{"not_in_channel", func(ch string) { h.slack.AddChannel(ch, "outside", false) }, want{permanent: true}, false},
		{"is_archived", func(ch string) { h.slack.ArchiveChannel(ch) }, want{permanent: true}, false},
		{"invalid_auth", func(ch string) { h.slack.Fail("chat.postMessage", 1, "invalid_auth") }, want{permanent: true}, false},
		{"account_inactive", func(ch string) { h.slack.Fail("chat.postMessage", 1, "account_inactive") }, want{permanent: true}, false},
		{"internal_error", func(ch string) { h.slack.Fail("chat.postMessage", 1, "internal_error") }, want{}, true},
		{"500", func(ch string) { h.slack.FailStatus("chat.postMessage", 1, 500, 0) }, want{}, true},
		{"503", func(ch string) { h.slack.FailStatus("chat.postMessage", 1, 503, 0) }, want{}, true},
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
			permanent, after, classified := delivery(err)
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
		cfg := *o.Config
		cfg.APIURL = "http://127.0.0.1:1/"
		o.Config = &cfg
		down, err := slackad.New(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = down.Post(context.Background(), threads.PostRequest{Target: "slack:C0APPROVALS", Card: card})
		if _, _, classified := delivery(err); err == nil || classified {
			t.Fatalf("%v: want a plain error", err)
		}
	})

	t.Run("edit of a deleted card", func(t *testing.T) {
		err := h.adapter.Edit(context.Background(), threads.EditRequest{Post: &store.Post{ApprovalID: "a-merge1",
			Channel: "C0APPROVALS", Ref: "1700000000.999999"}, Card: card})
		if permanent, _, _ := delivery(err); !permanent {
			t.Fatalf("%v: want permanent", err)
		}
	})

	t.Run("a card for a user group", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "slack:S0ONCALL", Card: card})
		if permanent, _, _ := delivery(err); !permanent {
			t.Fatalf("%v: want permanent", err)
		}
	})

	t.Run("a DM to an unknown user", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "slack:U0GHOST", Card: card})
		if permanent, _, _ := delivery(err); !permanent || !strings.Contains(err.Error(), "user_not_found") {
			t.Fatalf("%v: want permanent user_not_found", err)
		}
	})

	t.Run("a held channel answers RetryAfter without calling Slack", func(t *testing.T) {
		h.slack.AddChannel("C0HELD", "held", true)
		h.slack.FailStatus("chat.postMessage", 1, 429, 5*time.Second)
		if _, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "slack:C0HELD", Card: card}); err == nil {
			t.Fatal("no error")
		}
		calls := len(h.slack.Calls())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := h.adapter.Post(ctx, threads.PostRequest{Target: "slack:C0HELD", Card: card})
		if _, after, _ := delivery(err); after <= 0 || after > 5*time.Second {
			t.Fatalf("%v: want RetryAfter within Slack's 5 s", err)
		}
		if len(h.slack.Calls()) != calls {
			t.Fatal("a post went to Slack while Slack asked to wait")
		}
	})
}

// inProcessAdapter is a fresh adapter on the harness's options that
// calls the fake in process (slacktest.Transport), pacing each channel's
// posts at limit with burst (zero: the defaults). Built inside a
// testing/synctest bubble, its pacing and the fake's pace then read the
// same clock, the bubble's.
func inProcessAdapter(t *testing.T, h *harness, limit rate.Limit, burst int) *slackad.Adapter {
	t.Helper()
	o := h.opts
	o.PerChannelRate, o.Burst = limit, burst
	o.HTTPClient = &http.Client{Transport: h.slack.Transport()}
	ad, err := slackad.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ad.Close)
	return ad
}

// TestBurstIsPacedWithoutRateLimits: 500 cards into one channel at once,
// from eight outbox workers, with the adapter's default pace (one a
// second, bursts of three, as Slack allows per channel), against a fake
// that answers 429 to any chat.postMessage beyond that same pace. It runs
// under testing/synctest, the fake answering in process: both token
// buckets read the bubble's clock, so the eight minutes of pacing take
// no real time and the fake sees exactly the pace the adapter kept, with
// no loopback jitter to allow for. What proves it is what the fake
// counted: no 429, every card once, and, by the fake's own clock, the
// burst drained as fast as the pace allows and no faster.
func TestBurstIsPacedWithoutRateLimits(t *testing.T) {
	const (
		cards   = 500
		workers = 8
		burst   = slackad.DefaultBurst
	)
	interval := time.Duration(float64(time.Second) / float64(slackad.DefaultPerChannelRate))
	h := newHarnessWith(t, harnessOptions{
		slack: slacktest.Options{PostRate: slackad.DefaultPerChannelRate, PostBurst: burst},
	})
	synctest.Test(t, func(t *testing.T) {
		ad := inProcessAdapter(t, h, 0, 0)
		card := fixtureCard(t, "merge.json")
		jobs := make(chan int)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for range workers {
			wg.Go(func() {
				for range jobs {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // the outbox's PerformTimeout
					_, err := ad.Post(ctx, threads.PostRequest{Target: "slack:C0APPROVALS", Card: card})
					cancel()
					if err != nil {
						mu.Lock()
						errs = append(errs, err)
						mu.Unlock()
					}
				}
			})
		}
		for i := range cards {
			jobs <- i
		}
		close(jobs)
		wg.Wait()
		if len(errs) > 0 {
			t.Fatalf("%d posts failed, first: %v", len(errs), errs[0])
		}
		if n := h.slack.RateLimited(); n != 0 {
			t.Fatalf("%d posts met a 429", n)
		}
		if n := len(h.slack.Calls()); n != cards {
			t.Fatalf("%d calls reached the fake, want one a card: %d", n, cards)
		}
		msgs := h.slack.Channel("C0APPROVALS")
		seen := map[string]bool{}
		for _, m := range msgs {
			seen[m.TS] = true
		}
		if len(msgs) != cards || len(seen) != cards {
			t.Fatalf("%d messages with %d distinct ts, want %d", len(msgs), len(seen), cards)
		}
		// The fake's limiter allowed each card, so none came early; its
		// clock shows the pacing wasted no time either.
		span := msgs[len(msgs)-1].Received.Sub(msgs[0].Received)
		if least := time.Duration(cards-burst) * interval; span < least || span >= least+interval {
			t.Fatalf("the fake took %d cards over %s, want %s at one every %s", cards, span, least, interval)
		}
		t.Logf("%d cards over %s of the fake's clock at one every %s, burst %d: no 429", cards, span, interval, burst)
	})
}

// TestUnpacedBurstMeetsRateLimits proves the fake's pace bites: without
// pacing the same burst against the same fake gets 429s, each classified
// RetryAfter.
func TestUnpacedBurstMeetsRateLimits(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{
		slack: slacktest.Options{PostRate: slackad.DefaultPerChannelRate, PostBurst: slackad.DefaultBurst},
	})
	synctest.Test(t, func(t *testing.T) {
		ad := inProcessAdapter(t, h, rate.Inf, 0)
		card := fixtureCard(t, "merge.json")
		var wg sync.WaitGroup
		var limited sync.Map
		for i := range 100 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := ad.Post(ctx, threads.PostRequest{Target: "slack:C0APPROVALS", Card: card})
				if _, after, _ := delivery(err); after > 0 {
					limited.Store(i, after)
				}
			})
		}
		wg.Wait()
		n := 0
		limited.Range(func(_, _ any) bool { n++; return true })
		if h.slack.RateLimited() == 0 || n == 0 {
			t.Fatalf("unpaced burst: %d 429s, %d RetryAfter errors; the fake does not enforce its pace", h.slack.RateLimited(), n)
		}
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
	if permanent, _, _ := delivery(err); !permanent {
		t.Fatalf("%v: nowhere to answer is permanent", err)
	}
	if err := h.adapter.Tell(ctx, threads.TellRequest{User: "U0VIC", Channel: "C0NOWHERE", Text: "five"}); err == nil {
		t.Fatal("an answer in an unknown channel succeeded")
	} else if permanent, _, _ := delivery(err); !permanent {
		t.Fatalf("%v: want permanent", err)
	}
}
