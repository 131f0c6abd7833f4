package sqlite

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// OutboxInsert enqueues rows in order, in the caller's transaction. A row
// whose CoalesceKey matches a pending row that no worker has claimed is
// skipped (that row performs the latest state when it runs), including a
// row added earlier in the same call; a row whose match is claimed is
// added, to run after the one in flight. A zero NotBefore means Now.
func (t *tx) OutboxInsert(ctx context.Context, rows []store.OutboxInsertParams) error {
	for _, r := range rows {
		notBefore := r.NotBefore
		if notBefore.IsZero() {
			notBefore = r.Now
		}
		res, err := t.q.ExecContext(ctx, query.OutboxInsert,
			r.ID, r.Tenant, r.ApprovalID, r.Kind, r.Target, r.CoalesceKey, query.Text(r.Payload),
			query.Millis(notBefore), query.Millis(r.Now))
		if err != nil {
			return t.s.fail(fmt.Sprintf("enqueue %s %s for %s", r.Kind, r.ID, r.ApprovalID), err)
		}
		if n, err := res.RowsAffected(); err == nil && n == 0 {
			t.s.log.LogAttrs(ctx, slog.LevelDebug, "outbox row coalesced into a waiting one",
				slog.String("approval_id", r.ApprovalID), slog.String("tenant", r.Tenant),
				slog.String("kind", r.Kind), slog.String("coalesce_key", r.CoalesceKey))
		}
	}
	return nil
}

// OutboxClaim leases up to p.Limit due rows to p.Worker until
// p.Now+p.Lease, returned oldest due first (ties by id). Under SQLite's
// single writer the one UPDATE runs alone, so no two workers get the same
// row while its lease lasts.
func (s *Store) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]*store.OutboxRow, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, query.OutboxClaim(""),
		query.Millis(p.Now), p.Limit, p.Worker, query.Millis(p.Now.Add(p.Lease)))
	if err != nil {
		return nil, s.fail("claim outbox rows", err)
	}
	defer rows.Close()
	var out []*store.OutboxRow
	for rows.Next() {
		r, err := query.ScanOutboxRow(rows)
		if err != nil {
			return nil, s.fail("claim outbox rows", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("claim outbox rows", err)
	}
	query.SortOutbox(out)
	return out, nil
}

// OutboxComplete marks a row done and records p.Post (a zero CreatedAt
// takes p.Now) in one transaction. It fails with store.ErrLeaseLost unless
// the row is pending and still claimed by p.Worker, which includes a lapsed
// lease nobody has taken over: that result is still the only one.
func (s *Store) OutboxComplete(ctx context.Context, p store.OutboxCompleteParams) error {
	op := "complete outbox row " + p.ID
	if p.Post == nil {
		return s.outboxFinish(ctx, s.db, op, p.ID, query.OutboxComplete, p.ID, p.Worker, query.Millis(p.Now))
	}
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer sqlTx.Rollback() // after Commit, a no-op
	if err := s.outboxFinish(ctx, sqlTx, op, p.ID, query.OutboxComplete, p.ID, p.Worker, query.Millis(p.Now)); err != nil {
		return err
	}
	if err := s.postUpsert(ctx, sqlTx, p.Post, p.Now); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if err := sqlTx.Commit(); err != nil {
		return s.fail(op+": commit", err)
	}
	return nil
}

// OutboxRetry releases a row held by p.Worker to run again at
// p.NextAttemptAt, keeping p.Error and counting the try when p.Attempt;
// store.ErrLeaseLost when the worker no longer holds it.
func (s *Store) OutboxRetry(ctx context.Context, p store.OutboxRetryParams) error {
	var add int64
	if p.Attempt {
		add = 1
	}
	return s.outboxFinish(ctx, s.db, "retry outbox row "+p.ID, p.ID, query.OutboxRetry,
		p.ID, p.Worker, query.Millis(p.NextAttemptAt), p.Error, add)
}

// OutboxDead ends a row held by p.Worker for good, keeping p.Error and
// counting the try; store.ErrLeaseLost when the worker no longer holds it.
func (s *Store) OutboxDead(ctx context.Context, p store.OutboxDeadParams) error {
	return s.outboxFinish(ctx, s.db, "end outbox row "+p.ID, p.ID, query.OutboxDead,
		p.ID, p.Worker, p.Error, query.Millis(p.Now))
}

// outboxFinish runs one of the worker's result updates, which change the row
// only while the worker holds it, and tells a lost lease (the row exists)
// from an unknown id.
func (s *Store) outboxFinish(ctx context.Context, q querier, op, id, sqlText string, args ...any) error {
	res, err := q.ExecContext(ctx, sqlText, args...)
	if err != nil {
		return s.fail(op, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return s.fail(op, err)
	}
	if n == 1 {
		return nil
	}
	var exists int64
	if err := q.QueryRowContext(ctx, query.OutboxExists, id).Scan(&exists); err != nil {
		return s.fail(op, err)
	}
	if exists == 0 {
		return notFound(op)
	}
	return fmt.Errorf("%s: %w", op, store.ErrLeaseLost)
}

// OutboxStats counts pending and dead rows; OldestAge is how long the
// earliest due pending row has been due (0 when none is due yet).
func (s *Store) OutboxStats(ctx context.Context, now time.Time) (store.OutboxStats, error) {
	var (
		st       store.OutboxStats
		earliest int64
	)
	err := s.db.QueryRowContext(ctx, query.OutboxStats).Scan(&st.Pending, &earliest, &st.Dead)
	if err != nil {
		return store.OutboxStats{}, s.fail("read outbox stats", err)
	}
	if st.Pending > 0 && earliest != 0 {
		if age := now.Sub(query.Time(earliest)); age > 0 {
			st.OldestAge = age
		}
	}
	return st, nil
}
