package discord

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/threads"
)

// pacer spaces calls per key (a route on one channel) with a token bucket
// each, and holds a key back after Discord said 429 for it (every key,
// after a global 429). The wait happens inside the surface call, bounded
// by its context: a wait that would outlast the context is not started,
// and the call returns threads.RetryAfter with the wait instead, so the
// outbox comes back when the channel has room. discordgo would otherwise
// sleep through its own buckets without a context.
type pacer struct {
	limit rate.Limit
	burst int

	mu   sync.Mutex
	keys map[string]*paced
}

type paced struct {
	lim   *rate.Limiter
	until time.Time // Discord's Retry-After for this key
}

func newPacer(limit rate.Limit, burst int) *pacer {
	return &pacer{limit: limit, burst: burst, keys: map[string]*paced{}}
}

func (p *pacer) get(key string) *paced {
	p.mu.Lock()
	defer p.mu.Unlock()
	k := p.keys[key]
	if k == nil {
		k = &paced{lim: rate.NewLimiter(p.limit, p.burst)}
		p.keys[key] = k
	}
	return k
}

// hold keeps key waiting for d, after a 429. (discordgo drops the
// "global" flag of a 429, so a global limit holds the key that met it.)
func (p *pacer) hold(key string, d time.Duration) {
	k := p.get(key)
	until := time.Now().Add(d)
	p.mu.Lock()
	defer p.mu.Unlock()
	if until.After(k.until) {
		k.until = until
	}
}

// wait blocks until key may be called again, or returns
// threads.RetryAfter when that is later than ctx allows.
func (p *pacer) wait(ctx context.Context, key string) error {
	k := p.get(key)
	p.mu.Lock()
	held := time.Until(k.until)
	p.mu.Unlock()
	if held > 0 {
		if err := sleep(ctx, held); err != nil {
			return err
		}
	}
	r := k.lim.Reserve()
	if !r.OK() {
		return threads.Permanent(fmt.Errorf("the pace of %s allows no call at all", key))
	}
	if d := r.Delay(); d > 0 {
		if err := sleep(ctx, d); err != nil {
			r.Cancel()
			return err
		}
	}
	return nil
}

// sleep waits d, or returns RetryAfter(d) at once when ctx would end
// first, or ctx's error when it ends during the wait.
func sleep(ctx context.Context, d time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return threads.RetryAfter(fmt.Errorf("paced: Discord takes the next call in %s", d.Round(time.Millisecond)), d)
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

// pause waits d unless ctx ends first; it reports whether the wait ran out.
func pause(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
