package threads

import (
	"context"
	"sync"

	"approvalsbot/store"
)

// groupCommit runs the transactions of concurrent callers together, one
// commit for many (the classic group commit), on a store whose writers
// run one at a time (store.OneWriter: SQLite): every durable commit waits
// for an fsync, so a thousand deadline denies answered at once would
// otherwise queue a thousand fsyncs behind each other. The first caller
// leads: it runs everything queued by then (up to maxGroup) in one
// transaction, hands the lead to the next caller waiting, if any, and
// returns. When the shared transaction fails, each of its callers runs
// alone, so one caller's failure is its own.
//
// A caller's function may run more than once (in the group, then alone),
// each time in a fresh transaction, so it must set its results afresh on
// every run.
type groupCommit struct {
	mu      sync.Mutex
	queue   []*commitCall
	leading bool
}

// maxGroup bounds one shared transaction, so a group holds the writer for
// a few milliseconds, not a long time.
const maxGroup = 64

// oneWriter reports whether the store runs one writing transaction at a
// time (store.OneWriter), where grouping pays.
func (s *Service) oneWriter() bool {
	w, ok := s.store.(store.OneWriter)
	return ok && w.OneWriter()
}

type commitCall struct {
	fn   func(context.Context, store.Tx) error
	done chan commitResult // buffered: the leader never blocks on it
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
	g := &s.group
	c := &commitCall{fn: fn, done: make(chan commitResult, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, c)
	if g.leading {
		g.mu.Unlock()
		if r := <-c.done; !r.lead {
			return r.err
		}
	} else {
		g.leading = true
		g.mu.Unlock()
	}
	// Leading: c is first in the queue (a fresh lead finds the queue
	// empty but for c; a handed-on lead goes to the queue's first).
	g.mu.Lock()
	n := min(len(g.queue), maxGroup)
	batch := append([]*commitCall(nil), g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()

	own := s.runGroup(ctx, batch, c)

	g.mu.Lock()
	if len(g.queue) > 0 {
		g.queue[0].done <- commitResult{lead: true}
	} else {
		g.leading = false
		g.queue = nil
	}
	g.mu.Unlock()
	return own
}

// runGroup runs batch in one transaction, or each alone when that fails,
// tells every other caller its result, and returns own's.
func (s *Service) runGroup(ctx context.Context, batch []*commitCall, own *commitCall) error {
	// The group does not end with its leader's context: the others wait
	// on it too.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	results := make([]error, len(batch))
	shared := len(batch) > 1 && s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		for _, c := range batch {
			if err := c.fn(ctx, tx); err != nil {
				return err
			}
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
