package sqlite

import (
	"context"
	"database/sql"

	"approvalsbot/store"
)

// Migrate applies the migrations the database lacks (store.Migrate).
func (s *Store) Migrate(ctx context.Context) error {
	if err := store.Migrate(ctx, migrator{s}, store.MigrateOptions{Logger: s.log}); err != nil {
		return s.fail("migrate sqlite store", err)
	}
	return nil
}

// migrator needs no lock of its own: each IMMEDIATE transaction excludes
// other migrators while the runner re-checks and applies a version.
type migrator struct{ s *Store }

func (m migrator) MigrationLock(ctx context.Context, fn func(ctx context.Context) error) error {
	return fn(ctx)
}

func (m migrator) MigrationTx(ctx context.Context, fn func(ctx context.Context, tx store.MigrationTx) error) error {
	sqlTx, err := m.s.db.BeginTx(ctx, nil)
	if err != nil {
		return m.s.fail("begin migration", err)
	}
	done := false
	defer func() {
		if !done {
			_ = sqlTx.Rollback()
		}
	}()
	if err := fn(ctx, migrationTx{sqlTx}); err != nil {
		return err
	}
	done = true
	if err := sqlTx.Commit(); err != nil {
		return m.s.fail("commit migration", err)
	}
	return nil
}

type migrationTx struct{ q *sql.Tx }

func (t migrationTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.q.ExecContext(ctx, query, args...)
	return err
}

func (t migrationTx) QueryInt64(ctx context.Context, query string, args ...any) (int64, error) {
	var n int64
	err := t.q.QueryRowContext(ctx, query, args...).Scan(&n)
	return n, err
}
