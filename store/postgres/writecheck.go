package postgres

import (
	"context"
	"time"

	"approvalsbot/store/internal/query"
)

// WriteCheck commits one write with a durable commit, on the main pool
// (docs/design.md#write-checks).
func (s *Store) WriteCheck(ctx context.Context, now time.Time) error {
	if _, err := s.pool.Exec(ctx, query.WriteCheck, query.Millis(now)); err != nil {
		return s.fail(ctx, "check that the store takes writes", err)
	}
	return nil
}
