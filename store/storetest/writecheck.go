package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"approvalsbot/store"
)

// testWriteCheck: the readiness write succeeds again and again, at once
// from many callers and beside a transaction that writes, and leaves
// nothing any other method can see.
func testWriteCheck(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := range 50 {
		if err := s.WriteCheck(ctx, at(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("WriteCheck %d: %v", i, err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() { errs <- s.WriteCheck(ctx, at(time.Minute+time.Duration(i)*time.Millisecond)) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("WriteCheck at once: %v", err)
		}
	}
	// A writer's transaction and a check after it both commit.
	upsert(t, s, pendingApproval("a1", "t1", at(0)))
	if err := s.WriteCheck(ctx, at(2*time.Minute)); err != nil {
		t.Fatalf("WriteCheck after a write: %v", err)
	}

	// Nothing the checks wrote shows anywhere else.
	pending, err := s.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: "t1"})
	if err != nil {
		t.Fatal(err)
	}
	wantIDs(t, "pending approvals", approvalIDs(pending), []string{"a1"})
	stats, err := s.OutboxStats(ctx, at(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if stats.Pending != 0 || stats.Dead != 0 || stats.Lanes != nil {
		t.Errorf("OutboxStats after write checks: %+v, want an empty outbox", stats)
	}
	wantIDs(t, "outbox rows", outboxIDs(claim(t, s, "w1", at(time.Hour), 10)), nil)
}

// testWriteCheckFailsWhenItCannotFinish: a check whose caller has given
// up fails; it never reports a write it did not make.
func testWriteCheckFailsWhenItCannotFinish(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := s.WriteCheck(ctx, at(0)); err == nil {
		t.Fatal("WriteCheck with its context ended: nil error")
	}
	// The store is as it was: the next check succeeds.
	if err := s.WriteCheck(t.Context(), at(time.Second)); err != nil {
		t.Fatalf("WriteCheck after a cancelled one: %v", err)
	}
}

// testWriteCheckAfterClose: a closed store takes no writes, and says it
// is unavailable.
func testWriteCheckAfterClose(t *testing.T, s store.Store) {
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	wantErr(t, "WriteCheck after Close", s.WriteCheck(t.Context(), at(0)), store.ErrUnavailable)
}
