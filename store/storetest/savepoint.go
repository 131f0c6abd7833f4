package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"approvalsbot/store"
)

// testSavepoint runs five callers' work in one transaction, each in a
// savepoint, as a group commit does: the second fails with its own error
// after writing, the fourth with the database's (an outbox id taken by the
// third, found when its queued write reaches the server); the others'
// writes, before and after them, all commit.
func testSavepoint(t *testing.T, s store.Store) {
	ctx := t.Context()
	errOwn := errors.New("threads: an event of its own that fails")
	write := func(ctx context.Context, tx store.Tx, n string, outbox string) error {
		if _, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e" + n, Tenant: "t1", Type: "x", BodySHA256: "d", ApprovalID: "a" + n, ReceivedAt: at(0)}); err != nil {
			return err
		}
		if err := tx.ApprovalUpsert(ctx, pendingApproval("a"+n, "t1", at(0))); err != nil {
			return err
		}
		if err := tx.RevisionInsert(ctx, &store.Revision{ApprovalID: "a" + n, Revision: 1, Body: []byte(`{}`), CreatedAt: at(0)}); err != nil {
			return err
		}
		row := effect(outbox, at(0))
		row.ApprovalID = "a" + n
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{row})
	}
	var errs [5]error
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		errs[0] = tx.Savepoint(ctx, func(ctx context.Context) error { return write(ctx, tx, "1", "o1") })
		errs[1] = tx.Savepoint(ctx, func(ctx context.Context) error {
			if err := write(ctx, tx, "2", "o2"); err != nil {
				return err
			}
			return errOwn
		})
		errs[2] = tx.Savepoint(ctx, func(ctx context.Context) error { return write(ctx, tx, "3", "o3") })
		errs[3] = tx.Savepoint(ctx, func(ctx context.Context) error { return write(ctx, tx, "4", "o3") })
		errs[4] = tx.Savepoint(ctx, func(ctx context.Context) error { return write(ctx, tx, "5", "o5") })
		for i, err := range errs {
			if errors.Is(err, store.ErrTxBroken) {
				t.Errorf("savepoint %d: %v: the transaction broke", i+1, err)
			}
		}
		return nil
	})
	if errs[0] != nil || errs[2] != nil || errs[4] != nil {
		t.Errorf("savepoints 1, 3, 5: %v, %v, %v; want each to succeed", errs[0], errs[2], errs[4])
	}
	if errs[1] != errOwn {
		t.Errorf("savepoint 2: %v; want its own error as it is", errs[1])
	}
	if errs[3] == nil {
		t.Errorf("savepoint 4 reused outbox id o3, yet succeeded")
	}
	for n, want := range map[string]bool{"1": true, "2": false, "3": true, "4": false, "5": true} {
		_, err := s.ApprovalGet(ctx, "a"+n)
		switch {
		case want && err != nil:
			t.Errorf("approval a%s: %v; want it committed", n, err)
		case !want && !errors.Is(err, store.ErrNotFound):
			t.Errorf("approval a%s: %v; want it undone with its savepoint", n, err)
		}
		_, err = s.RevisionGet(ctx, "a"+n, 1)
		if (err == nil) != want {
			t.Errorf("revision 1 of a%s: %v; want present %v", n, err, want)
		}
		errLooking := errors.New("only looking")
		_ = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			r, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e" + n, Tenant: "t1", Type: "x", BodySHA256: "d", ApprovalID: "a" + n, ReceivedAt: at(time.Hour)})
			if err == nil && r.Inserted == want {
				t.Errorf("event e%s: inserted again %v; want it recorded %v", n, r.Inserted, want)
			}
			return errLooking // rolled back: leaves nothing behind
		})
	}
	got := outboxIDs(claim(t, s, "w1", at(time.Hour), 10))
	wantIDs(t, "outbox rows of the savepoints that succeeded", got, []string{"o1", "o3", "o5"})
}

// testSavepointBroken: a savepoint that cannot be undone (its context
// ended inside it, after it wrote) says so with store.ErrTxBroken, so that
// a group commit runs its callers each alone rather than commit a
// transaction holding half of one caller's work; that transaction then
// commits nothing, and the store serves the next one.
func testSavepointBroken(t *testing.T, s store.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	var sp error
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		sp = tx.Savepoint(ctx, func(ctx context.Context) error {
			if _, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e1", Tenant: "t1", Type: "x", BodySHA256: "d", ApprovalID: "a1", ReceivedAt: at(0)}); err != nil {
				return err
			}
			if err := tx.ApprovalUpsert(ctx, pendingApproval("a1", "t1", at(0))); err != nil {
				return err
			}
			cancel()
			return ctx.Err()
		})
		return sp
	})
	if !errors.Is(sp, store.ErrTxBroken) {
		t.Errorf("a savepoint whose undo could not run: %v; want ErrTxBroken", sp)
	}
	if err == nil {
		t.Errorf("InTx returned nil after its savepoint broke")
	}
	assertNothingWritten(t, s)
}
