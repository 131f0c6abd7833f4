package discord_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/store"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// On the store as the bot serves it (the process's alone), the deadline's
// deny goes at its tick unless a click that arrived before the deadline is
// still being recorded: the adapter holds the click's receipt while it
// records it, over HTTP and over the gateway. Here the destructive call's
// confirmation is submitted 5 ms before the deadline and recorded after
// the deadline's tick: the person's approval is the one decision.
func TestAClickArrivedBeforeTheDeadlineIsNotBeatenByIt(t *testing.T) {
	for _, tt := range []struct {
		name string
		ho   harnessOptions
	}{
		{"http", harnessOptions{alone: true}},
		{"gateway", harnessOptions{alone: true, gateway: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, tt.ho)
			h.ingest(t, "merge.json")
			h.drain(t)
			deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC) // the request's, 24 h after it
			h.clock.Advance(deadline.Add(-5 * time.Millisecond).Sub(h.clock.Now()))
			// Approve on a destructive call opens its confirmation first.
			res := h.click(t, kevin, chApproval, "ab1|approve|a-merge1|1")
			if res.Response.Title != confirmTitle {
				t.Fatalf("Approve answered %+v, want the confirmation", res.Response)
			}

			stall := threadstest.NewStall(h.svc)
			h.clicks.Use(stall)
			defer stall.Release() // a failure below must not leave the click held
			submitted := make(chan discordtest.Result, 1)
			go func() {
				submitted <- h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval,
					CustomID: res.Response.CustomID, Values: map[string]string{"comment": ""}})
			}()
			<-stall.Entered() // received, not yet recorded

			threadstest.HeldPastTheDeadline(t, h.svc, h.clock, h.backend, stall.Release, func() {
				if sub := <-submitted; !sub.Answered() {
					t.Fatalf("the confirmation was not answered: %+v", sub)
				}
			}, "user:kevin", "approve")
		})
	}
}

// slowRevisions is the store threads reads with its revision reads held
// up past RecordBound once slow is set: a dialog's reads that take the
// click's whole time to record.
type slowRevisions struct {
	store.Store
	slow atomic.Bool
}

func (s *slowRevisions) RevisionGet(ctx context.Context, approvalID string, revision int) (*store.Revision, error) {
	if s.slow.Load() {
		time.Sleep(threads.RecordBound + 200*time.Millisecond)
	}
	return s.Store.RevisionGet(ctx, approvalID, revision)
}

// A click's decision is recorded within RecordBound of its receipt, not
// of the record's start: when Approve's reads (what the call does, to
// decide whether it asks for confirmation) took that whole time, nothing
// is recorded, and the deadline's grace, which is as long, still covers
// every click that is.
func TestAClickIsRecordedWithinRecordBoundOfItsReceipt(t *testing.T) {
	h := newHarness(t)
	slow := &slowRevisions{Store: h.store}
	h.clicks.Use(h.threadsOn(t, slow))
	h.ingest(t, "big.json") // not destructive: Approve records at once
	h.drain(t)
	slow.slow.Store(true)
	h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: "ab1|approve|a-big1|1"})
	if a, err := h.store.ApprovalGet(context.Background(), "a-big1"); err != nil || len(a.Deciding) != 0 {
		t.Fatalf("a click whose reads took its RecordBound was recorded after it (%v)", err)
	}
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("the backend got %+v", got)
	}
}
