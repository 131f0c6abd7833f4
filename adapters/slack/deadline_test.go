package slack_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// On the store as the bot serves it (the process's alone), the deadline's
// deny goes at its tick, without RecordBound's grace, unless a click is
// open that arrived before the deadline: the Slack adapter holds the
// click's receipt while it records it, so an Approve that arrived 5 ms
// before the deadline and is still being recorded when the deadline's
// tick comes is the one decision, and the deny never goes.
func TestAClickArrivedBeforeTheDeadlineIsNotBeatenByIt(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{alone: true})
	h.ingest(t, "merge.json")
	h.drain(t)
	deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC) // the request's, 24 h after it
	h.clock.Advance(deadline.Add(-5 * time.Millisecond).Sub(h.clock.Now()))

	stall := threadstest.NewStall(h.svc)
	h.clicks.Use(stall)
	defer stall.Release() // a failure below must not leave the click held
	answered := make(chan int, 1)
	go func() {
		status, _, _, err := h.do(signedRequest{path: "/slack/interactions",
			body: interaction(h.clickPayload("U0KEVIN", "C0APPROVALS", "ab1|approve|a-merge1|1"))})
		if err != nil {
			t.Error(err)
		}
		answered <- status
	}()
	<-stall.Entered() // received, not yet recorded

	threadstest.HeldPastTheDeadline(t, h.svc, h.clock, h.backend, stall.Release, func() {
		if status := <-answered; status != http.StatusOK {
			t.Fatalf("the click answered %d", status)
		}
	}, "user:kevin", "approve")
}

// With no click open, the deadline denies at its tick: nothing waits
// RecordBound for clicks nobody made.
func TestWithNoClickOpenTheDeadlineDeniesAtItsTick(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{alone: true})
	h.ingest(t, "merge.json")
	h.drain(t)
	h.clock.Advance(time.Date(2026, 11, 30, 18, 0, 0, 1e6, time.UTC).Sub(h.clock.Now()))
	if r, err := h.svc.Tick(context.Background()); err != nil || r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v %v", r, err)
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Actor != threads.DeadlineActor || got[0].Request.Decision != "deny" {
		t.Fatalf("the backend got %+v, want the deadline's deny at its tick", got)
	}
}
