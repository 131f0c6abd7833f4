package discordtest

import (
	"context"
	"sync"
)

// Locker is an in-memory gateway lock for tests and single-process
// trials: one holder at a time, waiters served in the order they came
// (Go queues blocked channel senders first in, first out).
type Locker struct {
	slot chan struct{}

	mu       sync.Mutex
	acquired int
}

// NewLocker makes a free lock.
func NewLocker() *Locker { return &Locker{slot: make(chan struct{}, 1)} }

// Acquire blocks until the lock is free or ctx ends; release frees it
// (more calls do nothing).
func (l *Locker) Acquire(ctx context.Context) (<-chan struct{}, func(), error) {
	select {
	case l.slot <- struct{}{}:
		l.mu.Lock()
		l.acquired++
		l.mu.Unlock()
		return nil, sync.OnceFunc(func() { <-l.slot }), nil
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// Held reports whether someone holds the lock now.
func (l *Locker) Held() bool { return len(l.slot) == 1 }

// Acquisitions counts how often the lock was taken.
func (l *Locker) Acquisitions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acquired
}
