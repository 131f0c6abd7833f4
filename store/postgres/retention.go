package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// Each retention call selects FOR UPDATE SKIP LOCKED, so it passes over
// what replicas and writers hold (docs/design.md#tombstones).

// OutboxPrune deletes up to p.Limit rows finished at or before p.Before.
func (s *Store) OutboxPrune(ctx context.Context, p store.OutboxPruneParams) (int, error) {
	return s.deleteBatch(ctx, "prune finished outbox rows", query.OutboxPrune(skipLocked), p.Before, p.Limit)
}

// ApprovalForget deletes up to p.Limit tombstones.
func (s *Store) ApprovalForget(ctx context.Context, p store.ApprovalForgetParams) (int, error) {
	return s.deleteBatch(ctx, "forget tombstones", query.ApprovalForget(skipLocked), p.Before, p.Limit)
}

// EventPrune deletes up to p.Limit event ids whose approval is not held.
func (s *Store) EventPrune(ctx context.Context, p store.EventPruneParams) (int, error) {
	return s.deleteBatch(ctx, "prune event ids", query.EventPrune(skipLocked), p.Before, p.Limit)
}

// deleteBatch runs one retention DELETE ($1 before, $2 limit).
func (s *Store) deleteBatch(ctx context.Context, op, q string, before time.Time, limit int) (int, error) {
	if limit <= 0 || before.IsZero() {
		return 0, nil
	}
	tag, err := s.pool.Exec(ctx, q, query.Millis(before), limit)
	if err != nil {
		return 0, s.fail(ctx, op, err)
	}
	return int(tag.RowsAffected()), nil
}

// OutboxScrub rewrites up to p.Limit payloads with p.Scrub.
func (s *Store) OutboxScrub(ctx context.Context, p store.OutboxScrubParams) (int, error) {
	const op = "scrub outbox payloads"
	if p.Limit <= 0 || p.CreatedBefore.IsZero() {
		return 0, nil
	}
	if err := query.PlainLike(p.TargetPrefix, p.Contains); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	var n int
	err := s.batch(ctx, op, func(ctx context.Context, q pgx.Tx) error {
		var err error
		n, err = rewrite(ctx, q, query.OutboxSetPayload, p.Scrub, query.OutboxScrubbable(skipLocked),
			p.Kind, query.Millis(p.CreatedAfter), query.Millis(p.CreatedBefore),
			query.LikePrefix(p.TargetPrefix), query.LikeContains(p.Contains), p.Limit)
		return err
	})
	return n, err
}

// ApprovalScrub rewrites up to p.Limit decisions in flight with p.Scrub.
func (s *Store) ApprovalScrub(ctx context.Context, p store.ApprovalScrubParams) (int, error) {
	const op = "scrub decisions in flight"
	if p.Limit <= 0 || p.UpdatedBefore.IsZero() {
		return 0, nil
	}
	if err := query.PlainLike(p.Contains); err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	var n int
	err := s.batch(ctx, op, func(ctx context.Context, q pgx.Tx) error {
		var err error
		n, err = rewrite(ctx, q, query.ApprovalSetDeciding, p.Scrub, query.ApprovalScrubbable(skipLocked),
			query.Millis(p.UpdatedBefore), query.LikeContains(p.Contains), p.Limit)
		return err
	})
	return n, err
}

// ApprovalPrune reduces up to p.Limit closed approvals to tombstones: it
// locks them, cuts those that still qualify, then deletes their rows.
func (s *Store) ApprovalPrune(ctx context.Context, p store.ApprovalPruneParams) (int, error) {
	if p.Limit <= 0 || p.Before.IsZero() {
		return 0, nil
	}
	var n int
	err := s.batch(ctx, "prune closed approvals", func(ctx context.Context, q pgx.Tx) error {
		rows, err := q.Query(ctx, query.ApprovalPrunable(skipLocked), query.Millis(p.Before), p.Limit)
		if err != nil {
			return err
		}
		ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil || len(ids) == 0 {
			return err
		}
		// Checked again by a statement that sees what committed since the
		// selection; revisions and posts go only with what it cut.
		rows, err = q.Query(ctx, query.ApprovalToTombstoneChecked(inList), ids)
		if err != nil {
			return err
		}
		if ids, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil || len(ids) == 0 {
			return err
		}
		b := &pgx.Batch{}
		b.Queue(query.RevisionDeleteOf(inList), ids)
		b.Queue(query.PostDeleteOf(inList), ids)
		if err := q.SendBatch(ctx, b).Close(); err != nil {
			return err
		}
		n = len(ids)
		return nil
	})
	return n, err
}

// batch runs fn in one READ COMMITTED transaction.
func (s *Store) batch(ctx context.Context, op string, fn func(ctx context.Context, q pgx.Tx) error) error {
	pgTx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return s.fail(ctx, op, err)
	}
	done := false
	defer func() {
		if !done {
			rollback(ctx, pgTx)
		}
	}()
	if err := fn(ctx, pgTx); err != nil {
		return s.fail(ctx, op, err)
	}
	done = true
	if err := pgTx.Commit(ctx); err != nil {
		return s.fail(ctx, op, err)
	}
	return nil
}

// rewrite stores with set ($1 id, $2 text) what scrub makes of each
// (id, text) row sel selects, in one round trip; it returns the count.
func rewrite(ctx context.Context, q pgx.Tx, set string, scrub func([]byte) []byte, sel string, args ...any) (int, error) {
	type found struct {
		id   string
		text string
	}
	rows, err := q.Query(ctx, sel, args...)
	if err != nil {
		return 0, err
	}
	all, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (found, error) {
		var f found
		err := r.Scan(&f.id, &f.text)
		return f, err
	})
	if err != nil {
		return 0, err
	}
	b := &pgx.Batch{}
	for _, f := range all {
		if next := scrub([]byte(f.text)); next != nil {
			b.Queue(set, f.id, query.Text(next))
		}
	}
	if b.Len() == 0 {
		return 0, nil
	}
	if err := q.SendBatch(ctx, b).Close(); err != nil {
		return 0, err
	}
	return b.Len(), nil
}
