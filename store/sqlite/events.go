package sqlite

import (
	"context"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// EventInsert records an event id once, or returns the digest it holds.
func (t *tx) EventInsert(ctx context.Context, p store.EventInsertParams) (store.EventInsertResult, error) {
	op := "record event " + p.ID
	res, err := t.q.ExecContext(ctx, query.EventInsert,
		p.ID, p.Tenant, p.Type, p.BodySHA256, p.ApprovalID, query.Millis(p.ReceivedAt))
	if err != nil {
		return store.EventInsertResult{}, t.s.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return store.EventInsertResult{}, t.s.fail(op, err)
	}
	if n == 1 {
		return store.EventInsertResult{Inserted: true}, nil
	}
	var digest string
	if err := t.q.QueryRowContext(ctx, query.EventDigest, p.ID).Scan(&digest); err != nil {
		return store.EventInsertResult{}, t.s.fail(op, err)
	}
	return store.EventInsertResult{BodySHA256: digest}, nil
}
