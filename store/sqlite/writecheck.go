package sqlite

import (
	"context"
	"time"

	"approvalsbot/store/internal/query"
)

// WriteCheck commits one write as every writer does: through the writer
// slot, IMMEDIATE, on disk (docs/design.md#write-checks).
func (s *Store) WriteCheck(ctx context.Context, now time.Time) error {
	return s.batch(ctx, "check that the store takes writes", func(ctx context.Context, q querier) error {
		_, err := q.ExecContext(ctx, query.WriteCheck, query.Millis(now))
		return err
	})
}
