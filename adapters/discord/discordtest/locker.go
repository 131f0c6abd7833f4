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
	waiting  int
}

// NewLocker makes a free lock.
func NewLocker() *Locker { return &Locker{slot: make(chan struct{}, 1)} }

// Acquire blocks until the lock is free or ctx ends; release frees it
// (more calls do nothing). While it blocks it counts in Waiting.
func (l *Locker) Acquire(ctx context.Context) (<-chan struct{}, func(), error) {
	select {
	case l.slot <- struct{}{}:
		return l.took()
	default:
	}
	l.mu.Lock()
	l.waiting++
	l.mu.Unlock()
	defer func() {
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
	}()
	select {
	case l.slot <- struct{}{}:
		return l.took()
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

func (l *Locker) took() (<-chan struct{}, func(), error) {
	l.mu.Lock()
	l.acquired++
	l.mu.Unlock()
	return nil, sync.OnceFunc(func() { <-l.slot }), nil
}

// Held reports whether someone holds the lock now.
func (l *Locker) Held() bool { return len(l.slot) == 1 }

// Acquisitions counts how often the lock was taken.
func (l *Locker) Acquisitions() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.acquired
}

// Waiting counts the Acquire calls blocked now because another holds the
// lock: a test sees a replica stopped at the lock, rather than sleeping
// to give it time to get past it.
func (l *Locker) Waiting() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}
