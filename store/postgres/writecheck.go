package postgres

import (
	"context"
	"time"

	"approvalsbot/store/internal/query"
)

// WriteCheck commits one write to write_check in a statement of its own,
// with the session's synchronous commit, as an ingest's commit waits for
// its WAL flush. A read-only standby refuses it (25006), a server out of
// disk or other resources fails it (class 53): both are
// store.ErrUnavailable, as is a server that cannot be reached. Replicas
// checking at once queue on the one row for the length of a commit. It
// leaves the connections kept for people's clicks alone: busy with
// clicks, they would hold it up, and a click that cannot have one takes
// the main pool's.
func (s *Store) WriteCheck(ctx context.Context, now time.Time) error {
	if _, err := s.pool.Exec(ctx, query.WriteCheck, query.Millis(now)); err != nil {
		return s.fail(ctx, "check that the store takes writes", err)
	}
	return nil
}
