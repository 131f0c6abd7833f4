package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"

	"approvalsbot/store"
)

// TestFailTranslatesDriverErrors feeds the translation real driver errors.
// SQLITE_BUSY comes from a connection without a busy timeout meeting a
// held write lock: the store's own connections would wait 10 s for it.
func TestFailTranslatesDriverErrors(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	s, err := Open(ctx, Options{Path: path})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}

	_, syntaxErr := s.db.ExecContext(ctx, `SELEKT 1`)
	_, constraintErr := s.db.ExecContext(ctx, `INSERT INTO outbox (id) VALUES ('x')`) // NOT NULL columns missing

	holder, err := s.db.BeginTx(ctx, nil) // IMMEDIATE: holds the write lock
	if err != nil {
		t.Fatalf("begin holder: %v", err)
	}
	defer holder.Rollback()
	impatient, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatalf("open impatient: %v", err)
	}
	defer impatient.Close()
	_, busyErr := impatient.BeginTx(ctx, nil)
	if busyErr == nil {
		t.Fatal("a second writer began while the lock was held")
	}

	for _, c := range []struct {
		name        string
		err         error
		unavailable bool
	}{
		{"busy", busyErr, true},
		{"syntax", syntaxErr, false},
		{"constraint", constraintErr, false},
		{"cancelled", context.Canceled, false},
		{"conn done", sql.ErrConnDone, true},
	} {
		got := s.fail("do something", c.err)
		if errors.Is(got, store.ErrUnavailable) != c.unavailable {
			t.Errorf("%s (%v): translated to %v; unavailable = %v, want %v",
				c.name, c.err, got, !c.unavailable, c.unavailable)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: translated error %v does not wrap the cause", c.name, got)
		}
	}
}
