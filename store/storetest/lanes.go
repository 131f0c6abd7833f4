package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

// laned is an outbox row of a lane, with a priority and a pace key.
func laned(id, lane string, priority int, key string, due time.Time) store.OutboxInsertParams {
	p := effect(id, due)
	p.Lane, p.Priority, p.PaceKey = lane, priority, key
	return p
}

// budget gives every key one row per every, bursts of burst.
func budget(every time.Duration, burst int) func(string) (time.Duration, int) {
	return func(string) (time.Duration, int) { return every, burst }
}

// claimP claims with p, a one-minute lease unless p says otherwise.
func claimP(t *testing.T, s store.Store, p store.OutboxClaimParams) []*store.OutboxRow {
	t.Helper()
	if p.Lease == 0 {
		p.Lease = time.Minute
	}
	rows, err := s.OutboxClaim(t.Context(), p)
	if err != nil {
		t.Fatalf("OutboxClaim(%s, lane %q): %v", p.Worker, p.Lane, err)
	}
	return rows
}

// completeAll completes rows claimed by worker.
func completeAll(t *testing.T, s store.Store, worker string, now time.Time, rows []*store.OutboxRow) {
	t.Helper()
	for _, r := range rows {
		complete(t, s, r.ID, worker, now)
	}
}

// perKey counts rows by pace key ("" for unpaced ones).
func perKey(rows []*store.OutboxRow) map[string]int {
	n := map[string]int{}
	for _, r := range rows {
		n[r.PaceKey]++
	}
	return n
}

func wantPerKey(t *testing.T, what string, rows []*store.OutboxRow, want map[string]int) {
	t.Helper()
	if diff := cmp.Diff(want, perKey(rows)); diff != "" {
		t.Errorf("%s: rows per pace key (-want +got):\n%s\nclaimed: %v", what, diff, outboxIDs(rows))
	}
}

func testOutboxLanesClaimedSeparately(t *testing.T, s store.Store) {
	now := at(0)
	enqueue(t, s,
		laned("c1", "", 0, "", now.Add(-3*time.Minute)), // no lane: chat
		laned("c2", store.LaneChat, 0, "", now.Add(-time.Minute)),
		laned("d1", store.LaneBackend, 0, "", now.Add(-2*time.Minute)),
		laned("m1", store.LaneMail, 0, "", now.Add(-4*time.Minute)),
		laned("x1", "audit", 0, "", now.Add(-5*time.Minute)),
	)
	lane := func(name string) []*store.OutboxRow {
		t.Helper()
		rows := claimP(t, s, store.OutboxClaimParams{Worker: "w-" + name, Now: now, Limit: 10, Lane: name})
		for _, r := range rows {
			if name != "" && r.Lane != name {
				t.Errorf("claim of lane %q returned %s of lane %q", name, r.ID, r.Lane)
			}
		}
		return rows
	}
	// The backend lane's claim sees only its own row, however old the
	// chat and mail rows are.
	wantIDs(t, "backend lane", outboxIDs(lane(store.LaneBackend)), []string{"d1"})
	wantIDs(t, "backend lane again", outboxIDs(lane(store.LaneBackend)), nil)
	wantIDs(t, "mail lane", outboxIDs(lane(store.LaneMail)), []string{"m1"})
	chat := lane(store.LaneChat)
	wantIDs(t, "chat lane", outboxIDs(chat), []string{"c1", "c2"})
	if len(chat) > 0 && chat[0].Lane != store.LaneChat {
		t.Errorf("row inserted without a lane is in lane %q, want %q", chat[0].Lane, store.LaneChat)
	}
	// No lane: every lane, here the one nobody claimed yet.
	wantIDs(t, "every lane", outboxIDs(lane("")), []string{"x1"})
	wantIDs(t, "a lane with no rows", outboxIDs(lane("nothing")), nil)
}

func testOutboxPriorityBeatsAge(t *testing.T, s store.Store) {
	now := at(0)
	enqueue(t, s,
		laned("low-old", store.LaneChat, 0, "", now.Add(-10*time.Minute)),
		laned("high-young", store.LaneChat, 10, "", now.Add(-time.Second)),
		laned("mid", store.LaneChat, 5, "", now.Add(-5*time.Minute)),
		laned("high-older", store.LaneChat, 10, "", now.Add(-2*time.Minute)),
		laned("negative", store.LaneChat, -1, "", now.Add(-time.Hour)),
		laned("high-later", store.LaneChat, 100, "", now.Add(time.Minute)), // not due: waits
		laned("other-lane", store.LaneBackend, 50, "", now.Add(-time.Minute)),
	)
	got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now, Limit: 2, Lane: store.LaneChat})
	wantIDs(t, "the two of highest priority", outboxIDs(got), []string{"high-older", "high-young"})
	if len(got) == 2 && (got[0].Priority != 10 || got[1].Priority != 10) {
		t.Errorf("claimed rows carry priorities %d, %d; want 10, 10", got[0].Priority, got[1].Priority)
	}
	completeAll(t, s, "w1", now, got)
	got = claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now, Limit: 10, Lane: store.LaneChat})
	wantIDs(t, "the rest, by priority", outboxIDs(got), []string{"mid", "low-old", "negative"})
	completeAll(t, s, "w1", now, got)
	// Across lanes (no Lane), priority orders too.
	enqueue(t, s, laned("mail-top", store.LaneMail, 60, "", now))
	wantIDs(t, "every lane", outboxIDs(claimP(t, s, store.OutboxClaimParams{Worker: "w2", Now: now.Add(time.Minute), Limit: 10})),
		[]string{"high-later", "mail-top", "other-lane"})
}

func testOutboxCoalescingTakesHigherPriority(t *testing.T, s store.Store) {
	now := at(0)
	keyed := func(id, key string, priority int) store.OutboxInsertParams {
		p := laned(id, store.LaneChat, priority, "", now)
		p.CoalesceKey = key
		return p
	}
	// A cosmetic edit waits; a state change of the same card coalesces
	// into it, and the waiting row now runs with the state change's
	// priority. A lower one never lowers it.
	enqueue(t, s, keyed("cosmetic", "edit:a1", 0))
	enqueue(t, s, laned("other", store.LaneChat, 5, "", now.Add(-time.Hour)))
	enqueue(t, s, keyed("state-change", "edit:a1", 10))
	enqueue(t, s, keyed("kept", "edit:a2", 7), keyed("lower", "edit:a2", 1))
	got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now, Limit: 10, Lane: store.LaneChat})
	wantIDs(t, "claim", outboxIDs(got), []string{"cosmetic", "kept", "other"})
	if len(got) == 3 && (got[0].Priority != 10 || got[1].Priority != 7) {
		t.Errorf("coalesced rows run at priorities %d and %d, want 10 and 7", got[0].Priority, got[1].Priority)
	}
}

func testOutboxPacedBurstThenEvery(t *testing.T, s store.Store) {
	t0 := at(0)
	var in []store.OutboxInsertParams
	for i := range 10 {
		in = append(in, laned(fmt.Sprintf("p%d", i), store.LaneChat, 0, "slack:C1", t0.Add(-time.Minute)))
	}
	in = append(in,
		laned("q0", store.LaneChat, 0, "slack:C2", t0.Add(-time.Minute)),
		laned("q1", store.LaneChat, 0, "slack:C2", t0.Add(-time.Minute)),
		laned("u0", store.LaneChat, 0, "", t0.Add(-time.Minute)),
		laned("u1", store.LaneChat, 0, "", t0.Add(-time.Minute)),
		laned("free0", store.LaneChat, 0, "free", t0.Add(-time.Minute)),
		laned("free1", store.LaneChat, 0, "free", t0.Add(-time.Minute)),
		laned("free2", store.LaneChat, 0, "free", t0.Add(-time.Minute)),
		laned("free3", store.LaneChat, 0, "free", t0.Add(-time.Minute)),
	)
	enqueue(t, s, in...)
	// One row a second, bursts of three; the key "free" has no budget.
	pace := func(key string) (time.Duration, int) {
		if key == "free" {
			return 0, 0
		}
		return time.Second, 3
	}
	step := func(what string, now time.Time, want map[string]int) {
		t.Helper()
		got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now, Limit: 100, Lane: store.LaneChat, Pace: pace})
		wantPerKey(t, what, got, want)
		completeAll(t, s, "w1", now, got)
	}
	step("first claim: each key's burst", t0, map[string]int{"slack:C1": 3, "slack:C2": 2, "": 2, "free": 4})
	step("same instant", t0, map[string]int{})
	step("just before every", t0.Add(999*time.Millisecond), map[string]int{})
	step("every later: one", t0.Add(time.Second), map[string]int{"slack:C1": 1})
	step("same instant again", t0.Add(time.Second), map[string]int{})
	step("two every later: two", t0.Add(3*time.Second), map[string]int{"slack:C1": 2})
	step("long idle: a burst again", t0.Add(time.Hour), map[string]int{"slack:C1": 3})
	step("the last", t0.Add(time.Hour+time.Second), map[string]int{"slack:C1": 1})

	// Without Pace nothing is paced, but a key whose budget a paced claim
	// spent is not ready (ready_at is later) whatever Pace says; once it
	// is, it gives every row.
	enqueue(t, s, laned("r0", store.LaneChat, 0, "slack:C1", t0), laned("r1", store.LaneChat, 0, "slack:C1", t0))
	now := t0.Add(time.Hour + time.Second)
	got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now, Limit: 100, Lane: store.LaneChat})
	wantIDs(t, "unpaced claim while the key is spent", outboxIDs(got), nil)
	got = claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now.Add(time.Second), Limit: 100, Lane: store.LaneChat})
	wantIDs(t, "unpaced claim once it is ready", outboxIDs(got), []string{"r0", "r1"})
}

func testOutboxHeldKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	t0 := at(0)
	pace := budget(time.Second, 3)
	var in []store.OutboxInsertParams
	for i := range 6 {
		in = append(in, laned(fmt.Sprintf("h%d", i), store.LaneChat, 0, "slack:C1", t0.Add(-time.Minute)))
	}
	in = append(in, laned("o0", store.LaneChat, 0, "slack:C2", t0), laned("o1", store.LaneChat, 0, "slack:C2", t0))
	enqueue(t, s, in...)
	// claimAt claims (and completes) every row of lane that may go at now.
	claimAt := func(lane string, now time.Time, p func(string) (time.Duration, int)) []*store.OutboxRow {
		t.Helper()
		got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: now, Limit: 10, Lane: lane, Pace: p})
		completeAll(t, s, "w1", now, got)
		return got
	}

	first := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: t0, Limit: 1, Lane: store.LaneChat, Pace: pace})
	wantIDs(t, "first", outboxIDs(first), []string{"h0"})
	// Slack answers 429 for the channel, Retry-After 30 s: the row goes
	// back (due at once) and its key is held.
	hold := t0.Add(30 * time.Second)
	err := s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "h0", Worker: "w1", Now: t0, NextAttemptAt: t0,
		Error: "slack: 429 rate limited", Hold: hold})
	if err != nil {
		t.Fatalf("OutboxRetry with Hold: %v", err)
	}
	wantPerKey(t, "while held", claimAt(store.LaneChat, t0, pace), map[string]int{"slack:C2": 2})
	wantPerKey(t, "held, without Pace", claimAt(store.LaneChat, hold.Add(-time.Millisecond), nil), map[string]int{})
	wantPerKey(t, "held, with Pace", claimAt(store.LaneChat, hold.Add(-time.Millisecond), pace), map[string]int{})
	// After the hold, the key resumes at its pace: one now, one a second.
	wantPerKey(t, "at the hold", claimAt(store.LaneChat, hold, pace), map[string]int{"slack:C1": 1})
	wantPerKey(t, "at the hold again", claimAt(store.LaneChat, hold, pace), map[string]int{})
	wantPerKey(t, "a second later", claimAt(store.LaneChat, hold.Add(time.Second), pace), map[string]int{"slack:C1": 1})

	// A key never paced can be held too; without Pace its rows then all
	// come at once after the hold.
	enqueue(t, s, laned("k0", "fresh", 0, "discord:9", t0), laned("k1", "fresh", 0, "discord:9", t0),
		laned("k2", "fresh", 0, "discord:9", t0))
	got := claimP(t, s, store.OutboxClaimParams{Worker: "w2", Now: t0, Limit: 1, Lane: "fresh"})
	wantIDs(t, "unpaced claim of a fresh key", outboxIDs(got), []string{"k0"})
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "k0", Worker: "w2", Now: t0, NextAttemptAt: t0, Hold: t0.Add(10 * time.Second)})
	if err != nil {
		t.Fatalf("OutboxRetry with Hold of a fresh key: %v", err)
	}
	wantPerKey(t, "fresh key held", claimAt("fresh", t0.Add(9*time.Second), nil), map[string]int{})
	wantPerKey(t, "fresh key after its hold", claimAt("fresh", t0.Add(10*time.Second), nil), map[string]int{"discord:9": 3})

	// A retry whose lease is lost holds nothing.
	enqueue(t, s, laned("l0", "lost", 0, "slack:C3", t0), laned("l1", "lost", 0, "slack:C3", t0))
	wantIDs(t, "old holder", outboxIDs(claimP(t, s, store.OutboxClaimParams{Worker: "old", Now: t0, Limit: 1, Lane: "lost"})), []string{"l0"})
	wantIDs(t, "taken over", outboxIDs(claimP(t, s, store.OutboxClaimParams{Worker: "new", Now: t0.Add(time.Minute), Limit: 1, Lane: "lost"})), []string{"l0"})
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "l0", Worker: "old", Now: t0, NextAttemptAt: t0, Hold: t0.Add(time.Hour)})
	wantErr(t, "OutboxRetry with Hold after the lease was lost", err, store.ErrLeaseLost)
	wantIDs(t, "key not held by a lost retry", outboxIDs(claimAt("lost", t0.Add(time.Minute), pace)), []string{"l1"})

	// A row without a pace key holds nothing.
	enqueue(t, s, laned("z0", "nokey", 0, "", t0), laned("z1", "nokey", 0, "", t0))
	claimP(t, s, store.OutboxClaimParams{Worker: "w3", Now: t0, Limit: 1, Lane: "nokey"})
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "z0", Worker: "w3", Now: t0, NextAttemptAt: t0, Hold: t0.Add(time.Hour)})
	if err != nil {
		t.Fatalf("OutboxRetry with Hold of an unpaced row: %v", err)
	}
	wantIDs(t, "unpaced rows after a hold", outboxIDs(claimAt("nokey", t0, pace)), []string{"z0", "z1"})
}

func testOutboxBacklogOnOneKey(t *testing.T, s store.Store) {
	// 500 rows of one channel queued ahead of everything else: while that
	// key is held or spent, the rows behind it are claimed all the same.
	for _, c := range []struct {
		name string
		held bool
	}{{"exhausted", false}, {"held", true}} {
		t.Run(c.name, func(t *testing.T) {
			t0 := at(0)
			lane := "lane-" + c.name // the subtests share the store
			key := func(k string) string { return c.name + ":" + k }
			var in []store.OutboxInsertParams
			for i := range 500 {
				in = append(in, laned(fmt.Sprintf("%s-a%03d", c.name, i), lane, 0, key("A"), t0.Add(-10*time.Minute+time.Duration(i)*time.Millisecond)))
			}
			for i := range 5 {
				in = append(in, laned(fmt.Sprintf("%s-b%d", c.name, i), lane, 0, key("B"), t0.Add(-time.Minute)))
			}
			for i := range 10 {
				in = append(in, laned(fmt.Sprintf("%s-u%d", c.name, i), lane, 0, "", t0.Add(-time.Minute)))
			}
			enqueue(t, s, in...)
			p := store.OutboxClaimParams{Worker: "w1", Now: t0, Limit: 10, Lane: lane, Pace: budget(time.Second, 3)}
			if c.held {
				first := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: t0, Limit: 1, Lane: lane, Pace: p.Pace})
				wantIDs(t, "first", outboxIDs(first), []string{c.name + "-a000"})
				err := s.OutboxRetry(t.Context(), store.OutboxRetryParams{ID: first[0].ID, Worker: "w1", Now: t0,
					NextAttemptAt: t0, Error: "429", Hold: t0.Add(time.Hour)})
				if err != nil {
					t.Fatalf("OutboxRetry: %v", err)
				}
				wantPerKey(t, "claim behind a held key", claimP(t, s, p), map[string]int{key("B"): 3, "": 7})
				wantPerKey(t, "claim again", claimP(t, s, p), map[string]int{"": 3})
			} else {
				// The first claim spends A's burst and goes on past the
				// rest of A's rows to B's and the unpaced ones.
				wantPerKey(t, "claim through a backlog", claimP(t, s, p), map[string]int{key("A"): 3, key("B"): 3, "": 4})
				wantPerKey(t, "claim again", claimP(t, s, p), map[string]int{"": 6})
			}
			wantPerKey(t, "nothing left with room", claimP(t, s, p), map[string]int{})
		})
	}
}

func testOutboxExclude(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name string
		pace func(string) (time.Duration, int)
	}{{"unpaced", nil}, {"paced", budget(time.Second, 100)}} {
		t.Run(c.name, func(t *testing.T) {
			t0 := at(0)
			lane := "lane-" + c.name
			id := func(s string) string { return c.name + "-" + s }
			enqueue(t, s,
				laned(id("o1"), lane, 0, "k", t0),
				laned(id("o2"), lane, 0, "k", t0),
				laned(id("o3"), lane, 0, "", t0),
			)
			claimed := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: t0, Limit: 10, Lane: lane, Pace: c.pace})
			wantIDs(t, "first claim", outboxIDs(claimed), []string{id("o1"), id("o2"), id("o3")})
			// The clock jumps past the lease while w1 still performs o1 and
			// o2: it must not claim them again; o3 it lost track of.
			late := t0.Add(5 * time.Minute)
			got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: late, Limit: 10, Lane: lane, Pace: c.pace,
				Exclude: []string{id("o1"), id("o2"), "unknown"}})
			wantIDs(t, "claim past the lease", outboxIDs(got), []string{id("o3")})
			// Unclaimed rows are excluded alike.
			enqueue(t, s, laned(id("o4"), lane, 0, "", late))
			var many []string
			for i := range 200 {
				many = append(many, fmt.Sprintf("x%d", i))
			}
			many = append(many, id("o1"), id("o2"), id("o3"), id("o4"))
			got = claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: late, Limit: 10, Lane: lane, Pace: c.pace, Exclude: many})
			wantIDs(t, "everything excluded", outboxIDs(got), nil)
			got = claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: late, Limit: 10, Lane: lane, Pace: c.pace, Exclude: many[:200]})
			wantIDs(t, "once no longer in flight", outboxIDs(got), []string{id("o1"), id("o2"), id("o4")})
		})
	}
}

func testOutboxPacedClaimConcurrent(t *testing.T, s store.Store) {
	stores := make([]store.Store, 8)
	for i := range stores {
		stores[i] = s
	}
	ClaimPacedConcurrently(t, stores)
}

// ClaimPacedConcurrently checks that claims running at once never spend
// more of a pace key's budget than it has: one worker per store in stores
// (pass one store several times for workers of one process, several
// stores on one database for replicas), all at one Now, over many rows of
// a few keys and some unpaced ones, then again at each later Now. At
// each instant each key gives its burst (at the first) or one row (at each
// later one, every later), no more and no less, and over the instants
// every row is claimed exactly once. stores[0] is seeded.
func ClaimPacedConcurrently(t *testing.T, stores []store.Store) {
	t.Helper()
	const (
		keys   = 4
		rows   = 30 // per key
		burst  = 3
		every  = time.Second
		lane   = store.LaneChat
		spares = 20 // unpaced rows
		limit  = 4
	)
	t0 := at(0)
	var in []store.OutboxInsertParams
	remaining := map[string]int{}
	for i := range keys * rows {
		k := fmt.Sprintf("slack:C%d", i%keys)
		in = append(in, laned(fmt.Sprintf("p%03d", i), lane, 0, k, t0.Add(-time.Duration(keys*rows-i)*time.Millisecond)))
		remaining[k]++
	}
	for i := range spares {
		in = append(in, laned(fmt.Sprintf("u%02d", i), lane, 0, "", t0.Add(-time.Duration(i)*time.Millisecond)))
	}
	enqueue(t, stores[0], in...)

	claimed := map[string]int{}
	for step := 0; len(claimed) < len(in); step++ {
		if step > rows {
			t.Fatalf("after %d instants %d of %d rows are claimed", step, len(claimed), len(in))
		}
		now := t0.Add(time.Duration(step) * every)
		var (
			mu    sync.Mutex
			got   []*store.OutboxRow
			wg    sync.WaitGroup
			start = make(chan struct{})
		)
		for w, s := range stores {
			worker := fmt.Sprintf("w%d", w)
			wg.Go(func() {
				<-start
				for {
					rs, err := s.OutboxClaim(t.Context(), store.OutboxClaimParams{
						Worker: worker, Now: now, Lease: time.Hour, Limit: limit, Lane: lane, Pace: budget(every, burst)})
					if err != nil {
						t.Errorf("OutboxClaim(%s) at step %d: %v", worker, step, err)
						return
					}
					if len(rs) == 0 {
						return
					}
					for _, r := range rs {
						if r.ClaimedBy != worker {
							t.Errorf("%s claimed %s, held by %q", worker, r.ID, r.ClaimedBy)
						}
						if err := s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: r.ID, Worker: worker, Now: now}); err != nil {
							t.Errorf("OutboxComplete(%s by %s): %v", r.ID, worker, err)
						}
					}
					mu.Lock()
					got = append(got, rs...)
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		if t.Failed() {
			return
		}

		want := map[string]int{}
		if step == 0 {
			want[""] = spares
		}
		for k, n := range remaining {
			take := 1
			if step == 0 {
				take = burst
			}
			if take = min(take, n); take > 0 {
				want[k] = take
			}
			remaining[k] = n - take
		}
		wantPerKey(t, fmt.Sprintf("step %d (%v)", step, now.Sub(t0)), got, want)
		for _, r := range got {
			claimed[r.ID]++
		}
		if t.Failed() {
			return
		}
	}
	var twice []string
	for id, n := range claimed {
		if n != 1 {
			twice = append(twice, fmt.Sprintf("%s×%d", id, n))
		}
	}
	slices.Sort(twice)
	if len(twice) > 0 {
		t.Errorf("rows claimed more than once: %s", strings.Join(twice, ", "))
	}
}

// LanesMigration checks that migration 0003 files the rows it finds under
// the lanes of their kinds: decisions in the backend lane, emails in the
// mail lane, everything else in chat. exec runs a script of statements on
// the database before the store has migrated it; migrate then opens the
// store on that database and migrates it.
func LanesMigration(t *testing.T, exec func(t *testing.T, script string), migrate func(t *testing.T) store.Store) {
	t.Helper()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatalf("Migrations: %v", err)
	}
	// The database as the release before lanes left it.
	exec(t, `CREATE TABLE schema_migrations (version BIGINT NOT NULL PRIMARY KEY, applied_at BIGINT NOT NULL)`)
	for _, m := range ms {
		if m.Version >= 3 {
			break
		}
		exec(t, m.SQL)
		exec(t, fmt.Sprintf(`INSERT INTO schema_migrations (version, applied_at) VALUES (%d, 1)`, m.Version))
	}
	now := at(0).UnixMilli()
	var rows []string
	for _, r := range []struct{ id, kind, state string }{
		{"decision", "decision", "pending"},
		{"email", "email", "pending"},
		{"post", "post_card", "pending"},
		{"reply", "reply", "pending"},
		{"old-decision", "decision", "done"},
	} {
		rows = append(rows, fmt.Sprintf(`('%s', 't1', 'a1', '%s', 'x', '{}', %d, '%s', %d)`, r.id, r.kind, now, r.state, now))
	}
	exec(t, `INSERT INTO outbox (id, tenant, approval_id, kind, target, payload, next_attempt_at, state, created_at) VALUES `+
		strings.Join(rows, ", "))

	s := migrate(t)
	for _, c := range []struct {
		lane string
		want []string
	}{
		{store.LaneBackend, []string{"decision"}},
		{store.LaneMail, []string{"email"}},
		{store.LaneChat, []string{"post", "reply"}},
	} {
		got := claimP(t, s, store.OutboxClaimParams{Worker: "w", Now: at(0), Limit: 10, Lane: c.lane})
		wantIDs(t, "lane "+c.lane+" after the migration", outboxIDs(got), c.want)
		for _, r := range got {
			if r.Lane != c.lane || r.Priority != 0 || r.PaceKey != "" {
				t.Errorf("%s after the migration: lane %q, priority %d, pace key %q; want %q, 0, none", r.ID, r.Lane, r.Priority, r.PaceKey, c.lane)
			}
		}
	}
	st, err := s.OutboxStats(context.WithoutCancel(t.Context()), at(0))
	if err != nil {
		t.Fatalf("OutboxStats: %v", err)
	}
	if got := st.Lanes[store.LaneBackend].Pending; got != 1 {
		t.Errorf("backend lane holds %d pending rows, want 1 (the done decision is not pending)", got)
	}
}

// OutboxDrop ends the approval's unclaimed pending rows under the key
// prefix, and nothing else: a row a worker holds, a row without the
// mark (or with another), another approval's.
func testOutboxDrop(t *testing.T, s store.Store) {
	t0 := at(0)
	row := func(id, approvalID, key string) store.OutboxInsertParams {
		p := effect(id, t0)
		p.ApprovalID, p.CoalesceKey = approvalID, key
		return p
	}
	enqueue(t, s, row("held", "a1", "moot:a1:held"))
	held := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: t0, Limit: 10})
	wantIDs(t, "held", outboxIDs(held), []string{"held"})
	enqueue(t, s,
		row("moot", "a1", "moot:a1:moot"),
		row("reply", "a1", ""),
		row("edit", "a1", "edit:a1:slack:C1:1"),
		row("other", "a2", "moot:a2:other"),
	)
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxDrop(ctx, store.OutboxDropParams{ApprovalID: "a1", KeyPrefix: "moot:", Now: t0})
	})
	got := claimP(t, s, store.OutboxClaimParams{Worker: "w2", Now: t0, Limit: 10})
	wantIDs(t, "claimable after the drop", outboxIDs(got), []string{"edit", "other", "reply"})
	// The held row is still its worker's to complete.
	if err := s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: "held", Worker: "w1", Now: t0}); err != nil {
		t.Errorf("complete the held row after the drop: %v", err)
	}
	st, err := s.OutboxStats(t.Context(), t0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 3 || st.Dead != 0 {
		t.Errorf("stats after the drop: %+v, want the three claimed rows pending and none dead", st)
	}
}

// A transaction completes a claimed row with what it writes, under the
// same lease rule as Store.OutboxComplete; a rolled-back transaction
// leaves the row claimed.
func testOutboxCompleteInTx(t *testing.T, s store.Store) {
	t0 := at(0)
	enqueue(t, s, effect("o1", t0), effect("o2", t0))
	got := claimP(t, s, store.OutboxClaimParams{Worker: "w1", Now: t0, Limit: 10})
	wantIDs(t, "claimed", outboxIDs(got), []string{"o1", "o2"})
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o1", Worker: "w1", Now: t0})
	})
	rollback := errors.New("roll back")
	err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o2", Worker: "w1", Now: t0}); err != nil {
			return err
		}
		return rollback
	})
	wantErr(t, "rolled back", err, rollback)
	err = s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o2", Worker: "w2", Now: t0})
	})
	wantErr(t, "another worker's row", err, store.ErrLeaseLost)
	// After the lease, o2 (still pending) is claimable again; o1 is done.
	late := claimP(t, s, store.OutboxClaimParams{Worker: "w3", Now: t0.Add(2 * time.Minute), Limit: 10})
	wantIDs(t, "after the lease", outboxIDs(late), []string{"o2"})
	wantErr(t, "the first worker's late result", s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: "o1", Worker: "w1", Now: t0}), store.ErrLeaseLost)
}
