package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// TestClassify feeds the translation errors as pgx returns them. The
// connection error is a real one: nothing listens on port 1.
func TestClassify(t *testing.T) {
	t.Parallel()
	_, connectErr := pgx.Connect(t.Context(), "postgres://bot@127.0.0.1:1/db?sslmode=disable&connect_timeout=2")
	if connectErr == nil {
		t.Fatal("connected to port 1")
	}
	pg := func(code string) error { return fmt.Errorf("exec: %w", &pgconn.PgError{Severity: "ERROR", Code: code}) }
	for _, c := range []struct {
		name              string
		err               error
		unavailable, lost bool
	}{
		{"connect refused", connectErr, true, true},
		{"terminated (57P01)", pg("57P01"), true, true},
		{"crash shutdown (57P02)", pg("57P02"), true, true},
		{"starting up (57P03)", pg("57P03"), true, true},
		{"connection failure (08006)", pg("08006"), true, true},
		{"too many connections (53300)", pg("53300"), true, false},
		{"disk full (53100)", pg("53100"), true, false},
		{"io error (58030)", pg("58030"), true, false},
		{"read-only standby (25006)", pg("25006"), true, false},
		{"unique violation (23505)", pg("23505"), false, false},
		{"syntax (42601)", pg("42601"), false, false},
		{"deadlock (40P01)", pg("40P01"), false, false},
		{"no rows", pgx.ErrNoRows, false, false},
		{"closed conn", fmt.Errorf("query: %w", pgconn.ErrConnClosed), true, true},
		{"eof", fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true, true},
		{"reset", &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}, true, true},
		{"scan", errors.New("can't scan into dest[0]"), false, false},
		{"cancelled", context.Canceled, false, false},
	} {
		unavailable, lost := classify(c.err)
		if unavailable != c.unavailable || lost != c.lost {
			t.Errorf("%s (%v): unavailable %v, lost %v; want %v, %v", c.name, c.err, unavailable, lost, c.unavailable, c.lost)
		}
	}
}

func TestLockKeyIsStable(t *testing.T) {
	t.Parallel()
	// Replicas of different builds must take the same lock for one name:
	// the key is FNV-1a, never a per-process hash.
	for name, want := range map[string]int32{"": -2128831035, "a1": 472168615, "public": -862940288} {
		if got := lockKey(name); got != want {
			t.Errorf("lockKey(%q) = %d, want %d", name, got, want)
		}
	}
}
