// Package postgres is store.Store on PostgreSQL through pgx/v5, for many
// replicas. It runs the SQL shared with the SQLite driver
// (store/internal/query), adding what SQLite's single writer makes
// unnecessary: row and advisory locks, and notifications. Why these locks,
// and READ COMMITTED: docs/design.md#postgresql-concurrency.
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
	// when Options.PersonConns is zero.
	DefaultPersonConns = 2
	// defaultConnectTimeout bounds a connection attempt when the DSN sets
	// none, so a silent server fails calls instead of hanging them.
	defaultConnectTimeout = 10 * time.Second
	// applicationName names the store's sessions when the DSN does not.
	applicationName = "approvalsbot"
	// cleanupTimeout bounds a rollback or unlock that runs after the
	// caller's context may have ended.
	cleanupTimeout = 5 * time.Second
)

// TCP keepalive, so a connection whose peer vanished fails within about
// half a minute instead of the operating system's hours.
const (
	keepAliveIdle     = 15 * time.Second
	keepAliveInterval = 5 * time.Second
	keepAliveCount    = 3
)

// Row-locking clauses for the shared SQL, where SQLite passes "".
const (
	forUpdate  = " FOR UPDATE"
	skipLocked = " FOR UPDATE SKIP LOCKED"
	forShare   = " FOR SHARE"
	// skipLockedOutbox locks a claim's outbox rows, not the pace rows its
	// filter reads: those are locked later, waiting, in key order.
	skipLockedOutbox = " FOR UPDATE OF outbox SKIP LOCKED"
)

// Advisory lock classes: the first key of the two-key form, apart from
// the one-key form's space; the second is lockKey of the name.
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
	// DSN is a pgx connection string, URL or key=value, and may hold a
	// password, never printed. Session settings (search_path,
	// connect_timeout, application_name, plan_cache_mode) go in it too.
	DSN string
	// MaxConns bounds the pool (over the DSN's pool_max_conns); 0 means
	// DefaultMaxConns. Listen holds one more of its own.
	MaxConns int32
	// PersonConns bounds a second pool kept open for store.ForPerson
	// contexts; 0 means DefaultPersonConns.
	PersonConns int32
	// Logger receives the store's own events; nil discards them.
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

// Open creates the pool and checks that the database answers
// (store.ErrUnavailable if not). It does not migrate.
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
		// A generic plan made while the tables were nearly empty would
		// scan whole indexes until the statistics change
		// (docs/design.md#pools-batches-and-plans).
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
	// People's clicks get a pool of their own, kept open, so a storm of
	// background work cannot queue a click past its RecordBound.
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

// conn is the main pool, or a connection kept for people.
type conn interface {
	querier
	BeginTx(ctx context.Context, o pgx.TxOptions) (pgx.Tx, error)
}

// on is where ctx's statements run, and what to call when done: a kept
// connection for a person's path when one is free without waiting, else
// the main pool. The kept ones are a reserve, not a cage.
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

// Ping checks the main pool, and the people's pool when one of it is free.
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

// InTx runs fn in one READ COMMITTED transaction (store.Store.InTx),
// serialised with an approval's other writers by ApprovalGetForUpdate.
// fn should use only tx: the Store's own methods do not see its writes.
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
			// On error and on panic; a failed rollback commits nothing:
			// the pool destroys a connection left in a transaction.
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

// tx is store.Tx over one pgx transaction. Writes whose result is not
// read are queued and sent in one round trip with the next read or the
// commit (docs/design.md#pools-batches-and-plans).
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

// sendWith sends the queued writes and stmts' statements in one batch and
// returns it at stmts' first result, for the caller to read and Close.
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

// Savepoint runs fn inside a savepoint (store.Tx.Savepoint). SAVEPOINT
// and RELEASE are queued, costing no round trip of their own; ROLLBACK TO
// costs one only when something was sent.
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

// querier is what *pgxpool.Pool and pgx.Tx share.
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

// fail wraps err with op, translating the failures that mean the database
// cannot serve now into store.ErrUnavailable. A lost connection resets the
// pools, whose idle connections an outage most likely broke too.
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

// classify says whether err means the database cannot serve now, and
// whether its connection is lost.
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
