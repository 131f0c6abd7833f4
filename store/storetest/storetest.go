// Package storetest is the conformance suite every store.Store
// implementation runs (SQLite, PostgreSQL), so the bot behaves the same on
// either: deduplication, round trips of every field, the outbox's leases,
// coalescing, lanes, priorities and paced claims, the ladder's due claims,
// retention (pruning to tombstones that still deduplicate, scrubbing
// expired chat handles), members' passkeys (a signature count that only
// moves forward, challenges taken once), the outcomes kept for the
// figures of approval fatigue, grants (kept once, listed by state and
// expiry), transactions that leave nothing
// behind when they fail, and the readiness write (WriteCheck).
//
// The suite passes times explicitly (a fixed base time plus offsets),
// never reads a clock, and asserts outcomes through the Store interface
// only.
package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

// Run runs the conformance suite. open must return an empty, migrated
// store of its own (a fresh database or schema) and close it when the test
// ends (t.Cleanup); subtests call it in parallel.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	cases := []struct {
		name string
		run  func(t *testing.T, s store.Store)
	}{
		{"EventInsertDeduplicates", testEventInsertDeduplicates},
		{"ApprovalRoundTrip", testApprovalRoundTrip},
		{"ApprovalTombstoneRoundTrip", testApprovalTombstoneRoundTrip},
		{"ApprovalTimesAtMillisecondPrecision", testApprovalTimesAtMillisecondPrecision},
		{"NotFound", testNotFound},
		{"RevisionInsertKeepsFirst", testRevisionInsertKeepsFirst},
		{"PostRecordedWithCompletion", testPostRecordedWithCompletion},
		{"ApprovalListPending", testApprovalListPending},
		{"ApprovalClaimDue", testApprovalClaimDue},
		{"ApprovalClaimDueOrderAndLimit", testApprovalClaimDueOrderAndLimit},
		{"OutboxClaimAndComplete", testOutboxClaimAndComplete},
		{"OutboxNotDueNotClaimed", testOutboxNotDueNotClaimed},
		{"OutboxRetry", testOutboxRetry},
		{"OutboxDead", testOutboxDead},
		{"OutboxLeaseExpiry", testOutboxLeaseExpiry},
		{"OutboxResultAfterLeaseLost", testOutboxResultAfterLeaseLost},
		{"OutboxLapsedLeaseStillCompletes", testOutboxLapsedLeaseStillCompletes},
		{"OutboxCoalescing", testOutboxCoalescing},
		{"OutboxClaimOrderAndLimit", testOutboxClaimOrderAndLimit},
		{"OutboxClaimConcurrentWorkers", testOutboxClaimConcurrentWorkers},
		{"OutboxStats", testOutboxStats},
		{"OutboxLanesClaimedSeparately", testOutboxLanesClaimedSeparately},
		{"OutboxPriorityBeatsAge", testOutboxPriorityBeatsAge},
		{"OutboxCoalescingTakesHigherPriority", testOutboxCoalescingTakesHigherPriority},
		{"OutboxPacedBurstThenEvery", testOutboxPacedBurstThenEvery},
		{"OutboxHeldKey", testOutboxHeldKey},
		{"OutboxBacklogOnOneKey", testOutboxBacklogOnOneKey},
		{"OutboxExclude", testOutboxExclude},
		{"OutboxPacedClaimConcurrent", testOutboxPacedClaimConcurrent},
		{"OutboxDrop", testOutboxDrop},
		{"OutboxCompleteInTx", testOutboxCompleteInTx},
		{"ApprovalPruneLeavesTombstone", testApprovalPruneLeavesTombstone},
		{"ApprovalPruneBatches", testApprovalPruneBatches},
		{"ApprovalPruneBesideWriter", testApprovalPruneBesideWriter},
		{"ApprovalForget", testApprovalForget},
		{"EventPrune", testEventPrune},
		{"OutboxPrune", testOutboxPrune},
		{"OutboxScrub", testOutboxScrub},
		{"ApprovalScrub", testApprovalScrub},
		{"ReplaySeen", testReplay},
		{"Passkeys", testPasskeys},
		{"Outcomes", testOutcomes},
		{"OutcomeRepeated", testOutcomeRepeated},
		{"OutcomePrune", testOutcomePrune},
		{"Grants", testGrants},
		{"InTxRollsBackOnError", testInTxRollsBackOnError},
		{"InTxRollsBackOnPanic", testInTxRollsBackOnPanic},
		{"Savepoint", testSavepoint},
		{"SavepointBroken", testSavepointBroken},
		{"Ping", testPing},
		{"WriteCheck", testWriteCheck},
		{"WriteCheckFailsWhenItCannotFinish", testWriteCheckFailsWhenItCannotFinish},
		{"WriteCheckAfterClose", testWriteCheckAfterClose},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, open(t))
		})
	}
}

// statePending is approval.StatePending as the store sees it
// (store/pending_test.go pins the literal to the domain's). Every other
// state is alike to the store, "not pending"; two stand for them all here.
const (
	statePending  = "pending"
	stateApproved = "approved"
	stateExpired  = "expired"
)

// at is the suite's clock: a fixed UTC instant plus d.
func at(d time.Duration) time.Time {
	return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(d)
}

// inTx runs fn in a transaction that must commit.
func inTx(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	if err := s.InTx(t.Context(), fn); err != nil {
		t.Fatalf("InTx: %v", err)
	}
}

// pendingApproval is a pending approval of tenant with every field set.
func pendingApproval(id, tenant string, requested time.Time) *store.Approval {
	return &store.Approval{
		ID:           id,
		Tenant:       tenant,
		Revision:     1,
		State:        statePending,
		Seen:         true,
		Function:     "github.merge_pr",
		Plan:         []byte(`{"ladder":"default","deadline":"24h"}`),
		StepsDone:    0,
		NextStepAt:   requested.Add(15 * time.Minute),
		DeadlineAt:   requested.Add(24 * time.Hour),
		RequestedAt:  requested,
		CreatedAt:    requested,
		UpdatedAt:    requested,
		ClaimedBy:    "",
		ClaimedUntil: time.Time{},
	}
}

func upsert(t *testing.T, s store.Store, as ...*store.Approval) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, a := range as {
			if err := tx.ApprovalUpsert(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
}

func mustGet(t *testing.T, s store.Store, id string) *store.Approval {
	t.Helper()
	a, err := s.ApprovalGet(t.Context(), id)
	if err != nil {
		t.Fatalf("ApprovalGet(%s): %v", id, err)
	}
	return a
}

// effect is an outbox row of approval a1, due at due.
func effect(id string, due time.Time) store.OutboxInsertParams {
	return store.OutboxInsertParams{
		ID:         id,
		Tenant:     "t1",
		ApprovalID: "a1",
		Kind:       "edit_cards",
		Target:     "slack:C1",
		Payload:    []byte(`{"id":"` + id + `"}`),
		NotBefore:  due,
		Now:        due,
	}
}

func enqueue(t *testing.T, s store.Store, rows ...store.OutboxInsertParams) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxInsert(ctx, rows)
	})
}

func claim(t *testing.T, s store.Store, worker string, now time.Time, limit int) []*store.OutboxRow {
	t.Helper()
	rows, err := s.OutboxClaim(t.Context(), store.OutboxClaimParams{
		Worker: worker, Now: now, Lease: time.Minute, Limit: limit,
	})
	if err != nil {
		t.Fatalf("OutboxClaim(%s): %v", worker, err)
	}
	return rows
}

func complete(t *testing.T, s store.Store, id, worker string, now time.Time) {
	t.Helper()
	err := s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: id, Worker: worker, Now: now})
	if err != nil {
		t.Fatalf("OutboxComplete(%s by %s): %v", id, worker, err)
	}
}

func outboxIDs(rows []*store.OutboxRow) []string {
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

func approvalIDs(as []*store.Approval) []string {
	ids := []string{}
	for _, a := range as {
		ids = append(ids, a.ID)
	}
	return ids
}

func wantIDs(t *testing.T, what string, got, want []string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s ids (-want +got):\n%s", what, diff)
	}
}

func wantErr(t *testing.T, what string, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: got error %v, want %v", what, err, want)
	}
}

func testPing(t *testing.T, s store.Store) {
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
}
