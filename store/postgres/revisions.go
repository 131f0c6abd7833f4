package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// RevisionInsert queues a revision's body; an existing one is kept.
func (t *tx) RevisionInsert(ctx context.Context, r *store.Revision) error {
	t.queue(queuedWrite{op: fmt.Sprintf("insert revision %d of %s", r.Revision, r.ApprovalID),
		sql: query.RevisionInsert, args: []any{r.ApprovalID, r.Revision, query.Text(r.Body), query.Millis(r.CreatedAt)}})
	return nil
}

// RevisionGet reads one revision (store.ErrNotFound when absent).
func (s *Store) RevisionGet(ctx context.Context, approvalID string, revision int) (*store.Revision, error) {
	op := fmt.Sprintf("get revision %d of %s", revision, approvalID)
	var (
		r       store.Revision
		created int64
	)
	c, done := s.on(ctx)
	defer done()
	err := c.QueryRow(ctx, query.RevisionGet, approvalID, revision).
		Scan(&r.ApprovalID, &r.Revision, &r.Body, &created)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(op)
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	r.CreatedAt = query.Time(created)
	return &r, nil
}
