package sqlite

import (
	"context"
	"fmt"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// OutcomeRequest records a revision's call (store.Tx.OutcomeRequest).
func (t *tx) OutcomeRequest(ctx context.Context, p store.OutcomeRequestParams) error {
	if _, err := t.q.ExecContext(ctx, query.OutcomeRequest, query.OutcomeRequestArgs(p)...); err != nil {
		return t.s.fail("record the outcome row of "+p.ApprovalID, err)
	}
	return nil
}

// OutcomeClose records how an approval closed (store.Tx.OutcomeClose).
func (t *tx) OutcomeClose(ctx context.Context, p store.OutcomeCloseParams) error {
	if _, err := t.q.ExecContext(ctx, query.OutcomeClose, query.OutcomeCloseArgs(p)...); err != nil {
		return t.s.fail("record the outcome of "+p.ApprovalID, err)
	}
	return nil
}

// OutcomeList lists decided outcomes (store.Store.OutcomeList).
func (s *Store) OutcomeList(ctx context.Context, p store.OutcomeListParams) ([]*store.Outcome, error) {
	const op = "list outcomes"
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	q, args := query.OutcomeListArgs(p)
	rows, err := preparedDB{s.stmts}.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	out := []*store.Outcome{}
	for rows.Next() {
		o, err := query.ScanOutcome(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		out = append(out, o)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// OutcomeRepeated reports an earlier approval of the same call
// (store.Store.OutcomeRepeated).
func (s *Store) OutcomeRepeated(ctx context.Context, p store.OutcomeRepeatedParams) (bool, error) {
	var n int64
	err := preparedDB{s.stmts}.QueryRowContext(ctx, query.OutcomeRepeated, p.ApprovalID, p.Window.Milliseconds()).Scan(&n)
	if err != nil {
		return false, s.fail("look for an earlier approval of "+p.ApprovalID, err)
	}
	return n > 0, nil
}

// OutcomePrune deletes up to p.Limit decided outcomes.
func (s *Store) OutcomePrune(ctx context.Context, p store.OutcomePruneParams) (int, error) {
	return s.deleteBatch(ctx, "prune outcomes", query.OutcomePrune(""), p.Before, p.Limit)
}
