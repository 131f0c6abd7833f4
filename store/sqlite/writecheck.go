package sqlite

import (
	"context"
	"time"

	"approvalsbot/store/internal/query"
)

// WriteCheck commits one write to write_check as every writer does:
// through the writer slot, in an IMMEDIATE transaction, with the commit
// on disk before it returns (synchronous FULL). So it waits behind this
// process's writers and for a lock another process holds, until ctx ends,
// and fails on a disk or file that cannot take the write.
func (s *Store) WriteCheck(ctx context.Context, now time.Time) error {
	return s.batch(ctx, "check that the store takes writes", func(ctx context.Context, q querier) error {
		_, err := q.ExecContext(ctx, query.WriteCheck, query.Millis(now))
		return err
	})
}
