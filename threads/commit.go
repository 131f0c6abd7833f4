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

// groupCommit runs the transactions of concurrent callers together, one
// commit for many (the classic group commit): every durable commit waits
// for an fsync, so a thousand deadline denies answered at once, or eight
// backends' events, would otherwise queue a fsync each behind each
// other. The first caller leads: it runs everything queued by then (up to
// maxGroup callers and maxGroupBytes of their weight) in one transaction,
// hands the lead to the next caller waiting, if any, and returns. Nobody
// waits for company: a caller alone runs at once, alone.
//
// Without savepoints, when the shared transaction fails each of its
// callers runs alone, so one caller's failure is its own; a caller's
// function may then run more than once (in the group, then alone), each
// time in a fresh transaction, so it must set its results afresh on every
// run. With savepoints (Tx.Savepoint), each caller's work runs in a
// savepoint of the shared transaction and a caller whose work fails is
// undone alone; the others commit. Only a failure of the transaction
// itself (its commit, a broken savepoint) runs everyone alone.
type groupCommit struct {
	mu    sync.Mutex
	queue []*commitCall
	// leading is how many groups run now; at most leaders (1 when unset).
	leading int
	leaders int
	// savepoints: each caller's work runs in a savepoint of the group's
	// transaction.
	savepoints bool
	// ordered: the group runs its callers in key order (ties in arrival
	// order), so that replicas sharing a database take the rows' locks in
	// one order and never wait on each other in a cycle. (Ingest keeps an
	// approval's events out of one group: it takes them one at a time.)
	ordered bool
	// ownContext: a caller that runs alone (in a group of one) runs on
	// its own context, as a transaction of its own would; a group runs on
	// one of its own, bounded by recordTimeout, whatever the leader's
	// does.
	ownContext bool
	// sizes, when set, observes how many callers each transaction ran.
	sizes prometheus.Observer
}

// maxGroup bounds one shared transaction, so a group holds the writer for
// a few milliseconds, not a long time; maxGroupBytes bounds it by the
// callers' weight (an event's body size), so that sixty-four events near
// the 1 MiB bound do not hold it for a long one either. A caller heavier
// than the bound runs in a group of its own.
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

// commit runs fn in a transaction, shared with other callers' functions
// queued at the same time, and returns once that transaction (or fn's own,
// if the shared one failed) has committed or failed.
func (s *Service) commit(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if !s.oneWriter() {
		// Writers run side by side: a shared transaction would only hold
		// every caller's row locks (a click waits on them) for the whole
		// group's work.
		return s.store.InTx(ctx, fn)
	}
	return s.commitGrouped(ctx, fn)
}

// commitGrouped is commit on every store: for work so small (one row read
// and written) that holding the group's row locks for it costs a click
// nothing it would notice, while a commit each would cost a burst of
// them one flush each on a store that runs writers side by side.
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
		// The lead was handed to c, and c taken out of the queue with
		// it, so no other leader takes it or hands it the lead again.
		g.mu.Lock()
	} else {
		// A fresh leader takes its group before anyone can see it in the
		// queue.
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

// recovering is fn with a panic turned into its error: in a group, one
// caller's panic would otherwise unwind its leader and leave the others
// waiting for a result, and the queue for a leader, for ever.
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

// take removes the next group from the queue: own (the leader, which is
// not in it) first, then the callers queued longest. Call it with g.mu
// held.
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
	// The group does not end with its leader's context: the others wait
	// on it too.
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
