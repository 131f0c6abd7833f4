package store

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"path"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// migrationFiles holds the numbered schema changes, NNNN_name.sql, each one
// DDL text that runs unchanged on SQLite and PostgreSQL.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationName is a migration's file name; the number is its version.
var migrationName = regexp.MustCompile(`^([0-9]{4})_[a-z0-9_]+\.sql$`)

// The runner's own table, the same DDL on both databases.
const (
	migrationsCreate = `CREATE TABLE IF NOT EXISTS schema_migrations (
    version    BIGINT NOT NULL PRIMARY KEY,
    applied_at BIGINT NOT NULL
)`
	migrationsCount  = `SELECT COUNT(*) FROM schema_migrations WHERE version = $1`
	migrationsInsert = `INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)`
	migrationsMax    = `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`
)

// Migration is one numbered schema change.
type Migration struct {
	Version int    // the file name's number; migrations apply in this order
	Name    string // the file name, e.g. 0001_init.sql
	SQL     string // one or more statements
}

// Migrations returns the embedded migrations in version order. It fails
// when a file is misnamed or two share a version, so a bad file stops the
// build's tests rather than a deploy.
func Migrations() ([]Migration, error) {
	entries, err := fs.ReadDir(migrationFiles, "migrations")
	if err != nil {
		return nil, fmt.Errorf("read embedded migrations: %w", err)
	}
	var ms []Migration
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		if m == nil {
			return nil, fmt.Errorf("migration %s: name is not NNNN_name.sql", e.Name())
		}
		v, err := strconv.Atoi(m[1])
		if err != nil || v == 0 {
			return nil, fmt.Errorf("migration %s: version must be a positive number", e.Name())
		}
		body, err := fs.ReadFile(migrationFiles, path.Join("migrations", e.Name()))
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", e.Name(), err)
		}
		ms = append(ms, Migration{Version: v, Name: e.Name(), SQL: string(body)})
	}
	slices.SortFunc(ms, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(ms); i++ {
		if ms[i].Version == ms[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", ms[i-1].Name, ms[i].Name, ms[i].Version)
		}
	}
	return ms, nil
}

// Migrator is what a driver lends the migration runner: a lock and
// transactions, nothing else, so one runner serves SQLite and PostgreSQL.
type Migrator interface {
	// MigrationLock runs fn holding the lock that keeps other processes
	// from migrating at once. A database whose write transactions exclude
	// each other may just call fn: the runner re-checks each version inside
	// the transaction that applies it.
	MigrationLock(ctx context.Context, fn func(ctx context.Context) error) error
	// MigrationTx runs fn in one write transaction, committed on nil.
	MigrationTx(ctx context.Context, fn func(ctx context.Context, tx MigrationTx) error) error
}

// MigrationTx is the part of a transaction the runner uses.
type MigrationTx interface {
	// Exec runs one statement with args, or a script without.
	Exec(ctx context.Context, query string, args ...any) error
	// QueryInt64 runs a query returning one row of one integer column.
	QueryInt64(ctx context.Context, query string, args ...any) (int64, error)
}

// MigrateOptions configures Migrate.
type MigrateOptions struct {
	Logger *slog.Logger // nil: discard
	// Now stamps schema_migrations.applied_at; nil means time.Now.
	Now func() time.Time
}

// Migrate applies every embedded migration the database lacks, each with
// its schema_migrations row in one transaction, so a crash leaves each
// migration either applied and recorded or neither. Running it again, or
// from several processes at once, applies nothing twice.
func Migrate(ctx context.Context, db Migrator, o MigrateOptions) error {
	ms, err := Migrations()
	if err != nil {
		return err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	now := o.Now
	if now == nil {
		now = time.Now
	}
	return db.MigrationLock(ctx, func(ctx context.Context) error {
		err := db.MigrationTx(ctx, func(ctx context.Context, tx MigrationTx) error {
			return tx.Exec(ctx, migrationsCreate)
		})
		if err != nil {
			return fmt.Errorf("create schema_migrations: %w", err)
		}
		for _, m := range ms {
			applied := false
			err := db.MigrationTx(ctx, func(ctx context.Context, tx MigrationTx) error {
				n, err := tx.QueryInt64(ctx, migrationsCount, m.Version)
				if err != nil {
					return fmt.Errorf("read schema_migrations: %w", err)
				}
				if n > 0 {
					return nil
				}
				if err := tx.Exec(ctx, m.SQL); err != nil {
					return err
				}
				if err := tx.Exec(ctx, migrationsInsert, m.Version, now().UnixMilli()); err != nil {
					return fmt.Errorf("record version: %w", err)
				}
				applied = true
				return nil
			})
			if err != nil {
				return fmt.Errorf("apply migration %s: %w", m.Name, err)
			}
			if applied {
				log.LogAttrs(ctx, slog.LevelInfo, "store migration applied",
					slog.Int("version", m.Version), slog.String("name", m.Name))
			}
		}
		// A database migrated by a newer binary: during a rolling deploy
		// the old binary keeps running against it (a migration must leave
		// the previous release working), so this warns and goes on.
		var newest int64
		err = db.MigrationTx(ctx, func(ctx context.Context, tx MigrationTx) error {
			newest, err = tx.QueryInt64(ctx, migrationsMax)
			return err
		})
		if err != nil {
			return fmt.Errorf("read schema version: %w", err)
		}
		if len(ms) > 0 && newest > int64(ms[len(ms)-1].Version) {
			log.LogAttrs(ctx, slog.LevelWarn, "store schema is newer than this binary",
				slog.Int64("database_version", newest), slog.Int("binary_version", ms[len(ms)-1].Version))
		}
		return nil
	})
}
