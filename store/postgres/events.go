package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// EventInsert records an event id once, or returns the digest it holds; a
// second insert of one id waits for the first.
func (t *tx) EventInsert(ctx context.Context, p store.EventInsertParams) (store.EventInsertResult, error) {
	op := "record event " + p.ID
	// The queued writes go in the same round trip.
	br, err := t.sendWith(ctx, func(b *pgx.Batch) {
		b.Queue(query.EventInsert, p.ID, p.Tenant, p.Type, p.BodySHA256, p.ApprovalID, query.Millis(p.ReceivedAt))
	})
	if err != nil {
		return store.EventInsertResult{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return store.EventInsertResult{}, t.s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 1 {
		return store.EventInsertResult{Inserted: true}, nil
	}
	var digest string
	if err := t.q.QueryRow(ctx, query.EventDigest, p.ID).Scan(&digest); err != nil {
		return store.EventInsertResult{}, t.s.fail(ctx, op, err)
	}
	return store.EventInsertResult{BodySHA256: digest}, nil
}
