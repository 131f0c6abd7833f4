package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// Each retention call is one IMMEDIATE transaction through the writer
// slot, like every other write (docs/design.md#tombstones).

// OutboxPrune deletes up to p.Limit rows finished at or before p.Before.
func (s *Store) OutboxPrune(ctx context.Context, p store.OutboxPruneParams) (int, error) {
	return s.deleteBatch(ctx, "prune finished outbox rows", query.OutboxPrune(""), p.Before, p.Limit)
}

// ApprovalForget deletes up to p.Limit tombstones.
func (s *Store) ApprovalForget(ctx context.Context, p store.ApprovalForgetParams) (int, error) {
	return s.deleteBatch(ctx, "forget tombstones", query.ApprovalForget(""), p.Before, p.Limit)
}

// EventPrune deletes up to p.Limit event ids whose approval is not held.
func (s *Store) EventPrune(ctx context.Context, p store.EventPruneParams) (int, error) {
	return s.deleteBatch(ctx, "prune event ids", query.EventPrune(""), p.Before, p.Limit)
}

// deleteBatch runs one retention DELETE ($1 before, $2 limit).
func (s *Store) deleteBatch(ctx context.Context, op, q string, before time.Time, limit int) (int, error) {
	if limit <= 0 || before.IsZero() {
		return 0, nil
	}
	var n int
	err := s.batch(ctx, op, func(ctx context.Context, q2 querier) error {
		res, err := q2.ExecContext(ctx, q, query.Millis(before), limit)
		if err != nil {
			return err
		}
		c, err := res.RowsAffected()
		n = int(c)
		return err
	})
	return n, err
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
	err := s.batch(ctx, op, func(ctx context.Context, q querier) error {
		rows, err := q.QueryContext(ctx, query.OutboxScrubbable(""), p.Kind, query.Millis(p.CreatedAfter),
			query.Millis(p.CreatedBefore), query.LikePrefix(p.TargetPrefix), query.LikeContains(p.Contains), p.Limit)
		if err != nil {
			return err
		}
		n, err = rewrite(ctx, q, rows, query.OutboxSetPayload, p.Scrub)
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
	err := s.batch(ctx, op, func(ctx context.Context, q querier) error {
		rows, err := q.QueryContext(ctx, query.ApprovalScrubbable(""), query.Millis(p.UpdatedBefore),
			query.LikeContains(p.Contains), p.Limit)
		if err != nil {
			return err
		}
		n, err = rewrite(ctx, q, rows, query.ApprovalSetDeciding, p.Scrub)
		return err
	})
	return n, err
}

// ApprovalPrune reduces up to p.Limit closed approvals to tombstones.
func (s *Store) ApprovalPrune(ctx context.Context, p store.ApprovalPruneParams) (int, error) {
	if p.Limit <= 0 || p.Before.IsZero() {
		return 0, nil
	}
	var n int
	err := s.batch(ctx, "prune closed approvals", func(ctx context.Context, q querier) error {
		rows, err := q.QueryContext(ctx, query.ApprovalPrunable(""), query.Millis(p.Before), p.Limit)
		if err != nil {
			return err
		}
		ids, err := scanIDs(rows)
		if err != nil || len(ids) == 0 {
			return err
		}
		list := idList(ids)
		for _, stmt := range []string{query.RevisionDeleteOf(inList), query.PostDeleteOf(inList)} {
			if _, err := q.ExecContext(ctx, stmt, list); err != nil {
				return err
			}
		}
		res, err := q.ExecContext(ctx, query.ApprovalToTombstone(inList), list)
		if err != nil {
			return err
		}
		c, err := res.RowsAffected()
		n = int(c)
		return err
	})
	return n, err
}

// batch runs fn in one IMMEDIATE transaction through the writer slot.
func (s *Store) batch(ctx context.Context, op string, fn func(ctx context.Context, q querier) error) error {
	done, err := s.write(ctx)
	if err != nil {
		return s.fail(op, err)
	}
	defer done()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	if err := fn(ctx, preparedTx{tx: sqlTx, c: s.stmts}); err != nil {
		_ = sqlTx.Rollback()
		return s.fail(op, err)
	}
	if err := sqlTx.Commit(); err != nil {
		return s.fail(op, err)
	}
	return nil
}

// rewrite stores with set ($1 id, $2 text) what scrub makes of each
// (id, text) row, all read before the first write; it returns the count.
func rewrite(ctx context.Context, q querier, rows *sql.Rows, set string, scrub func([]byte) []byte) (int, error) {
	type found struct {
		id   string
		text []byte
	}
	var all []found
	for rows.Next() {
		var f found
		if err := rows.Scan(&f.id, &f.text); err != nil {
			rows.Close()
			return 0, err
		}
		all = append(all, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	n := 0
	for _, f := range all {
		next := scrub(f.text)
		if next == nil {
			continue
		}
		if _, err := q.ExecContext(ctx, set, f.id, query.Text(next)); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

func scanIDs(rows *sql.Rows) ([]string, error) {
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
