package postgres_test

import (
	"context"
	"errors"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"approvalsbot/internal/tcpproxytest"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
)

// startProxy stands a loopback proxy between a store and the test
// server's TCP address, so a test can make the server unreachable (refuse
// connections) or unresponsive (accept and never answer) and then bring
// it back at the same address. It skips the test when the server is
// reached another way.
func startProxy(t *testing.T) *tcpproxytest.Proxy {
	t.Helper()
	cfg, err := pgx.ParseConfig(baseURL(t))
	if err != nil {
		t.Fatalf("%s does not parse", envURL)
	}
	if cfg.Host == "" || cfg.Host[0] == '/' {
		t.Skipf("the proxy tests need %s to reach the server over TCP", envURL)
	}
	return tcpproxytest.Start(t, net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))))
}

// proxyDSN is db's DSN through the proxy.
func proxyDSN(t *testing.T, p *tcpproxytest.Proxy, db testDB, connectTimeout int) string {
	host, port := p.HostPort()
	return withParams(t, db.dsn, map[string]string{"host": host, "port": port, "connect_timeout": strconv.Itoa(connectTimeout)})
}

// callBound is how long a call may take to report an outage.
const callBound = 5 * time.Second

// wantUnavailable runs every kind of call and wants each to fail with
// store.ErrUnavailable within callBound, though its context has no
// deadline.
func wantUnavailable(t *testing.T, s *postgres.Store, step string) {
	t.Helper()
	for _, c := range unavailableCalls(at(0)) {
		start := time.Now()
		err := c.call(t.Context(), s)
		if took := time.Since(start); took > callBound {
			t.Errorf("%s: %s took %v", step, c.name, took)
		}
		if !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s: %s = %v, want ErrUnavailable", step, c.name, err)
		}
	}
}

// wantServes writes and reads through s and wants every call to succeed.
func wantServes(t *testing.T, s *postgres.Store, id string) {
	t.Helper()
	ctx := t.Context()
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if _, err := tx.ApprovalGetForUpdate(ctx, id); !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if err := tx.ApprovalUpsert(ctx, pendingApproval(id, at(0))); err != nil {
			return err
		}
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("o-"+id, "", at(0))})
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	if _, err := s.ApprovalGet(ctx, id); err != nil {
		t.Fatalf("ApprovalGet: %v", err)
	}
}

func TestOutageAndRecovery(t *testing.T) {
	t.Parallel()
	db := newSchema(t)
	p := startProxy(t)
	s := openMigrated(t, proxyDSN(t, p, db, 2))
	run := listening(t, s)
	waitWake(t, run.wakes, "listening")
	wantServes(t, s, "before")

	// The server becomes unreachable: new connections are refused, and
	// every session of the pool is ended from another connection; the
	// listener's is ended too.
	p.Refuse()
	if n := terminate(t, db.schema); n == 0 {
		t.Fatal("no session of the store to terminate")
	}
	terminate(t, db.schema+" listen")
	wantUnavailable(t, s, "unreachable")
	wantUnavailable(t, s, "still unreachable")
	select {
	case <-run.wakes: // from before the outage
	default:
	}
	noWake(t, run.wakes, "unreachable")

	// Back: the very next call succeeds, with nothing done to the store,
	// and the listener, retrying with backoff meanwhile, listens again.
	p.Listen(t)
	wantServes(t, s, "after")
	waitWake(t, run.wakes, "listening again")
}

func TestTerminatedSessionsRecover(t *testing.T) {
	t.Parallel()
	// The server ends the pool's sessions (a restart, a failover, an
	// operator) and stays up: the call that meets a dead session may fail
	// with ErrUnavailable, the next one succeeds.
	db := newSchema(t)
	s := openMigrated(t, db.dsn)
	wantServes(t, s, "before")
	if n := terminate(t, db.schema); n == 0 {
		t.Fatal("no session of the store to terminate")
	}
	if err := s.Ping(t.Context()); err != nil && !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("Ping after termination: %v, want nil or ErrUnavailable", err)
	}
	wantServes(t, s, "after")

	// Ended in the middle of a transaction: the transaction fails as
	// unavailable, commits nothing, and the next one succeeds.
	err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
		if err := tx.ApprovalUpsert(ctx, pendingApproval("mid", at(0))); err != nil {
			return err
		}
		terminate(t, db.schema)
		return tx.ApprovalUpsert(ctx, pendingApproval("mid-2", at(0)))
	})
	if !errors.Is(err, store.ErrUnavailable) {
		t.Fatalf("InTx whose session ended: %v, want ErrUnavailable", err)
	}
	if _, err := s.ApprovalGet(t.Context(), "mid"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ApprovalGet of the unfinished transaction's row: %v, want ErrNotFound", err)
	}
	wantServes(t, s, "after mid-transaction")
}

func TestUnresponsiveServerFailsWithinConnectTimeout(t *testing.T) {
	t.Parallel()
	// The server's address accepts connections but nothing answers (a
	// hung host, a half-open network): calls whose context has no
	// deadline still fail, after the DSN's connect_timeout, rather than
	// hang.
	db := newSchema(t)
	p := startProxy(t)
	s := openMigrated(t, proxyDSN(t, p, db, 1))
	p.Blackhole(true)
	terminate(t, db.schema)
	p.Cut()
	for _, name := range []string{"Ping", "ApprovalGet"} {
		start := time.Now()
		var err error
		if name == "Ping" {
			err = s.Ping(t.Context())
		} else {
			_, err = s.ApprovalGet(t.Context(), "a1")
		}
		took := time.Since(start)
		if !errors.Is(err, store.ErrUnavailable) || took > callBound {
			t.Errorf("%s against an unresponsive server: %v after %v, want ErrUnavailable within %v", name, err, took, callBound)
		}
	}
	p.Blackhole(false)
	p.Cut()
	wantServes(t, s, "answering again")
}
