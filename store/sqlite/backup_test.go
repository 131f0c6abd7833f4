package sqlite_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/sqlite"
)

// openMigrated opens (creating) a store at path and migrates it.
func openMigrated(t *testing.T, path string, exclusive bool) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(context.Background(), sqlite.Options{Path: path, Exclusive: exclusive})
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

func eventID(i int) string { return fmt.Sprintf("evt-backup-%06d", i) }

// insertEvent commits one event id in its own transaction.
func insertEvent(ctx context.Context, s store.Store, i int) error {
	return s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.EventInsert(ctx, store.EventInsertParams{ID: eventID(i), Tenant: "acme", Type: "approval.requested",
			BodySHA256: strings.Repeat("ab", 32), ApprovalID: fmt.Sprintf("a-%d", i), ReceivedAt: time.UnixMilli(int64(i))})
		return err
	})
}

// hasEvent reports whether the store holds the event id: inserting it
// again says it was there.
func hasEvent(t *testing.T, s store.Store, i int) bool {
	t.Helper()
	var had bool
	err := s.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		res, err := tx.EventInsert(ctx, store.EventInsertParams{ID: eventID(i), Tenant: "acme", Type: "approval.requested",
			BodySHA256: strings.Repeat("ab", 32), ReceivedAt: time.UnixMilli(int64(i))})
		had = err == nil && !res.Inserted
		return errors.New("look only") // roll back: the copy is not changed by looking
	})
	if err != nil && err.Error() != "look only" {
		t.Fatal(err)
	}
	return had
}

// A backup taken while another process writes is the database as of one
// commit: every write committed before it began, then a run of those
// that committed while it ran, and nothing after a missing one. It is a
// private file the store opens as it is.
func TestBackupWhileWriting(t *testing.T) {
	dir := t.TempDir()
	live := openMigrated(t, filepath.Join(dir, "bot.db"), true) // the serving bot holds the file
	ctx := context.Background()
	const seeded = 2000 // enough pages that the copy takes a while
	for i := range seeded {
		if err := insertEvent(ctx, live, i); err != nil {
			t.Fatal(err)
		}
	}

	// The bot goes on writing, one commit after another, while a second
	// process (bot backup) copies the file.
	var committed atomic.Int64
	committed.Store(seeded)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	wg.Go(func() {
		for i := seeded; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := insertEvent(ctx, live, i); err != nil {
				writeErr = err
				return
			}
			committed.Store(int64(i + 1))
		}
	})
	reader, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer reader.Close()
	out := filepath.Join(dir, "backup.db")
	withUmask(t, 0o022, func() {
		before := committed.Load()
		res, err := reader.Backup(ctx, out)
		after := committed.Load()
		close(stop)
		wg.Wait()
		if err != nil {
			t.Fatalf("Backup: %v", err)
		}
		if writeErr != nil {
			t.Fatalf("a write beside the backup failed: %v", writeErr)
		}
		if fi, err := os.Stat(out); err != nil || fi.Size() != res.Bytes || res.Path != out {
			t.Fatalf("backup result %+v, file %v %v", res, fi, err)
		}
		if got := modeOf(t, out); got != 0o600 {
			t.Errorf("the backup is %v under umask 022, want -rw-------", got)
		}
		t.Logf("%d commits before the backup began, %d when it returned", before, after)

		copied := openMigrated(t, out, false) // a copy the store opens and needs no migration
		for i := range int(before) {
			if !hasEvent(t, copied, i) {
				t.Fatalf("event %d, committed before the backup began, is not in it", i)
			}
		}
		n := int(before)
		for n <= int(after) && hasEvent(t, copied, n) {
			n++
		}
		for i := n; i <= int(after)+5; i++ {
			if hasEvent(t, copied, i) {
				t.Fatalf("the copy holds event %d but not %d: not the database as of one commit", i, n)
			}
		}
	})
	if entries, _ := filepath.Glob(filepath.Join(dir, ".backup.db.partial-*")); len(entries) != 0 {
		t.Errorf("temporary files left: %v", entries)
	}
}

// A backup never overwrites a file, and a failed one leaves nothing.
func TestBackupRefusesToOverwrite(t *testing.T) {
	dir := t.TempDir()
	s := openMigrated(t, filepath.Join(dir, "bot.db"), false)
	ctx := context.Background()
	out := filepath.Join(dir, "yesterday.db")
	if err := os.WriteFile(out, []byte("yesterday's backup"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Backup(ctx, out); !errors.Is(err, sqlite.ErrBackupExists) {
		t.Fatalf("Backup onto an existing file: %v, want ErrBackupExists", err)
	}
	if b, _ := os.ReadFile(out); string(b) != "yesterday's backup" {
		t.Errorf("the existing file was changed: %q", b)
	}
	missing := filepath.Join(dir, "no-such-dir", "b.db")
	if _, err := s.Backup(ctx, missing); err == nil {
		t.Fatal("Backup into a missing directory succeeded")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.Contains(e.Name(), "partial") {
			t.Errorf("a failed backup left %s", e.Name())
		}
	}
}
