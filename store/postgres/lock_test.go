package postgres_test

import (
	"context"
	"testing"
	"time"
)

// One replica holds a singleton lock; another waits, and takes it over
// when the holder releases it or its session dies.
func TestSingletonLockHasOneHolderAndFailsOver(t *testing.T) {
	db := newSchema(t)
	a := openMigrated(t, db.dsn)
	b := openMigrated(t, db.dsn)
	ctx := t.Context()
	lostA, releaseA, err := a.Singleton(ctx, "discord-gateway")
	if err != nil {
		t.Fatal(err)
	}
	// The other replica waits while the lock is held.
	wctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, _, err := b.Singleton(wctx, "discord-gateway"); err == nil {
		t.Fatal("a second replica took a held lock")
	}
	// Released, it passes on.
	releaseA()
	lostB, releaseB, err := b.Singleton(ctx, "discord-gateway")
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lostA:
	default:
		t.Fatal("release did not close lost")
	}
	// The holder's session dies: the holder learns it lost the lock, and
	// the waiting replica takes it.
	got := make(chan error, 1)
	go func() {
		_, release, err := a.Singleton(ctx, "discord-gateway")
		if err == nil {
			defer release()
		}
		got <- err
	}()
	if n := terminate(t, db.schema+" listen"); n == 0 {
		t.Fatal("no lock session to end")
	}
	select {
	case <-lostB:
	case <-time.After(10 * time.Second):
		t.Fatal("the holder never learnt its session died")
	}
	select {
	case err := <-got:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the waiting replica never took the lock over")
	}
	releaseB()
}
