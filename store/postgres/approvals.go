package postgres

import (
	"context"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// approvalLock takes an approval id's transaction-scoped advisory lock,
// so writers of an approval not stored yet wait for each other too: FOR
// UPDATE locks only rows that exist. $1 lockClassApproval, $2 lockKey(id).
const approvalLock = `SELECT pg_advisory_xact_lock($1, $2)`

// ApprovalGet reads one approval (store.ErrNotFound when absent).
func (s *Store) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	op := "get approval " + id
	c, done := s.on(ctx)
	defer done()
	a, err := query.ScanApproval(c.QueryRow(ctx, query.ApprovalGet, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(op)
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return a, nil
}

// ApprovalGetForUpdate takes the approval's advisory lock and reads its
// row FOR UPDATE, in one round trip. Absent, it is store.ErrNotFound and
// the id stays locked, so a writer that creates it is the only one.
func (t *tx) ApprovalGetForUpdate(ctx context.Context, id string) (*store.Approval, error) {
	op := "get approval " + id + " for update"
	// The queued writes go in the same round trip.
	br, err := t.sendWith(ctx, func(b *pgx.Batch) {
		b.Queue(approvalLock, lockClassApproval, lockKey(id))
		b.Queue(query.ApprovalGetForUpdate(forUpdate), id)
	})
	if err != nil {
		return nil, err
	}
	defer br.Close()
	if _, err := br.Exec(); err != nil {
		return nil, t.s.fail(ctx, op, err)
	}
	a, err := query.ScanApproval(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		err = notFound(op)
	} else if err != nil {
		return nil, t.s.fail(ctx, op, err)
	}
	if cerr := br.Close(); cerr != nil {
		return nil, t.s.fail(ctx, op, cerr)
	}
	return a, err
}

// ApprovalUpsert queues a write of the whole row.
func (t *tx) ApprovalUpsert(ctx context.Context, a *store.Approval) error {
	t.queue(queuedWrite{op: "upsert approval " + a.ID, sql: query.ApprovalUpsert, args: []any{
		a.ID, a.Tenant, a.Revision, a.State, query.Bool(a.Seen), a.Function,
		query.NullText(a.Decision), query.NullText(a.Plan), a.StepsDone,
		query.NullMillis(a.NextStepAt), query.NullMillis(a.DeadlineAt),
		query.Millis(a.RequestedAt), query.Millis(a.CreatedAt), query.Millis(a.UpdatedAt),
		a.ClaimedBy, query.Millis(a.ClaimedUntil), query.NullText(a.Deciding), query.NullText(a.LadderState),
		query.NullText(a.Votes)}})
	return nil
}

// ApprovalListPending lists a tenant's pending approvals; Limit ≤ 0: all.
func (s *Store) ApprovalListPending(ctx context.Context, p store.ApprovalListPendingParams) ([]*store.Approval, error) {
	limit := int64(p.Limit)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	op := "list pending approvals of " + p.Tenant
	c, done := s.on(ctx)
	defer done()
	rows, err := c.Query(ctx, query.ApprovalListPending, p.Tenant, limit)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	as, err := collectApprovals(rows)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return as, nil
}

// ApprovalClaimDue leases due approvals (store.Store.ApprovalClaimDue) in
// one UPDATE, SKIP LOCKED: an approval another replica or a writer holds
// is left for the next tick.
func (s *Store) ApprovalClaimDue(ctx context.Context, p store.ApprovalClaimDueParams) ([]*store.Approval, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, query.ApprovalClaimDue(skipLocked),
		query.Millis(p.Now), p.Limit, p.Worker, query.Millis(p.Now.Add(p.Lease)))
	if err != nil {
		return nil, s.fail(ctx, "claim due approvals", err)
	}
	as, err := collectApprovals(rows)
	if err != nil {
		return nil, s.fail(ctx, "claim due approvals", err)
	}
	query.SortByDue(as)
	return as, nil
}

// collectApprovals reads every row and closes rows.
func collectApprovals(rows pgx.Rows) ([]*store.Approval, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Approval, error) {
		return query.ScanApproval(r)
	})
}
