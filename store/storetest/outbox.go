package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

func testOutboxClaimAndComplete(t *testing.T, s store.Store) {
	now := at(0)
	in := store.OutboxInsertParams{
		ID:          "o1",
		Tenant:      "t1",
		ApprovalID:  "a1",
		Kind:        "post_card",
		Target:      "slack:C1",
		CoalesceKey: "post:a1:slack:C1",
		Payload:     []byte(`{"revision":1,"text":"déjà vu ✓"}`),
		NotBefore:   now.Add(-time.Second),
		Now:         now.Add(-2 * time.Second),
	}
	enqueue(t, s, in)

	got := claim(t, s, "w1", now, 10)
	want := []*store.OutboxRow{{
		ID:            "o1",
		Tenant:        "t1",
		ApprovalID:    "a1",
		Kind:          "post_card",
		Target:        "slack:C1",
		CoalesceKey:   "post:a1:slack:C1",
		Payload:       []byte(`{"revision":1,"text":"déjà vu ✓"}`),
		Attempts:      0,
		NextAttemptAt: now.Add(-time.Second),
		ClaimedBy:     "w1",
		ClaimedUntil:  now.Add(time.Minute),
		LastError:     "",
		CreatedAt:     now.Add(-2 * time.Second),
		Lane:          store.LaneChat, // an empty Lane is the chat lane
		Priority:      0,
		PaceKey:       "",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("OutboxClaim (-want +got):\n%s", diff)
	}
	wantIDs(t, "second claim while leased", outboxIDs(claim(t, s, "w2", now, 10)), nil)

	complete(t, s, "o1", "w1", now.Add(time.Second))
	// Done is done: not claimed again, even long after the lease.
	wantIDs(t, "claim after done", outboxIDs(claim(t, s, "w2", now.Add(time.Hour), 10)), nil)
	err := s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: "o1", Worker: "w1", Now: now.Add(2 * time.Second)})
	wantErr(t, "second OutboxComplete", err, store.ErrLeaseLost)

	// Zero NotBefore means Now; no rows is no work.
	enqueue(t, s, store.OutboxInsertParams{ID: "o2", Tenant: "t1", ApprovalID: "a1", Kind: "audit", Target: "log", Payload: []byte(`{}`), Now: now})
	enqueue(t, s)
	got = claim(t, s, "w1", now, 10)
	if len(got) != 1 || got[0].ID != "o2" || !got[0].NextAttemptAt.Equal(now) {
		t.Errorf("claim of a row without NotBefore = %+v, want o2 due at %v", got, now)
	}
}

func testOutboxNotDueNotClaimed(t *testing.T, s store.Store) {
	enqueue(t, s, effect("later", at(time.Minute)))
	wantIDs(t, "before due", outboxIDs(claim(t, s, "w1", at(59*time.Second), 10)), nil)
	wantIDs(t, "at due", outboxIDs(claim(t, s, "w1", at(time.Minute), 10)), []string{"later"})
	none, err := s.OutboxClaim(t.Context(), store.OutboxClaimParams{Worker: "w2", Now: at(time.Hour), Lease: time.Minute, Limit: 0})
	if err != nil || len(none) != 0 {
		t.Errorf("OutboxClaim with Limit 0 = %v, %v; want none", none, err)
	}
}

func testOutboxRetry(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	enqueue(t, s, effect("o1", now))
	claim(t, s, "w1", now, 10)

	retryAt := now.Add(30 * time.Second)
	err := s.OutboxRetry(ctx, store.OutboxRetryParams{
		ID: "o1", Worker: "w1", Now: now, NextAttemptAt: retryAt, Error: "slack: 429 rate limited", Attempt: true,
	})
	if err != nil {
		t.Fatalf("OutboxRetry: %v", err)
	}
	// Released, but not due until retryAt, although w1's lease would
	// have lasted longer.
	wantIDs(t, "before retry time", outboxIDs(claim(t, s, "w2", retryAt.Add(-time.Millisecond), 10)), nil)
	got := claim(t, s, "w2", retryAt, 10)
	if len(got) != 1 {
		t.Fatalf("claim at retry time got %d rows, want 1", len(got))
	}
	r := got[0]
	if r.Attempts != 1 || r.LastError != "slack: 429 rate limited" || !r.NextAttemptAt.Equal(retryAt) || r.ClaimedBy != "w2" {
		t.Errorf("after retry: attempts %d, last error %q, next %v, claimed by %q; want 1, the error, %v, w2",
			r.Attempts, r.LastError, r.NextAttemptAt, r.ClaimedBy, retryAt)
	}

	// A wait that is not a failure (the card is not posted yet) keeps
	// the count but records why.
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{
		ID: "o1", Worker: "w2", Now: retryAt, NextAttemptAt: retryAt.Add(time.Second), Error: "card not posted yet", Attempt: false,
	})
	if err != nil {
		t.Fatalf("OutboxRetry without attempt: %v", err)
	}
	got = claim(t, s, "w3", retryAt.Add(time.Second), 10)
	if len(got) != 1 || got[0].Attempts != 1 || got[0].LastError != "card not posted yet" {
		t.Errorf("after a wait: %+v, want o1 with 1 attempt and the wait's reason", got)
	}
	complete(t, s, "o1", "w3", retryAt.Add(time.Second))
}

func testOutboxDead(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	enqueue(t, s, effect("o1", now), effect("o2", now))
	claim(t, s, "w1", now, 10)
	err := s.OutboxDead(ctx, store.OutboxDeadParams{ID: "o1", Worker: "w1", Now: now, Error: "slack: channel_not_found"})
	if err != nil {
		t.Fatalf("OutboxDead: %v", err)
	}
	complete(t, s, "o2", "w1", now)
	wantIDs(t, "claim after dead", outboxIDs(claim(t, s, "w2", now.Add(24*time.Hour), 10)), nil)
	st, err := s.OutboxStats(ctx, now)
	if err != nil {
		t.Fatalf("OutboxStats: %v", err)
	}
	if diff := cmp.Diff(store.OutboxStats{Pending: 0, Dead: 1}, st); diff != "" {
		t.Errorf("OutboxStats (-want +got):\n%s", diff)
	}
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "o1", Worker: "w1", Now: now, NextAttemptAt: now})
	wantErr(t, "OutboxRetry of a dead row", err, store.ErrLeaseLost)
}

func testOutboxLeaseExpiry(t *testing.T, s store.Store) {
	now := at(0)
	enqueue(t, s, effect("o1", now))
	wantIDs(t, "w1 claims", outboxIDs(claim(t, s, "w1", now, 10)), []string{"o1"})
	// claim leases for one minute.
	wantIDs(t, "w2 within lease", outboxIDs(claim(t, s, "w2", now.Add(59*time.Second), 10)), nil)
	got := claim(t, s, "w2", now.Add(time.Minute), 10)
	wantIDs(t, "w2 when lease ends", outboxIDs(got), []string{"o1"})
	if len(got) == 1 && (got[0].ClaimedBy != "w2" || !got[0].ClaimedUntil.Equal(now.Add(2*time.Minute))) {
		t.Errorf("re-claimed row held by %q until %v, want w2 until %v", got[0].ClaimedBy, got[0].ClaimedUntil, now.Add(2*time.Minute))
	}
	complete(t, s, "o1", "w2", now.Add(90*time.Second))
}

func testOutboxResultAfterLeaseLost(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	enqueue(t, s, effect("o1", now))
	claim(t, s, "w1", now, 10)
	claim(t, s, "w2", now.Add(time.Minute), 10) // w1's lease lapsed; w2 holds it

	late := now.Add(70 * time.Second)
	err := s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o1", Worker: "w1", Now: late})
	wantErr(t, "OutboxComplete by the old holder", err, store.ErrLeaseLost)
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "o1", Worker: "w1", Now: late, NextAttemptAt: late, Error: "old", Attempt: true})
	wantErr(t, "OutboxRetry by the old holder", err, store.ErrLeaseLost)
	err = s.OutboxDead(ctx, store.OutboxDeadParams{ID: "o1", Worker: "w1", Now: late, Error: "old"})
	wantErr(t, "OutboxDead by the old holder", err, store.ErrLeaseLost)

	// The new holder's outcome is untouched by those attempts.
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "o1", Worker: "w2", Now: late, NextAttemptAt: late, Error: "new", Attempt: true})
	if err != nil {
		t.Fatalf("OutboxRetry by the holder: %v", err)
	}
	got := claim(t, s, "w3", late, 10)
	if len(got) != 1 || got[0].Attempts != 1 || got[0].LastError != "new" {
		t.Errorf("after the holder's retry: %+v, want o1 with 1 attempt and error new", got)
	}
	// Released by w2's retry: w2 no longer holds it either.
	err = s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o1", Worker: "w2", Now: late})
	wantErr(t, "OutboxComplete after own retry", err, store.ErrLeaseLost)
	complete(t, s, "o1", "w3", late)
}

func testOutboxLapsedLeaseStillCompletes(t *testing.T, s store.Store) {
	// A slow worker whose lease lapsed while nobody took the row over
	// still holds it: its result is the only one, so it counts.
	now := at(0)
	enqueue(t, s, effect("o1", now))
	claim(t, s, "w1", now, 10)
	complete(t, s, "o1", "w1", now.Add(5*time.Minute))
	wantIDs(t, "claim after late completion", outboxIDs(claim(t, s, "w2", now.Add(5*time.Minute), 10)), nil)
}

func testOutboxCoalescing(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	keyed := func(id, key string, due time.Time) store.OutboxInsertParams {
		p := effect(id, due)
		p.CoalesceKey = key
		return p
	}
	const k = "edit:a1:slack:C1"

	// An unclaimed pending row with the key absorbs later ones; rows
	// without a key never coalesce.
	enqueue(t, s, keyed("r1", k, now))
	enqueue(t, s, keyed("r2", k, now))
	enqueue(t, s, keyed("r3", "", now), keyed("r4", "", now))
	wantIDs(t, "first claim", outboxIDs(claim(t, s, "w1", now, 10)), []string{"r1", "r3", "r4"})
	complete(t, s, "r3", "w1", now)
	complete(t, s, "r4", "w1", now)

	// r1 is in flight and may have rendered an older state: a new row
	// runs after it; further ones coalesce into that new row.
	enqueue(t, s, keyed("r5", k, now))
	enqueue(t, s, keyed("r6", k, now))
	wantIDs(t, "claim while r1 in flight", outboxIDs(claim(t, s, "w2", now, 10)), []string{"r5"})
	complete(t, s, "r1", "w1", now)

	// A row released by a retry waits unclaimed again, so it absorbs.
	err := s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "r5", Worker: "w2", Now: now, NextAttemptAt: now.Add(time.Second), Error: "e", Attempt: true})
	if err != nil {
		t.Fatalf("OutboxRetry: %v", err)
	}
	enqueue(t, s, keyed("r7", k, now))
	wantIDs(t, "claim after retry", outboxIDs(claim(t, s, "w3", now.Add(time.Second), 10)), []string{"r5"})
	complete(t, s, "r5", "w3", now.Add(time.Second))

	// Within one call, the second row coalesces into the first.
	enqueue(t, s, keyed("r8", "edit:a2", now), keyed("r9", "edit:a2", now))
	wantIDs(t, "claim after one batch", outboxIDs(claim(t, s, "w4", now.Add(time.Second), 10)), []string{"r8"})
	complete(t, s, "r8", "w4", now.Add(time.Second))

	// A claimed row whose lease lapsed is still held (its worker may yet
	// complete it), so it does not absorb either.
	enqueue(t, s, keyed("r10", "edit:a3", now))
	wantIDs(t, "claim r10", outboxIDs(claim(t, s, "w5", now, 10)), []string{"r10"})
	enqueue(t, s, keyed("r11", "edit:a3", now.Add(2*time.Minute)))
	wantIDs(t, "claim after lapsed lease", outboxIDs(claim(t, s, "w6", now.Add(2*time.Minute), 10)), []string{"r10", "r11"})

	// Once its row is done, a key takes new rows again.
	complete(t, s, "r10", "w6", now.Add(2*time.Minute))
	complete(t, s, "r11", "w6", now.Add(2*time.Minute))
	enqueue(t, s, keyed("r12", k, now.Add(3*time.Minute)))
	wantIDs(t, "after all done", outboxIDs(claim(t, s, "w7", now.Add(3*time.Minute), 10)), []string{"r12"})
}

func testOutboxClaimOrderAndLimit(t *testing.T, s store.Store) {
	now := at(0)
	// Inserted out of order; ties in due time go by id.
	enqueue(t, s,
		effect("c", now.Add(-3*time.Minute)),
		effect("a", now.Add(-5*time.Minute)),
		effect("e", now.Add(-1*time.Minute)),
		effect("b2", now.Add(-4*time.Minute)),
		effect("b1", now.Add(-4*time.Minute)),
		effect("future", now.Add(time.Minute)),
	)
	wantIDs(t, "limit 3", outboxIDs(claim(t, s, "w1", now, 3)), []string{"a", "b1", "b2"})
	wantIDs(t, "limit 10", outboxIDs(claim(t, s, "w2", now, 10)), []string{"c", "e"})
	wantIDs(t, "nothing left due", outboxIDs(claim(t, s, "w3", now, 10)), nil)
	for _, id := range []string{"a", "b1", "b2"} {
		complete(t, s, id, "w1", now)
	}
	for _, id := range []string{"c", "e"} {
		complete(t, s, id, "w2", now)
	}
	wantIDs(t, "the future one when due", outboxIDs(claim(t, s, "w3", now.Add(time.Minute), 10)), []string{"future"})
}

func testOutboxClaimConcurrentWorkers(t *testing.T, s store.Store) {
	const (
		rows    = 200
		workers = 8
	)
	now := at(0)
	var in []store.OutboxInsertParams
	for i := range rows {
		in = append(in, effect(fmt.Sprintf("o%03d", i), now.Add(-time.Duration(i)*time.Millisecond)))
	}
	enqueue(t, s, in...)

	var (
		mu        sync.Mutex
		taken     = map[string]int{}
		completed = map[string]int{}
		wg        sync.WaitGroup
	)
	for w := range workers {
		worker := fmt.Sprintf("w%d", w)
		wg.Go(func() {
			for {
				got, err := s.OutboxClaim(t.Context(), store.OutboxClaimParams{Worker: worker, Now: now, Lease: time.Hour, Limit: 7})
				if err != nil {
					t.Errorf("OutboxClaim(%s): %v", worker, err)
					return
				}
				if len(got) == 0 {
					return
				}
				for _, r := range got {
					mu.Lock()
					taken[r.ID]++
					mu.Unlock()
					if r.ClaimedBy != worker {
						t.Errorf("%s claimed %s, held by %q", worker, r.ID, r.ClaimedBy)
					}
					err := s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: r.ID, Worker: worker, Now: now})
					if err != nil {
						t.Errorf("OutboxComplete(%s by %s): %v", r.ID, worker, err)
						continue
					}
					mu.Lock()
					completed[r.ID]++
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()

	want := map[string]int{}
	for _, r := range in {
		want[r.ID] = 1
	}
	if diff := cmp.Diff(want, taken); diff != "" {
		t.Errorf("times each row was claimed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, completed); diff != "" {
		t.Errorf("times each row was completed (-want +got):\n%s", diff)
	}
	st, err := s.OutboxStats(t.Context(), now)
	if err != nil {
		t.Fatalf("OutboxStats: %v", err)
	}
	if st.Pending != 0 {
		t.Errorf("OutboxStats.Pending = %d after all completed, want 0", st.Pending)
	}
}

func testOutboxStats(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	stats := func(step string, now time.Time, want store.OutboxStats) {
		t.Helper()
		got, err := s.OutboxStats(ctx, now)
		if err != nil {
			t.Fatalf("%s: OutboxStats: %v", step, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: OutboxStats (-want +got):\n%s", step, diff)
		}
	}
	stats("empty", now, store.OutboxStats{})

	enqueue(t, s,
		effect("a", now.Add(-5*time.Minute)),
		effect("b", now.Add(-time.Minute)),
		effect("c", now.Add(10*time.Minute)),
		effect("dead", now.Add(-10*time.Minute)),
		effect("done", now.Add(-10*time.Minute)),
	)
	claim(t, s, "w1", now, 10) // dead, done, a, b: a and b stay in flight
	if err := s.OutboxDead(ctx, store.OutboxDeadParams{ID: "dead", Worker: "w1", Now: now, Error: "permanent"}); err != nil {
		t.Fatalf("OutboxDead: %v", err)
	}
	complete(t, s, "done", "w1", now)
	// Rows in flight are still pending: they are not done.
	stats("in flight", now, store.OutboxStats{Pending: 3, OldestAge: 5 * time.Minute, Dead: 1,
		Lanes: map[string]store.LaneStats{store.LaneChat: {Pending: 3, OldestAge: 5 * time.Minute}}})

	complete(t, s, "a", "w1", now)
	complete(t, s, "b", "w1", now)
	// Only c waits, and it is not due: nothing is late.
	stats("none due", now, store.OutboxStats{Pending: 1, OldestAge: 0, Dead: 1,
		Lanes: map[string]store.LaneStats{store.LaneChat: {Pending: 1}}})
	stats("c overdue", now.Add(12*time.Minute), store.OutboxStats{Pending: 1, OldestAge: 2 * time.Minute, Dead: 1,
		Lanes: map[string]store.LaneStats{store.LaneChat: {Pending: 1, OldestAge: 2 * time.Minute}}})

	// Each lane counts its own; the totals are their sum and the largest
	// age.
	laned := func(id, lane string, due time.Time) store.OutboxInsertParams {
		p := effect(id, due)
		p.Lane = lane
		return p
	}
	enqueue(t, s,
		laned("d1", store.LaneBackend, now.Add(5*time.Minute)),
		laned("d2", store.LaneBackend, now.Add(11*time.Minute)),
		laned("m1", store.LaneMail, now.Add(20*time.Minute)),
	)
	stats("three lanes", now.Add(12*time.Minute), store.OutboxStats{Pending: 4, OldestAge: 7 * time.Minute, Dead: 1,
		Lanes: map[string]store.LaneStats{
			store.LaneChat:    {Pending: 1, OldestAge: 2 * time.Minute},
			store.LaneBackend: {Pending: 2, OldestAge: 7 * time.Minute},
			store.LaneMail:    {Pending: 1, OldestAge: 0},
		}})
}

func testInTxRollsBackOnError(t *testing.T, s store.Store) {
	ctx := t.Context()
	errBoom := errors.New("threads: refuse transition")
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e1", Tenant: "t1", Type: "x", BodySHA256: "d", ApprovalID: "a1", ReceivedAt: at(0)}); err != nil {
			return err
		}
		if err := tx.ApprovalUpsert(ctx, pendingApproval("a1", "t1", at(0))); err != nil {
			return err
		}
		if err := tx.RevisionInsert(ctx, &store.Revision{ApprovalID: "a1", Revision: 1, Body: []byte(`{}`), CreatedAt: at(0)}); err != nil {
			return err
		}
		if err := tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("o1", at(0))}); err != nil {
			return err
		}
		return errBoom
	})
	if err != errBoom {
		t.Fatalf("InTx returned %v, want fn's error as it is", err)
	}
	assertNothingWritten(t, s)
}

func testInTxRollsBackOnPanic(t *testing.T, s store.Store) {
	ctx := t.Context()
	// More panics than a pool has connections: each must give its
	// connection back.
	for i := range 6 {
		func() {
			defer func() {
				if r := recover(); r != "boom" {
					t.Fatalf("panic %d: recovered %v, want the panic to continue with its value", i, r)
				}
			}()
			_ = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				if err := tx.ApprovalUpsert(ctx, pendingApproval("a1", "t1", at(0))); err != nil {
					return err
				}
				if err := tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("o1", at(0))}); err != nil {
					return err
				}
				panic("boom")
			})
		}()
	}
	assertNothingWritten(t, s)
	// The store still commits.
	upsert(t, s, pendingApproval("a2", "t1", at(0)))
	mustGet(t, s, "a2")
}

// assertNothingWritten checks that the rolled-back writes of the InTx
// tests left no trace.
func assertNothingWritten(t *testing.T, s store.Store) {
	t.Helper()
	ctx := t.Context()
	_, err := s.ApprovalGet(ctx, "a1")
	wantErr(t, "ApprovalGet after rollback", err, store.ErrNotFound)
	_, err = s.RevisionGet(ctx, "a1", 1)
	wantErr(t, "RevisionGet after rollback", err, store.ErrNotFound)
	wantIDs(t, "claim after rollback", outboxIDs(claim(t, s, "w1", at(time.Hour), 10)), nil)
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		r, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e1", Tenant: "t1", Type: "x", BodySHA256: "d2", ApprovalID: "a1", ReceivedAt: at(0)})
		if err == nil && !r.Inserted {
			t.Errorf("event e1 survived the rollback")
		}
		return err
	})
}
