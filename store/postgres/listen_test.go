package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/postgres"
)

// Bounds of the listener tests: a wake-up due must come within wakeBound;
// one that must not come is awaited for quietBound.
const (
	wakeBound  = 5 * time.Second
	quietBound = 300 * time.Millisecond
)

// listenRun is one Listen call running beside a test.
type listenRun struct {
	wakes  <-chan struct{} // merged into a channel of one, as a worker's are
	done   chan struct{}   // closed when Listen has returned err
	err    error
	cancel context.CancelFunc
}

// stop ends Listen's context and returns what Listen returned.
func (r *listenRun) stop() error {
	r.cancel()
	<-r.done
	return r.err
}

// listening runs s.Listen until the test ends or it is stopped.
func listening(t *testing.T, s *postgres.Store) *listenRun {
	t.Helper()
	wakes := make(chan struct{}, 1)
	ctx, cancel := context.WithCancel(t.Context())
	r := &listenRun{wakes: wakes, done: make(chan struct{}), cancel: cancel}
	go func() {
		defer close(r.done)
		r.err = s.Listen(ctx, func() {
			select {
			case wakes <- struct{}{}:
			default:
			}
		})
	}()
	t.Cleanup(func() { r.stop() })
	return r
}

func waitWake(t *testing.T, wakes <-chan struct{}, what string) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-wakes:
		return time.Since(start)
	case <-time.After(wakeBound):
		t.Fatalf("%s: no wake-up within %v", what, wakeBound)
		return 0
	}
}

func noWake(t *testing.T, wakes <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-wakes:
		t.Fatalf("%s: woken", what)
	case <-time.After(quietBound):
	}
}

// listenerPID is the backend of the store's listening session, waiting
// for one other than not.
func listenerPID(t *testing.T, db testDB, not int) int {
	t.Helper()
	conn := rawConn(t, baseURL(t))
	deadline := time.Now().Add(wakeBound)
	for {
		var pid int
		err := conn.QueryRow(t.Context(),
			`SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND pid <> $2`,
			db.schema+" listen", not).Scan(&pid)
		if err == nil {
			return pid
		}
		if time.Now().After(deadline) {
			t.Fatalf("no listening session of %s: %v", db.schema, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Not parallel, and in a database of its own: notification channels are
// per database, so outbox rows of tests running beside it, or of another
// run of these tests on the same server, would wake its listener.
func TestListenWakesOnCommitAndReconnects(t *testing.T) {
	db := newDatabase(t)
	listener := openMigrated(t, db.dsn)
	writer := open(t, postgres.Options{DSN: db.dsn}) // another replica: another pool
	run := listening(t, listener)
	wakes := run.wakes
	waitWake(t, wakes, "listening") // Listen wakes once it listens

	// Nothing is delivered before commit, nor for a rollback.
	now := at(0)
	err := writer.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("o1", "", now)}); err != nil {
			return err
		}
		noWake(t, wakes, "before commit")
		return nil
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	took := waitWake(t, wakes, "after another store's commit")
	t.Logf("woken %v after InTx returned from the commit", took)
	errRollback := errors.New("roll back")
	err = writer.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("o2", "", now)}); err != nil {
			return err
		}
		return errRollback
	})
	if !errors.Is(err, errRollback) {
		t.Fatalf("InTx: %v", err)
	}
	noWake(t, wakes, "after a rollback")

	// The server ends the listener's session: it reconnects, wakes (what
	// was committed meanwhile went unnotified), and is woken by the next
	// commit again.
	old := listenerPID(t, db, 0)
	conn := rawConn(t, baseURL(t))
	if _, err := conn.Exec(t.Context(), `SELECT pg_terminate_backend($1)`, old); err != nil {
		t.Fatalf("terminate the listener's session: %v", err)
	}
	waitWake(t, wakes, "reconnected")
	if pid := listenerPID(t, db, old); pid == old {
		t.Fatalf("listening on the terminated session %d", old)
	}
	start := time.Now()
	enqueue(t, writer, effect("o3", "", now))
	waitWake(t, wakes, "after a commit, reconnected")
	t.Logf("woken %v after the enqueueing transaction began, reconnected", time.Since(start))

	// Listen returns nil when its context ends.
	start = time.Now()
	if err := run.stop(); err != nil {
		t.Errorf("Listen returned %v, want nil when its context ends", err)
	}
	if d := time.Since(start); d > wakeBound {
		t.Errorf("Listen took %v to return", d)
	}
}

func TestListenStopsWhenStoreCloses(t *testing.T) {
	t.Parallel()
	s := openMigrated(t, newSchema(t).dsn)
	run := listening(t, s)
	waitWake(t, run.wakes, "listening")
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case <-run.done:
		if !errors.Is(run.err, store.ErrUnavailable) {
			t.Errorf("Listen on a closed store returned %v, want ErrUnavailable", run.err)
		}
	case <-time.After(wakeBound):
		t.Fatal("Listen still runs after Close")
	}
}

// newDatabase is a schema as newSchema makes, in a database of the
// test's own, dropped when it ends: for a test that must hear no other
// store's notifications.
func newDatabase(t *testing.T) testDB {
	t.Helper()
	base := baseURL(t)
	var b [8]byte
	rand.Read(b[:])
	name := "bot_test_" + hex.EncodeToString(b[:])
	exec(t, base, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return newSchemaIn(t, withParams(t, base, map[string]string{"dbname": name}))
}
