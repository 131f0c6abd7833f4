package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// ReplaySeen records p.Key until p.Until and reports whether it was held
// already at p.Now, forgetting a few keys past their time first, in one
// round trip (one batch, one transaction). The
// keys it forgets are taken FOR UPDATE SKIP LOCKED, so replicas pruning
// at once never wait for each other. Replicas recording one key at once
// meet at its primary key: the second waits for the first and, when it
// commits, finds the key held, so exactly one reports it unseen.
func (s *Store) ReplaySeen(ctx context.Context, p store.ReplaySeenParams) (bool, error) {
	const op = "record a signed request"
	if err := p.Check(); err != nil {
		return false, fmt.Errorf("%s: %w", op, err)
	}
	now := query.Millis(p.Now)
	b := &pgx.Batch{}
	// A key is worth a commit that does not wait for its WAL flush: it
	// sits on a click's path before the decision's own durable commit,
	// and what a crash could lose of it is the last fraction of a
	// second's keys, whose decisions, if any, Decide still holds to one.
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
