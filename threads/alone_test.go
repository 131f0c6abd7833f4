package threads_test

// On a store that is the process's alone (store.Alone: SQLite as `bot
// serve` opens it, holding its lock file), every click that may still be
// recorded holds a receipt in this process, so the deadline's deny waits
// for its grace only while a click received before the deadline is open.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// newAloneHarness is the decide harness on an Exclusive SQLite store, as
// the bot serves it.
func newAloneHarness(t *testing.T) *stagedHarness {
	t.Helper()
	st := threadstest.OpenExclusiveSQLite(t)
	h := newDecideHarnessFrom(t, testConfig, time.Minute, func(o *threads.Options) { o.Store = st })
	h.store = st
	return &stagedHarness{decideHarness: h}
}

// pendingAt ingests a-merge1 and brings the clock to d after the
// request (its deadline is 24 h after it).
func (h *stagedHarness) pendingAt(t *testing.T, d time.Duration) {
	t.Helper()
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, d)
}

// The deny goes at the deadline's tick on a store of the process's own
// when no click is open; on a shared store (another replica may be
// recording a click), it waits RecordBound past the deadline.
func TestTheDeadlineDeniesAtItsTickWhenNoClickIsOpen(t *testing.T) {
	for _, tt := range []struct {
		name   string
		h      func(*testing.T) *stagedHarness
		atTick bool
	}{
		{"alone", newAloneHarness, true},
		{"shared", newStagedHarness, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h(t)
			h.pendingAt(t, 24*time.Hour+time.Millisecond)
			if r := h.tick(t); r.Deadlines != 1 {
				t.Fatalf("the deadline's tick: %+v", r)
			}
			h.drain(t)
			got := h.decisions()
			if !tt.atTick {
				if len(got) != 0 {
					t.Fatalf("on a shared store the backend got %s inside the grace", describe(got))
				}
				h.at(t, 24*time.Hour+threads.RecordBound)
				h.drain(t)
				got = h.decisions()
			}
			if len(got) != 1 || got[0].actor != threads.DeadlineActor || got[0].decision != "deny" {
				t.Fatalf("the backend got %s, want the deadline's deny", describe(got))
			}
			if a := h.state(t, "a-merge1"); a.State != "expired" {
				t.Errorf("state %s, want expired", a.State)
			}
		})
	}
}

// A click received before the deadline and still being recorded when the
// deadline's tick comes holds the deny for its grace, and takes its
// place: the person's approval is the one decision.
func TestAClickOpenAtTheDeadlineHoldsTheDeny(t *testing.T) {
	h := newAloneHarness(t)
	h.pendingAt(t, 24*time.Hour-10*time.Millisecond)
	rc := h.svc.Receive()
	h.at(t, 24*time.Hour+time.Millisecond)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v", r)
	}
	h.drain(t)
	if got := h.decisions(); len(got) != 0 {
		t.Fatalf("the backend got %s while a click received before the deadline was open", describe(got))
	}
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	res, err := clickAt(h.svc, true, "U0KEVIN", 1, rc.At)
	rc.Done()
	if err != nil || !res.Sent {
		t.Fatalf("the click received before the deadline: %+v %v, want it sent", res, err)
	}
	h.drain(t)
	h.at(t, 24*time.Hour+2*threads.RecordBound)
	h.tick(t)
	h.drain(t)
	if got := h.decisions(); len(got) != 1 || got[0].actor != "user:kevin" || got[0].decision != "approve" {
		t.Fatalf("the backend got %s, want kevin's approval alone", describe(got))
	}
	if a := h.state(t, "a-merge1"); a.State != "approved" {
		t.Errorf("state %s, want approved", a.State)
	}
}

// A receipt opened at the deadline or after it, or one that ended before
// it (the click answered: recorded elsewhere, refused, failed), holds
// nothing: the deny goes at the tick, and an approval received at the
// deadline is refused as the card promised.
func TestOnlyClicksOpenFromBeforeTheDeadlineHoldTheDeny(t *testing.T) {
	t.Run("opened at the deadline", func(t *testing.T) {
		h := newAloneHarness(t)
		h.pendingAt(t, 24*time.Hour)
		rc := h.svc.Receive()
		defer rc.Done()
		h.tick(t)
		h.drain(t)
		h.onlyTheDeadlinesDeny(t)
		res, err := clickAt(h.svc, true, "U0KEVIN", 1, rc.At)
		if err != nil || res.Sent || !strings.Contains(res.Reason.String(), "deadline") {
			t.Fatalf("an approval received at the deadline: %+v %v, want it refused", res, err)
		}
	})
	t.Run("ended before the deadline", func(t *testing.T) {
		h := newAloneHarness(t)
		h.pendingAt(t, 24*time.Hour-time.Second)
		h.svc.Receive().Done()
		h.at(t, 24*time.Hour+time.Millisecond)
		h.tick(t)
		h.drain(t)
		h.onlyTheDeadlinesDeny(t)
	})
}

// Receipts opened and ended from many goroutines while ticks look at
// them, with the deadline passed: the book stays consistent (run under
// -race), and the deny goes once, at a tick or at its grace's end.
func TestReceiptsUnderConcurrency(t *testing.T) {
	h := newAloneHarness(t)
	h.pendingAt(t, 24*time.Hour+time.Millisecond)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for range 200 {
				rc := h.svc.Receive()
				rc.Done()
				rc.Done() // a second Done is harmless
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			if _, err := h.svc.Tick(context.Background()); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()
	h.drain(t)
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.tick(t)
	h.drain(t)
	h.onlyTheDeadlinesDeny(t)
}

// onlyTheDeadlinesDeny checks that the one decision the backend got is
// the deadline's deny.
func (h *stagedHarness) onlyTheDeadlinesDeny(t *testing.T) {
	t.Helper()
	if got := h.decisions(); len(got) != 1 || got[0].actor != threads.DeadlineActor || got[0].decision != "deny" {
		t.Fatalf("the backend got %s, want the deadline's deny alone", describe(got))
	}
}

// The wall clock stepping back after the deny went at its tick (an NTP
// step) does not let a click received then pass as received before the
// deadline: its receipt is stamped no earlier than the deadline whose
// deny went, so the approval is refused, never promised over a deny
// already sent.
func TestAClockSteppingBackDoesNotMakeAClickEarlier(t *testing.T) {
	h := newAloneHarness(t)
	h.pendingAt(t, 24*time.Hour+time.Millisecond)
	h.tick(t)                               // the deny is recorded, due at once
	h.clock.Advance(-50 * time.Millisecond) // the clock steps back before the deadline
	rc := h.svc.Receive()
	defer rc.Done()
	if rc.At.Before(stagedDeadline) {
		t.Fatalf("a receipt opened after the deny went is stamped %v, before the deadline %v", rc.At, stagedDeadline)
	}
	// Judged before the deny is sent (its row waits for the clock to
	// catch up): the approval is still refused.
	res, err := clickAt(h.svc, true, "U0KEVIN", 1, rc.At)
	if err != nil || res.Sent {
		t.Fatalf("an approval received after the deny was recorded to go: %+v %v, want it refused", res, err)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	h.onlyTheDeadlinesDeny(t)
}
