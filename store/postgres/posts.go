package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// PostList lists an approval's posts (store.Store.PostList).
func (s *Store) PostList(ctx context.Context, approvalID string) ([]*store.Post, error) {
	c, done := s.on(ctx)
	defer done()
	return s.postList(ctx, c, approvalID)
}

// PostList lists an approval's posts as the transaction sees them.
func (t *tx) PostList(ctx context.Context, approvalID string) ([]*store.Post, error) {
	if err := t.flush(ctx); err != nil {
		return nil, err
	}
	return t.s.postList(ctx, t.q, approvalID)
}

func (s *Store) postList(ctx context.Context, q querier, approvalID string) ([]*store.Post, error) {
	op := "list posts of " + approvalID
	rows, err := q.Query(ctx, query.PostList, approvalID)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	ps, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Post, error) {
		return query.ScanPost(r)
	})
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	return ps, nil
}

// postUpsert records a post; a zero CreatedAt takes now.
func (s *Store) postUpsert(ctx context.Context, q querier, p *store.Post, now time.Time) error {
	created := p.CreatedAt
	if created.IsZero() {
		created = now
	}
	_, err := q.Exec(ctx, query.PostUpsert,
		p.ApprovalID, p.Target, p.Revision, p.Channel, p.Ref, p.ThreadRef, query.Millis(created))
	if err != nil {
		return s.fail(ctx, fmt.Sprintf("record post of %s to %s", p.ApprovalID, p.Target), err)
	}
	return nil
}
