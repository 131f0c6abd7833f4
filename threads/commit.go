package threads

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/store"
)

// groupCommit runs the transactions of concurrent callers in one commit
// (see docs/design.md#group-commit). A caller's function may run more than
// once (in the group, then alone), each time in a fresh transaction, so it
// must set its results afresh on every run.
type groupCommit struct {
	mu    sync.Mutex
	queue []*commitCall
	// leading is how many groups run now; at most leaders (1 when unset).
	leading int
	leaders int
	// savepoints: each caller's work runs in a savepoint of the group's.
	savepoints bool
	// ordered: callers run in key order (ties in arrival order), so replicas
	// sharing a database take row locks in one order, never in a cycle.
	ordered bool
	// ownContext: a caller alone runs on its own context; a group runs on one
	// of its own, bounded by recordTimeout, whatever the leader's does.
	ownContext bool
	// sizes, when set, observes each transaction's callers.
	sizes prometheus.Observer
}

// maxGroup bounds one shared transaction, so a group holds the writer for
// milliseconds; maxGroupBytes bounds the callers' weight (an event's body
// size) for the same reason. A heavier caller runs in a group of its own.
const (
	maxGroup      = 64
	maxGroupBytes = 4 << 20
)

// oneWriter reports whether the store runs one writing transaction at a
// time (store.OneWriter), where grouping pays.
func (s *Service) oneWriter() bool {
	w, ok := s.store.(store.OneWriter)
	return ok && w.OneWriter()
}

type commitCall struct {
	fn     func(context.Context, store.Tx) error
	key    string            // ordered groups: the approval the caller writes
	weight int               // counted against maxGroupBytes
	done   chan commitResult // buffered: the leader never blocks on it
}

type commitResult struct {
	err  error
	lead bool // the caller is to lead the next group, its own among it
}

// commit runs fn in a transaction shared with other callers queued at the
// same time, and returns once it (or fn's own, if it failed) has ended.
func (s *Service) commit(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if !s.oneWriter() {
		// Writers run side by side: sharing would only hold every caller's
		// row locks (a click waits on them) for the whole group's work.
		return s.store.InTx(ctx, fn)
	}
	return s.commitGrouped(ctx, fn)
}

// commitGrouped is commit on every store, for work so small (one row read
// and written) that the group's row locks cost a click nothing noticeable,
// while a commit each would cost a burst one flush each.
func (s *Service) commitGrouped(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.runGrouped(ctx, &s.group, &commitCall{fn: fn})
}

// runGrouped runs c in g: queued, then led or run by another leader.
func (s *Service) runGrouped(ctx context.Context, g *groupCommit, c *commitCall) error {
	c.done = make(chan commitResult, 1)
	g.mu.Lock()
	if g.leading >= max(g.leaders, 1) {
		g.queue = append(g.queue, c)
		g.mu.Unlock()
		if r := <-c.done; !r.lead {
			return r.err
		}
		// c was handed the lead and taken out of the queue with it.
		g.mu.Lock()
	} else {
		// A fresh leader takes its group before anyone sees it in the queue.
		g.leading++
	}
	batch := g.take(c)
	g.mu.Unlock()

	own := s.runGroup(ctx, g, batch, c)

	g.mu.Lock()
	if len(g.queue) > 0 {
		next := g.queue[0]
		g.queue = g.queue[1:]
		next.done <- commitResult{lead: true}
	} else {
		g.leading--
		g.queue = nil
	}
	g.mu.Unlock()
	return own
}

// recovering turns fn's panic into its error: in a group, one caller's
// panic would leave the others and the queue waiting for ever.
func (s *Service) recovering(fn func(context.Context, store.Tx) error) func(context.Context, store.Tx) error {
	return func(ctx context.Context, tx store.Tx) (err error) {
		defer func() {
			if r := recover(); r != nil {
				s.log.Error("a transaction's work panicked; it is rolled back and its caller told", "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				err = fmt.Errorf("threads: the transaction's work panicked: %v", r)
			}
		}()
		return fn(ctx, tx)
	}
}

// take removes the next group from the queue, own (the leader) first;
// g.mu held.
func (g *groupCommit) take(own *commitCall) []*commitCall {
	batch, weight := []*commitCall{own}, own.weight
	n := 0
	for _, c := range g.queue {
		if len(batch) == maxGroup || weight+c.weight > maxGroupBytes {
			break
		}
		batch = append(batch, c)
		weight += c.weight
		n++
	}
	g.queue = g.queue[n:]
	if g.ordered {
		slices.SortStableFunc(batch, func(a, b *commitCall) int { return cmp.Compare(a.key, b.key) })
	}
	return batch
}

// runGroup runs batch in one transaction, or each alone when that fails,
// tells every other caller its result, and returns own's.
func (s *Service) runGroup(ctx context.Context, g *groupCommit, batch []*commitCall, own *commitCall) error {
	// The others wait on the group too: it outlives the leader's context.
	if !g.ownContext || len(batch) > 1 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		defer cancel()
	}
	if g.sizes != nil {
		g.sizes.Observe(float64(len(batch)))
	}
	for _, c := range batch {
		c.fn = s.recovering(c.fn)
	}
	results := make([]error, len(batch))
	shared := len(batch) > 1 && s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		for i, c := range batch {
			if !g.savepoints {
				if err := c.fn(ctx, tx); err != nil {
					return err
				}
				continue
			}
			err := tx.Savepoint(ctx, func(ctx context.Context) error { return c.fn(ctx, tx) })
			if errors.Is(err, store.ErrTxBroken) {
				return err
			}
			results[i] = err
		}
		return nil
	}) == nil
	if !shared {
		for i, c := range batch {
			results[i] = s.store.InTx(ctx, c.fn)
		}
	}
	var mine error
	for i, c := range batch {
		if c == own {
			mine = results[i]
			continue
		}
		c.done <- commitResult{err: results[i]}
	}
	return mine
}
