// Package postgres is the store for many replicas: store.Store on
// PostgreSQL through pgx/v5 and a bounded pgxpool. It runs the SQL text it
// shares with the SQLite driver (store/internal/query) and the shared
// migrations, adding only what PostgreSQL needs and SQLite's single writer
// makes unnecessary: locks (row and advisory) and notifications.
//
// Every writer of an approval reads it first with ApprovalGetForUpdate,
// which waits for the approval's lock, so there is one writer per approval
// at a time; claims lock with FOR UPDATE SKIP LOCKED and lease what they
// take. Every time is the caller's, in Unix milliseconds. Failures that
// mean the database cannot serve now are store.ErrUnavailable. Committed
// outbox rows wake workers through NOTIFY bot_outbox (Listen). Why these
// locks, and why READ COMMITTED: docs/design.md#postgresql-concurrency.
package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"approvalsbot/store"
)

var _ store.Store = (*Store)(nil)

const (
	// DefaultMaxConns bounds the pool when Options.MaxConns is zero.
	DefaultMaxConns = 8
	// DefaultPersonConns bounds the connections kept for people's clicks
	// (store.ForPerson) when Options.PersonConns is zero.
	DefaultPersonConns = 2
	// defaultConnectTimeout bounds a connection attempt when the DSN sets
	// no connect_timeout, so a server that does not answer makes calls
	// fail instead of hanging.
	defaultConnectTimeout = 10 * time.Second
	// applicationName names the store's sessions in pg_stat_activity
	// when the DSN does not; the listener's session adds listenSuffix.
	applicationName = "approvalsbot"
	// cleanupTimeout bounds a rollback or unlock that runs after the
	// caller's context may have ended.
	cleanupTimeout = 5 * time.Second
)

// TCP keepalive on every connection, so one whose peer vanished without
// a word (a dropped network, a failed-over host) fails within about
// keepAliveIdle + keepAliveCount×keepAliveInterval instead of the
// operating system's default of hours.
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 3
)

// Row-locking clauses appended to the shared SQL (store/internal/query),
// where SQLite passes "".
const (
	forUpdate  = " FOR UPDATE"
	skipLocked = " FOR UPDATE SKIP LOCKED"
	forShare   = " FOR SHARE"
	// skipLockedOutbox locks only the outbox rows of a claim's selection,
	// not the pace rows its filter reads: those are locked FOR UPDATE,
	// waiting, in key order, once the keys are known.
	skipLockedOutbox = " FOR UPDATE OF outbox SKIP LOCKED"
)

// Advisory lock classes: the first key of the two-key form
// pg_advisory_lock(int4, int4), whose space is apart from the one-key
// (bigint) form other parts of the bot may use. The second key is lockKey
// of the name locked.
const (
	lockClassApproval int32 = 0x61707072 // "appr": one approval's writers (transaction scope)
	lockClassMigrate  int32 = 0x6d696772 // "migr": one schema's migrators (session scope)
)

// lockKey hashes a name to the second key of a two-key advisory lock. Two
// names with the same hash only wait for each other needlessly.
func lockKey(name string) int32 {
	h := fnv.New32a()
	h.Write([]byte(name))
	return int32(h.Sum32())
}

// Options configures Open.
type Options struct {
	// DSN is a pgx connection string, URL (postgres://…) or key=value.
	// It may hold a password: the store never prints it. Settings of the
	// session go in it too: search_path (the schema), connect_timeout in
	// seconds (default 10), application_name (default approvalsbot),
	// plan_cache_mode (default force_custom_plan: see Open).
	DSN string
	// MaxConns bounds the pool's connections; 0 means DefaultMaxConns.
	// It takes precedence over a pool_max_conns in the DSN. Listen holds
	// one more connection of its own.
	MaxConns int32
	// PersonConns bounds a second pool, kept open for a person's own
	// path (store.ForPerson: a click's check, record and answer), which
	// background work cannot take, and which a click takes only when one
	// of it is free (on); 0 means DefaultPersonConns.
	PersonConns int32
	// Logger receives the store's own events (migrations applied, the
	// listener's reconnections); nil discards them.
	Logger *slog.Logger
}

// Store is a store.Store on one PostgreSQL database (the schema its
// search_path names). It is safe for concurrent use.
type Store struct {
	pool      *pgxpool.Pool
	people    *pgxpool.Pool   // for store.ForPerson contexts alone (on)
	reserve   chan struct{}   // a token per connection kept for people
	listenCfg *pgx.ConnConfig // Listen's own connections
	log       *slog.Logger
	closed    atomic.Bool

	mu        sync.Mutex
	listeners map[int]context.CancelFunc // Listen calls to stop at Close
	nextID    int
}

// Open creates the pool and checks that the database answers. It does not
// migrate: call Migrate before use (`bot migrate`, or at start). A
// database that cannot be reached is store.ErrUnavailable.
func Open(ctx context.Context, o Options) (*Store, error) {
	if o.DSN == "" {
		return nil, errors.New("open postgres store: no DSN")
	}
	if o.MaxConns < 0 || o.PersonConns < 0 {
		return nil, fmt.Errorf("open postgres store: MaxConns %d or PersonConns %d is negative", o.MaxConns, o.PersonConns)
	}
	cfg, err := pgxpool.ParseConfig(o.DSN)
	if err != nil {
		// pgx's message quotes the DSN, masking passwords only as far as
		// it can tell where they are in a malformed one.
		return nil, errors.New("open postgres store: the DSN does not parse (its text is left out here: it may hold a password)")
	}
	cfg.MaxConns = o.MaxConns
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.MinConns > cfg.MaxConns {
		cfg.MinConns = cfg.MaxConns
	}
	cc := cfg.ConnConfig
	if cc.ConnectTimeout == 0 {
		cc.ConnectTimeout = defaultConnectTimeout
	}
	if cc.RuntimeParams["application_name"] == "" {
		cc.RuntimeParams["application_name"] = applicationName
	}
	if cc.RuntimeParams["plan_cache_mode"] == "" {
		// pgx prepares each statement once per session, and after five
		// runs PostgreSQL may keep a generic plan made from the
		// statistics of that moment. One made while the tables were
		// nearly empty (a fresh deploy) scans a whole index where a
		// claim or a coalescing check should touch a few rows, and stays
		// until the statistics change. A custom plan per run costs tens
		// of microseconds and always sees the parameters and the tables'
		// current size, so the partial indexes keep every claim O(due).
		cc.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	}
	dialer := &net.Dialer{KeepAliveConfig: net.KeepAliveConfig{
		Enable: true, Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveCount,
	}}
	cc.DialFunc = dialer.DialContext

	listenCfg := cc.Copy()
	listenCfg.RuntimeParams["application_name"] += listenSuffix

	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	// People's clicks get a pool of their own: the outbox's workers and
	// the ticks share the main one, and under a storm they can hold every
	// connection of it, with a click queued behind them past its
	// RecordBound. Its connections are kept open, so a click dials none.
	pcfg := cfg.Copy()
	pcfg.MaxConns = cmp.Or(o.PersonConns, DefaultPersonConns)
	pcfg.MinConns = pcfg.MaxConns
	people, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("open postgres store: %w", err)
	}
	s := &Store{pool: pool, people: people, reserve: make(chan struct{}, pcfg.MaxConns), listenCfg: listenCfg, log: log,
		listeners: map[int]context.CancelFunc{}}
	if err := pool.Ping(ctx); err != nil {
		err = s.fail(ctx, "open postgres store", err)
		pool.Close()
		people.Close()
		return nil, err
	}
	if err := people.Ping(ctx); err != nil {
		// Clicks then wait for the main pool like anything else.
		log.Warn("the connections kept for people's clicks cannot be opened; clicks share the pool", "err", err.Error())
	}
	return s, nil
}

// conn is what a store method runs its statements on: the main pool, or
// a connection kept for people.
type conn interface {
	querier
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// on is where ctx's statements run, and what to call when they are done:
// a connection kept for people for a person's own path (store.ForPerson),
// the main pool for everything else. The kept ones are a reserve, not a
// cage: a person takes one only when one is free (a token of reserve,
// taken without waiting), and otherwise, or when it cannot be had, waits
// for the main pool like any other caller.
func (s *Store) on(ctx context.Context) (conn, func()) {
	if store.IsPerson(ctx) {
		select {
		case s.reserve <- struct{}{}:
			c, err := s.people.Acquire(ctx)
			if err == nil {
				return c, func() { c.Release(); <-s.reserve }
			}
			<-s.reserve
		default:
		}
	}
	return s.pool, func() {}
}

// Close stops every Listen, waits for connections in use to come back and
// closes the pool; later calls return store.ErrUnavailable.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return nil
	}
	s.mu.Lock()
	for _, stop := range s.listeners {
		stop()
	}
	s.mu.Unlock()
	s.pool.Close()
	s.people.Close()
	return nil
}

// Ping checks that the database answers, on a connection of the main
// pool, and on one kept for people's clicks when one is free (busy with
// clicks, they answer).
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return s.fail(ctx, "ping postgres store", err)
	}
	select {
	case s.reserve <- struct{}{}:
		defer func() { <-s.reserve }()
		if err := s.people.Ping(ctx); err != nil {
			return s.fail(ctx, "ping postgres store (the connections kept for people's clicks)", err)
		}
	default:
	}
	return nil
}

// InTx runs fn in one READ COMMITTED transaction. It serialises with other
// writers of an approval through ApprovalGetForUpdate, which every writer
// calls before it changes the approval (see the package comment for why
// that, and not a stricter isolation level, is what makes one writer at a
// time). fn's error is returned as it is, after rollback. A panic in fn
// rolls back and continues to panic.
//
// fn should use only tx: the Store's own methods take other connections
// and do not see fn's writes.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	c, release := s.on(ctx)
	defer release() // after the rollback deferred below
	pgTx, err := c.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return s.fail(ctx, "begin transaction", err)
	}
	done := false
	defer func() {
		if !done {
			// Runs on error and on panic, also when ctx has ended. A
			// failed rollback leaves nothing committed either: the pool
			// destroys a connection left in a transaction.
			rollback(ctx, pgTx)
		}
	}()
	t := &tx{s: s, q: pgTx}
	if err := fn(ctx, t); err != nil {
		return err
	}
	// The writes fn queued go in one round trip, then COMMIT.
	if err := t.flush(ctx); err != nil {
		return err
	}
	done = true
	if err := pgTx.Commit(ctx); err != nil {
		// A connection lost during COMMIT leaves the outcome unknown;
		// the caller's retry must be idempotent (ingest is, by event id).
		return fmt.Errorf("%w: %w", store.ErrCommit, s.fail(ctx, "commit transaction", err))
	}
	return nil
}

// rollback ends a transaction that must not commit, with a context of its
// own: the caller's may be why it is ending.
func rollback(ctx context.Context, t pgx.Tx) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	_ = t.Rollback(ctx)
}

// tx is store.Tx over one pgx transaction. Writes whose result the caller
// does not read (approval upsert, revision insert, outbox rows) are queued
// and sent together, in one round trip, before the next read or at
// commit: an ingest then costs five round trips, not seven. A queued
// write's error surfaces at that point and rolls the transaction back.
type tx struct {
	s      *Store
	q      pgx.Tx
	queued []queuedWrite
}

type queuedWrite struct {
	op string // what was being done, for the error
	// savepoint marks the write that sets a savepoint (Savepoint): while
	// it is still queued, nothing of the savepoint reached the server.
	savepoint bool
	sql       string
	args      []any
	after     func(pgconn.CommandTag) // optional
}

func (t *tx) queue(w queuedWrite) { t.queued = append(t.queued, w) }

// sendWith sends the queued writes and then the statements stmts adds,
// in one batch (one round trip), reads the queued writes' results, and
// returns the batch positioned at stmts' first result, for the caller to
// read and Close. A queued write's error closes the batch and is
// returned.
func (t *tx) sendWith(ctx context.Context, stmts func(b *pgx.Batch)) (pgx.BatchResults, error) {
	queued := t.queued
	t.queued = nil
	b := &pgx.Batch{}
	for _, w := range queued {
		b.Queue(w.sql, w.args...)
	}
	stmts(b)
	br := t.q.SendBatch(ctx, b)
	for _, w := range queued {
		tag, err := br.Exec()
		if err != nil {
			br.Close()
			return nil, t.s.fail(ctx, w.op, err)
		}
		if w.after != nil {
			w.after(tag)
		}
	}
	return br, nil
}

// flush sends the queued writes in one batch.
func (t *tx) flush(ctx context.Context) error {
	if len(t.queued) == 0 {
		return nil
	}
	br, err := t.sendWith(ctx, func(*pgx.Batch) {})
	if err != nil {
		return err
	}
	if err := br.Close(); err != nil {
		return t.s.fail(ctx, "send queued writes", err)
	}
	return nil
}

// Savepoint runs fn inside a savepoint of the transaction
// (store.Tx.Savepoint). Setting and releasing it cost no round trip of
// their own: SAVEPOINT goes with fn's first statement, RELEASE with the
// next caller's, and fn's queued writes are sent before the savepoint
// ends, so their errors are fn's. An fn that fails before anything was
// sent costs no round trip at all; otherwise ROLLBACK TO goes in one.
func (t *tx) Savepoint(ctx context.Context, fn func(ctx context.Context) error) error {
	const name = "one_of_group"
	mark := len(t.queued) // the writes before it are the transaction's
	t.queue(queuedWrite{op: "set a savepoint", sql: "SAVEPOINT " + name, savepoint: true})
	err := fn(ctx)
	if err == nil {
		err = t.flush(ctx)
	}
	if err == nil {
		t.queue(queuedWrite{op: "release a savepoint", sql: "RELEASE SAVEPOINT " + name})
		return nil
	}
	if len(t.queued) > mark && t.queued[mark].savepoint {
		// Nothing since the savepoint reached the server.
		t.queued = t.queued[:mark]
		return err
	}
	// ROLLBACK TO also fails when the savepoint was never set: a write
	// queued before it failed, and the transaction is broken.
	t.queued = []queuedWrite{
		{op: "undo a savepoint", sql: "ROLLBACK TO SAVEPOINT " + name},
		{op: "release an undone savepoint", sql: "RELEASE SAVEPOINT " + name},
	}
	if ferr := t.flush(ctx); ferr != nil {
		return fmt.Errorf("%w: %w", store.ErrTxBroken, ferr)
	}
	return err
}

// querier is what *pgxpool.Pool and pgx.Tx share, so each query is written
// once for use inside and outside a transaction.
type querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

var (
	_ querier = (*pgxpool.Pool)(nil)
	_ querier = (pgx.Tx)(nil)
)

// errClosed is the cause of store.ErrUnavailable once Close has run.
var errClosed = errors.New("store closed")

// fail wraps err with what was being done, translating the failures that
// mean the database cannot be used now into store.ErrUnavailable. It is
// the one place driver errors meet the store's sentinels. When the
// failure says a connection was lost, the pool's idle connections, which
// an outage or a server restart has most likely broken too, are dropped
// so the next call dials afresh.
func (s *Store) fail(ctx context.Context, op string, err error) error {
	if errors.Is(err, store.ErrUnavailable) {
		return fmt.Errorf("%s: %w", op, err)
	}
	if s.closed.Load() {
		return fmt.Errorf("%s: %w: %w: %w", op, store.ErrUnavailable, errClosed, err)
	}
	if ctx.Err() != nil {
		// The caller gave up; the database may be fine.
		return fmt.Errorf("%s: %w", op, err)
	}
	unavailable, lost := classify(err)
	if lost {
		s.pool.Reset()
		s.people.Reset()
	}
	if unavailable {
		return fmt.Errorf("%s: %w: %w", op, store.ErrUnavailable, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// classify says whether err means the database cannot serve now (rather
// than that the request was wrong) and whether the connection it came on
// is lost.
func classify(err error) (unavailable, lost bool) {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		code, class := pgErr.Code, ""
		if len(code) == 5 {
			class = code[:2]
		}
		switch {
		case code == "57P01", // admin_shutdown: terminated, or the server stops
			code == "57P02", // crash_shutdown
			code == "57P03", // cannot_connect_now: starting up or shutting down
			class == "08":   // connection exception
			return true, true
		case class == "53", // insufficient resources: disk, memory, connections
			class == "58",   // system error: I/O
			code == "25006": // read_only_sql_transaction: a standby after failover
			return true, false
		}
		return false, false
	}
	var connectErr *pgconn.ConnectError
	switch {
	case errors.As(err, &connectErr),
		errors.Is(err, pgconn.ErrConnClosed),
		errors.Is(err, io.EOF),
		errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNREFUSED),
		errors.Is(err, syscall.EPIPE),
		pgconn.Timeout(err): // a network deadline, not the caller's (fail checks ctx first)
		return true, true
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return true, true
	}
	return false, false
}

// notFound wraps store.ErrNotFound with what was looked for.
func notFound(op string) error {
	return fmt.Errorf("%s: %w", op, store.ErrNotFound)
}
