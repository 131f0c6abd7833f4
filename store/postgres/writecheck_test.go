package postgres_test

import (
	"errors"
	"testing"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/postgres"
)

// A database that answers queries but takes no writes, as a standby
// after a failover does (here a session that is read-only by default
// stands in): Ping passes, WriteCheck says the store is unavailable.
func TestWriteCheckOnAReadOnlyDatabase(t *testing.T) {
	t.Parallel()
	db := newSchema(t)
	openMigrated(t, db.dsn)
	ro := open(t, postgres.Options{DSN: withParams(t, db.dsn, map[string]string{"default_transaction_read_only": "on"})})
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	if err := ro.Ping(t.Context()); err != nil {
		t.Fatalf("Ping on a read-only session: %v", err)
	}
	if err := ro.WriteCheck(t.Context(), now); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("WriteCheck on a read-only session: %v, want ErrUnavailable", err)
	}
}

// However often replicas run it, the check keeps one row.
func TestWriteCheckKeepsOneRow(t *testing.T) {
	t.Parallel()
	db := newSchema(t)
	a, b := openMigrated(t, db.dsn), open(t, postgres.Options{DSN: db.dsn})
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := range 50 {
		for _, s := range []*postgres.Store{a, b} {
			if err := s.WriteCheck(t.Context(), now.Add(time.Duration(i)*time.Second)); err != nil {
				t.Fatalf("WriteCheck %d: %v", i, err)
			}
		}
	}
	var rows int
	if err := rawConn(t, db.rawDSN).QueryRow(t.Context(), `SELECT COUNT(*) FROM write_check`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("write_check holds %d rows, want 1", rows)
	}
}
