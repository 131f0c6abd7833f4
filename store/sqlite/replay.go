package sqlite

import (
	"context"
	"fmt"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// ReplaySeen records p.Key and reports a replay, in one IMMEDIATE
// transaction: the single writer orders calls with one key.
func (s *Store) ReplaySeen(ctx context.Context, p store.ReplaySeenParams) (bool, error) {
	const op = "record a signed request"
	if err := p.Check(); err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	done, err := s.write(ctx)
	if err != nil {
		return false, s.fail(op, err)
	}
	defer done()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return false, s.fail(op, err)
	}
	defer sqlTx.Rollback() // after Commit, a no-op
	q := preparedTx{tx: sqlTx, c: s.stmts}
	now := query.Millis(p.Now)
	if _, err := q.ExecContext(ctx, query.ReplayPrune(""), now, query.ReplayPruneBatch); err != nil {
		return false, s.fail(op, err)
	}
	res, err := q.ExecContext(ctx, query.ReplayRecord, query.ReplayKey(p.Key), query.Millis(p.Until), now)
	if err != nil {
		return false, s.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, s.fail(op, err)
	}
	if err := sqlTx.Commit(); err != nil {
		return false, s.fail(op, err)
	}
	return n == 0, nil
}
