package sqlite

import (
	"context"
	"fmt"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// PostList lists an approval's posts (store.Store.PostList).
func (s *Store) PostList(ctx context.Context, approvalID string) ([]*store.Post, error) {
	return s.postList(ctx, preparedDB{s.stmts}, approvalID)
}

// PostList lists an approval's posts as the transaction sees them.
func (t *tx) PostList(ctx context.Context, approvalID string) ([]*store.Post, error) {
	return t.s.postList(ctx, t.q, approvalID)
}

func (s *Store) postList(ctx context.Context, q querier, approvalID string) ([]*store.Post, error) {
	op := "list posts of " + approvalID
	rows, err := q.QueryContext(ctx, query.PostList, approvalID)
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	var ps []*store.Post
	for rows.Next() {
		p, err := query.ScanPost(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		ps = append(ps, p)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return ps, nil
}

// postUpsert records a post; a zero CreatedAt takes now.
func (s *Store) postUpsert(ctx context.Context, q querier, p *store.Post, now time.Time) error {
	created := p.CreatedAt
	if created.IsZero() {
		created = now
	}
	_, err := q.ExecContext(ctx, query.PostUpsert,
		p.ApprovalID, p.Target, p.Revision, p.Channel, p.Ref, p.ThreadRef, query.Millis(created))
	if err != nil {
		return s.fail(fmt.Sprintf("record post of %s to %s", p.ApprovalID, p.Target), err)
	}
	return nil
}
