package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// ApprovalGet reads one approval (store.ErrNotFound when absent).
func (s *Store) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	return s.approvalGet(ctx, preparedDB{s.stmts}, query.ApprovalGet, id)
}

// ApprovalGetForUpdate reads an approval; the write lock excludes others.
func (t *tx) ApprovalGetForUpdate(ctx context.Context, id string) (*store.Approval, error) {
	return t.s.approvalGet(ctx, t.q, query.ApprovalGetForUpdate(""), id)
}

func (s *Store) approvalGet(ctx context.Context, q querier, sqlText, id string) (*store.Approval, error) {
	a, err := query.ScanApproval(q.QueryRowContext(ctx, sqlText, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("get approval " + id)
	}
	if err != nil {
		return nil, s.fail("get approval "+id, err)
	}
	return a, nil
}

// ApprovalUpsert writes the whole row, times at millisecond precision.
func (t *tx) ApprovalUpsert(ctx context.Context, a *store.Approval) error {
	_, err := t.q.ExecContext(ctx, query.ApprovalUpsert,
		a.ID, a.Tenant, a.Revision, a.State, query.Bool(a.Seen), a.Function,
		query.NullText(a.Decision), query.NullText(a.Plan), a.StepsDone,
		query.NullMillis(a.NextStepAt), query.NullMillis(a.DeadlineAt),
		query.Millis(a.RequestedAt), query.Millis(a.CreatedAt), query.Millis(a.UpdatedAt),
		a.ClaimedBy, query.Millis(a.ClaimedUntil), query.NullText(a.Deciding), query.NullText(a.LadderState),
		query.NullText(a.Votes))
	if err != nil {
		return t.s.fail("upsert approval "+a.ID, err)
	}
	return nil
}

// ApprovalListPending lists a tenant's pending approvals; Limit ≤ 0: all.
func (s *Store) ApprovalListPending(ctx context.Context, p store.ApprovalListPendingParams) ([]*store.Approval, error) {
	limit := int64(p.Limit)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	op := "list pending approvals of " + p.Tenant
	rows, err := s.db.QueryContext(ctx, query.ApprovalListPending, p.Tenant, limit)
	if err != nil {
		return nil, s.fail(op, err)
	}
	as, err := scanApprovals(rows)
	if err != nil {
		return nil, s.fail(op, err)
	}
	return as, nil
}

// ApprovalClaimDue leases due approvals (store.Store.ApprovalClaimDue).
func (s *Store) ApprovalClaimDue(ctx context.Context, p store.ApprovalClaimDueParams) ([]*store.Approval, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	done, err := s.write(ctx)
	if err != nil {
		return nil, s.fail("claim due approvals", err)
	}
	defer done()
	now := query.Millis(p.Now)
	rows, err := s.db.QueryContext(ctx, query.ApprovalClaimDue(""),
		now, p.Limit, p.Worker, query.Millis(p.Now.Add(p.Lease)))
	if err != nil {
		return nil, s.fail("claim due approvals", err)
	}
	as, err := scanApprovals(rows)
	if err != nil {
		return nil, s.fail("claim due approvals", err)
	}
	query.SortByDue(as)
	return as, nil
}

func scanApprovals(rows *sql.Rows) ([]*store.Approval, error) {
	defer rows.Close()
	var as []*store.Approval
	for rows.Next() {
		a, err := query.ScanApproval(rows)
		if err != nil {
			return nil, fmt.Errorf("read approval: %w", err)
		}
		as = append(as, a)
	}
	return as, rows.Err()
}
