package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// GrantInsert keeps a new grant (store.Tx.GrantInsert), sent at once with
// the queued writes: whether its id was held is the caller's answer.
func (t *tx) GrantInsert(ctx context.Context, g *store.Grant) error {
	op := "insert grant " + g.ID
	if err := store.CheckGrant(g); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	br, err := t.sendWith(ctx, func(b *pgx.Batch) { b.Queue(query.GrantInsert, query.GrantArgs(g)...) })
	if err != nil {
		return err
	}
	defer br.Close()
	tag, err := br.Exec()
	if err != nil {
		return t.s.fail(ctx, op, err)
	}
	if cerr := br.Close(); cerr != nil {
		return t.s.fail(ctx, op, cerr)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%s: %w", op, store.ErrExists)
	}
	return nil
}

// GrantGetForUpdate reads a grant and locks its row (store.Tx).
func (t *tx) GrantGetForUpdate(ctx context.Context, id string) (*store.Grant, error) {
	op := "get grant " + id + " for update"
	br, err := t.sendWith(ctx, func(b *pgx.Batch) { b.Queue(query.GrantGetForUpdate(forUpdate), id) })
	if err != nil {
		return nil, err
	}
	defer br.Close()
	g, err := query.ScanGrant(br.QueryRow())
	if errors.Is(err, pgx.ErrNoRows) {
		err = notFound(op)
	} else if err != nil {
		return nil, t.s.fail(ctx, op, err)
	}
	if cerr := br.Close(); cerr != nil {
		return nil, t.s.fail(ctx, op, cerr)
	}
	return g, err
}

// GrantUpdate queues what may change of a grant (store.Tx.GrantUpdate).
func (t *tx) GrantUpdate(ctx context.Context, g *store.Grant) error {
	t.queue(queuedWrite{op: "update grant " + g.ID, sql: query.GrantUpdate, args: query.GrantUpdateArgs(g)})
	return nil
}

// GrantGet reads one grant (store.Store.GrantGet).
func (s *Store) GrantGet(ctx context.Context, id string) (*store.Grant, error) {
	op := "get grant " + id
	c, done := s.on(ctx)
	defer done()
	g, err := query.ScanGrant(c.QueryRow(ctx, query.GrantGet, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, notFound(op)
	}
	if err != nil {
		return nil, s.fail(ctx, op, err)
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
	c, done := s.on(ctx)
	defer done()
	rows, err := c.Query(ctx, q, args...)
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.Grant, error) { return query.ScanGrant(r) })
	if err != nil {
		return nil, s.fail(ctx, op, err)
	}
	if out == nil {
		out = []*store.Grant{}
	}
	return out, nil
}

func grantLimit(n int) int64 {
	if n <= 0 {
		return 100
	}
	return int64(n)
}
