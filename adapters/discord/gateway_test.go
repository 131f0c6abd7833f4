package discord_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// TestGatewayFeedsTheSameHandler: without a public key the adapter holds
// a real discordgo gateway session (identified with no intents) and
// answers interactions through the REST callback within 3 s, with the
// same answers and work as over HTTP.
func TestGatewayFeedsTheSameHandler(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{gateway: true})
	ids := h.discord.Identifies()
	if len(ids) != 1 || !ids[0].TokenOK || ids[0].Intents != discordgo.IntentsNone {
		t.Fatalf("identifies %+v, want one with the token and no intents", ids)
	}
	ev := h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)

	// The destructive call's confirmation is a callback answer, and so is
	// its submission's.
	res := h.approve(t, kevin, chApproval, button(t, card, templates.ActionApprove), card.ID, "fine")
	if res.Transport != "gateway" {
		t.Fatalf("answer %+v over %s", res.Response, res.Transport)
	}
	h.deciding(t, res, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Actor != "user:kevin" || got[0].Request.ArgsSHA256 != ev.Approval.Call.ArgsSHA256 {
		t.Fatalf("decisions %+v", got)
	}
	if text := h.card(t, "a-merge1", approvalTarget, 1).Text(); !strings.Contains(text, "Approved by user:kevin") {
		t.Fatalf("card %q", text)
	}
	h.outcome(t, res, card.ID, "Approved by user:kevin", "Recorded: your approval reached the job backend")

	// The deny modal is a callback answer too.
	h.ingest(t, "search.json")
	h.drain(t)
	deny := button(t, h.card(t, "a-search1", approvalTarget, 1), templates.ActionDeny)
	modal := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: deny})
	if !modal.Answered() || modal.Response.Type != discordgo.InteractionResponseModal || modal.Response.CustomID != deny {
		t.Fatalf("Deny over the gateway answered %+v (%s)", modal.Response, modal.Problem)
	}
	answeredAtOnce(t, h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: "nope"}),
		"not one the bot knows")
	// A refusal over the gateway is the first answer too.
	answeredAtOnce(t, h.discord.ClickButton(discordtest.Click{User: vic, Channel: chApproval,
		CustomID: button(t, h.card(t, "a-search1", approvalTarget, 1), templates.ActionApprove)}), "viewer, which cannot decide")
}

// TestGatewayLockLetsOneReplicaConnect: two replicas share one lock; only
// the holder connects, and when its connection drops or it stops, the
// other takes over. Never are two sessions connected at once.
func TestGatewayLockLetsOneReplicaConnect(t *testing.T) {
	lock := discordtest.NewLocker()
	h := newHarnessWith(t, harnessOptions{gateway: true, manual: true,
		adapter: func(o *discordad.Options) { o.Locker = lock }})
	type replica struct {
		ad     *discordad.Adapter
		logs   *syncBuffer
		cancel context.CancelFunc
		done   chan error
	}
	start := func(ad *discordad.Adapter, logs *syncBuffer) *replica {
		ctx, cancel := context.WithCancel(context.Background())
		r := &replica{ad: ad, logs: logs, cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- ad.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			<-r.done
		})
		return r
	}
	stop := func(r *replica) {
		r.cancel()
		if err := <-r.done; err != nil {
			t.Errorf("Run: %v", err)
		}
		r.done <- nil // for the cleanup
	}
	o := h.opts
	otherLogs := &syncBuffer{}
	o.Logger = slog.New(slog.NewTextHandler(otherLogs, nil))
	other := newAdapter(t, o, h.svc)
	a := start(h.adapter, h.logs)
	b := start(other, otherLogs)

	connected := func(r *replica) int { return strings.Count(r.logs.String(), "gateway connected") }
	// One replica connected and the other stopped at the lock: neither
	// can change anything until the lock is let go.
	threadstest.Eventually(t, "one session, and the other replica waiting for the lock", func() bool {
		return h.discord.GatewaySessions() == 1 && lock.Waiting() == 1
	})
	if n := len(h.discord.Identifies()); n != 1 || lock.Acquisitions() != 1 || connected(a)+connected(b) != 1 {
		t.Fatalf("%d identifies, %d acquisitions: only the lock holder may connect", n, lock.Acquisitions())
	}
	holder, waiter := a, b
	if connected(b) == 1 {
		holder, waiter = b, a
	}

	// The holder's connection drops: it lets go, and the waiter takes over.
	h.discord.DropGateway()
	threadstest.Eventually(t, "the waiter connecting", func() bool { return connected(waiter) == 1 && h.discord.GatewaySessions() == 1 })
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	res := h.approve(t, kevin, chApproval, button(t, card, templates.ActionApprove), card.ID, "")
	if res.Transport != "gateway" {
		t.Fatalf("transport %s", res.Transport)
	}
	h.deciding(t, res, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")

	// The new holder stops (a replica going away): the first takes over.
	stop(waiter)
	threadstest.Eventually(t, "the first replica connecting again", func() bool {
		return connected(holder) == 2 && h.discord.GatewaySessions() == 1
	})
	if n := h.discord.MaxGatewaySessions(); n != 1 {
		t.Fatalf("%d sessions were connected at once", n)
	}
	if n := len(h.discord.Identifies()); n != 3 {
		t.Fatalf("%d identifies, want three connections one after another", n)
	}
}

func TestGatewayRefusedTokenEndsRun(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{gateway: true, manual: true})
	o := h.opts
	o.Credentials.BotToken = "not-the-token"
	ad := newAdapter(t, o, h.svc)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := ad.Run(ctx)
	if err == nil || ctx.Err() != nil || strings.Contains(err.Error(), "not-the-token") {
		t.Fatalf("Run: %v, want an error without the token, before the deadline", err)
	}
	t.Logf("Run: %v", err)
}

// TestGatewayRunStopsWithContext: Run closes the session and returns
// nil when its context ends.
func TestGatewayRunStopsWithContext(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{gateway: true, manual: true})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- h.adapter.Run(ctx) }()
	threadstest.Eventually(t, "the session", func() bool { return h.discord.GatewaySessions() == 1 })
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	threadstest.Eventually(t, "the session closing", func() bool { return h.discord.GatewaySessions() == 0 })
}
