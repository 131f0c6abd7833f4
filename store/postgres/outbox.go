package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
)

// OutboxInsert enqueues rows in order, in the caller's transaction, and
// notifies OutboxChannel, which PostgreSQL delivers when (and only if) the
// transaction commits; the rows and the notification go in one round
// trip. A row whose CoalesceKey matches a pending row that no worker has
// claimed is skipped (that row performs the latest state when it runs),
// including a row added earlier in the same call; a row whose match is
// claimed is added, to run after the one in flight. The waiting row a new
// one coalesces into is locked FOR SHARE until the transaction ends, so no
// worker claims it, and renders the state from before this transaction,
// in between. A zero NotBefore means Now.
func (t *tx) OutboxInsert(ctx context.Context, rows []store.OutboxInsertParams) error {
	if len(rows) == 0 {
		return nil
	}
	for _, r := range rows {
		notBefore := r.NotBefore
		if notBefore.IsZero() {
			notBefore = r.Now
		}
		t.queue(queuedWrite{op: fmt.Sprintf("enqueue %s %s for %s", r.Kind, r.ID, r.ApprovalID),
			sql: query.OutboxInsertLocking(forShare),
			args: []any{r.ID, r.Tenant, r.ApprovalID, r.Kind, r.Target, r.CoalesceKey, query.Text(r.Payload),
				query.Millis(notBefore), query.Millis(r.Now)},
			after: func(tag pgconn.CommandTag) {
				if tag.RowsAffected() == 0 {
					t.s.log.LogAttrs(ctx, slog.LevelDebug, "outbox row coalesced into a waiting one",
						slog.String("approval_id", r.ApprovalID), slog.String("tenant", r.Tenant),
						slog.String("kind", r.Kind), slog.String("coalesce_key", r.CoalesceKey))
				}
			}})
	}
	// Delivered at commit: other replicas wake when the rows exist.
	t.queue(queuedWrite{op: "notify " + OutboxChannel, sql: outboxNotify, args: []any{OutboxChannel}})
	return nil
}

// OutboxClaim leases up to p.Limit due rows to p.Worker until
// p.Now+p.Lease, returned oldest due first (ties by id). One UPDATE picks
// them FOR UPDATE SKIP LOCKED: workers on other replicas claiming at the
// same moment pass over each other's rows instead of waiting or taking
// them twice, and a row another transaction has locked (one coalescing
// into it) waits for the next claim.
func (s *Store) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]*store.OutboxRow, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, query.OutboxClaim(skipLocked),
		query.Millis(p.Now), p.Limit, p.Worker, query.Millis(p.Now.Add(p.Lease)))
	if err != nil {
		return nil, s.fail(ctx, "claim outbox rows", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.OutboxRow, error) {
		return query.ScanOutboxRow(r)
	})
	if err != nil {
		return nil, s.fail(ctx, "claim outbox rows", err)
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
		return s.outboxFinish(ctx, s.pool, op, p.ID, query.OutboxComplete, p.ID, p.Worker, query.Millis(p.Now))
	}
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
	if err := s.outboxFinish(ctx, pgTx, op, p.ID, query.OutboxComplete, p.ID, p.Worker, query.Millis(p.Now)); err != nil {
		return err
	}
	if err := s.postUpsert(ctx, pgTx, p.Post, p.Now); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	done = true
	if err := pgTx.Commit(ctx); err != nil {
		return s.fail(ctx, op+": commit", err)
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
	return s.outboxFinish(ctx, s.pool, "retry outbox row "+p.ID, p.ID, query.OutboxRetry,
		p.ID, p.Worker, query.Millis(p.NextAttemptAt), p.Error, add)
}

// OutboxDead ends a row held by p.Worker for good, keeping p.Error and
// counting the try; store.ErrLeaseLost when the worker no longer holds it.
func (s *Store) OutboxDead(ctx context.Context, p store.OutboxDeadParams) error {
	return s.outboxFinish(ctx, s.pool, "end outbox row "+p.ID, p.ID, query.OutboxDead,
		p.ID, p.Worker, p.Error, query.Millis(p.Now))
}

// outboxFinish runs one of the worker's result updates, which change the
// row only while the worker holds it, and tells a lost lease (the row
// exists) from an unknown id. The update waits for a claim that has the
// row locked at that moment and then re-reads it, so a result racing a
// takeover is either applied before it or refused after it.
func (s *Store) outboxFinish(ctx context.Context, q querier, op, id, sqlText string, args ...any) error {
	tag, err := q.Exec(ctx, sqlText, args...)
	if err != nil {
		return s.fail(ctx, op, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	var exists int64
	if err := q.QueryRow(ctx, query.OutboxExists, id).Scan(&exists); err != nil {
		return s.fail(ctx, op, err)
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
	err := s.pool.QueryRow(ctx, query.OutboxStats).Scan(&st.Pending, &earliest, &st.Dead)
	if err != nil {
		return store.OutboxStats{}, s.fail(ctx, "read outbox stats", err)
	}
	if st.Pending > 0 && earliest != 0 {
		if age := now.Sub(query.Time(earliest)); age > 0 {
			st.OldestAge = age
		}
	}
	return st, nil
}
