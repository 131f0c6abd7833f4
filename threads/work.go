package threads

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Work is what runs after a click is answered (telling the person,
// opening a dialog, showing the arguments), within its own timeout: the
// platform's answer is already sent, so nothing else bounds it. It is not
// a person's own path (threads.ForPerson) by itself: a listing of every
// pending approval must not take the connections a click is kept.
type Work struct {
	Timeout time.Duration
	Run     func(ctx context.Context) // nil: nothing to do
}

// Runner runs the work that follows answers, and on Close stops taking
// more and waits for what is in flight. A surface refuses a click once
// Closing reports true, before anything is recorded, so "nothing was
// sent" is true of it.
type Runner struct {
	log *slog.Logger

	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

// NewRunner builds a Runner; log gets a line for work that panicked (nil
// discards).
func NewRunner(log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{log: log}
}

// Start runs w in its own goroutine, with a context that ends after
// w.Timeout, tracked so Close waits for it; a panic in it is logged, not
// fatal. It returns false, and runs nothing, once Close has begun. Work
// with nothing to run is done at once.
func (r *Runner) Start(w Work) bool {
	if w.Run == nil {
		return true
	}
	done, ok := r.Enter()
	if !ok {
		return false
	}
	go func() {
		defer done()
		defer func() {
			if p := recover(); p != nil {
				r.log.Error("work after an answer panicked", "panic", fmt.Sprint(p))
			}
		}()
		ctx, cancel := context.WithTimeout(context.Background(), w.Timeout)
		defer cancel()
		w.Run(ctx)
	}()
	return true
}

// Enter counts one more piece of work Close waits for, run by the caller
// (a platform library's own goroutine), unless Close has begun; the
// caller calls done when it ends.
func (r *Runner) Enter() (done func(), ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closing {
		return nil, false
	}
	r.wg.Add(1)
	return sync.OnceFunc(r.wg.Done), true
}

// Closing reports whether Close has begun.
func (r *Runner) Closing() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.closing
}

// Close stops taking new work and waits for the work in flight, each
// piece within its own timeout.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.wg.Wait()
}
