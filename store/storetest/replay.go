package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"approvalsbot/store"
)

// testReplaySeen: a key is unseen once and seen after, within its time,
// whatever else is recorded; past its time it is unseen again (and
// remembered afresh); a key's bytes are the key (no folding of case or
// encoding); an empty key or a time already past is refused.
func testReplaySeen(t *testing.T, s store.Store) {
	ctx := t.Context()
	seen := func(key string, now, until time.Time) bool {
		t.Helper()
		got, err := s.ReplaySeen(ctx, store.ReplaySeenParams{Key: []byte(key), Now: now, Until: until})
		if err != nil {
			t.Fatalf("ReplaySeen(%q): %v", key, err)
		}
		return got
	}
	if seen("slack:\x01\x02", at(0), at(10*time.Minute)) {
		t.Fatal("a new key was reported seen")
	}
	if !seen("slack:\x01\x02", at(time.Minute), at(11*time.Minute)) {
		t.Fatal("a replay within the key's time was reported unseen")
	}
	if seen("discord:\x01\x02", at(time.Minute), at(11*time.Minute)) || seen("slack:\x01\x03", at(time.Minute), at(11*time.Minute)) {
		t.Fatal("another key was reported seen")
	}
	// The replay above did not extend the first key's time: it ends at 10
	// minutes, as first recorded.
	if !seen("slack:\x01\x02", at(10*time.Minute-time.Millisecond), at(20*time.Minute)) {
		t.Fatal("a replay just before the key's time ended was reported unseen")
	}
	if seen("slack:\x01\x02", at(10*time.Minute), at(20*time.Minute)) {
		t.Fatal("a key past its time was still remembered")
	}
	if !seen("slack:\x01\x02", at(15*time.Minute), at(25*time.Minute)) {
		t.Fatal("a key recorded again after its time was not remembered afresh")
	}
	// Binary keys: bytes that differ only as letters' case does are two keys.
	if seen("slack:AB", at(0), at(time.Hour)) || seen("slack:ab", at(0), at(time.Hour)) {
		t.Fatal("keys differing in their bytes were taken for one")
	}

	for name, p := range map[string]store.ReplaySeenParams{
		"no key":          {Now: at(0), Until: at(time.Minute)},
		"until not after": {Key: []byte("k"), Now: at(time.Minute), Until: at(time.Minute)},
	} {
		if _, err := s.ReplaySeen(ctx, p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// testReplaySeenForgets: forgetting keys past their time, a few each
// call, forgets only those: after a hundred keys have passed and a
// hundred live ones were recorded (enough calls to forget every old
// one), each live key is still seen and each old one is unseen.
func testReplaySeenForgets(t *testing.T, s store.Store) {
	ctx := t.Context()
	const n = 100
	for i := range n {
		if got, err := s.ReplaySeen(ctx, store.ReplaySeenParams{Key: fmt.Appendf(nil, "old-%d", i), Now: at(0), Until: at(time.Minute)}); err != nil || got {
			t.Fatalf("old key %d: seen %v, %v", i, got, err)
		}
	}
	for i := range n {
		now := at(time.Hour + time.Duration(i)*time.Millisecond)
		if got, err := s.ReplaySeen(ctx, store.ReplaySeenParams{Key: fmt.Appendf(nil, "new-%d", i), Now: now, Until: now.Add(time.Minute)}); err != nil || got {
			t.Fatalf("new key %d: seen %v, %v", i, got, err)
		}
	}
	for i := range n {
		now := at(time.Hour + time.Second)
		got, err := s.ReplaySeen(ctx, store.ReplaySeenParams{Key: fmt.Appendf(nil, "new-%d", i), Now: now, Until: now.Add(time.Minute)})
		if err != nil || !got {
			t.Fatalf("replay of new key %d: seen %v, %v", i, got, err)
		}
		got, err = s.ReplaySeen(ctx, store.ReplaySeenParams{Key: fmt.Appendf(nil, "old-%d", i), Now: now, Until: now.Add(time.Minute)})
		if err != nil || got {
			t.Fatalf("old key %d long past its time: seen %v, %v", i, got, err)
		}
	}
}

// testReplaySeenConcurrent: of many calls with one key at once, exactly
// one finds it unseen.
func testReplaySeenConcurrent(t *testing.T, s store.Store) {
	ctx := t.Context()
	const callers = 16
	for round := range 5 {
		key := fmt.Appendf(nil, "race-%d", round)
		var mu sync.Mutex
		unseen, failed := 0, 0
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range callers {
			wg.Go(func() {
				<-start
				got, err := s.ReplaySeen(ctx, store.ReplaySeenParams{Key: key, Now: at(0), Until: at(time.Minute)})
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					failed++
					t.Errorf("ReplaySeen: %v", err)
				case !got:
					unseen++
				}
			})
		}
		close(start)
		wg.Wait()
		if failed == 0 && unseen != 1 {
			t.Fatalf("round %d: %d of %d calls found the key unseen, want 1", round, unseen, callers)
		}
	}
}

// testReplay runs the replay checks on one store; their keys are apart.
func testReplay(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name string
		run  func(*testing.T, store.Store)
	}{
		{"Seen", testReplaySeen},
		{"Forgets", testReplaySeenForgets},
		{"Concurrent", testReplaySeenConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, s) })
	}
}
