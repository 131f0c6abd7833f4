package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"approvalsbot/ladder"
	"approvalsbot/store"
)

// Retention is how long the bot keeps what it stores: a closed approval's
// content for Closed after its last change, then a tombstone and the event
// ids for Tombstones (see docs/design.md#retention).
type Retention struct {
	Closed     time.Duration
	Tombstones time.Duration
}

// PruneEvery is how often a pruning pass runs: a handle outlives its
// lifetime by minutes, and an idle pass costs a few index probes.
const PruneEvery = 5 * time.Minute

// pruneBatch bounds each transaction of a pass: a click waits for one.
const pruneBatch = 500

// handleLifetime is how long a click's handle for answering the person
// (Person.Reply) works on surface; the shortest for an unknown surface.
func handleLifetime(surface string) time.Duration {
	if c, ok := ladder.ChatSurfaceNamed(surface); ok {
		return c.HandleLifetime
	}
	return shortestHandleLifetime()
}

// shortestHandleLifetime is the shortest lifetime of any chat surface's
// handle: none younger has lapsed.
func shortestHandleLifetime() time.Duration {
	var d time.Duration
	for i, c := range ladder.ChatSurfaces() {
		if i == 0 || c.HandleLifetime < d {
			d = c.HandleLifetime
		}
	}
	return d
}

// handleKey is the JSON member that carries a handle (deciding, tellPayload).
const handleKey = "reply"

// handleMark finds the values that still carry one: json.Marshal writes
// "reply": with no space, and escapes a quote inside a string, so the mark
// occurs only where the member does.
const handleMark = `"` + handleKey + `":`

// What bot_pruned_total counts.
const (
	PrunedHandles    = "handles"     // chat handles dropped once they lapsed
	PrunedApprovals  = "approvals"   // closed approvals cut to tombstones
	PrunedOutbox     = "outbox_rows" // finished outbox rows deleted
	PrunedTombstones = "tombstones"  // tombstones forgotten
	PrunedEvents     = "events"      // event ids forgotten
	PrunedOutcomes   = "outcomes"    // decided outcomes deleted (outcomesKept)
)

// PruneResult counts what one pass removed, by the Pruned values.
type PruneResult map[string]int

// Pruner runs the retention passes of one process. Replicas may run theirs
// at once: every step is idempotent and takes rows no other holds.
type Pruner struct {
	s *Service
	r Retention
	// mu serialises passes; scrubbed is, per surface, the creation time up to
	// which handles were dropped from outbox rows (a pass reads rows since).
	mu       sync.Mutex
	scrubbed map[string]time.Time
}

// Pruner returns the pruner of this Service's store under r.
func (s *Service) Pruner(r Retention) *Pruner {
	return &Pruner{s: s, r: r, scrubbed: map[string]time.Time{}}
}

// Prune runs one pass in batches: it drops the lapsed chat handles, cuts
// closed approvals to tombstones, deletes finished outbox rows and forgets
// old tombstones and event ids. It stops at the first error (the next pass
// resumes: nothing is half done) or when ctx ends.
func (p *Pruner) Prune(ctx context.Context) (PruneResult, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.r.Closed <= 0 || p.r.Tombstones < p.r.Closed {
		return nil, fmt.Errorf("prune: retention %v with tombstones %v: want tombstones kept at least as long", p.r.Closed, p.r.Tombstones)
	}
	now := p.s.clock.Now()
	res := PruneResult{}
	steps := []struct {
		what string
		run  func(ctx context.Context) (int, error)
	}{
		{PrunedHandles, func(ctx context.Context) (int, error) { return p.dropHandles(ctx, now) }},
		{PrunedApprovals, batches(func(ctx context.Context) (int, error) {
			return p.s.store.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: now.Add(-p.r.Closed), Limit: pruneBatch})
		})},
		{PrunedOutbox, batches(func(ctx context.Context) (int, error) {
			return p.s.store.OutboxPrune(ctx, store.OutboxPruneParams{Before: now.Add(-p.r.Closed), Limit: pruneBatch})
		})},
		{PrunedTombstones, batches(func(ctx context.Context) (int, error) {
			return p.s.store.ApprovalForget(ctx, store.ApprovalForgetParams{Before: now.Add(-p.r.Tombstones), Limit: pruneBatch})
		})},
		{PrunedEvents, batches(func(ctx context.Context) (int, error) {
			return p.s.store.EventPrune(ctx, store.EventPruneParams{Before: now.Add(-p.r.Tombstones), Limit: pruneBatch})
		})},
		{PrunedOutcomes, batches(func(ctx context.Context) (int, error) {
			return p.s.store.OutcomePrune(ctx, store.OutcomePruneParams{Before: now.Add(-outcomesKept(p.r)), Limit: pruneBatch})
		})},
	}
	var err error
	for _, st := range steps {
		var n int
		n, err = st.run(ctx)
		if n > 0 {
			res[st.what] += n
			p.s.metrics.Pruned.WithLabelValues(st.what).Add(float64(n))
		}
		if err != nil {
			err = fmt.Errorf("prune %s: %w", st.what, err)
			break
		}
	}
	if len(res) > 0 {
		attrs := []slog.Attr{}
		for _, st := range steps {
			if res[st.what] > 0 {
				attrs = append(attrs, slog.Int(st.what, res[st.what]))
			}
		}
		p.s.log.LogAttrs(ctx, slog.LevelInfo, "retention pruned the store", attrs...)
	}
	return res, err
}

// batches runs batch until one comes back short, or ctx ends.
func batches(batch func(ctx context.Context) (int, error)) func(ctx context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		total := 0
		for {
			n, err := batch(ctx)
			total += n
			if err != nil || n < pruneBatch {
				return total, err
			}
			if err := ctx.Err(); err != nil {
				return total, err
			}
		}
	}
}

// dropHandles removes lapsed handles from the answers waiting for a person
// (KindTell rows, any state) and from decisions in flight.
func (p *Pruner) dropHandles(ctx context.Context, now time.Time) (int, error) {
	total := 0
	// The rows answering a click are addressed to the person's user, whose
	// text starts with the surface's name (tellRow).
	for _, c := range ladder.ChatSurfaces() {
		surface := c.Name
		before := now.Add(-c.HandleLifetime)
		prev := p.scrubbed[surface]
		after := time.Time{}
		if !prev.IsZero() {
			// One pass of overlap, for a replica whose clock runs behind.
			after = prev.Add(-PruneEvery)
		}
		n, err := batches(func(ctx context.Context) (int, error) {
			return p.s.store.OutboxScrub(ctx, store.OutboxScrubParams{Kind: KindTell, TargetPrefix: surface + ":",
				CreatedAfter: after, CreatedBefore: before, Contains: handleMark, Limit: pruneBatch,
				Scrub: func(payload []byte) []byte { return dropMember(payload, handleKey) }})
		})(ctx)
		total += n
		if err != nil {
			return total, err
		}
		p.scrubbed[surface] = before
	}
	// Decisions in flight are few: one batch, each judged by its own click
	// time and surface; UpdatedBefore only narrows the read (a row changes at
	// or after its click).
	n, err := p.s.store.ApprovalScrub(ctx, store.ApprovalScrubParams{UpdatedBefore: now.Add(-shortestHandleLifetime()),
		Contains: handleMark, Limit: pruneBatch, Scrub: func(b []byte) []byte { return lapsedDeciding(b, now) }})
	return total + n, err
}

// lapsedDeciding is a decision in flight without its lapsed handle; nil
// to leave it.
func lapsedDeciding(b []byte, now time.Time) []byte {
	var d struct {
		Surface string    `json:"surface"`
		At      time.Time `json:"at"`
	}
	if json.Unmarshal(b, &d) != nil {
		return nil // not ours to judge
	}
	if now.Sub(d.At) < handleLifetime(d.Surface) {
		return nil
	}
	return dropMember(b, handleKey)
}

// dropMember is the JSON object b without its member key, the others
// unchanged; nil when b is no object or has no such member.
func dropMember(b []byte, key string) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil
	}
	if _, ok := m[key]; !ok {
		return nil
	}
	delete(m, key)
	out, err := json.Marshal(m)
	if err != nil {
		return nil
	}
	return out
}
