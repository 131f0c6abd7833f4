package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// ReplaySeen records p.Key and reports a replay, in one round trip.
// Replicas pruning at once skip each other's keys; replicas recording one
// key meet at its primary key, so exactly one reports it unseen.
func (s *Store) ReplaySeen(ctx context.Context, p store.ReplaySeenParams) (bool, error) {
	const op = "record a signed request"
	if err := p.Check(); err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	now := query.Millis(p.Now)
	b := &pgx.Batch{}
	// No WAL flush for a key on a click's path: a crash loses at most the
	// last fraction of a second's keys, whose decisions, if any, Decide
	// still holds to one.
	b.Queue("BEGIN")
	b.Queue("SET LOCAL synchronous_commit TO OFF")
	b.Queue(query.ReplayPrune(skipLocked), now, query.ReplayPruneBatch)
	b.Queue(query.ReplayRecord, query.ReplayKey(p.Key), query.Millis(p.Until), now)
	b.Queue("COMMIT")
	c, done := s.on(ctx)
	defer done()
	res := c.SendBatch(ctx, b)
	for range 3 { // BEGIN, SET, the prune
		if _, err := res.Exec(); err != nil {
			_ = res.Close()
			return false, s.fail(ctx, op, err)
		}
	}
	tag, err := res.Exec()
	if err == nil {
		_, err = res.Exec() // COMMIT
	}
	if err != nil {
		_ = res.Close()
		return false, s.fail(ctx, op, err)
	}
	if err := res.Close(); err != nil {
		return false, s.fail(ctx, op, err)
	}
	return tag.RowsAffected() == 0, nil
}
