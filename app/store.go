package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"approvalsbot/adapters/discord"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
)

// OpenStore opens and migrates the configured store. A SQLite store is
// held by this process alone, so the claims left in it are a dead
// process's and are released: its work resumes now.
func OpenStore(ctx context.Context, c config.Store, log *slog.Logger) (store.Store, error) {
	switch c.Driver {
	case "", config.DriverSQLite:
		st, err := sqlite.Open(ctx, sqlite.Options{Path: SQLiteFile(c.DSN.Reveal()), Logger: log, Exclusive: true})
		if err != nil {
			return nil, fmt.Errorf("open the SQLite store: %w", err)
		}
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, fmt.Errorf("migrate the SQLite store: %w", err)
		}
		n, err := st.ReleaseClaims(ctx)
		if err != nil {
			st.Close()
			return nil, err
		}
		if n > 0 {
			log.Info("resumed work a stopped process had claimed", "claims", n)
		}
		return st, nil
	case config.DriverPostgres:
		st, err := postgres.Open(ctx, postgres.Options{DSN: c.DSN.Reveal(), Logger: log})
		if err != nil {
			return nil, fmt.Errorf("open the PostgreSQL store: %w", err)
		}
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, fmt.Errorf("migrate the PostgreSQL store: %w", err)
		}
		return st, nil
	}
	return nil, fmt.Errorf("store driver %q: want sqlite or postgres", c.Driver)
}

// SQLiteFile takes the file out of a `file:PATH?…` DSN; the store sets
// its own pragmas (busy timeout, WAL, synchronous, foreign keys, immediate
// transactions), so a DSN cannot leave one out. An empty path is bot.db.
func SQLiteFile(dsn string) string {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return "bot.db"
	}
	return p
}

// gatewayLocker lets one replica hold Discord's gateway: a PostgreSQL
// advisory lock; none for the one process of a SQLite store.
func gatewayLocker(st store.Store) discord.GatewayLocker {
	pg, ok := st.(*postgres.Store)
	if !ok {
		return nil
	}
	return pgLocker{pg}
}

type pgLocker struct{ st *postgres.Store }

func (l pgLocker) Acquire(ctx context.Context) (<-chan struct{}, func(), error) {
	return l.st.Singleton(ctx, "discord-gateway")
}
