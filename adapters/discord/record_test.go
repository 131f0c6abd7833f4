package discord_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/time/rate"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// gatedService is threads with a gate before a decision is recorded: the
// decision's click says it started (entered, with the click's
// interaction token), then waits until the test opens the gate (release)
// or the click's context ends (it is then told, as threads tells it, that
// it could not be recorded in time), as a store busy with other writers
// would hold it. After threads committed it notes whether the fake had
// the click answered by then.
type gatedService struct {
	*threads.Service
	fake    *discordtest.Server
	entered chan string
	release chan struct{}

	mu               sync.Mutex
	answeredAtCommit map[string]bool
}

func newGatedService(h *harness) *gatedService {
	return &gatedService{Service: h.svc, fake: h.discord, entered: make(chan string, 4), release: make(chan struct{}),
		answeredAtCommit: map[string]bool{}}
}

func (g *gatedService) Click(ctx context.Context, req threads.ClickRequest) threads.Clicked {
	if req.Do != threads.ClickRecord {
		return g.Service.Click(ctx, req)
	}
	g.entered <- req.Person.Reply
	select {
	case <-g.release:
	case <-ctx.Done():
		return threads.Clicked{Retry: true, Reason: say.Reason{Kind: say.NotInTime}}
	}
	out := g.Service.Click(ctx, req)
	g.mu.Lock()
	g.answeredAtCommit[req.Person.Reply] = g.fake.Answered(req.Person.Reply)
	g.mu.Unlock()
	return out
}

// waitEntered waits for Decide to start on a click.
func (g *gatedService) waitEntered(t *testing.T) string {
	t.Helper()
	select {
	case token := <-g.entered:
		return token
	case <-time.After(5 * time.Second):
		t.Fatal("Decide was never called")
		return ""
	}
}

// TestApproveIsAnsweredOnlyAfterItIsRecorded: the first answer to an
// Approve click (on a call that is not destructive, whose Approve asks
// nothing first) is written only once the decision is committed. While
// Decide is held, Discord has no answer and the card is as it was; once
// it is let go the answer is the deciding card, and by then the decision
// is in the store, on its way to the backend. Over the HTTP endpoint and
// over the gateway alike.
func TestApproveIsAnsweredOnlyAfterItIsRecorded(t *testing.T) {
	for _, gateway := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "gateway"}[gateway], func(t *testing.T) {
			h := newHarnessWith(t, harnessOptions{gateway: gateway})
			h.ingest(t, "search.json")
			h.drain(t)
			card := h.card(t, "a-search1", approvalTarget, 1)
			g := newGatedService(h)
			h.clicks.Use(g)

			results := make(chan discordtest.Result, 1)
			go func() {
				results <- h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval,
					CustomID: button(t, card, templates.ActionApprove)})
			}()
			token := g.waitEntered(t)
			// Held: no answer may have reached Discord. Checked at once,
			// not over a wait: the click has threads.RecordBound in all,
			// and a wait here would spend it, so that a test stalled a
			// little longer would see the click given up, not held.
			select {
			case res := <-results:
				t.Fatalf("answered %+v while the decision was not recorded", res.Response)
			default:
			}
			if h.discord.Answered(token) {
				t.Fatal("Discord has an answer while the decision is not recorded")
			}
			if m, _ := h.discord.Message(card.ID); m.Edits != 0 || decisionButtons(m.Buttons) != 2 {
				t.Fatalf("the card changed before the decision was recorded: %+v", m)
			}
			if a, err := h.store.ApprovalGet(context.Background(), "a-search1"); err != nil || len(a.Deciding) != 0 {
				t.Fatalf("approval %+v (%v): recorded before Decide ran", a, err)
			}

			close(g.release)
			res := <-results
			h.deciding(t, res, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
			g.mu.Lock()
			early := g.answeredAtCommit[token]
			g.mu.Unlock()
			if early {
				t.Fatal("Discord had the answer before the decision was committed")
			}
			a, err := h.store.ApprovalGet(context.Background(), "a-search1")
			if err != nil || len(a.Deciding) == 0 {
				t.Fatalf("approval %+v (%v): answered, but no decision in flight", a, err)
			}
			h.drain(t)
			if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Actor != "user:kevin" {
				t.Fatalf("decisions %+v", got)
			}
		})
	}
}

// TestUnrecordedClickIsToldInTime: when the decision cannot be recorded
// within the handler's budget, the click is still answered within
// Discord's 3 s, to the person alone, with a sentence saying it was not
// recorded; the card keeps its buttons, nothing is in flight, nothing
// reaches the backend, and the next click decides. Decide is held in two
// ways: by a gate that never opens (it gives up with the click's
// context), and for real, by another writer holding the SQLite store's
// write lock (over HTTP the replay check meets that lock first and says
// it cannot check the request). Over the HTTP endpoint and over the
// gateway alike.
func TestUnrecordedClickIsToldInTime(t *testing.T) {
	for _, gateway := range []bool{false, true} {
		for _, hold := range []string{"gate", "store lock"} {
			name := map[bool]string{false: "http", true: "gateway"}[gateway] + "/" + hold
			t.Run(name, func(t *testing.T) {
				h := newHarnessWith(t, harnessOptions{gateway: gateway})
				h.ingest(t, "search.json")
				h.drain(t)
				card := h.card(t, "a-search1", approvalTarget, 1)
				approve := button(t, card, templates.ActionApprove)
				release := func() { h.clicks.Use(h.svc) }
				switch hold {
				case "gate":
					h.clicks.Use(newGatedService(h))
				case "store lock":
					release = lockStore(t, h.store)
				}

				res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: approve})
				want := "could not record your decision"
				if !gateway && hold == "store lock" {
					// Over HTTP the store is met first by the replay
					// check, which gives up within its own bound.
					want = say.CannotCheck.Text()
				}
				answeredAtOnce(t, res, want)
				if !strings.Contains(res.Response.Content, "Nothing was sent") || res.Elapsed >= 3*time.Second {
					t.Fatalf("answer %q after %s", res.Response.Content, res.Elapsed)
				}
				if m, _ := h.discord.Message(card.ID); m.Edits != 0 || decisionButtons(m.Buttons) != 2 || m.Content != card.Content {
					t.Fatalf("the card changed though nothing was recorded: %+v", m)
				}
				t.Logf("told %q after %s", res.Response.Content, res.Elapsed)

				// Let the store go (or the real threads take clicks again):
				// nothing was recorded, and the next click decides.
				release()
				if a, err := h.store.ApprovalGet(context.Background(), "a-search1"); err != nil || len(a.Deciding) != 0 {
					t.Fatalf("approval %+v (%v): a decision in flight though the click was told it was not recorded", a, err)
				}
				h.drain(t)
				if n := len(h.backend.Decisions()); n != 0 {
					t.Fatalf("%d decisions reached the backend", n)
				}
				again := h.click(t, kevin, chApproval, approve)
				h.deciding(t, again, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
				h.drain(t)
				if n := len(h.backend.Decisions()); n != 1 {
					t.Fatalf("%d decisions after the second click", n)
				}
			})
		}
	}
}

// lockStore holds the store's write lock (an IMMEDIATE transaction kept
// open) until release is called; release may be called more than once.
func lockStore(t *testing.T, st store.Store) (release func()) {
	t.Helper()
	locked, free, done := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	go func() {
		done <- st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
			if _, err := tx.ApprovalGetForUpdate(ctx, "a-search1"); err != nil {
				return err
			}
			close(locked)
			<-free
			return nil
		})
	}()
	select {
	case <-locked:
	case err := <-done:
		t.Fatalf("lock the store: %v", err)
	}
	release = sync.OnceFunc(func() {
		close(free)
		if err := <-done; err != nil {
			t.Errorf("the transaction holding the store: %v", err)
		}
	})
	t.Cleanup(release)
	return release
}

// TestPaceKeys: the budget each outbox row spends, as Discord counts its
// limits: a card and a notice spend their channel's message budget (a
// DM's, by its user), an edit the target's edit budget, one of its own;
// thread replies, private answers, decisions and mail spend none, and
// nor does anything not for Discord.
func TestPaceKeys(t *testing.T) {
	h := newHarness(t)
	const ch, user = "112233445566778899", "223344556677889900"
	kinds := []string{threads.KindPostCard, threads.KindNotice, threads.KindEditCard, threads.KindReply,
		threads.KindTell, threads.KindDecision, threads.KindEmail}
	want := map[string]map[string]string{
		"discord:channel:" + ch: {
			threads.KindPostCard: "discord:send:" + ch,
			threads.KindNotice:   "discord:send:" + ch,
			threads.KindEditCard: "discord:edit:" + ch,
		},
		"discord:user:" + user: {
			threads.KindPostCard: "discord:send:dm:" + user,
			threads.KindNotice:   "discord:send:dm:" + user,
			threads.KindEditCard: "discord:edit:dm:" + user,
		},
		"slack:C0APPROVALS":  {},
		"backend":            {},
		"leads@acme.example": {},
		"discord:channel:":   {},
		"not a target":       {},
		"":                   {},
	}
	for target, keys := range want {
		for _, kind := range kinds {
			if got := h.adapter.PaceKey(kind, target); got != keys[kind] {
				t.Errorf("PaceKey(%q, %q) = %q, want %q", kind, target, got, keys[kind])
			}
		}
	}
	if a, b := h.adapter.PaceKey(threads.KindPostCard, "discord:channel:"+ch), h.adapter.PaceKey(threads.KindPostCard, "discord:channel:112233445566778800"); a == b {
		t.Errorf("two channels share the key %q", a)
	}

	budget := func(o func(*discordad.Options)) *discordad.Surface {
		opts := h.opts
		o(&opts)
		ad, err := discordad.NewSurface(opts)
		if err != nil {
			t.Fatal(err)
		}
		return ad
	}
	for _, c := range []struct {
		name  string
		set   func(*discordad.Options)
		every time.Duration
		burst int
	}{
		// One every 1.25 s, burst 1: never more than five in five seconds.
		{"defaults", func(o *discordad.Options) { o.PerChannelRate, o.Burst = 0, 0 }, 1250 * time.Millisecond, 1},
		{"configured", func(o *discordad.Options) { o.PerChannelRate, o.Burst = 4, 3 }, 250 * time.Millisecond, 3},
		{"switched off", func(o *discordad.Options) { o.PerChannelRate, o.Burst = rate.Inf, 0 }, 0, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			ad := budget(c.set)
			for _, key := range []string{"discord:send:" + ch, "discord:send:dm:" + user, "discord:edit:" + ch, "discord:edit:dm:" + user} {
				if every, burst := ad.Pace(key); every != c.every || burst != c.burst {
					t.Errorf("Pace(%q) = %s, %d; want %s, %d", key, every, burst, c.every, c.burst)
				}
			}
			for _, key := range []string{"", "slack:post:C0APPROVALS", "slack:update", "discord:reply:" + ch, "discord:"} {
				if every, _ := ad.Pace(key); every != 0 {
					t.Errorf("Pace(%q) = %s, want unpaced", key, every)
				}
			}
		})
	}
}
