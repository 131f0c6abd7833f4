// Package pacing spaces a chat surface's outbound calls per key (a
// channel, a route, or one key for a workspace-wide limit) with a token
// bucket each, and holds a key back after the platform answered 429 for
// it. The wait happens inside the surface call, bounded by its context: a
// wait that would outlast the context is not started, and the call
// returns threads.RetryAfter with the wait instead, so the outbox comes
// back when the channel has room. A burst of cards into one channel then
// drains at the platform's pace with no 429 storm.
package pacing

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/threads"
)

// Pacer paces calls per key.
type Pacer struct {
	limit   rate.Limit
	burst   int
	service string // who is paced, for the error: "Slack", "Discord"

	mu   sync.Mutex
	keys map[string]*paced
}

type paced struct {
	lim   *rate.Limiter
	until time.Time // the platform's Retry-After for this key
}

// New paces each key at limit calls a second with burst; service names
// the platform in errors.
func New(limit rate.Limit, burst int, service string) *Pacer {
	return &Pacer{limit: limit, burst: burst, service: service, keys: map[string]*paced{}}
}

func (p *Pacer) get(key string) *paced {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.keys[key]
	if k == nil {
		k = &paced{lim: rate.NewLimiter(p.limit, p.burst)}
		p.keys[key] = k
	}
	return k
}

// Hold keeps key waiting for d, after the platform's 429 for it.
func (p *Pacer) Hold(key string, d time.Duration) {
	k := p.get(key)
	until := time.Now().Add(d)
	p.mu.Lock()
	defer p.mu.Unlock()
	if until.After(k.until) {
		k.until = until
	}
}

// Wait blocks until key may be called again, or returns threads.RetryAfter
// when that is later than ctx allows, or ctx's error when it ends.
func (p *Pacer) Wait(ctx context.Context, key string) error {
	k := p.get(key)
	p.mu.Lock()
	held := time.Until(k.until)
	p.mu.Unlock()
	if held > 0 {
		if err := p.sleep(ctx, held); err != nil {
			return err
		}
	}
	r := k.lim.Reserve()
	if !r.OK() {
		return threads.Permanent(fmt.Errorf("the pace of %s allows no call at all", key))
	}
	if d := r.Delay(); d > 0 {
		if err := p.sleep(ctx, d); err != nil {
			r.Cancel()
			return err
		}
	}
	return nil
}

// sleep waits d, or returns RetryAfter(d) at once when ctx would end
// first, or ctx's error when it ends during the wait.
func (p *Pacer) sleep(ctx context.Context, d time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return threads.RetryAfter(fmt.Errorf("paced: %s takes the next call in %s", p.service, d.Round(time.Millisecond)), d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
