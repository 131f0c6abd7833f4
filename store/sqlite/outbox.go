package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/internal/claim"
	"approvalsbot/store/internal/query"
)

// OutboxInsert enqueues rows in order (store.Tx.OutboxInsert). A zero
// NotBefore means Now; an empty Lane, store.LaneChat.
func (t *tx) OutboxInsert(ctx context.Context, rows []store.OutboxInsertParams) error {
	for _, r := range rows {
		op := func() string { return fmt.Sprintf("enqueue %s %s for %s", r.Kind, r.ID, r.ApprovalID) }
		notBefore := r.NotBefore
		if notBefore.IsZero() {
			notBefore = r.Now
		}
		lane := r.Lane
		if lane == "" {
			lane = store.LaneChat
		}
		res, err := t.q.ExecContext(ctx, query.OutboxInsert,
			r.ID, r.Tenant, r.ApprovalID, r.Kind, r.Target, r.CoalesceKey, query.Text(r.Payload),
			query.Millis(notBefore), query.Millis(r.Now), lane, r.Priority, r.PaceKey)
		if err != nil {
			return t.s.fail(op(), err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return t.s.fail(op(), err)
		}
		if n != 0 {
			continue
		}
		t.s.log.LogAttrs(ctx, slog.LevelDebug, "outbox row coalesced into a waiting one",
			slog.String("approval_id", r.ApprovalID), slog.String("tenant", r.Tenant),
			slog.String("kind", r.Kind), slog.String("coalesce_key", r.CoalesceKey))
		if _, err := t.q.ExecContext(ctx, query.OutboxCoalescePriority, r.CoalesceKey, r.Priority); err != nil {
			return t.s.fail(op()+": raise the waiting row's priority", err)
		}
	}
	return nil
}

// inList is query.List in SQLite's dialect: one JSON array, via json_each.
func inList(column string, n int) string {
	return column + ` IN (SELECT value FROM json_each($` + strconv.Itoa(n) + `))`
}

// idList encodes ids for inList: a JSON array, "[]" for none (never
// null, which NOT IN would turn into "nothing matches").
func idList(ids []string) string {
	if len(ids) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(ids) // strings always encode
	return string(b)
}

// OutboxComplete marks a claimed row done in the caller's transaction.
func (t *tx) OutboxComplete(ctx context.Context, p store.OutboxCompleteParams) error {
	op := "complete outbox row " + p.ID
	if p.Post != nil {
		return fmt.Errorf("%s: a transaction's completion records no post", op)
	}
	return t.s.outboxFinish(ctx, t.q, op, p.ID, query.OutboxComplete, p.ID, p.Worker, query.Millis(p.Now))
}

// OutboxDrop ends the approval's moot rows (store.Tx.OutboxDrop).
func (t *tx) OutboxDrop(ctx context.Context, p store.OutboxDropParams) error {
	if _, err := t.q.ExecContext(ctx, query.OutboxDrop, p.ApprovalID, query.LikePrefix(p.KeyPrefix), query.Millis(p.Now)); err != nil {
		return t.s.fail(fmt.Sprintf("drop the %s rows of %s", p.KeyPrefix, p.ApprovalID), err)
	}
	return nil
}

// OutboxClaim leases due rows (store.Store.OutboxClaim). Each round runs
// alone under SQLite's single writer, so no two workers get one row and a
// key's budget is spent by one claim at a time.
func (s *Store) OutboxClaim(ctx context.Context, p store.OutboxClaimParams) ([]*store.OutboxRow, error) {
	if p.Limit <= 0 {
		return nil, nil
	}
	const op = "claim outbox rows"
	if p.Pace == nil {
		done, err := s.write(ctx)
		if err != nil {
			return nil, s.fail(op, err)
		}
		defer done()
		// Nothing to decide in Go: one statement, as before lanes.
		args := []any{query.Millis(p.Now), p.Limit, idList(p.Exclude), p.Worker, query.Millis(p.Now.Add(p.Lease))}
		if p.Lane != "" {
			args = append(args, p.Lane)
		}
		rows, err := preparedDB{s.stmts}.QueryContext(ctx, query.OutboxClaimUnpaced(p.Lane != "", inList, ""), args...)
		if err != nil {
			return nil, s.fail(op, err)
		}
		out, err := scanOutboxRows(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		query.SortOutbox(out)
		return out, nil
	}
	budget := claim.Budgets(p.Pace)
	out, err := claim.Run(p.Limit, p.Exclude, func(need int, exclude []string) ([]*store.OutboxRow, int, int, error) {
		return s.claimRound(ctx, p, need, exclude, budget)
	})
	if err != nil {
		err = s.fail(op, err)
		if len(out) == 0 {
			return nil, err
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "outbox claim round failed; returning the rows claimed before it",
			slog.String("lane", p.Lane), slog.Int("claimed", len(out)), slog.String("err", err.Error()))
	}
	query.SortOutbox(out)
	return out, nil
}

// claimRound is one round of a paced claim (claim.RoundFunc) in one
// IMMEDIATE transaction: read candidates and pace rows, let claim.Plan
// choose, write leases and pace rows back.
func (s *Store) claimRound(ctx context.Context, p store.OutboxClaimParams, need int, exclude []string, budget func(string) (claim.Budget, bool)) ([]*store.OutboxRow, int, int, error) {
	done, err := s.write(ctx)
	if err != nil {
		return nil, 0, 0, err
	}
	defer done()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, 0, 0, err
	}
	defer sqlTx.Rollback() // after Commit, a no-op
	q := preparedTx{tx: sqlTx, c: s.stmts}
	now := query.Millis(p.Now)

	args := []any{now, need, idList(exclude)}
	if p.Lane != "" {
		args = append(args, p.Lane)
	}
	rows, err := q.QueryContext(ctx, query.OutboxClaimable(p.Lane != "", inList, ""), args...)
	if err != nil {
		return nil, 0, 0, err
	}
	var cands []claim.Candidate
	for rows.Next() {
		var c claim.Candidate
		if err := rows.Scan(&c.ID, &c.Key); err != nil {
			rows.Close()
			return nil, 0, 0, err
		}
		cands = append(cands, c)
	}
	if err := rows.Close(); err != nil {
		return nil, 0, 0, err
	}
	if err := rows.Err(); err != nil {
		return nil, 0, 0, err
	}

	keys := claim.Keys(cands, budget)
	states := make(map[string]claim.State, len(keys))
	for _, k := range keys {
		var st claim.State
		err := q.QueryRowContext(ctx, query.PaceGet(""), k).Scan(&st.TAT, &st.ReadyAt)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, 0, 0, err
		}
		states[k] = st
	}
	plan := claim.Plan(now, need, cands, budget, states)

	for _, k := range slices.Sorted(maps.Keys(plan.Write)) {
		st := plan.Write[k]
		if _, err := q.ExecContext(ctx, query.PaceSet, k, st.TAT, st.ReadyAt); err != nil {
			return nil, 0, 0, err
		}
	}
	var out []*store.OutboxRow
	if len(plan.Take) > 0 {
		rows, err := q.QueryContext(ctx, query.OutboxClaimIDs(inList),
			p.Worker, query.Millis(p.Now.Add(p.Lease)), idList(plan.Take))
		if err != nil {
			return nil, 0, 0, err
		}
		if out, err = scanOutboxRows(rows); err != nil {
			return nil, 0, 0, err
		}
	}
	if err := sqlTx.Commit(); err != nil {
		return nil, 0, 0, err
	}
	return out, len(cands), plan.Skipped, nil
}

// scanOutboxRows reads every row of a claim and closes rows.
func scanOutboxRows(rows *sql.Rows) ([]*store.OutboxRow, error) {
	defer rows.Close()
	var out []*store.OutboxRow
	for rows.Next() {
		r, err := query.ScanOutboxRow(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// OutboxComplete marks a row done and records p.Post in one transaction.
func (s *Store) OutboxComplete(ctx context.Context, p store.OutboxCompleteParams) error {
	op := "complete outbox row " + p.ID
	done, err := s.write(ctx)
	if err != nil {
		return s.fail(op, err)
	}
	defer done()
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

// OutboxRetry releases a row to run again, holding its pace key until
// p.Hold in the same transaction.
func (s *Store) OutboxRetry(ctx context.Context, p store.OutboxRetryParams) error {
	var add int64
	if p.Attempt {
		add = 1
	}
	op := "retry outbox row " + p.ID
	done, err := s.write(ctx)
	if err != nil {
		return s.fail(op, err)
	}
	defer done()
	args := []any{p.ID, p.Worker, query.Millis(p.NextAttemptAt), p.Error, add}
	if p.Hold.IsZero() {
		return s.outboxFinish(ctx, preparedDB{s.stmts}, op, p.ID, query.OutboxRetry, args...)
	}
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail(op, err)
	}
	defer sqlTx.Rollback() // after Commit, a no-op
	q := preparedTx{tx: sqlTx, c: s.stmts}
	if err := s.outboxFinish(ctx, q, op, p.ID, query.OutboxRetry, args...); err != nil {
		return err
	}
	if _, err := q.ExecContext(ctx, query.PaceHold, p.ID, query.Millis(p.Hold)); err != nil {
		return s.fail(op+": hold its pace key", err)
	}
	if err := sqlTx.Commit(); err != nil {
		return s.fail(op+": commit", err)
	}
	return nil
}

// OutboxDead ends a row held by p.Worker for good.
func (s *Store) OutboxDead(ctx context.Context, p store.OutboxDeadParams) error {
	done, err := s.write(ctx)
	if err != nil {
		return s.fail("end outbox row "+p.ID, err)
	}
	defer done()
	return s.outboxFinish(ctx, s.db, "end outbox row "+p.ID, p.ID, query.OutboxDead,
		p.ID, p.Worker, p.Error, query.Millis(p.Now))
}

// outboxFinish runs a result update, which changes the row only while the
// worker holds it, and tells a lost lease from an unknown id.
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

// OutboxStats counts pending rows, in total and by lane, and dead rows.
func (s *Store) OutboxStats(ctx context.Context, now time.Time) (store.OutboxStats, error) {
	const op = "read outbox stats"
	rows, err := preparedDB{s.stmts}.QueryContext(ctx, query.OutboxStats)
	if err != nil {
		return store.OutboxStats{}, s.fail(op, err)
	}
	defer rows.Close()
	var st store.OutboxStats
	for rows.Next() {
		var (
			dead, n, earliest int64
			lane              string
		)
		if err := rows.Scan(&dead, &lane, &n, &earliest); err != nil {
			return store.OutboxStats{}, s.fail(op, err)
		}
		query.AddOutboxStats(&st, now, dead, lane, n, earliest)
	}
	if err := rows.Err(); err != nil {
		return store.OutboxStats{}, s.fail(op, err)
	}
	return st, nil
}
