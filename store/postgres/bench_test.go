package postgres_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"approvalsbot/store"
	"approvalsbot/store/postgres"
)

// BenchmarkIngest is the ingest transaction as threads runs it for a new
// approval (record the event, read the approval for update and miss,
// write it, keep its revision, enqueue one outbox row) through the store,
// beside the same four rows inserted raw with pgx in one transaction
// each, one statement at a time ("raw") and as one batch ("raw-batch"),
// on a pool like the store's. The store's extra cost is its round trips
// (the advisory lock and FOR UPDATE read, NOTIFY batched with the
// outbox insert) and the coalescing check. "paired" alternates one store
// and one raw transaction per iteration, so both meet the same load, and
// reports each one's time and their ratio: on a shared machine that ratio
// is steadier than one of separate runs.
func BenchmarkIngest(b *testing.B) {
	db := newSchema(b)
	s := openMigrated(b, db.dsn)
	cfg, err := pgxpool.ParseConfig(db.dsn)
	if err != nil {
		b.Fatal(err)
	}
	cfg.MaxConns = postgres.DefaultMaxConns
	pool, err := pgxpool.NewWithConfig(b.Context(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	in := ingestRows{now: at(0)}
	// The counter outlives each sub-benchmark's calls (b.N grows from 1):
	// every iteration writes new ids.
	var i int
	next := func(prefix string) string { i++; return fmt.Sprintf("%s%d", prefix, i) }

	b.Run("store", func(b *testing.B) {
		for b.Loop() {
			in.viaStore(b, s, next("s"))
		}
	})
	b.Run("raw", func(b *testing.B) {
		for b.Loop() {
			in.raw(b, pool, next("r"))
		}
	})
	b.Run("raw-batch", func(b *testing.B) {
		for b.Loop() {
			in.rawBatch(b, pool, next("rb"))
		}
	})
	b.Run("paired", func(b *testing.B) {
		var inStore, inRaw time.Duration
		for b.Loop() {
			start := time.Now()
			in.viaStore(b, s, next("ps"))
			mid := time.Now()
			in.raw(b, pool, next("pr"))
			inStore += mid.Sub(start)
			inRaw += time.Since(mid)
		}
		n := float64(b.N)
		b.ReportMetric(float64(inStore.Microseconds())/n, "store-µs/tx")
		b.ReportMetric(float64(inRaw.Microseconds())/n, "raw-µs/tx")
		b.ReportMetric(float64(inStore)/float64(inRaw), "store/raw")
	})
}

// ingestRows makes the rows of one ingest.
type ingestRows struct{ now time.Time }

var (
	benchPlan    = []byte(`{"ladder":"default","steps":[{"after":"15m"}],"deadline":"24h"}`)
	benchBody    = []byte(`{"id":"a","tenant":"t1","revision":1,"function":"github.merge_pr","arguments":{"repo":"acme/api","pr":4711}}`)
	benchPayload = []byte(`{"revision":1,"targets":["slack:C1"]}`)
)

func (in ingestRows) viaStore(b *testing.B, s store.Store, id string) {
	err := s.InTx(b.Context(), func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.EventInsert(ctx, store.EventInsertParams{
			ID: "e-" + id, Tenant: "t1", Type: "approval.requested", BodySHA256: "digest", ApprovalID: id, ReceivedAt: in.now,
		}); err != nil {
			return err
		}
		if _, err := tx.ApprovalGetForUpdate(ctx, id); err == nil {
			return fmt.Errorf("approval %s exists", id)
		}
		a := pendingApproval(id, in.now)
		a.Plan = benchPlan
		if err := tx.ApprovalUpsert(ctx, a); err != nil {
			return err
		}
		if err := tx.RevisionInsert(ctx, &store.Revision{ApprovalID: id, Revision: 1, Body: benchBody, CreatedAt: in.now}); err != nil {
			return err
		}
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{{
			ID: "o-" + id, Tenant: "t1", ApprovalID: id, Kind: "post_card", Target: "slack:C1",
			CoalesceKey: "post:" + id + ":slack:C1", Payload: benchPayload, NotBefore: in.now, Now: in.now,
		}})
	})
	if err != nil {
		b.Fatal(err)
	}
}

// statements are the plain INSERTs of the same rows with the same values.
func (in ingestRows) statements(id string) [][]any {
	ms := in.now.UnixMilli()
	return [][]any{
		{`INSERT INTO events (id, tenant, type, body_sha256, approval_id, received_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			"e-" + id, "t1", "approval.requested", "digest", id, ms},
		{`INSERT INTO approvals (id, tenant, revision, state, seen, function, decision, plan, steps_done,
		    next_step_at, deadline_at, requested_at, created_at, updated_at, claimed_by, claimed_until)
		  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
			id, "t1", 1, "pending", 1, "f", nil, string(benchPlan), 0,
			ms + time.Minute.Milliseconds(), ms + time.Hour.Milliseconds(), ms, ms, ms, "", int64(0)},
		{`INSERT INTO revisions (approval_id, revision, body, created_at) VALUES ($1, $2, $3, $4)`,
			id, 1, string(benchBody), ms},
		{`INSERT INTO outbox (id, tenant, approval_id, kind, target, coalesce_key, payload, next_attempt_at, created_at)
		  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			"o-" + id, "t1", id, "post_card", "slack:C1", "post:" + id + ":slack:C1", string(benchPayload), ms, ms},
	}
}

func (in ingestRows) raw(b *testing.B, pool *pgxpool.Pool, id string) {
	err := pgx.BeginFunc(b.Context(), pool, func(tx pgx.Tx) error {
		for _, st := range in.statements(id) {
			if _, err := tx.Exec(b.Context(), st[0].(string), st[1:]...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
}

func (in ingestRows) rawBatch(b *testing.B, pool *pgxpool.Pool, id string) {
	err := pgx.BeginFunc(b.Context(), pool, func(tx pgx.Tx) error {
		batch := &pgx.Batch{}
		for _, st := range in.statements(id) {
			batch.Queue(st[0].(string), st[1:]...)
		}
		return tx.SendBatch(b.Context(), batch).Close()
	})
	if err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOutboxClaimComplete drains outboxRows pending rows with 1, 2
// and 4 workers of one replica, each claiming as the outbox worker does
// (32 at a time) and completing every row it got, and reports rows/s.
// Seeding is not timed.
func BenchmarkOutboxClaimComplete(b *testing.B) {
	const (
		outboxRows = 2000
		batch      = 32
	)
	for _, workers := range []int{1, 2, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			s := openMigrated(b, newSchema(b).dsn)
			now := at(0)
			for round := 0; round < b.N; round++ {
				b.StopTimer()
				rows := make([]store.OutboxInsertParams, outboxRows)
				for i := range rows {
					rows[i] = store.OutboxInsertParams{
						ID: fmt.Sprintf("o%d-%05d", round, i), Tenant: "t1", ApprovalID: fmt.Sprintf("a%d", i%100),
						Kind: "edit_cards", Target: "slack:C1", Payload: []byte(`{}`), NotBefore: now, Now: now,
					}
				}
				enqueue(b, s, rows...)
				b.StartTimer()

				var (
					wg   sync.WaitGroup
					mu   sync.Mutex
					done int
				)
				for w := range workers {
					worker := fmt.Sprintf("w%d", w)
					wg.Go(func() {
						for {
							got, err := s.OutboxClaim(b.Context(), store.OutboxClaimParams{Worker: worker, Now: now, Lease: time.Minute, Limit: batch})
							if err != nil {
								b.Error(err)
								return
							}
							if len(got) == 0 {
								return
							}
							for _, r := range got {
								if err := s.OutboxComplete(b.Context(), store.OutboxCompleteParams{ID: r.ID, Worker: worker, Now: now}); err != nil {
									b.Error(err)
									return
								}
							}
							mu.Lock()
							done += len(got)
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				if done != outboxRows {
					b.Fatalf("round %d: %d rows done, want %d", round, done, outboxRows)
				}
			}
			b.ReportMetric(float64(outboxRows*b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkOutboxClaimPaced claims ten rows queued behind a backlog of
// one held channel (a Retry-After of a day), through the claim without
// budgets (one statement, paced=false) and the one that decides in Go (a
// transaction of four round trips per round, paced=true).
func BenchmarkOutboxClaimPaced(b *testing.B) {
	for _, held := range []int{0, 5_000} {
		for _, paced := range []bool{false, true} {
			b.Run(fmt.Sprintf("held=%d/paced=%v", held, paced), func(b *testing.B) {
				s := openMigrated(b, newSchema(b).dsn)
				ctx := b.Context()
				now := at(0)
				var rows []store.OutboxInsertParams
				for i := range held + 1 {
					rows = append(rows, store.OutboxInsertParams{ID: fmt.Sprintf("h%06d", i), Tenant: "t1", ApprovalID: "a1",
						Kind: "edit_card", Target: "slack:C0", Payload: []byte(`{}`), NotBefore: now.Add(-time.Hour), Now: now,
						Lane: store.LaneChat, PaceKey: "slack:C0"})
				}
				for i := range 10 {
					rows = append(rows, store.OutboxInsertParams{ID: fmt.Sprintf("r%02d", i), Tenant: "t1", ApprovalID: "a1",
						Kind: "edit_card", Target: fmt.Sprintf("slack:C%d", i+1), Payload: []byte(`{}`), NotBefore: now, Now: now,
						Lane: store.LaneChat, PaceKey: fmt.Sprintf("slack:C%d", i+1)})
				}
				enqueue(b, s, rows...)
				first, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "seed", Now: now, Lease: time.Minute, Limit: 1, Lane: store.LaneChat})
				if err != nil || len(first) != 1 {
					b.Fatalf("seed claim: %v, %v", first, err)
				}
				if err := s.OutboxRetry(ctx, store.OutboxRetryParams{ID: first[0].ID, Worker: "seed", Now: now, NextAttemptAt: now,
					Hold: now.Add(24 * time.Hour)}); err != nil {
					b.Fatalf("seed hold: %v", err)
				}
				var pace func(string) (time.Duration, int)
				if paced {
					pace = func(string) (time.Duration, int) { return time.Second, 100 }
				}
				b.ResetTimer()
				for b.Loop() {
					now = now.Add(time.Minute)
					got, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 10,
						Lane: store.LaneChat, Pace: pace})
					if err != nil || len(got) != 10 {
						b.Fatalf("OutboxClaim = %d, %v; want 10", len(got), err)
					}
				}
			})
		}
	}
}

// BenchmarkApprovalPrune prunes 10,000 closed approvals (two revisions
// with a 1 KiB body, two posts and two events each) to tombstones with
// the store, in its batches of 500, beside a raw baseline: the same rows
// deleted and cleared with three plain statements in one transaction.
// Each iteration seeds a set for each (untimed, with COPY) and times
// both; prune-ms, raw-ms, their ratio and the longest batch are reported.
func BenchmarkApprovalPrune(b *testing.B) {
	const n = 10_000
	db := newSchema(b)
	s := openMigrated(b, db.dsn)
	pool, err := pgxpool.New(b.Context(), db.dsn)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	ctx := b.Context()
	closed := at(0)
	ms := closed.UnixMilli()
	body := `{"call":{"arguments":{"body":"` + strings.Repeat("x", 1024) + `"}}}`
	seed := func(prefix string) {
		var apps, revs, posts, evs [][]any
		for i := range n {
			id := fmt.Sprintf("%s%05d", prefix, i)
			apps = append(apps, []any{id, "t1", 2, "approved", 1, "github.merge", `{"actor":"user:kevin","comment":"fine"}`,
				`{"plan":{"ladder":"default"}}`, 0, ms, ms, ms})
			for rev := 1; rev <= 2; rev++ {
				revs = append(revs, []any{id, rev, body, ms})
				posts = append(posts, []any{id, "slack:C1", rev, "C1", id, ms})
			}
			evs = append(evs, []any{id + "/r", "t1", "approval.requested", "x", id, ms}, []any{id + "/d", "t1", "approval.resolved", "x", id, ms})
		}
		for _, c := range []struct {
			table string
			cols  []string
			rows  [][]any
		}{
			{"approvals", []string{"id", "tenant", "revision", "state", "seen", "function", "decision", "plan", "steps_done",
				"requested_at", "created_at", "updated_at"}, apps},
			{"revisions", []string{"approval_id", "revision", "body", "created_at"}, revs},
			{"posts", []string{"approval_id", "target", "revision", "channel", "ref", "created_at"}, posts},
			{"events", []string{"id", "tenant", "type", "body_sha256", "approval_id", "received_at"}, evs},
		} {
			if _, err := pool.CopyFrom(ctx, pgx.Identifier{c.table}, c.cols, pgx.CopyFromRows(c.rows)); err != nil {
				b.Fatalf("seed %s: %v", c.table, err)
			}
		}
		if _, err := pool.Exec(ctx, "ANALYZE"); err != nil {
			b.Fatal(err)
		}
	}
	raw := []string{
		`DELETE FROM revisions WHERE approval_id IN (SELECT id FROM approvals WHERE state <> 'pending' AND decision IS NOT NULL)`,
		`DELETE FROM posts WHERE approval_id IN (SELECT id FROM approvals WHERE state <> 'pending' AND decision IS NOT NULL)`,
		`UPDATE approvals SET decision = NULL, plan = NULL, function = '' WHERE state <> 'pending' AND decision IS NOT NULL`,
	}
	var pruneTime, rawTime, longest time.Duration
	iter := 0
	for b.Loop() {
		iter++
		b.StopTimer()
		seed(fmt.Sprintf("p%d-", iter))
		b.StartTimer()
		start := time.Now()
		total := 0
		for {
			t0 := time.Now()
			got, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: closed.Add(time.Hour), Limit: 500})
			if err != nil {
				b.Fatal(err)
			}
			longest = max(longest, time.Since(t0))
			total += got
			if got < 500 {
				break
			}
		}
		pruneTime += time.Since(start)
		if total != n {
			b.Fatalf("pruned %d, want %d", total, n)
		}
		b.StopTimer()
		seed(fmt.Sprintf("r%d-", iter))
		b.StartTimer()
		start = time.Now()
		err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			for _, q := range raw {
				if _, err := tx.Exec(ctx, q); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
		rawTime += time.Since(start)
	}
	b.ReportMetric(float64(pruneTime.Milliseconds())/float64(iter), "prune-ms")
	b.ReportMetric(float64(rawTime.Milliseconds())/float64(iter), "raw-ms")
	b.ReportMetric(float64(pruneTime)/float64(rawTime), "prune/raw")
	b.ReportMetric(float64(longest.Microseconds())/1000, "batch-max-ms")
}
