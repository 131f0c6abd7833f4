package discord_test

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

	"github.com/bwmarrin/discordgo"
	"golang.org/x/time/rate"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/templates"
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
// should wait on (Discord's retry_after), give up on, or retry.
func TestFailuresAreClassified(t *testing.T) {
	h := newHarness(t)
	card := fixtureCard(t, "merge.json")
	type want struct {
		permanent bool
		after     time.Duration
		plain     bool // a plain error: retried with backoff
		text      string
	}
	cases := []struct {
		name  string
		setup func(ch string)
		want  want
	}{
		{"429 with retry_after", func(ch string) { h.discord.RateLimit(discordtest.RouteMessageCreate, 1, 7500*time.Millisecond, false) },
			want{after: 7500 * time.Millisecond, text: "rate limited"}},
		{"global 429", func(ch string) { h.discord.RateLimit(discordtest.RouteMessageCreate, 1, 2*time.Second, true) },
			want{after: 2 * time.Second}},
		{"Unknown Channel", func(ch string) {
			h.discord.Fail(discordtest.RouteMessageCreate, 1, 404, discordtest.CodeUnknownChannel)
		},
			want{permanent: true, text: "code 10003"}},
		{"Missing Access", func(ch string) { h.discord.Hide(ch) }, want{permanent: true, text: "Missing Access (code 50001)"}},
		{"Missing Permissions", func(ch string) { h.discord.Deny(ch, discordgo.PermissionSendMessages) },
			want{permanent: true, text: "Missing Permissions (code 50013)"}},
		{"401", func(ch string) { h.discord.Fail(discordtest.RouteMessageCreate, 1, 401, 0) }, want{permanent: true}},
		{"500", func(ch string) { h.discord.Fail(discordtest.RouteMessageCreate, 1, 500, 0) }, want{plain: true}},
		{"502", func(ch string) { h.discord.Fail(discordtest.RouteMessageCreate, 1, 502, 0) }, want{plain: true}},
		{"503", func(ch string) { h.discord.Fail(discordtest.RouteMessageCreate, 1, 503, 0) }, want{plain: true}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ch := fmt.Sprintf("1122334455667790%02d", i)
			h.discord.AddChannel(guildID, ch, "case")
			c.setup(ch)
			_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:channel:" + ch, Card: card})
			if err == nil {
				t.Fatal("no error")
			}
			permanent, after, classified := delivery(err)
			switch {
			case c.want.plain && classified:
				t.Fatalf("%v classified as permanent=%v after=%s, want a plain error", err, permanent, after)
			case !c.want.plain && (!classified || permanent != c.want.permanent || after != c.want.after):
				t.Fatalf("%v: permanent=%v after=%s, want %+v", err, permanent, after, c.want)
			case !strings.Contains(err.Error(), c.want.text):
				t.Fatalf("%v: want it to say %q", err, c.want.text)
			case strings.Contains(err.Error(), botToken):
				t.Fatal("the error carries the token")
			}
		})
	}

	t.Run("network error", func(t *testing.T) {
		o := h.opts
		cfg := *o.Config
		cfg.APIURL = "http://127.0.0.1:1/"
		o.Config = &cfg
		down, err := discordad.New(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = down.Post(context.Background(), threads.PostRequest{Target: approvalTarget, Card: card})
		if _, _, classified := delivery(err); err == nil || classified {
			t.Fatalf("%v: want a plain error", err)
		}
	})

	t.Run("edit of a deleted card", func(t *testing.T) {
		err := h.adapter.Edit(context.Background(), threads.EditRequest{Post: &store.Post{ApprovalID: "a-merge1",
			Target: approvalTarget, Channel: chApproval, Ref: "1399999999999999999"}, Card: card})
		if permanent, _, _ := delivery(err); !permanent || !strings.Contains(err.Error(), "code 10008") {
			t.Fatalf("%v: want permanent Unknown Message", err)
		}
	})

	t.Run("a card for a role", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:role:" + roleOncall, Card: card})
		if permanent, _, _ := delivery(err); !permanent {
			t.Fatalf("%v: want permanent", err)
		}
	})

	t.Run("a DM to an unknown user", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:user:123456789012345678", Card: card})
		if permanent, _, _ := delivery(err); !permanent || !strings.Contains(err.Error(), "Unknown User") {
			t.Fatalf("%v: want permanent Unknown User", err)
		}
	})

	t.Run("a DM to someone who takes none", func(t *testing.T) {
		h.discord.BlockDMs(noc)
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:user:" + noc, Card: card})
		if permanent, _, _ := delivery(err); !permanent || !strings.Contains(err.Error(), "code 50007") {
			t.Fatalf("%v: want permanent Cannot send messages to this user", err)
		}
	})

	t.Run("a held channel answers RetryAfter without calling Discord", func(t *testing.T) {
		ch := "112233445566779099"
		h.discord.AddChannel(guildID, ch, "held")
		h.discord.RateLimit(discordtest.RouteMessageCreate, 1, 5*time.Second, false)
		if _, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:channel:" + ch, Card: card}); err == nil {
			t.Fatal("no error")
		}
		calls := len(h.discord.Requests())
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := h.adapter.Post(ctx, threads.PostRequest{Target: "discord:channel:" + ch, Card: card})
		if _, after, _ := delivery(err); after <= 0 || after > 5*time.Second {
			t.Fatalf("%v: want RetryAfter within Discord's 5 s", err)
		}
		if len(h.discord.Requests()) != calls {
			t.Fatal("a post went to Discord while Discord asked to wait")
		}
	})
}

// TestErrorsNeverCarryAnInteractionToken: a follow-up's address holds the
// interaction token, a capability for 15 minutes; no error says it.
func TestErrorsNeverCarryAnInteractionToken(t *testing.T) {
	h := newHarness(t)
	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: "ab1|launch|a-x|1"})
	if !res.Answered() {
		t.Fatal(res.Problem)
	}
	h.discord.RateLimit(discordtest.RouteFollowup, 10, time.Millisecond, false)
	err := h.adapter.Tell(context.Background(), threads.TellRequest{Tenant: "acme", User: kevin, Reply: res.Token, Text: "x"})
	if _, after, _ := delivery(err); after <= 0 || strings.Contains(err.Error(), res.Token) {
		t.Fatalf("%v: want RetryAfter, without the token", err)
	}
	o := h.opts
	cfg := *o.Config
	cfg.APIURL = "http://127.0.0.1:1/"
	o.Config = &cfg
	down, err := discordad.New(o)
	if err != nil {
		t.Fatal(err)
	}
	err = down.Tell(context.Background(), threads.TellRequest{Tenant: "acme", User: kevin, Reply: res.Token, Text: "x"})
	if err == nil || strings.Contains(err.Error(), res.Token) || strings.Contains(err.Error(), botToken) {
		t.Fatalf("%v: want an error without the token", err)
	}
}

// TestThreadStartFailureKeepsTheCard: a thread that cannot be started
// does not make the outbox post the card again; the first reply starts
// it.
func TestThreadStartFailureKeepsTheCard(t *testing.T) {
	h := newHarness(t)
	h.discord.Fail(discordtest.RouteThreadStart, 1, http.StatusInternalServerError, 0)
	h.ingest(t, "merge.json")
	h.drain(t)
	p := h.post(t, "a-merge1", approvalTarget, 1)
	if p.ThreadRef != "" || len(h.discord.Messages(chApproval)) != 1 {
		t.Fatalf("post %+v, messages %+v: want the one card, without a thread", p, h.discord.Messages(chApproval))
	}
	err := h.adapter.Reply(context.Background(), threads.ReplyRequest{Root: p, Tenant: "acme",
		Kind: templates.ThreadBackendMessage, Text: "The call ran."})
	if err != nil {
		t.Fatal(err)
	}
	card, _ := h.discord.Message(p.Ref)
	if card.Thread != p.Ref || len(h.discord.Messages(card.Thread)) != 1 {
		t.Fatalf("the reply did not start the thread: %+v", card)
	}
	// A second reply finds it (Discord: already created) rather than failing.
	if err := h.adapter.Reply(context.Background(), threads.ReplyRequest{Root: p, Tenant: "acme",
		Kind: templates.ThreadBackendMessage, Text: "And again."}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.discord.Messages(card.Thread)); n != 2 {
		t.Fatalf("%d replies in the thread", n)
	}
}

// inProcessAdapter is a fresh adapter on the harness's options that
// calls the fake in process (discordtest.Transport), pacing each channel
// at limit with burst (zero: the defaults). Built inside a
// testing/synctest bubble, its pacing and the fake's pace then read the
// same clock, the bubble's.
func inProcessAdapter(t *testing.T, h *harness, limit rate.Limit, burst int) *discordad.Adapter {
	t.Helper()
	o := h.opts
	o.PerChannelRate, o.Burst = limit, burst
	o.HTTPClient = &http.Client{Transport: h.discord.Transport()}
	ad, err := discordad.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ad.Close)
	return ad
}

// TestBurstIsPacedWithoutRateLimits: 200 cards into one channel at once,
// from eight outbox workers, with the adapter's default pace (one every
// 1.25 s, within Discord's "about five every five seconds"), against a
// fake that answers 429 to any message create beyond that same pace. It
// runs under testing/synctest, the fake answering in process: both
// token buckets read the bubble's clock, so the four minutes of pacing
// take no real time and the fake sees exactly the pace the adapter kept,
// with no loopback jitter to allow for. What proves it is what the fake
// counted: no 429, every card once and with its thread, and, by the
// fake's own clock, the burst drained as fast as the pace allows and no
// faster.
func TestBurstIsPacedWithoutRateLimits(t *testing.T) {
	const (
		cards   = 200
		workers = 8
		burst   = discordad.DefaultBurst
	)
	interval := time.Duration(float64(time.Second) / float64(discordad.DefaultPerChannelRate))
	h := newHarnessWith(t, harnessOptions{
		discord: discordtest.Options{PerChannelRate: discordad.DefaultPerChannelRate, Burst: burst},
	})
	synctest.Test(t, func(t *testing.T) {
		ad := inProcessAdapter(t, h, 0, 0)
		card := fixtureCard(t, "search.json")
		jobs := make(chan int)
		var wg sync.WaitGroup
		var mu sync.Mutex
		var errs []error
		for range workers {
			wg.Go(func() {
				for range jobs {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // the outbox's PerformTimeout
					_, err := ad.Post(ctx, threads.PostRequest{Target: approvalTarget, Card: card})
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
		if n := h.discord.RateLimited(); n != 0 {
			t.Fatalf("%d message creates met a 429", n)
		}
		if n := h.discord.Calls(discordtest.RouteMessageCreate); n != cards {
			t.Fatalf("%d message creates reached the fake, want one a card: %d", n, cards)
		}
		msgs := h.discord.Messages(chApproval)
		seen := map[string]bool{}
		for _, m := range msgs {
			seen[m.ID] = true
			if m.Thread == "" {
				t.Fatalf("card %s has no thread", m.ID)
			}
		}
		if len(msgs) != cards || len(seen) != cards {
			t.Fatalf("%d messages with %d distinct ids, want %d", len(msgs), len(seen), cards)
		}
		// The fake's limiter allowed each card, so none came early; its
		// clock shows the pacing wasted no time either.
		span := msgs[len(msgs)-1].CreatedAt.Sub(msgs[0].CreatedAt)
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
		discord: discordtest.Options{PerChannelRate: discordad.DefaultPerChannelRate, Burst: discordad.DefaultBurst},
	})
	synctest.Test(t, func(t *testing.T) {
		ad := inProcessAdapter(t, h, rate.Inf, 0)
		card := fixtureCard(t, "search.json")
		var wg sync.WaitGroup
		var mu sync.Mutex
		limited := 0
		for range 60 {
			wg.Go(func() {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_, err := ad.Post(ctx, threads.PostRequest{Target: approvalTarget, Card: card})
				if _, after, _ := delivery(err); after > 0 {
					mu.Lock()
					limited++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if h.discord.RateLimited() == 0 || limited == 0 {
			t.Fatalf("unpaced burst: %d 429s, %d RetryAfter errors; the fake does not enforce its pace", h.discord.RateLimited(), limited)
		}
	})
}

func TestNoticeSplitsLongTextAtLineEnds(t *testing.T) {
	h := newHarness(t)
	var lines []string
	for i := range 60 {
		lines = append(lines, fmt.Sprintf("• payments.refund (a-%03d) · waiting 2h · deadline 2026-11-30 18:00 UTC @everyone", i))
	}
	err := h.adapter.Notice(context.Background(), threads.NoticeRequest{Target: "discord:channel:" + chAudit, Tenant: "acme",
		Text: strings.Join(lines, "\n")})
	if err != nil {
		t.Fatal(err)
	}
	msgs := h.discord.Messages(chAudit)
	if len(msgs) < 2 {
		t.Fatalf("%d messages, want the digest split", len(msgs))
	}
	var all strings.Builder
	for _, m := range msgs {
		if len([]rune(m.Content)) > 2000 || strings.Contains(m.Content, "@everyone") {
			t.Fatalf("message of %d characters: %q", len([]rune(m.Content)), m.Content)
		}
		all.WriteString(plain(m.Content) + "\n")
	}
	for _, l := range lines {
		if !strings.Contains(all.String(), strings.TrimSuffix(l, " @everyone")) {
			t.Fatalf("line %q lost", l)
		}
	}
}
