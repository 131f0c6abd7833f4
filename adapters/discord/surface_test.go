package discord_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/adapters/logsurface"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// TestFailuresAreClassified: the surface says which failures the outbox
// should wait on (Discord's retry_after), give up on, or retry, beyond
// the ones every surface meets (TestConformance), and how it words them.
func TestFailuresAreClassified(t *testing.T) {
	h := newHarness(t)
	card := threadstest.Card(t, "merge.json")
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
		{"500", func(ch string) { h.discord.Fail(discordtest.RouteMessageCreate, 1, 500, 0) }, want{plain: true}},
		{"502", func(ch string) { h.discord.Fail(discordtest.RouteMessageCreate, 1, 502, 0) }, want{plain: true}},
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
			permanent, after, classified := threadstest.Delivery(err)
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
		o.APIURL = "http://127.0.0.1:1/"
		down, err := discordad.NewSurface(o)
		if err != nil {
			t.Fatal(err)
		}
		_, err = down.Post(context.Background(), threads.PostRequest{Target: approvalTarget, Card: card})
		if _, _, classified := threadstest.Delivery(err); err == nil || classified {
			t.Fatalf("%v: want a plain error", err)
		}
	})

	t.Run("edit of a deleted card", func(t *testing.T) {
		err := h.adapter.Edit(context.Background(), threads.EditRequest{Post: threads.PostRef{ApprovalID: "a-merge1",
			Target: approvalTarget, Channel: chApproval, Ref: "1399999999999999999"}, Card: card})
		if permanent, _, _ := threadstest.Delivery(err); !permanent || !strings.Contains(err.Error(), "code 10008") {
			t.Fatalf("%v: want permanent Unknown Message", err)
		}
	})

	t.Run("a card for a role", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:role:" + roleOncall, Card: card})
		if permanent, _, _ := threadstest.Delivery(err); !permanent {
			t.Fatalf("%v: want permanent", err)
		}
	})

	t.Run("a DM to an unknown user", func(t *testing.T) {
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:user:123456789012345678", Card: card})
		if permanent, _, _ := threadstest.Delivery(err); !permanent || !strings.Contains(err.Error(), "Unknown User") {
			t.Fatalf("%v: want permanent Unknown User", err)
		}
	})

	t.Run("a DM to someone who takes none", func(t *testing.T) {
		h.discord.BlockDMs(noc)
		_, err := h.adapter.Post(context.Background(), threads.PostRequest{Target: "discord:user:" + noc, Card: card})
		if permanent, _, _ := threadstest.Delivery(err); !permanent || !strings.Contains(err.Error(), "code 50007") {
			t.Fatalf("%v: want permanent Cannot send messages to this user", err)
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
	if _, after, _ := threadstest.Delivery(err); after <= 0 || strings.Contains(err.Error(), res.Token) {
		t.Fatalf("%v: want RetryAfter, without the token", err)
	}
	o := h.opts
	o.APIURL = "http://127.0.0.1:1/"
	down, err := discordad.NewSurface(o)
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
	err := h.adapter.Reply(context.Background(), threads.ReplyRequest{Root: threads.RefOf(p), Tenant: "acme",
		Kind: templates.ThreadBackendMessage, Text: "The call ran."})
	if err != nil {
		t.Fatal(err)
	}
	card, _ := h.discord.Message(p.Ref)
	if card.Thread != p.Ref || len(h.discord.Messages(card.Thread)) != 1 {
		t.Fatalf("the reply did not start the thread: %+v", card)
	}
	// A second reply finds it (Discord: already created) rather than failing.
	if err := h.adapter.Reply(context.Background(), threads.ReplyRequest{Root: threads.RefOf(p), Tenant: "acme",
		Kind: templates.ThreadBackendMessage, Text: "And again."}); err != nil {
		t.Fatal(err)
	}
	if n := len(h.discord.Messages(card.Thread)); n != 2 {
		t.Fatalf("%d replies in the thread", n)
	}
}

// bubbleClock is the clock of threads inside a testing/synctest bubble:
// time.Now there is the bubble's.
type bubbleClock struct{}

func (bubbleClock) Now() time.Time { return time.Now() }

// bubbleBot is the bot's outbound path built inside a testing/synctest
// bubble, on the harness's configuration and fake Discord: a SQLite store
// opened in the bubble (its pace table is where the outbox keeps each
// channel's budget), threads on the bubble's clock, and a fresh adapter
// that calls the fake in process (discordtest.Transport) with the given
// pace (zero: the defaults; rate.Inf: none). The outbox loop's timers,
// the store's GCRA (by the times threads hands it), the fake's own pace
// and its message times then all read the one virtual clock, so minutes
// of pacing take no real time and the fake sees exactly the pace the
// outbox kept. Everything is closed before the bubble ends.
type bubbleBot struct {
	svc     *threads.Service
	store   *sqlite.Store
	metrics *prometheus.Registry
}

func newBubbleBot(t *testing.T, h *harness, limit rate.Limit, burst int) *bubbleBot {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "bubble.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	o := h.opts
	o.Store = st
	o.PerChannelRate, o.Burst = limit, burst
	o.HTTPClient = &http.Client{Transport: h.discord.Transport()}
	ad, err := discordad.NewSurface(o)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	svc, err := threads.New(threads.Options{Store: st, Tenants: h.cfg, Clock: bubbleClock{}, Logger: o.Logger,
		Metrics: threads.NewMetrics(reg), Surfaces: map[string]threads.Surface{"discord": ad},
		Fallback: logsurface.New(logsurface.Options{Out: io.Discard, Renderer: threadstest.Renderer(t)})})
	if err != nil {
		t.Fatal(err)
	}
	return &bubbleBot{svc: svc, store: st, metrics: reg}
}

// ingestCopies ingests n requests like the fixture search.json, each an
// approval of its own (a-burst000, …) whose card goes to the approval
// channel, and returns their ids.
func (b *bubbleBot) ingestCopies(t *testing.T, n int) []string {
	t.Helper()
	p, err := fixtures.Path("events", "search.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range n {
		id := fmt.Sprintf("a-burst%03d", i)
		raw := bytes.ReplaceAll(body, []byte("a-search1"), []byte(id))
		raw = bytes.ReplaceAll(raw, []byte(`"evt-0004"`), fmt.Appendf(nil, `"evt-burst-%03d"`, i))
		ev, err := approval.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		ev.Time, ev.Approval.RequestedAt = time.Now(), time.Now() // the fixture's lie in the bubble's future
		sum := sha256.Sum256(raw)
		if _, err := b.svc.Ingest(context.Background(), threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
			t.Fatalf("ingest %s: %v", id, err)
		}
		ids = append(ids, id)
	}
	return ids
}

// runOutbox runs threads' own outbox loop (RunOutbox, default worker
// options: eight chat workers, the paced poll at 100 ms) until every row
// is done or dead, and stops it. It fails when that takes more than an
// hour of the bubble's clock.
func (b *bubbleBot) runOutbox(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.svc.RunOutbox(ctx, threads.WorkerOptions{}) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("RunOutbox: %v", err)
		}
	}()
	start := time.Now()
	for {
		time.Sleep(time.Second) // the bubble's: no real time passes
		st, err := b.store.OutboxStats(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if st.Pending == 0 {
			return
		}
		if time.Since(start) > time.Hour {
			t.Fatalf("%d rows still pending after an hour", st.Pending)
		}
	}
}

// deliveries is threads' count of Discord rows of kind performed with
// result (bot_deliveries_total).
func (b *bubbleBot) deliveries(t *testing.T, kind, result string) int {
	t.Helper()
	families, err := b.metrics.Gather()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"surface": "discord", "kind": kind, "result": result}
	for _, f := range families {
		if f.GetName() != "bot_deliveries_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			match := 0
			for _, l := range m.GetLabel() {
				if want[l.GetName()] == l.GetValue() {
					match++
				}
			}
			if match == len(want) {
				return int(m.GetCounter().GetValue())
			}
		}
	}
	return 0
}

// approvalOf is the approval a card's buttons name.
func approvalOf(t *testing.T, m discordtest.Message) string {
	t.Helper()
	for _, b := range m.Buttons {
		if a, err := templates.ParseAction(b.CustomID); err == nil {
			return a.ApprovalID
		}
	}
	t.Fatalf("message %s has no button of a card", m.ID)
	return ""
}

// checkEveryCardOnce checks the approval channel holds exactly one card
// of each id, in the thread threads recorded for it, and returns the
// cards oldest first.
func checkEveryCardOnce(t *testing.T, h *harness, b *bubbleBot, ids []string) []discordtest.Message {
	t.Helper()
	msgs := h.discord.Messages(chApproval)
	if len(msgs) != len(ids) {
		t.Fatalf("%d messages in the channel, want one a card: %d", len(msgs), len(ids))
	}
	byApproval := map[string]discordtest.Message{}
	for _, m := range msgs {
		id := approvalOf(t, m)
		if _, dup := byApproval[id]; dup {
			t.Fatalf("%s was posted twice", id)
		}
		byApproval[id] = m
	}
	for _, id := range ids {
		m, ok := byApproval[id]
		if !ok {
			t.Fatalf("%s was never posted", id)
		}
		posts, err := b.store.PostList(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if len(posts) != 1 || posts[0].Channel != chApproval || posts[0].Ref != m.ID || m.Thread == "" || posts[0].ThreadRef != m.Thread {
			t.Fatalf("%s: posts %+v for message %s with thread %q: want the one card, recorded with its thread", id, posts, m.ID, m.Thread)
		}
	}
	if n := h.discord.Calls(discordtest.RouteThreadStart); n != len(ids) {
		t.Fatalf("%d thread starts, want one a card", n)
	}
	st, err := b.store.OutboxStats(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 0 || st.Dead != 0 {
		t.Fatalf("outbox %+v: want every row done, none dead", st)
	}
	return msgs
}

// TestBurstIsPacedWithoutRateLimits: 200 cards ingested at once into one
// channel through threads, performed by threads' own outbox loop
// (RunOutbox, eight chat workers) with the adapter's default pace (one
// every 1.25 s, within Discord's "about five every five seconds"),
// against a fake that answers 429 to any message create beyond that same
// pace. No worker sleeps: the outbox claims a card only when the
// channel's budget in the store has room. It runs under testing/synctest
// (newBubbleBot), so the four minutes of pacing take no real time and the
// fake sees exactly the pace the outbox kept. What proves it is what the
// fake counted: no 429, every card once and with its thread, and, by the
// fake's own clock, the burst drained at the limit: no card sooner than
// the pace after the one before, and none later than one poll of the
// chat lane (PacedPoll, 100 ms) after its turn.
func TestBurstIsPacedWithoutRateLimits(t *testing.T) {
	const (
		cards = 200
		burst = discordad.DefaultBurst
		poll  = 100 * time.Millisecond // threads.WorkerOptions' default PacedPoll
	)
	interval := time.Duration(float64(time.Second) / float64(discordad.DefaultPerChannelRate))
	h := newHarnessWith(t, harnessOptions{
		discord: discordtest.Options{PerChannelRate: discordad.DefaultPerChannelRate, Burst: burst},
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleBot(t, h, 0, 0)
		ids := b.ingestCopies(t, cards)
		start := time.Now()
		b.runOutbox(t)
		if n := h.discord.RateLimited(); n != 0 {
			t.Fatalf("%d message creates met a 429", n)
		}
		if n := h.discord.Calls(discordtest.RouteMessageCreate); n != cards {
			t.Fatalf("%d message creates reached the fake, want one a card: %d", n, cards)
		}
		msgs := checkEveryCardOnce(t, h, b, ids)
		if ok, retried := b.deliveries(t, threads.KindPostCard, "ok"), b.deliveries(t, threads.KindPostCard, "retry"); ok != cards || retried != 0 {
			t.Fatalf("%d cards performed, %d retried: want each once", ok, retried)
		}
		if first := msgs[0].CreatedAt.Sub(start); first > poll {
			t.Fatalf("the first card went %s after the burst arrived, want at once", first)
		}
		// The fake's limiter allowed each card, so none came early; its
		// clock shows the pacing wasted no time either.
		for i := 1; i < len(msgs); i++ {
			if gap := msgs[i].CreatedAt.Sub(msgs[i-1].CreatedAt); gap < interval || gap > interval+poll {
				t.Fatalf("card %d came %s after the one before, want %s to %s", i, gap, interval, interval+poll)
			}
		}
		span := msgs[len(msgs)-1].CreatedAt.Sub(msgs[0].CreatedAt)
		if least := time.Duration(cards-burst) * interval; span < least || span > least+time.Duration(cards-burst)*poll {
			t.Fatalf("the fake took %d cards over %s, want %s at one every %s", cards, span, least, interval)
		}
		t.Logf("%d cards over %s of the fake's clock at one every %s, burst %d: no 429", cards, span, interval, burst)
	})
}

// TestUnpacedBurstMeetsRateLimits proves the fake's pace bites, and what
// the outbox does when it does: the same kind of burst through the same
// outbox against the same fake, with the adapter's pacing switched off
// (rate.Inf: its rows spend no budget), meets 429s. Each is a retry, not
// a failure (none dead), and holds the channel in the store for as long
// as Discord asked: after a 429 no message create reaches the fake before
// its retry_after has passed, from any worker. Every card still reaches
// the channel exactly once.
func TestUnpacedBurstMeetsRateLimits(t *testing.T) {
	const cards = 60
	h := newHarnessWith(t, harnessOptions{
		discord: discordtest.Options{PerChannelRate: discordad.DefaultPerChannelRate, Burst: discordad.DefaultBurst},
	})
	synctest.Test(t, func(t *testing.T) {
		b := newBubbleBot(t, h, rate.Inf, 0)
		ids := b.ingestCopies(t, cards)
		b.runOutbox(t)
		limited := h.discord.RateLimited()
		if limited == 0 {
			t.Fatal("unpaced burst: no 429; the fake does not enforce its pace")
		}
		if n := h.discord.Calls(discordtest.RouteMessageCreate); n != cards+limited {
			t.Fatalf("%d message creates for %d cards and %d 429s", n, cards, limited)
		}
		checkEveryCardOnce(t, h, b, ids)
		if retried := b.deliveries(t, threads.KindPostCard, "retry"); retried != limited {
			t.Fatalf("%d retries for %d 429s", retried, limited)
		}
		// Each 429 holds the channel until its retry_after: no create
		// reaches the fake in that window from any worker, but for those
		// claimed before the 429 was recorded (within a few of the
		// bubble's milliseconds of it; the next poll of the chat lane is
		// 100 ms later).
		const settle = 50 * time.Millisecond
		var creates, refused []discordtest.Request
		for _, r := range h.discord.Requests() {
			if r.Route != discordtest.RouteMessageCreate {
				continue
			}
			creates = append(creates, r)
			if r.Status == http.StatusTooManyRequests {
				refused = append(refused, r)
			}
		}
		for _, r := range refused {
			if r.RetryAfter <= settle {
				t.Fatalf("a 429 asked to wait %s only", r.RetryAfter)
			}
			for _, c := range creates {
				if c.At.After(r.At.Add(settle)) && c.At.Before(r.At.Add(r.RetryAfter)) {
					t.Fatalf("a create %s after a 429 that asked to wait %s: the channel was not held", c.At.Sub(r.At), r.RetryAfter)
				}
			}
		}
		t.Logf("%d cards, %d 429s, drained over %s of the fake's clock", cards, limited, creates[len(creates)-1].At.Sub(creates[0].At))
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
