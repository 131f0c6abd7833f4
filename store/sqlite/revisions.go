package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// RevisionInsert keeps a revision's body; an existing one is kept.
func (t *tx) RevisionInsert(ctx context.Context, r *store.Revision) error {
	_, err := t.q.ExecContext(ctx, query.RevisionInsert,
		r.ApprovalID, r.Revision, query.Text(r.Body), query.Millis(r.CreatedAt))
	if err != nil {
		return t.s.fail(fmt.Sprintf("insert revision %d of %s", r.Revision, r.ApprovalID), err)
	}
	return nil
}

// RevisionGet reads one revision (store.ErrNotFound when absent).
func (s *Store) RevisionGet(ctx context.Context, approvalID string, revision int) (*store.Revision, error) {
	op := fmt.Sprintf("get revision %d of %s", revision, approvalID)
	var (
		r       store.Revision
		created int64
	)
	err := preparedDB{s.stmts}.QueryRowContext(ctx, query.RevisionGet, approvalID, revision).
		Scan(&r.ApprovalID, &r.Revision, &r.Body, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(op)
	}
	if err != nil {
		return nil, s.fail(op, err)
	}
	r.CreatedAt = query.Time(created)
	return &r, nil
}
