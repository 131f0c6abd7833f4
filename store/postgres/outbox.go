package postgres

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"approvalsbot/store"
	"approvalsbot/store/internal/claim"
	"approvalsbot/store/internal/query"
)

// OutboxInsert queues rows (store.Tx.OutboxInsert) and a notification of
// OutboxChannel, delivered at commit. The row a new one coalesces into is
// locked FOR SHARE, so no claim takes it before this transaction ends.
func (t *tx) OutboxInsert(ctx context.Context, rows []store.OutboxInsertParams) error {
	if len(rows) == 0 {
		return nil
	}
	for _, r := range rows {
		op := fmt.Sprintf("enqueue %s %s for %s", r.Kind, r.ID, r.ApprovalID)
		notBefore := r.NotBefore
		if notBefore.IsZero() {
			notBefore = r.Now
		}
		lane := r.Lane
		if lane == "" {
			lane = store.LaneChat
		}
		t.queue(queuedWrite{op: op,
			sql: query.OutboxInsertLocking(forShare),
			args: []any{r.ID, r.Tenant, r.ApprovalID, r.Kind, r.Target, r.CoalesceKey, query.Text(r.Payload),
				query.Millis(notBefore), query.Millis(r.Now), lane, r.Priority, r.PaceKey},
			after: func(tag pgconn.CommandTag) {
				if tag.RowsAffected() == 0 {
					t.s.log.LogAttrs(ctx, slog.LevelDebug, "outbox row coalesced into a waiting one",
						slog.String("approval_id", r.ApprovalID), slog.String("tenant", r.Tenant),
						slog.String("kind", r.Kind), slog.String("coalesce_key", r.CoalesceKey))
				}
			}})
		if r.CoalesceKey != "" {
			// Sent unread in the same batch: after an insert that added
			// its row it matches nothing.
			t.queue(queuedWrite{op: op + ": raise the waiting row's priority",
				sql: query.OutboxCoalescePriority, args: []any{r.CoalesceKey, r.Priority}})
		}
	}
	// Delivered at commit: other replicas wake when the rows exist.
	t.queue(queuedWrite{op: "notify " + OutboxChannel, sql: outboxNotify, args: []any{OutboxChannel}})
	return nil
}

// OutboxComplete marks a claimed row done in the caller's transaction;
// the queued writes go first, since its result is read.
func (t *tx) OutboxComplete(ctx context.Context, p store.OutboxCompleteParams) error {
	op := "complete outbox row " + p.ID
	if p.Post != nil {
		return fmt.Errorf("%s: a transaction's completion records no post", op)
	}
	if err := t.flush(ctx); err != nil {
		return err
	}
	return t.s.outboxFinish(ctx, t.q, op, p.ID, query.OutboxComplete, p.ID, p.Worker, query.Millis(p.Now))
}

// OutboxDrop queues the end of the approval's moot rows
// (store.Tx.OutboxDrop).
func (t *tx) OutboxDrop(ctx context.Context, p store.OutboxDropParams) error {
	t.queue(queuedWrite{op: fmt.Sprintf("drop the %s rows of %s", p.KeyPrefix, p.ApprovalID),
		sql: query.OutboxDrop, args: []any{p.ApprovalID, query.LikePrefix(p.KeyPrefix), query.Millis(p.Now)}})
	return nil
}

// inList is query.List in PostgreSQL's dialect: the ids as one text[].
func inList(column string, n int) string {
	return column + ` = ANY(CAST($` + strconv.Itoa(n) + ` AS TEXT[]))`
}

// idList binds ids for inList: never nil, which pgx would send as NULL
// (and NOT (id = ANY(NULL)) is never true).
func idList(ids []string) []string {
	if ids == nil {
		return []string{}
	}
	return ids
}

// OutboxClaim leases due rows (store.Store.OutboxClaim), picked FOR UPDATE
// SKIP LOCKED; a paced round locks its pace rows in key order, so claims
// sharing a key take turns (docs/design.md#postgresql-concurrency).
func (s *Store) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]*store.OutboxRow, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	const op = "claim outbox rows"
	if p.Pace == nil {
		// Nothing to decide in Go: one statement, as before lanes.
		args := []any{query.Millis(p.Now), p.Limit, idList(p.Exclude), p.Worker, query.Millis(p.Now.Add(p.Lease))}
		if p.Lane != "" {
			args = append(args, p.Lane)
		}
		rows, err := s.pool.Query(ctx, query.OutboxClaimUnpaced(p.Lane != "", inList, skipLockedOutbox), args...)
		if err != nil {
			return nil, s.fail(ctx, op, err)
		}
		out, err := collectOutboxRows(rows)
		if err != nil {
			return nil, s.fail(ctx, op, err)
		}
		query.SortOutbox(out)
		return out, nil
	}
	budget := claim.Budgets(p.Pace)
	out, err := claim.Run(p.Limit, p.Exclude, func(need int, exclude []string) ([]*store.OutboxRow, int, int, error) {
		return s.claimRound(ctx, p, need, exclude, budget)
	})
	if err != nil {
		err = s.fail(ctx, op, err)
		if len(out) == 0 {
			return nil, err
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "outbox claim round failed; returning the rows claimed before it",
			slog.String("lane", p.Lane), slog.Int("claimed", len(out)), slog.String("err", err.Error()))
	}
	query.SortOutbox(out)
	return out, nil
}

// claimRound is one round of a paced claim (claim.RoundFunc) in four round
// trips: lock candidates; create and lock pace rows in key order; lease
// and store what claim.Plan chose; commit.
func (s *Store) claimRound(ctx context.Context, p store.OutboxClaimParams, need int, exclude []string, budget func(string) (claim.Budget, bool)) ([]*store.OutboxRow, int, int, error) {
	pgTx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, 0, 0, err
	}
	done := false
	defer func() {
		if !done {
			rollback(ctx, pgTx)
		}
	}()
	now := query.Millis(p.Now)

	args := []any{now, need, idList(exclude)}
	if p.Lane != "" {
		args = append(args, p.Lane)
	}
	rows, err := pgTx.Query(ctx, query.OutboxClaimable(p.Lane != "", inList, skipLockedOutbox), args...)
	if err != nil {
		return nil, 0, 0, err
	}
	cands, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (claim.Candidate, error) {
		var c claim.Candidate
		err := r.Scan(&c.ID, &c.Key)
		return c, err
	})
	if err != nil {
		return nil, 0, 0, err
	}

	keys := claim.Keys(cands, budget) // sorted: the lock order
	states := make(map[string]claim.State, len(keys))
	if len(keys) > 0 {
		b := &pgx.Batch{}
		for _, k := range keys {
			b.Queue(query.PaceCreate, k)
			b.Queue(query.PaceGet(forUpdate), k)
		}
		br := pgTx.SendBatch(ctx, b)
		for _, k := range keys {
			var st claim.State
			if _, err := br.Exec(); err != nil {
				br.Close()
				return nil, 0, 0, err
			}
			if err := br.QueryRow().Scan(&st.TAT, &st.ReadyAt); err != nil {
				br.Close()
				return nil, 0, 0, err
			}
			states[k] = st
		}
		if err := br.Close(); err != nil {
			return nil, 0, 0, err
		}
	}
	plan := claim.Plan(now, need, cands, budget, states)

	var out []*store.OutboxRow
	if len(plan.Take) > 0 || len(plan.Write) > 0 {
		b := &pgx.Batch{}
		written := slices.Sorted(maps.Keys(plan.Write))
		for _, k := range written {
			st := plan.Write[k]
			b.Queue(query.PaceSet, k, st.TAT, st.ReadyAt)
		}
		if len(plan.Take) > 0 {
			b.Queue(query.OutboxClaimIDs(inList), p.Worker, query.Millis(p.Now.Add(p.Lease)), plan.Take)
		}
		br := pgTx.SendBatch(ctx, b)
		for range written {
			if _, err := br.Exec(); err != nil {
				br.Close()
				return nil, 0, 0, err
			}
		}
		if len(plan.Take) > 0 {
			rows, err := br.Query()
			if err == nil {
				out, err = collectOutboxRows(rows)
			}
			if err != nil {
				br.Close()
				return nil, 0, 0, err
			}
		}
		if err := br.Close(); err != nil {
			return nil, 0, 0, err
		}
	}
	done = true
	if err := pgTx.Commit(ctx); err != nil {
		return nil, 0, 0, err
	}
	return out, len(cands), plan.Skipped, nil
}

// collectOutboxRows reads every row of a claim and closes rows.
func collectOutboxRows(rows pgx.Rows) ([]*store.OutboxRow, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (*store.OutboxRow, error) {
		return query.ScanOutboxRow(r)
	})
}

// OutboxComplete marks a row done and records p.Post in one transaction.
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

// OutboxRetry releases a row to run again, holding its pace key until
// p.Hold in the same transaction (docs/design.md#holding-a-pace-key).
func (s *Store) OutboxRetry(ctx context.Context, p store.OutboxRetryParams) error {
	var add int64
	if p.Attempt {
		add = 1
	}
	op := "retry outbox row " + p.ID
	args := []any{p.ID, p.Worker, query.Millis(p.NextAttemptAt), p.Error, add}
	if p.Hold.IsZero() {
		return s.outboxFinish(ctx, s.pool, op, p.ID, query.OutboxRetry, args...)
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
	if err := s.outboxFinish(ctx, pgTx, op, p.ID, query.OutboxRetry, args...); err != nil {
		return err
	}
	if _, err := pgTx.Exec(ctx, query.PaceHold, p.ID, query.Millis(p.Hold)); err != nil {
		return s.fail(ctx, op+": hold its pace key", err)
	}
	done = true
	if err := pgTx.Commit(ctx); err != nil {
		return s.fail(ctx, op+": commit", err)
	}
	return nil
}

// OutboxDead ends a row held by p.Worker for good.
func (s *Store) OutboxDead(ctx context.Context, p store.OutboxDeadParams) error {
	return s.outboxFinish(ctx, s.pool, "end outbox row "+p.ID, p.ID, query.OutboxDead,
		p.ID, p.Worker, p.Error, query.Millis(p.Now))
}

// outboxFinish runs a result update, which changes the row only while the
// worker holds it, and tells a lost lease from an unknown id. It waits for
// a claim holding the row, so a racing takeover is before or after it.
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

// OutboxStats counts pending rows, in total and by lane, and dead rows.
func (s *Store) OutboxStats(ctx context.Context, now time.Time) (store.OutboxStats, error) {
	const op = "read outbox stats"
	rows, err := s.pool.Query(ctx, query.OutboxStats)
	if err != nil {
		return store.OutboxStats{}, s.fail(ctx, op, err)
	}
	defer rows.Close()
	var st store.OutboxStats
	for rows.Next() {
		var (
			dead, n, earliest int64
			lane              string
		)
		if err := rows.Scan(&dead, &lane, &n, &earliest); err != nil {
			return store.OutboxStats{}, s.fail(ctx, op, err)
		}
		query.AddOutboxStats(&st, now, dead, lane, n, earliest)
	}
	if err := rows.Err(); err != nil {
		return store.OutboxStats{}, s.fail(ctx, op, err)
	}
	return st, nil
}
