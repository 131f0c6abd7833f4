// Package sqlite is store.Store on one SQLite file through
// modernc.org/sqlite (pure Go), for a single instance of the bot, running
// the SQL it shares with the PostgreSQL driver (store/internal/query).
//
// Every transaction begins IMMEDIATE, so one that reads then writes never
// fails with BUSY_SNAPSHOT; readers never wait (WAL). The single writer is
// why claims need no row locks (docs/design.md#one-writer-on-sqlite).
package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"approvalsbot/store"
)

var _ store.Store = (*Store)(nil)

// maxOpenConns bounds the pool: writers serialise anyway, so more
// connections only add readers beside a writer.
const maxOpenConns = 4

// Options configures Open.
type Options struct {
	// Path is the database file; it is created when missing (its
	// directory must exist).
	Path string
	// Logger receives the store's own events; nil discards them.
	Logger *slog.Logger
	// Exclusive holds a lock file for the store's life, so one process
	// serves from the file, and allows ReleaseClaims.
	Exclusive bool
}

// DSN is the data source name of the database file at path with the
// settings the store relies on; anything that opens the file raw should
// use it too. synchronous(FULL): in WAL mode NORMAL may undo the last
// commits on a power cut, after a 202 or an acknowledged click.
// temp_store(MEMORY): a savepoint's journal (one per event in an ingest
// group) stays in memory, where past 64 KiB it went to a temporary file
// opened, written and closed in every group's transaction, under the
// write lock; it only ever undoes work not yet committed, so durability
// is the WAL's as before.
func DSN(path string) string {
	return "file:" + uriPath.Replace(path) +
		"?_pragma=busy_timeout(10000)" +
		"&_pragma=journal_mode(WAL)" +
		"&_pragma=synchronous(FULL)" +
		"&_pragma=foreign_keys(1)" +
		"&_pragma=temp_store(MEMORY)" +
		"&_txlock=immediate"
}

// uriPath escapes what would end or alter the path in a file: URI.
var uriPath = strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23")

// Store is a store.Store on one SQLite database. It is safe for
// concurrent use.
type Store struct {
	db     *sql.DB
	log    *slog.Logger
	closed atomic.Bool
	lock   *os.File // held for the store's life when opened Exclusive
	stmts  *stmts
	// writer admits one writer at a time, waking the next at once where
	// SQLite's busy handler would sleep up to 100 ms a try.
	writer chan struct{}
}

// write waits for the writer slot; the returned func gives it back.
func (s *Store) write(ctx context.Context) (func(), error) {
	select {
	case s.writer <- struct{}{}:
		return func() { <-s.writer }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("wait to write: %w", ctx.Err())
	}
}

// Open opens (creating if needed) the database at o.Path and checks that
// it answers. It does not migrate: call Migrate before use.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.Path == "" {
		return nil, errors.New("open sqlite store: no path")
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var lock *os.File
	if o.Exclusive {
		var err error
		if lock, err = lockFile(lockPath(o.Path)); err != nil {
			return nil, err
		}
	}
	if err := private(o.Path); err != nil {
		unlock(lock)
		return nil, err
	}
	db, err := sql.Open("sqlite", DSN(o.Path))
	if err != nil {
		unlock(lock)
		return nil, fmt.Errorf("open sqlite store: %w", err)
	}
	db.SetMaxOpenConns(maxOpenConns)
	// Keep every connection: a new one re-runs the DSN's pragmas.
	db.SetMaxIdleConns(maxOpenConns)
	s := &Store{db: db, log: log, lock: lock, stmts: &stmts{db: db}, writer: make(chan struct{}, 1)}
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		unlock(lock)
		return nil, s.fail("open sqlite store", err)
	}
	return s, nil
}

// privateMode (owner only) is the mode of the store's files, which hold
// request bodies, decisions and chat handles.
const privateMode os.FileMode = 0o600

// sidecars are the files SQLite keeps beside the database, each created
// with the database file's mode whatever the umask.
var sidecars = []string{"-wal", "-shm", "-journal"}

// private creates the database with privateMode when missing (SQLite
// would use 0644 less the umask) and refuses one, or a sidecar, that
// others may read or write: whoever can write it can forge a decision.
func private(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, privateMode)
	if err != nil {
		return fmt.Errorf("open sqlite store: create %s: %w", path, err)
	}
	f.Close()
	var open, modes []string
	for _, p := range append([]string{path}, sidecarPaths(path)...) {
		fi, err := os.Stat(p)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open sqlite store: %w", err)
		}
		if fi.Mode().Perm()&0o077 != 0 {
			open = append(open, p)
			modes = append(modes, fmt.Sprintf("%s is %s", p, fi.Mode().Perm()))
		}
	}
	if len(open) > 0 {
		return fmt.Errorf("open sqlite store: %w: %s; only its owner may read or write it "+
			"(it holds approvals' arguments, decisions and chat handles): run chmod 600 %s",
			ErrFileMode, strings.Join(modes, ", "), strings.Join(shellQuote(open), " "))
	}
	return nil
}

func sidecarPaths(path string) []string {
	ps := make([]string, len(sidecars))
	for i, s := range sidecars {
		ps[i] = path + s
	}
	return ps
}

// shellQuote quotes each path a shell would split or expand.
func shellQuote(ps []string) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		if strings.ContainsFunc(p, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@", r))
		}) {
			p = "'" + strings.ReplaceAll(p, "'", `'\''`) + "'"
		}
		out[i] = p
	}
	return out
}

// ErrFileMode: a file of the store is open to its group or others.
var ErrFileMode = errors.New("the store's files are open to other users")

// lockPath names the lock beside path's target: symlinks share one lock.
func lockPath(path string) string {
	return realPath(path, 0) + ".lock"
}

// realPath is path with its symbolic links followed to the file SQLite
// opens, or creates when a link names a file that does not exist yet.
func realPath(path string, depth int) string {
	if real, err := filepath.EvalSymlinks(path); err == nil {
		return real
	}
	// The file does not exist (yet). A link to it is followed by hand,
	// as the kernel follows it when SQLite creates the file.
	if target, err := os.Readlink(path); err == nil && depth < 40 {
		if !filepath.IsAbs(target) {
			// Relative to the link's directory as the kernel finds it:
			// its own links followed before any "..".
			dir := filepath.Dir(path)
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			target = filepath.Join(dir, target)
		}
		return realPath(target, depth+1)
	}
	// No link: the directory's links still count.
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(dir, filepath.Base(path))
	}
	return path
}

// lockFile takes an exclusive flock, so a second bot on the same file
// fails at start instead of racing this one.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, privateMode)
	if err != nil {
		return nil, fmt.Errorf("open store lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: another bot process holds the store %s (SQLite serves one process; run several replicas on PostgreSQL)", ErrLocked, strings.TrimSuffix(path, ".lock"))
	}
	return f, nil
}

func unlock(f *os.File) {
	if f != nil {
		f.Close() // closing the descriptor releases the flock
	}
}

// ErrLocked: the store is held by another process.
var ErrLocked = errors.New("store locked")

// ReleaseClaims frees every outbox and approval claim. Only an Exclusive
// store may: its lock proves the claims left are a crashed process's, so
// their work resumes at once instead of after the lease.
func (s *Store) ReleaseClaims(ctx context.Context) (int64, error) {
	if s.lock == nil {
		return 0, errors.New("release claims: the store was not opened Exclusive")
	}
	done, err := s.write(ctx)
	if err != nil {
		return 0, s.fail("release claims", err)
	}
	defer done()
	var n int64
	for _, q := range []string{
		`UPDATE outbox SET claimed_by = '', claimed_until = 0 WHERE state = 'pending' AND claimed_by <> ''`,
		`UPDATE approvals SET claimed_by = '', claimed_until = 0 WHERE claimed_by <> ''`,
	} {
		res, err := s.db.ExecContext(ctx, q)
		if err != nil {
			return n, s.fail("release claims", err)
		}
		c, _ := res.RowsAffected()
		n += c
	}
	return n, nil
}

// Close closes the database; later calls return store.ErrUnavailable.
func (s *Store) Close() error {
	s.closed.Store(true)
	s.stmts.close()
	err := s.db.Close() // a preparation still waiting for a connection fails now
	s.stmts.wg.Wait()
	unlock(s.lock)
	if err != nil {
		return fmt.Errorf("close sqlite store: %w", err)
	}
	return nil
}

// Ping checks that the database answers a query.
func (s *Store) Ping(ctx context.Context) error {
	var one int
	if err := s.db.QueryRowContext(ctx, `SELECT 1`).Scan(&one); err != nil {
		return s.fail("ping sqlite store", err)
	}
	return nil
}

// InTx runs fn in one IMMEDIATE transaction, serialised with every other
// writer (store.Store.InTx). fn should use only tx: the Store's own
// methods take another connection, and a writing one waits for the lock fn
// holds until the busy timeout fails it.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	release, err := s.write(ctx)
	if err != nil {
		return s.fail("begin transaction", err)
	}
	defer release()
	sqlTx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin transaction", err)
	}
	done := false
	defer func() {
		if !done {
			// On error and on panic; a failed rollback commits
			// nothing either.
			_ = sqlTx.Rollback()
		}
	}()
	if err := fn(ctx, &tx{s: s, q: preparedTx{tx: sqlTx, c: s.stmts}}); err != nil {
		return err
	}
	done = true
	if err := sqlTx.Commit(); err != nil {
		return fmt.Errorf("%w: %w", store.ErrCommit, s.fail("commit transaction", err))
	}
	return nil
}

// OneWriter: SQLite runs one writing transaction at a time.
func (s *Store) OneWriter() bool { return true }

var _ store.OneWriter = (*Store)(nil)

// Alone: opened Exclusive, the store is this process's alone.
func (s *Store) Alone() bool { return s.lock != nil }

var _ store.Alone = (*Store)(nil)

// tx is store.Tx over one database/sql transaction.
type tx struct {
	s *Store
	q querier
}

// querier is what *sql.DB and *sql.Tx share.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

var (
	_ querier = (*sql.DB)(nil)
	_ querier = (*sql.Tx)(nil)
)

// fail wraps err with op, translating the failures that mean the database
// cannot serve now into store.ErrUnavailable: the one place for that.
func (s *Store) fail(op string, err error) error {
	if !errors.Is(err, store.ErrUnavailable) && s.unavailable(err) {
		return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// unavailable reports whether err says the database cannot serve now
// rather than that the request was wrong.
func (s *Store) unavailable(err error) bool {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		// The caller gave up; the database may be fine.
		return false
	}
	// database/sql does not export its "database is closed" error.
	if s.closed.Load() || errors.Is(err, sql.ErrConnDone) || errors.Is(err, driver.ErrBadConn) {
		return true
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return false
	}
	switch se.Code() & 0xff { // the primary code of an extended one
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_IOERR,
		sqlite3.SQLITE_FULL, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_NOMEM,
		sqlite3.SQLITE_READONLY, sqlite3.SQLITE_PROTOCOL, sqlite3.SQLITE_CORRUPT,
		sqlite3.SQLITE_NOTADB:
		return true
	}
	return false
}

// notFound wraps store.ErrNotFound with what was looked for.
func notFound(op string) error {
	return fmt.Errorf("%s: %w", op, store.ErrNotFound)
}

// Savepoint runs fn inside a savepoint (store.Tx.Savepoint). A failure
// that rolled back the whole transaction (SQLite does on a full disk or an
// I/O error) leaves none to roll back to: store.ErrTxBroken.
func (t *tx) Savepoint(ctx context.Context, fn func(ctx context.Context) error) error {
	broken := func(op string, err error) error {
		return fmt.Errorf("%w: %w", store.ErrTxBroken, t.s.fail(op, err))
	}
	if _, err := t.q.ExecContext(ctx, `SAVEPOINT one_of_group`); err != nil {
		return broken("set a savepoint", err)
	}
	if err := fn(ctx); err != nil {
		if _, rerr := t.q.ExecContext(ctx, `ROLLBACK TO one_of_group`); rerr != nil {
			return broken("undo a savepoint", rerr)
		}
		if _, rerr := t.q.ExecContext(ctx, `RELEASE one_of_group`); rerr != nil {
			return broken("release an undone savepoint", rerr)
		}
		return err
	}
	if _, err := t.q.ExecContext(ctx, `RELEASE one_of_group`); err != nil {
		return broken("release a savepoint", err)
	}
	return nil
}
