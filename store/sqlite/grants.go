package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// GrantInsert keeps a new grant (store.Tx.GrantInsert).
func (t *tx) GrantInsert(ctx context.Context, g *store.Grant) error {
	op := "insert grant " + g.ID
	if err := store.CheckGrant(g); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	res, err := t.q.ExecContext(ctx, query.GrantInsert, query.GrantArgs(g)...)
	if err != nil {
		return t.s.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return t.s.fail(op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrExists)
	}
	return nil
}

// GrantGetForUpdate reads a grant; the write lock excludes others.
func (t *tx) GrantGetForUpdate(ctx context.Context, id string) (*store.Grant, error) {
	return t.s.grantGet(ctx, t.q, query.GrantGetForUpdate(""), id)
}

// GrantUpdate writes what may change of a grant (store.Tx.GrantUpdate).
func (t *tx) GrantUpdate(ctx context.Context, g *store.Grant) error {
	if _, err := t.q.ExecContext(ctx, query.GrantUpdate, query.GrantUpdateArgs(g)...); err != nil {
		return t.s.fail("update grant "+g.ID, err)
	}
	return nil
}

// GrantGet reads one grant (store.Store.GrantGet).
func (s *Store) GrantGet(ctx context.Context, id string) (*store.Grant, error) {
	return s.grantGet(ctx, preparedDB{s.stmts}, query.GrantGet, id)
}

func (s *Store) grantGet(ctx context.Context, q querier, sqlText, id string) (*store.Grant, error) {
	g, err := query.ScanGrant(q.QueryRowContext(ctx, sqlText, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound("get grant " + id)
	}
	if err != nil {
		return nil, s.fail("get grant "+id, err)
	}
	return g, nil
}

// GrantList lists a tenant's grants (store.Store.GrantList).
func (s *Store) GrantList(ctx context.Context, p store.GrantListParams) ([]*store.Grant, error) {
	args := []any{p.Tenant, grantLimit(p.Limit)}
	for _, st := range p.States {
		args = append(args, st)
	}
	return s.grantRows(ctx, "list grants of "+p.Tenant, query.GrantList(len(p.States)), args...)
}

// GrantListExpired lists live grants past their time
// (store.Store.GrantListExpired).
func (s *Store) GrantListExpired(ctx context.Context, p store.GrantListExpiredParams) ([]*store.Grant, error) {
	return s.grantRows(ctx, "list expired grants", query.GrantListExpired, query.Millis(p.Now), grantLimit(p.Limit))
}

func (s *Store) grantRows(ctx context.Context, op, q string, args ...any) ([]*store.Grant, error) {
	rows, err := preparedDB{s.stmts}.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	out := []*store.Grant{}
	for rows.Next() {
		g, err := query.ScanGrant(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

func grantLimit(n int) int64 {
	if n <= 0 {
		return 100
	}
	return int64(n)
}
