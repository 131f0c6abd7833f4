package postgres

import (
	"context"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"approvalsbot/store"
)

// Migrate applies the migrations the schema lacks (store.Migrate) under a
// session advisory lock on the schema, so replicas migrate it once.
func (s *Store) Migrate(ctx context.Context) error {
	if err := store.Migrate(ctx, &migrator{s: s}, store.MigrateOptions{Logger: s.log}); err != nil {
		return s.fail(ctx, "migrate postgres store", err)
	}
	return nil
}

// migrator runs every migration transaction on the session holding the
// lock, so the two never wait for each other in a small pool.
type migrator struct {
	s    *Store
	conn *pgxpool.Conn // holding the lock, while the runner's fn runs
}

// The migration lock is keyed by current_schema(), so stores of
// different schemas do not wait for each other.
const (
	migrationSchema = `SELECT COALESCE(current_schema(), '')`
	migrationLock   = `SELECT pg_advisory_lock($1, $2)`
	migrationUnlock = `SELECT pg_advisory_unlock($1, $2)`
)

func (m *migrator) MigrationLock(ctx context.Context, fn func(ctx context.Context) error) error {
	conn, err := m.s.pool.Acquire(ctx)
	if err != nil {
		return m.s.fail(ctx, "take migration lock", err)
	}
	var schema string
	if err := conn.QueryRow(ctx, migrationSchema).Scan(&schema); err != nil {
		conn.Release()
		return m.s.fail(ctx, "take migration lock", err)
	}
	key := lockKey(schema)
	if _, err := conn.Exec(ctx, migrationLock, lockClassMigrate, key); err != nil {
		// The pool destroys a connection whose wait was cut short.
		conn.Release()
		return m.s.fail(ctx, "take migration lock on schema "+schema, err)
	}
	m.conn = conn
	err = fn(ctx)
	m.conn = nil

	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	if _, uerr := conn.Exec(uctx, migrationUnlock, lockClassMigrate, key); uerr != nil {
		// Returned to the pool, the session would keep the lock; ended,
		// it releases it.
		m.s.log.LogAttrs(ctx, slog.LevelWarn, "release migration lock; closing its session instead",
			slog.String("schema", schema), slog.String("err", uerr.Error()))
		_ = conn.Hijack().Close(uctx)
		return err
	}
	conn.Release()
	return err
}

func (m *migrator) MigrationTx(ctx context.Context, fn func(ctx context.Context, tx store.MigrationTx) error) error {
	var (
		pgTx pgx.Tx
		err  error
	)
	if m.conn != nil {
		pgTx, err = m.conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	} else {
		pgTx, err = m.s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	}
	if err != nil {
		return m.s.fail(ctx, "begin migration", err)
	}
	done := false
	defer func() {
		if !done {
			rollback(ctx, pgTx)
		}
	}()
	if err := fn(ctx, migrationTx{pgTx}); err != nil {
		return err
	}
	done = true
	if err := pgTx.Commit(ctx); err != nil {
		return m.s.fail(ctx, "commit migration", err)
	}
	return nil
}

// migrationTx runs the runner's statements. Exec without args goes by the
// simple protocol, which runs a migration file's several statements.
type migrationTx struct{ q pgx.Tx }

func (t migrationTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.q.Exec(ctx, query, args...)
	return err
}

func (t migrationTx) QueryInt64(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := t.q.QueryRow(ctx, query, args...).Scan(&n)
	return n, err
}
