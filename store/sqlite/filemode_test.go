package sqlite_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/sqlite"
)

// withUmask runs fn under umask m. The umask is the process's, so this
// test must not run in parallel with others (none of the tests that call
// it use t.Parallel, and parallel tests wait until they have finished).
func withUmask(t *testing.T, m int, fn func()) {
	t.Helper()
	old := syscall.Umask(m)
	defer syscall.Umask(old)
	fn()
}

func modeOf(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("stat %s: %v", path, err)
	}
	return fi.Mode().Perm()
}

// Under the common umask 022 a file SQLite creates is -rw-r--r--. The
// store creates the database 0600 before SQLite opens it, and SQLite gives
// its -wal and -shm the database file's mode.
func TestFilesPrivateUnderUmask022(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "bot.db")
	withUmask(t, 0o022, func() {
		// The umask is in force: a plain create is world-readable.
		control := filepath.Join(dir, "control")
		if err := os.WriteFile(control, nil, 0o666); err != nil {
			t.Fatal(err)
		}
		if got := modeOf(t, control); got != 0o644 {
			t.Fatalf("control file is %v under umask 022, want -rw-r--r--", got)
		}

		s, err := sqlite.Open(t.Context(), sqlite.Options{Path: path, Exclusive: true})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		if err := s.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate: %v", err)
		}
		// A write, so the -wal holds a frame.
		err = s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
			_, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e1", Tenant: "t1", Type: "approval.requested",
				BodySHA256: "x", ApprovalID: "a1", ReceivedAt: time.UnixMilli(1)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{path, path + "-wal", path + "-shm", path + ".lock"} {
			if got := modeOf(t, p); got != 0o600 {
				t.Errorf("%s is %v, want -rw-------", filepath.Base(p), got)
			}
		}
	})
}

// A database, or its -wal or -shm, that others may read is refused at
// open, naming the file, its mode and the command that mends it; after
// the chmod it opens.
func TestOpenRefusesFilesOthersMayRead(t *testing.T) {
	for _, file := range []string{"", "-wal", "-shm"} {
		t.Run("bot.db"+file, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "bot.db")
			s, err := sqlite.Open(t.Context(), sqlite.Options{Path: path})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Migrate(t.Context()); err != nil {
				t.Fatal(err)
			}
			// Keep the store open so the -wal and -shm exist.
			defer s.Close()
			open := path + file
			if err := os.Chmod(open, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err = sqlite.Open(t.Context(), sqlite.Options{Path: path})
			if !errors.Is(err, sqlite.ErrFileMode) {
				t.Fatalf("Open = %v, want ErrFileMode", err)
			}
			for _, want := range []string{open + " is -rw-r--r--", "chmod 600 " + open} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if err := os.Chmod(open, 0o600); err != nil {
				t.Fatal(err)
			}
			again, err := sqlite.Open(t.Context(), sqlite.Options{Path: path})
			if err != nil {
				t.Fatalf("Open after chmod: %v", err)
			}
			again.Close()
		})
	}
}

// Write access for others is refused too (they could forge an approval's
// state); the owner's execute bit alone is harmless.
func TestOpenRefusesFilesOthersMayWrite(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bot.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o620); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(t.Context(), sqlite.Options{Path: path}); !errors.Is(err, sqlite.ErrFileMode) {
		t.Fatalf("group-writable: Open = %v, want ErrFileMode", err)
	}
	if err := os.Chmod(path, 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), sqlite.Options{Path: path})
	if err != nil {
		t.Fatalf("-rwx------: %v", err)
	}
	s.Close()
}
