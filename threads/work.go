package threads

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"
)

// Work is what runs after a click is answered (telling the person, a
// dialog, the arguments), within its own timeout: nothing else bounds it.
// It is not a person's own path (ForPerson) by itself: a listing of every
// pending approval must not take the connections kept for clicks.
type Work struct {
	Timeout time.Duration
	Run     func(ctx context.Context) // nil: nothing to do
}

// Runner runs the work that follows answers; Close stops taking more and
// waits for what is in flight. A surface refuses a click once Closing
// reports true, before recording anything, so "nothing was sent" holds.
type Runner struct {
	log *slog.Logger

	mu      sync.Mutex
	closing bool
	wg      sync.WaitGroup
}

// NewRunner builds a Runner that logs work that panicked to log (nil
// discards).
func NewRunner(log *slog.Logger) *Runner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Runner{log: log}
}

// Start runs w in a goroutine of its own with a context that ends after
// w.Timeout; a panic is logged. Work with nothing to run is done at once.
// It returns false, running nothing, once Close has begun.
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

// Enter counts work Close waits for that the caller runs (on a platform
// library's goroutine), unless Close has begun; call done when it ends.
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

// Close stops taking work and waits for what is in flight.
func (r *Runner) Close() {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	r.wg.Wait()
}
