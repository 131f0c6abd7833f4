package sqlite

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// vacuumInto writes the database as one read transaction sees it into a
// new file, with no -wal of its own; nobody waits for it (WAL).
const vacuumInto = `VACUUM INTO ?`

// ErrBackupExists: the file a backup was to be written to exists already.
var ErrBackupExists = errors.New("the backup file exists already")

// BackupResult says what Backup wrote.
type BackupResult struct {
	// Path is the copy, as given.
	Path string
	// Bytes is the copy's size.
	Bytes int64
}

// Backup writes a copy of the database as of one commit to path while
// the store stays in use. The copy is private and never overwrites
// (ErrBackupExists); it appears under path only once whole and synced
// (docs/design.md#one-writer-on-sqlite). path's directory must exist.
func (s *Store) Backup(ctx context.Context, path string) (BackupResult, error) {
	if path == "" {
		return BackupResult{}, errors.New("back up sqlite store: no path for the copy")
	}
	if _, err := os.Lstat(path); err == nil {
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w: %s (a backup never overwrites a file)", ErrBackupExists, path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".partial-*")
	if err != nil {
		return BackupResult{}, fmt.Errorf("back up sqlite store: create the copy beside %s: %w", path, err)
	}
	tmpPath := tmp.Name()
	committed := false
	defer func() {
		if !committed {
			os.Remove(tmpPath)
			for _, sc := range sidecars {
				os.Remove(tmpPath + sc) // a journal SQLite left beside it
			}
		}
	}()
	// CreateTemp makes the file 0600 whatever the umask; SQLite writes
	// into it as it is (VACUUM INTO takes an empty file), so it stays so.
	if err := tmp.Chmod(privateMode); err != nil {
		tmp.Close()
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	abs, err := filepath.Abs(tmpPath)
	if err != nil {
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	// An absolute path: SQLite reads it as a file name, never as a URI.
	if _, err := s.db.ExecContext(ctx, vacuumInto, abs); err != nil {
		return BackupResult{}, s.fail("back up sqlite store", err)
	}
	size, err := syncFile(tmpPath)
	if err != nil {
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	// A link, not a rename: it fails when path appeared meanwhile,
	// instead of replacing it.
	if err := os.Link(tmpPath, path); err != nil {
		if errors.Is(err, os.ErrExist) {
			return BackupResult{}, fmt.Errorf("back up sqlite store: %w: %s (a backup never overwrites a file)", ErrBackupExists, path)
		}
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	committed = true
	os.Remove(tmpPath)
	if err := syncDir(dir); err != nil {
		return BackupResult{}, fmt.Errorf("back up sqlite store: %w", err)
	}
	return BackupResult{Path: path, Bytes: size}, nil
}

// syncFile flushes a file to disk and returns its size.
func syncFile(path string) (int64, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return 0, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return 0, fmt.Errorf("sync %s: %w", path, err)
	}
	return fi.Size(), nil
}

// syncDir flushes a directory's entries, so the copy's name survives a
// power cut as its bytes do.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}
