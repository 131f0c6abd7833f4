package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
)

// group runs the app's essential parts under one context and notices the
// first that ends before Stop: a part that returns early, with an error or
// without one, has failed (docs/design.md#essential-parts).
type group struct {
	ctx      context.Context
	cancel   context.CancelFunc
	log      *slog.Logger
	stopping atomic.Bool
	wg       sync.WaitGroup

	once    sync.Once
	failed  chan struct{} // closed at the first failure
	failure error         // the first failure; set before failed closes
}

func newGroup(parent context.Context, log *slog.Logger) *group {
	ctx, cancel := context.WithCancel(parent)
	return &group{ctx: ctx, cancel: cancel, log: log, failed: make(chan struct{})}
}

// errReturned is the failure of a part that returned nil before the stop.
var errReturned = errors.New("it returned, with no error, while the bot was running")

func (g *group) Go(name string, part func(ctx context.Context) error) {
	g.wg.Go(func() {
		err := part(g.ctx)
		if g.stopping.Load() {
			if err != nil {
				g.log.Warn("stopping: a part ended with an error", "part", name, "err", err.Error())
			}
			return
		}
		if err == nil {
			err = errReturned
		}
		g.once.Do(func() {
			g.failure = fmt.Errorf("%s stopped: %w", name, err)
			close(g.failed)
		})
	})
}

// Failed is closed when a part ended before the stop; Err says why.
func (g *group) Failed() <-chan struct{} { return g.failed }

// Err is the first failure, or nil.
func (g *group) Err() error {
	select {
	case <-g.failed:
		return g.failure
	default:
		return nil
	}
}

// Stop marks the group as stopping: a part that returns from now on has
// finished, not failed. It leaves the parts' context alone (Cancel ends
// it), so the HTTP server can drain while the work it feeds still runs.
func (g *group) Stop() { g.stopping.Store(true) }

// Cancel ends the parts' context, after marking the group stopping.
func (g *group) Cancel() {
	g.Stop()
	g.cancel()
}

// Wait reports whether every part returned before ctx ended; those
// still running are left to end with the process.
func (g *group) Wait(ctx context.Context) bool {
	done := make(chan struct{})
	go func() { g.wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		return false
	}
}
