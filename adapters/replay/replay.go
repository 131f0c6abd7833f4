// Package replay remembers the signed requests a chat platform sent
// within the last two signature windows, so a captured request cannot be
// sent again while its timestamp is still accepted. It holds only what
// passed the signature check, so only the platform's own traffic can grow
// it, and it forgets what is older. Each replica keeps its own (a replay
// to another replica is stopped by threads: a second decision is refused).
package replay

import (
	"sync"
	"time"
)

// Cache remembers request keys (signatures) for two windows.
type Cache struct {
	window time.Duration

	mu   sync.Mutex
	seen map[string]time.Time // key → forget after
	next time.Time            // next sweep
}

// New remembers keys for two of window.
func New(window time.Duration) *Cache {
	return &Cache{window: window, seen: map[string]time.Time{}}
}

// First reports whether key is new; it records key either way.
func (c *Cache) First(key string, now time.Time) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if now.After(c.next) {
		for k, until := range c.seen {
			if now.After(until) {
				delete(c.seen, k)
			}
		}
		c.next = now.Add(c.window)
	}
	if until, ok := c.seen[key]; ok && !now.After(until) {
		return false
	}
	c.seen[key] = now.Add(2 * c.window)
	return true
}

// Len is how many keys are remembered.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}
