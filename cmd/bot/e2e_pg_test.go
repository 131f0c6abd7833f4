package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"approvalsbot/internal/tcpproxytest"
)

// PostgreSQL for the end-to-end tests: a fresh database per test, which
// every replica of the test shares, and a loopback TCP proxy that can take
// the server away from a bot and give it back at the same address.

// pgEnvURL names the server the PostgreSQL tests use; without it they skip.
const pgEnvURL = "BOT_TEST_POSTGRES_URL"

// pgBaseURL is the test server's DSN, or skips the test saying what to set.
func pgBaseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(pgEnvURL)
	if u == "" {
		t.Skipf("end-to-end tests on PostgreSQL need %s, e.g. %s=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
			pgEnvURL, pgEnvURL)
	}
	return u
}

// pgDatabase is one test's own database.
type pgDatabase struct {
	name string
	dsn  string // reaches the database directly
}

// newPGDatabase creates a database of the test's own, dropped (with any
// session still in it) when the test ends, after the bots registered
// later have been killed.
func newPGDatabase(t *testing.T) pgDatabase {
	t.Helper()
	base := pgBaseURL(t)
	var b [6]byte
	rand.Read(b[:])
	name := "bot_e2e_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connect to %s: %v", pgEnvURL, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("create database %s: %v", name, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop database %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Errorf("drop database %s: %v", name, err)
		}
	})
	return pgDatabase{name: name, dsn: pgDSN(t, base, name, nil)}
}

// pgDSN is base pointed at database name, with connection parameters set.
func pgDSN(t testing.TB, base, name string, params map[string]string) string {
	t.Helper()
	if strings.HasPrefix(base, "postgres://") || strings.HasPrefix(base, "postgresql://") {
		u, err := url.Parse(base)
		if err != nil {
			t.Fatalf("%s does not parse as a URL", pgEnvURL)
		}
		u.Path = "/" + name
		q := u.Query()
		for k, v := range params {
			if k == "host" || k == "port" {
				continue
			}
			q.Set(k, v)
		}
		if params["host"] != "" {
			u.Host = net.JoinHostPort(params["host"], params["port"])
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	quote := strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace
	dsn := base + " dbname='" + quote(name) + "'" // key=value: a later key wins
	for k, v := range params {
		dsn += " " + k + "='" + quote(v) + "'"
	}
	return dsn
}

// pgPool is a small pool on dsn for the test's own queries, closed when
// the test ends.
func pgPool(t *testing.T, dsn string) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn)
	if err != nil {
		t.Fatalf("connect to the test database: %v", err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// pgTerminate ends every session whose application_name is app, from a
// connection of its own, and says how many it ended.
func pgTerminate(t *testing.T, app string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, pgBaseURL(t))
	if err != nil {
		t.Fatalf("connect to terminate sessions: %v", err)
	}
	defer conn.Close(ctx)
	var n int
	err = conn.QueryRow(ctx,
		`SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) AS ended`,
		app).Scan(&n)
	if err != nil {
		t.Fatalf("terminate sessions of %s: %v", app, err)
	}
	return n
}

// startPGProxy stands a loopback proxy between a bot and the test
// server's TCP address, so a test can make the server unreachable (refuse
// connections, cut the ones open) and bring it back at the same address.
// It skips the test when the server is reached another way.
func startPGProxy(t *testing.T) *tcpproxytest.Proxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(pgBaseURL(t))
	if err != nil {
		t.Fatalf("%s does not parse", pgEnvURL)
	}
	if cfg.Host == "" || cfg.Host[0] == '/' {
		t.Skipf("the outage test needs %s to reach the server over TCP", pgEnvURL)
	}
	return tcpproxytest.Start(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
}
