package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"approvalsbot/store"
)

// A file another process holds locked: the check waits for the lock only
// as long as its caller gives it (ending with the caller's deadline, not
// SQLite's busy timeout of 10 s), and succeeds once the lock is gone.
func TestWriteCheckGivesUpOnALockedFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bot.db")
	s := openAt(t, path)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := s.WriteCheck(t.Context(), now); err != nil {
		t.Fatalf("WriteCheck: %v", err)
	}
	holder, err := openRaw(t, path).Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(t.Context(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping beside the lock: %v (a read does not wait)", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err = s.WriteCheck(ctx, now.Add(time.Second))
	cancel()
	if err == nil {
		t.Fatal("WriteCheck while another connection holds the write lock: nil error")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("WriteCheck while locked: %v, want it ended by its deadline (not the busy timeout)", err)
	}
	if _, err := holder.ExecContext(t.Context(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteCheck(t.Context(), now.Add(2*time.Second)); err != nil {
		t.Fatalf("WriteCheck once the lock is gone: %v", err)
	}
}

// However often it runs, the check keeps one row and the file its size.
func TestWriteCheckDoesNotGrowTheDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bot.db")
	s := openAt(t, path)
	raw := openRaw(t, path)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := s.WriteCheck(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	pages := func() (n int) {
		t.Helper()
		if err := raw.QueryRowContext(t.Context(), `PRAGMA page_count`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := pages()
	for i := range 200 {
		if err := s.WriteCheck(t.Context(), now.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatalf("WriteCheck %d: %v", i, err)
		}
	}
	if after := pages(); after != before {
		t.Errorf("the database grew from %d to %d pages over 200 checks", before, after)
	}
	var rows int
	var checked int64
	if err := raw.QueryRowContext(t.Context(), `SELECT COUNT(*), MAX(checked_at) FROM write_check`).Scan(&rows, &checked); err != nil {
		t.Fatal(err)
	}
	if want := now.Add(199 * time.Second).UnixMilli(); rows != 1 || checked != want {
		t.Errorf("write_check holds %d rows, last checked %d; want 1 row checked %d", rows, checked, want)
	}
}

// A disk with no room: here the file size limit stands in for it, so
// that neither the database nor its WAL may grow. The check's commit
// must reach the file, so it fails, as an ingest's would, while a query
// still answers; with room again it succeeds. Not parallel: the limit is
// the whole process's.
func TestWriteCheckFailsWhenTheFileCannotGrow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bot.db")
	s := openAt(t, path)
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := s.WriteCheck(t.Context(), now); err != nil {
		t.Fatal(err)
	}
	var largest int64
	for _, p := range []string{path, path + "-wal"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		largest = max(largest, fi.Size())
	}
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	if old.Cur <= uint64(largest) {
		t.Skipf("the file size limit (%d) is already below the store's files", old.Cur)
	}
	full := old
	full.Cur = uint64(largest)
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &full); err != nil {
		t.Skipf("cannot lower the file size limit: %v", err)
	}
	restored := false
	restore := func() {
		if !restored {
			restored = true
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
				t.Fatalf("restore the file size limit: %v", err)
			}
		}
	}
	defer restore()

	err := s.WriteCheck(t.Context(), now.Add(time.Second))
	pingErr := s.Ping(t.Context())
	restore()
	if !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("WriteCheck with no room for the file to grow: %v, want ErrUnavailable", err)
	}
	if pingErr != nil {
		t.Errorf("Ping with no room: %v (a query needs none)", pingErr)
	}
	if err := s.WriteCheck(t.Context(), now.Add(2*time.Second)); err != nil {
		t.Fatalf("WriteCheck with room again: %v", err)
	}
}
