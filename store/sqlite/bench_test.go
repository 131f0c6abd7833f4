package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/store"
)

// BenchmarkApprovalClaimDue shows a tick costing O(due): ten due approvals
// among ever more pending ones that are not due cost the same to claim.
func BenchmarkApprovalClaimDue(b *testing.B) {
	for _, pending := range []int{1_000, 50_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			ctx := b.Context()
			s := openTemp(b)
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			far := now.AddDate(10, 0, 0)
			err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				for i := range pending {
					next, deadline := far, far
					if i < 10 {
						next, deadline = now, now.Add(time.Hour)
					}
					err := tx.ApprovalUpsert(ctx, &store.Approval{
						ID: fmt.Sprintf("a%06d", i), Tenant: "t1", Revision: 1, State: "pending", Seen: true,
						Function: "f", NextStepAt: next, DeadlineAt: deadline,
						RequestedAt: now, CreatedAt: now, UpdatedAt: now,
					})
					if err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				b.Fatalf("seed: %v", err)
			}
			b.ResetTimer()
			for b.Loop() {
				// Each tick a minute later: the previous tick's leases
				// have lapsed, so the same ten are due again.
				now = now.Add(time.Minute)
				got, err := s.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 100})
				if err != nil || len(got) != 10 {
					b.Fatalf("ApprovalClaimDue = %d, %v; want 10", len(got), err)
				}
			}
		})
	}
}

// BenchmarkOutboxClaim shows finished rows, which accumulate, costing a
// claim nothing: ten due rows among ever more done ones.
func BenchmarkOutboxClaim(b *testing.B) {
	for _, done := range []int{1_000, 50_000} {
		b.Run(fmt.Sprintf("done=%d", done), func(b *testing.B) {
			ctx := b.Context()
			s := openTemp(b)
			now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
			var rows []store.OutboxInsertParams
			for i := range done + 10 {
				rows = append(rows, store.OutboxInsertParams{
					ID: fmt.Sprintf("o%06d", i), Tenant: "t1", ApprovalID: "a1", Kind: "edit_cards",
					Target: "slack:C1", Payload: []byte(`{}`), NotBefore: now, Now: now,
				})
			}
			if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.OutboxInsert(ctx, rows) }); err != nil {
				b.Fatalf("seed: %v", err)
			}
			for {
				got, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "seed", Now: now, Lease: time.Minute, Limit: 1000})
				if err != nil {
					b.Fatalf("seed claim: %v", err)
				}
				for _, r := range got {
					if r.ID >= fmt.Sprintf("o%06d", done) {
						continue // the ten that stay pending
					}
					if err := s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: r.ID, Worker: "seed", Now: now}); err != nil {
						b.Fatalf("seed complete: %v", err)
					}
				}
				if len(got) <= 10 {
					break
				}
			}
			b.ResetTimer()
			for b.Loop() {
				now = now.Add(time.Minute) // leases lapse, the ten are due again
				got, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 100})
				if err != nil || len(got) != 10 {
					b.Fatalf("OutboxClaim = %d, %v; want 10", len(got), err)
				}
			}
		})
	}
}

// BenchmarkEventInsertRaw is the floor an ingest benchmark compares
// against: one row inserted raw in its own transaction, through
// database/sql with the store's DSN (sqlite.DSN), so both pay the same
// journal and sync settings.
func BenchmarkEventInsertRaw(b *testing.B) {
	ctx := b.Context()
	path := filepath.Join(b.TempDir(), "bot.db")
	openAt(b, path)
	db := openRaw(b, path)
	i := 0
	for b.Loop() {
		i++
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO events (id, tenant, type, body_sha256, approval_id, received_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			fmt.Sprintf("e%d", i), "t1", "approval.requested", "digest", "a1", int64(1))
		if err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEventInsert is the same insert through the store.
func BenchmarkEventInsert(b *testing.B) {
	ctx := b.Context()
	s := openTemp(b)
	i := 0
	for b.Loop() {
		i++
		err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			_, err := tx.EventInsert(ctx, store.EventInsertParams{
				ID: fmt.Sprintf("e%d", i), Tenant: "t1", Type: "approval.requested", BodySHA256: "digest", ApprovalID: "a1", ReceivedAt: time.UnixMilli(1),
			})
			return err
		})
		if err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOutboxClaimPaced claims ten rows queued behind a backlog of
// one held channel (a Retry-After of a day): the backlog costs the claim
// an index probe per row in SQL and nothing in Go. paced=false is the
// claim without budgets (one statement), paced=true the one that decides
// in Go (a transaction per round).
func BenchmarkOutboxClaimPaced(b *testing.B) {
	for _, held := range []int{0, 5_000} {
		for _, paced := range []bool{false, true} {
			b.Run(fmt.Sprintf("held=%d/paced=%v", held, paced), func(b *testing.B) {
				benchOutboxClaimPaced(b, openTemp(b), held, paced)
			})
		}
	}
}

func benchOutboxClaimPaced(b *testing.B, s store.Store, held int, paced bool) {
	ctx := b.Context()
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
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
	if err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return tx.OutboxInsert(ctx, rows) }); err != nil {
		b.Fatalf("seed: %v", err)
	}
	// Hold slack:C0: claim its first row and retry it with a Retry-After.
	first, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "seed", Now: now, Lease: time.Minute, Limit: 1, Lane: store.LaneChat})
	if err != nil || len(first) != 1 || first[0].ID != "h000000" {
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
		now = now.Add(time.Minute) // leases lapse: the ten are due again
		got, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 10,
			Lane: store.LaneChat, Pace: pace})
		if err != nil || len(got) != 10 {
			b.Fatalf("OutboxClaim = %d, %v; want 10", len(got), err)
		}
	}
}

// BenchmarkApprovalPrune prunes 10,000 closed approvals (two revisions
// with a 1 KiB body, two posts and two events each) to tombstones with
// the store, in its batches of 500, beside a raw baseline: the same rows
// deleted and cleared with three plain statements in one transaction,
// which holds the write lock for the whole of it. Each iteration seeds a
// set for each (untimed) and times both, so both meet the same file;
// prune-ms, raw-ms, their ratio and the longest batch (the most an ingest
// waits for the write lock behind pruning) are reported.
func BenchmarkApprovalPrune(b *testing.B) {
	const n = 10_000
	path := filepath.Join(b.TempDir(), "bot.db")
	s := openAt(b, path)
	db := openRaw(b, path)
	ctx := b.Context()
	closed := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	body := `{"call":{"arguments":{"body":"` + strings.Repeat("x", 1024) + `"}}}`
	seed := func(prefix string) {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		ms := closed.UnixMilli()
		for i := range n {
			id := fmt.Sprintf("%s%05d", prefix, i)
			stmts := []struct {
				q    string
				args []any
			}{
				{`INSERT INTO approvals (id, tenant, revision, state, seen, function, decision, plan, steps_done,
    requested_at, created_at, updated_at) VALUES ($1, 't1', 2, 'approved', 1, 'github.merge', $2, $3, 0, $4, $4, $4)`,
					[]any{id, `{"actor":"user:kevin","comment":"fine"}`, `{"plan":{"ladder":"default"}}`, ms}},
				{`INSERT INTO revisions (approval_id, revision, body, created_at) VALUES ($1, 1, $2, $3), ($1, 2, $2, $3)`, []any{id, body, ms}},
				{`INSERT INTO posts (approval_id, target, revision, channel, ref, created_at) VALUES ($1, 'slack:C1', 1, 'C1', $1, $2), ($1, 'slack:C1', 2, 'C1', $1, $2)`, []any{id, ms}},
				{`INSERT INTO events (id, tenant, type, body_sha256, approval_id, received_at) VALUES ($1 || '/r', 't1', 'approval.requested', 'x', $1, $2), ($1 || '/d', 't1', 'approval.resolved', 'x', $1, $2)`, []any{id, ms}},
			}
			for _, st := range stmts {
				if _, err := tx.ExecContext(ctx, st.q, st.args...); err != nil {
					b.Fatalf("seed: %v", err)
				}
			}
		}
		if err := tx.Commit(); err != nil {
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
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range raw {
			if _, err := tx.ExecContext(ctx, q); err != nil {
				b.Fatal(err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
		rawTime += time.Since(start)
	}
	b.ReportMetric(float64(pruneTime.Milliseconds())/float64(iter), "prune-ms")
	b.ReportMetric(float64(rawTime.Milliseconds())/float64(iter), "raw-ms")
	b.ReportMetric(float64(pruneTime)/float64(rawTime), "prune/raw")
	b.ReportMetric(float64(longest.Microseconds())/1000, "batch-max-ms")
}
