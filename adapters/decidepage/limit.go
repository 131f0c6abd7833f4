package decidepage

import (
	"sync"
	"time"
)

// The page's argument look-ups are limited per member: each is a signed
// call to the job backend as that member, made for whoever holds the
// link, so a link that leaked (a scanner, a forwarded mail, a browser's
// history) must not turn into a stream of them. A member may make
// LookupBurst look-ups at once, and one more every LookupEvery after that
// (5 a minute); past it the page answers 429 with Retry-After and asks
// nothing. The count is kept in memory by each process: a bot of several
// replicas allows each member this much per replica.
const (
	LookupBurst = 5
	LookupEvery = 12 * time.Second
)

// lookupLimit counts look-ups per member (tenant and user) with the
// generic cell rate algorithm: one time per member, when its allowance
// is whole again. Members come from the configuration (a link is
// checked before it is counted), so the map is bounded by them; a member
// whose allowance is whole again is dropped.
type lookupLimit struct {
	mu   sync.Mutex
	full map[string]time.Time
}

// pruneAt is the size past which take drops members whose allowance is
// whole again.
const pruneAt = 256

// take counts one look-up for key at now. It returns 0 when the look-up
// may go, else how long until one may.
func (ll *lookupLimit) take(key string, now time.Time) time.Duration {
	ll.mu.Lock()
	defer ll.mu.Unlock()
	if ll.full == nil {
		ll.full = make(map[string]time.Time)
	}
	if len(ll.full) >= pruneAt {
		for k, t := range ll.full {
			if !t.After(now) {
				delete(ll.full, k)
			}
		}
	}
	full := ll.full[key]
	if full.Before(now) {
		full = now
	}
	// Each look-up moves the time the allowance is whole by LookupEvery;
	// a look-up may go while that time is at most a burst less one away.
	if wait := full.Sub(now) - (LookupBurst-1)*LookupEvery; wait > 0 {
		return wait
	}
	ll.full[key] = full.Add(LookupEvery)
	return 0
}
