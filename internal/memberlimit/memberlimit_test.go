package memberlimit_test

import (
	"testing"
	"time"

	"approvalsbot/internal/memberlimit"
)

func TestBurstThenOneEvery(t *testing.T) {
	l := &memberlimit.Limit{Burst: 3, Every: 10 * time.Second}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if w := l.Take("a", now); w != 0 {
			t.Fatalf("use %d waits %v", i+1, w)
		}
	}
	if w := l.Take("a", now); w != 10*time.Second {
		t.Fatalf("past the burst: wait %v, want 10s", w)
	}
	if w := l.Take("b", now); w != 0 {
		t.Fatalf("another key waits %v", w)
	}
	if w := l.Take("a", now.Add(10*time.Second)); w != 0 {
		t.Fatalf("after Every: wait %v", w)
	}
	if w := l.Take("a", now.Add(10*time.Second)); w == 0 {
		t.Fatal("a second use at once after Every went")
	}
}

func TestWholeAllowanceComesBack(t *testing.T) {
	l := &memberlimit.Limit{Burst: 2, Every: time.Second}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for range 300 { // past pruneAt keys, each spent
		l.Take(now.String(), now)
		now = now.Add(time.Millisecond)
	}
	for i := range 2 {
		if w := l.Take("k", now); w != 0 {
			t.Fatalf("use %d waits %v", i+1, w)
		}
	}
}
