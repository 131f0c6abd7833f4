// Package memberlimit limits what one member may make the bot do on
// their behalf from a public page (the decision page's argument
// look-ups, passkey challenges): Burst at once, then one every Every,
// with the generic cell rate algorithm. The count is kept in memory by
// each process: a bot of several replicas allows each member this much
// per replica.
package memberlimit

import (
	"sync"
	"time"
)

// Limit counts per key (a tenant and a member): one time per key, when
// its allowance is whole again. Keys come from the configuration (a
// link is checked before it is counted), so the map is bounded by them;
// a key whose allowance is whole again is dropped. The zero value is not
// usable: set Burst and Every. Safe for concurrent use.
type Limit struct {
	Burst int
	Every time.Duration

	mu   sync.Mutex
	full map[string]time.Time
}

// pruneAt is the size past which Take drops keys whose allowance is
// whole again.
const pruneAt = 256

// Take counts one use for key at now. It returns 0 when the use may go,
// else how long until one may.
func (l *Limit) Take(key string, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.full == nil {
		l.full = make(map[string]time.Time)
	}
	if len(l.full) >= pruneAt {
		for k, t := range l.full {
			if !t.After(now) {
				delete(l.full, k)
			}
		}
	}
	full := l.full[key]
	if full.Before(now) {
		full = now
	}
	// Each use moves the time the allowance is whole by Every; a use may
	// go while that time is at most a burst less one away.
	if wait := full.Sub(now) - time.Duration(l.Burst-1)*l.Every; wait > 0 {
		return wait
	}
	l.full[key] = full.Add(l.Every)
	return 0
}
