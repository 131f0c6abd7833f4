package slack_test

import (
	"testing"
	"time"

	"golang.org/x/time/rate"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/threads"
)

// TestPaceKeyNamesTheBudgetSlackCounts: every outbox row the Slack
// surface performs spends the budget Slack counts it against, so the
// outbox paces it there: cards, thread replies and notices spend their
// channel's chat.postMessage budget (a DM's by its user), every edit the
// workspace's chat.update budget, and a private answer (response_url or
// chat.postEphemeral) none.
func TestPaceKeyNamesTheBudgetSlackCounts(t *testing.T) {
	h := newHarness(t)
	ad := h.adapter
	cases := []struct {
		kind, target, want string
	}{
		{threads.KindPostCard, "slack:C0APPROVALS", "slack:post:C0APPROVALS"},
		{threads.KindPostCard, "slack:G0PRIVATE", "slack:post:G0PRIVATE"},
		{threads.KindPostCard, "slack:U0LEE", "slack:post:U0LEE"}, // the DM opened with lee
		{threads.KindPostCard, "slack:W0ENTERPRISE", "slack:post:W0ENTERPRISE"},
		{threads.KindReply, "slack:C0APPROVALS", "slack:post:C0APPROVALS"},
		{threads.KindNotice, "slack:C0AUDIT", "slack:post:C0AUDIT"},
		{threads.KindEditCard, "slack:C0APPROVALS", "slack:update"},
		{threads.KindEditCard, "slack:U0LEE", "slack:update"},
		{threads.KindTell, "slack:U0KEVIN", ""},
		// Not the adapter's to pace: another surface's target, or no
		// target at all.
		{threads.KindPostCard, "discord:channel:123456789012345678", ""},
		{threads.KindPostCard, "leads@acme.example", ""},
		{threads.KindReply, "slack:", ""},
		{threads.KindNotice, "", ""},
	}
	for _, c := range cases {
		if got := ad.PaceKey(c.kind, c.target); got != c.want {
			t.Errorf("PaceKey(%q, %q) = %q, want %q", c.kind, c.target, got, c.want)
		}
	}
	// Two channels spend two budgets; one channel's rows, one.
	if a, b := ad.PaceKey(threads.KindPostCard, "slack:C0APPROVALS"), ad.PaceKey(threads.KindReply, "slack:C0FINANCE"); a == b {
		t.Errorf("two channels share the budget %q", a)
	}
}

// TestPaceIsSlacksLimitsOrTheOptions: a budget is a call every so often
// in bursts: by default Slack's own (one chat.postMessage a second per
// channel, bursts of three; chat.update 50 a minute, bursts of ten), or
// as the options say; rate.Inf switches a budget off, and a key that is
// not the adapter's has none.
func TestPaceIsSlacksLimitsOrTheOptions(t *testing.T) {
	h := newHarness(t)
	type budget struct {
		every time.Duration
		burst int
	}
	cases := []struct {
		name string
		opts func(*slackad.Options)
		want map[string]budget
	}{
		{"defaults", nil, map[string]budget{
			// One call of each burst is kept in hand (Pace).
			"slack:post:C0APPROVALS": {time.Second, 2},
			"slack:post:U0LEE":       {time.Second, 2},
			"slack:update":           {1200 * time.Millisecond, 9},
			"slack:other":            {0, 0},
			"discord:post:1":         {0, 0},
			"":                       {0, 0},
		}},
		{"options", func(o *slackad.Options) {
			o.PerChannelRate, o.Burst, o.UpdateRate, o.UpdateBurst = 2, 5, 0.5, 4
		}, map[string]budget{
			"slack:post:C0APPROVALS": {500 * time.Millisecond, 4},
			"slack:update":           {2 * time.Second, 3},
		}},
		{"pacing off", func(o *slackad.Options) {
			o.PerChannelRate, o.UpdateRate = rate.Inf, rate.Inf
		}, map[string]budget{
			"slack:post:C0APPROVALS": {0, slackad.DefaultBurst - 1},
			"slack:update":           {0, slackad.DefaultUpdateBurst - 1},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := h.opts
			if c.opts != nil {
				c.opts(&o)
			}
			ad, err := slackad.NewSurface(o)
			if err != nil {
				t.Fatal(err)
			}
			for key, want := range c.want {
				every, burst := ad.Pace(key)
				if (budget{every, burst}) != want {
					t.Errorf("Pace(%q) = %s, %d; want %s, %d", key, every, burst, want.every, want.burst)
				}
			}
		})
	}
	// Every key PaceKey names has a budget of its own in Pace.
	for _, kind := range []string{threads.KindPostCard, threads.KindReply, threads.KindNotice, threads.KindEditCard} {
		if every, _ := h.adapter.Pace(h.adapter.PaceKey(kind, "slack:C0APPROVALS")); every <= 0 {
			t.Errorf("a %s row's key has no budget", kind)
		}
	}
}
