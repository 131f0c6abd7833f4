package slack

import (
	"context"
	"fmt"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"approvalsbot/threads"
)

// pacer spaces calls per key (a channel, or one key for the workspace)
// with a token bucket each, and holds a key back after Slack said 429 for
// it. The wait happens inside the surface call, bounded by its context:
// a wait that would outlast the context is not started, and the call
// returns threads.RetryAfter with the wait instead, so the outbox comes
// back when the channel has room.
type pacer struct {
	limit rate.Limit
	burst int

	mu   sync.Mutex
	keys map[string]*paced
}

type paced struct {
	lim   *rate.Limiter
	until time.Time // Slack's Retry-After for this key
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

// hold keeps key waiting until now+d, after Slack's 429 for it.
func (p *pacer) hold(key string, d time.Duration) {
	k := p.get(key)
	p.mu.Lock()
	defer p.mu.Unlock()
	if until := time.Now().Add(d); until.After(k.until) {
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
		return threads.Permanent(fmt.Errorf("pace of %s allows no call at all", key))
	}
	d := r.Delay()
	if d == 0 {
		return nil
	}
	if err := sleep(ctx, d); err != nil {
		r.Cancel()
		return err
	}
	return nil
}

// sleep waits d, or returns RetryAfter(d) at once when ctx would end
// first, or ctx's error when it ends during the wait.
func sleep(ctx context.Context, d time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < d {
		return threads.RetryAfter(fmt.Errorf("paced: Slack takes the next message in %s", d.Round(time.Millisecond)), d)
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
