package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// OutcomeRequest queues the record of a revision's call
// (store.Tx.OutcomeRequest).
func (t *tx) OutcomeRequest(ctx context.Context, p store.OutcomeRequestParams) error {
	t.queue(queuedWrite{op: "record the outcome row of " + p.ApprovalID, sql: query.OutcomeRequest,
		args: query.OutcomeRequestArgs(p)})
	return nil
}

// OutcomeClose queues the record of how an approval closed
// (store.Tx.OutcomeClose).
func (t *tx) OutcomeClose(ctx context.Context, p store.OutcomeCloseParams) error {
	t.queue(queuedWrite{op: "record the outcome of " + p.ApprovalID, sql: query.OutcomeClose,
		args: query.OutcomeCloseArgs(p)})
	return nil
}

// OutcomeList lists decided outcomes (store.Store.OutcomeList).
func (s *Store) OutcomeList(ctx context.Context, p store.OutcomeListParams) ([]*store.Outcome, error) {
	const op = "list outcomes"
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	q, args := query.OutcomeListArgs(p)
	c, done := s.on(ctx)
	defer done()
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Outcome, error) {
		return query.ScanOutcome(r)
	})
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	if out == nil {
		out = []*store.Outcome{}
	}
	return out, nil
}

// OutcomeRepeated reports an earlier approval of the same call
// (store.Store.OutcomeRepeated).
func (s *Store) OutcomeRepeated(ctx context.Context, p store.OutcomeRepeatedParams) (bool, error) {
	c, done := s.on(ctx)
	defer done()
	var n int64
	if err := c.QueryRow(ctx, query.OutcomeRepeated, p.ApprovalID, p.Window.Milliseconds()).Scan(&n); err != nil {
		return false, s.fail(ctx, "look for an earlier approval of "+p.ApprovalID, err)
	}
	return n > 0, nil
}

// OutcomePrune deletes up to p.Limit decided outcomes.
func (s *Store) OutcomePrune(ctx context.Context, p store.OutcomePruneParams) (int, error) {
	return s.deleteBatch(ctx, "prune outcomes", query.OutcomePrune(skipLocked), p.Before, p.Limit)
}
