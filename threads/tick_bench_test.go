package threads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads"
)

// tickDue is how many approvals each measured tick finds due.
const tickDue = 100

// seedBatch is how many approvals one seeding transaction writes.
const seedBatch = 5_000

// BenchmarkTick shows one ladder tick costing O(due), not O(pending): a
// tick that fires the steps of 100 due approvals among 100,000 pending
// ones costs about what it costs among 1,000 (docs/performance.md).
//
//	go test -run '^$' -bench Tick -benchtime 20x ./threads/
func BenchmarkTick(b *testing.B) {
	for _, pending := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) { benchTick(b, pending) })
	}
}

// tickBench is one sub-benchmark's store, service and the approvals it
// seeded, all built from the same frozen plan.
type tickBench struct {
	st      *sqlite.Store
	svc     *threads.Service
	now     time.Time
	plan    []byte // threads.Frozen JSON, the same for every approval
	firstAt time.Time
	pending int
}

func benchTick(b *testing.B, pending int) {
	ctx := context.Background()
	start := time.Now()
	tb := newTickBench(b, pending)
	b.Logf("pending=%d: seeded in %v", pending, time.Since(start).Round(time.Millisecond))

	next := 0 // the first approval of the next iteration's due set
	for b.Loop() {
		b.StopTimer()
		tb.makeDue(b, next)
		next = (next + tickDue) % pending
		b.StartTimer()

		res, err := tb.svc.Tick(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if res.Approvals != tickDue || res.Steps != tickDue || res.Deadlines != 0 {
			b.Fatalf("tick %+v, want %d approvals with one step each and no deadline", res, tickDue)
		}
	}
}

func newTickBench(b *testing.B, pending int) *tickBench {
	b.Helper()
	if pending%tickDue != 0 {
		b.Fatalf("pending %d is not a multiple of %d", pending, tickDue)
	}
	ctx := context.Background()
	cfg, err := config.Parse("bot.yaml", []byte(testConfig), testEnv)
	if err != nil {
		b.Fatal(err)
	}
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(b.TempDir(), "bot.db")})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		b.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clockwork.NewFakeClockAt(now),
		Fallback: &recorder{}})
	if err != nil {
		b.Fatal(err)
	}

	// Every approval was requested 20 minutes ago under the tenant's
	// default ladder: its first step (15m, a mention) has come, the second
	// (1h) has not, and the deadline is a year away. Only NextStepAt says
	// whether the index finds it due.
	tenant := cfg.Tenants["acme"]
	requested := now.Add(-20 * time.Minute)
	lad := tenant.LadderFor("acme_github.merge", "")
	fz := threads.Frozen{Plan: lad.Plan(requested, now.AddDate(1, 0, 0))}
	for _, t := range tenant.PostFor("acme_github.merge") {
		fz.Post = append(fz.Post, t.String())
	}
	if due := fz.Plan.Due(now, 0); len(due) != 1 || due[0].Skipped {
		b.Fatalf("the plan has %d steps due now, want 1: %+v", len(due), due)
	}
	plan, err := json.Marshal(fz)
	if err != nil {
		b.Fatal(err)
	}
	tb := &tickBench{st: st, svc: svc, now: now, plan: plan, firstAt: fz.Plan.Steps[0].At, pending: pending}

	base := requestOf(b, "merge.json")
	base.RequestedAt = requested
	far := now.AddDate(0, 1, 0)
	for lo := 0; lo < pending; lo += seedBatch {
		err := st.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
			for i := lo; i < min(lo+seedBatch, pending); i++ {
				a := *base
				a.ID = tickID(i)
				body, err := json.Marshal(&a)
				if err != nil {
					return err
				}
				if err := tx.RevisionInsert(ctx, &store.Revision{ApprovalID: a.ID, Revision: 1, Body: body, CreatedAt: requested}); err != nil {
					return err
				}
				if err := tx.ApprovalUpsert(ctx, tb.row(i, far, 0)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatalf("seed approvals %d…: %v", lo, err)
		}
	}
	return tb
}

// row is approval i as seeded, with its next step at next.
func (tb *tickBench) row(i int, next time.Time, stepsDone int) *store.Approval {
	requested := tb.now.Add(-20 * time.Minute)
	return &store.Approval{ID: tickID(i), Tenant: "acme", Revision: 1, State: string(approval.StatePending), Seen: true,
		Function: "acme_github.merge", Plan: tb.plan, StepsDone: stepsDone, NextStepAt: next,
		DeadlineAt: tb.now.AddDate(1, 0, 0), RequestedAt: requested, CreatedAt: requested, UpdatedAt: requested}
}

// makeDue makes approvals first…first+99 due now at their first step, in
// one transaction, whatever earlier ticks did to them.
func (tb *tickBench) makeDue(b *testing.B, first int) {
	b.Helper()
	err := tb.st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for i := first; i < first+tickDue; i++ {
			if err := tx.ApprovalUpsert(ctx, tb.row(i, tb.firstAt, 0)); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatalf("make approvals %d… due: %v", first, err)
	}
}

func tickID(i int) string { return fmt.Sprintf("a-tick%06d", i) }

// requestOf reads the approval of a fixture's requested event.
func requestOf(b *testing.B, name string) *approval.Approval {
	b.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		b.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil || ev.Approval == nil {
		b.Fatalf("%s: %v", name, err)
	}
	return ev.Approval
}
