package replay_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"approvalsbot/adapters/replay"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
)

func openStore(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	return st
}

// TestGuardSharesWhatItSawAndForgetsAfterTwoWindows: two guards on one
// store are two replicas: a request one saw is a replay to the other,
// for two windows and no longer; another platform's equal signature
// bytes are another request.
func TestGuardSharesWhatItSawAndForgetsAfterTwoWindows(t *testing.T) {
	st := openStore(t)
	const window = 5 * time.Minute
	one, two := replay.New(st, "slack", window), replay.New(st, "slack", window)
	other := replay.New(st, "discord", window)
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	sig := []byte{0xAB, 0xCD, 0xEF}
	first := func(g *replay.Guard, at time.Time) bool {
		t.Helper()
		ok, err := g.First(t.Context(), sig, at)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if !first(one, now) {
		t.Fatal("a new request was taken for a replay")
	}
	if first(two, now.Add(time.Minute)) {
		t.Fatal("a replay to another replica was accepted")
	}
	if !first(other, now.Add(time.Minute)) {
		t.Fatal("another platform's request was taken for a replay")
	}
	if first(one, now.Add(2*window-time.Millisecond)) {
		t.Fatal("a replay within two windows was accepted")
	}
	if !first(two, now.Add(2*window)) {
		t.Fatal("a request was not forgotten after two windows")
	}
}

type downStore struct{}

func (downStore) ReplaySeen(context.Context, store.ReplaySeenParams) (bool, error) {
	return false, store.ErrUnavailable
}

// TestGuardFailsClosed: when the store cannot say, the request is not
// taken for new.
func TestGuardFailsClosed(t *testing.T) {
	g := replay.New(downStore{}, "slack", time.Minute)
	ok, err := g.First(t.Context(), []byte{1}, time.Now())
	if ok || !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("First = %v, %v; want false and the store's error", ok, err)
	}
	if ok, err := replay.New(openStore(t), "slack", time.Minute).First(t.Context(), nil, time.Now()); ok || !errors.Is(err, replay.ErrNoSignature) {
		t.Fatalf("no signature: First = %v, %v", ok, err)
	}
}
