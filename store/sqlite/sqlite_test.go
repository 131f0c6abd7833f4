package sqlite_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
	"approvalsbot/store/sqlite"
	"approvalsbot/store/storetest"
)

// inList is the store's query.List for SQLite (the ids as a JSON array).
func inList(column string, n int) string {
	return fmt.Sprintf("%s IN (SELECT value FROM json_each($%d))", column, n)
}

// openAt opens and migrates the database at path, closed when the test
// ends.
func openAt(t testing.TB, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), sqlite.Options{Path: path})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// openTemp opens a fresh database on disk.
func openTemp(t testing.TB) *sqlite.Store {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "bot.db"))
}

// openRaw opens the file with database/sql and the store's DSN, for
// looking under the store. It creates the file 0600 first, as the store
// does (which refuses one that others may read).
func openRaw(t testing.TB, path string) *sql.DB {
	t.Helper()
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		t.Fatalf("open raw: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openTemp(t) })
}

type appliedMigration struct {
	Version   int64
	AppliedAt int64
}

func appliedMigrations(t *testing.T, path string) []appliedMigration {
	t.Helper()
	rows, err := openRaw(t, path).QueryContext(t.Context(), `SELECT version, applied_at FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	defer rows.Close()
	var got []appliedMigration
	for rows.Next() {
		var m appliedMigration
		if err := rows.Scan(&m.Version, &m.AppliedAt); err != nil {
			t.Fatalf("scan schema_migrations: %v", err)
		}
		got = append(got, m)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	return got
}

func TestMigrateAppliesOnceAndIsIdempotent(t *testing.T) {
	t.Parallel()
	ms, err := store.Migrations()
	if err != nil {
		t.Fatalf("Migrations: %v", err)
	}
	if len(ms) == 0 {
		t.Fatal("no embedded migrations")
	}
	path := filepath.Join(t.TempDir(), "bot.db")

	s := openAt(t, path)
	if err := s.Migrate(t.Context()); err != nil { // again, same process
		t.Fatalf("second Migrate: %v", err)
	}
	first := appliedMigrations(t, path)
	if len(first) != len(ms) {
		t.Fatalf("schema_migrations has %d rows, want %d (one per migration)", len(first), len(ms))
	}
	for i, m := range ms {
		if first[i].Version != int64(m.Version) {
			t.Errorf("row %d is version %d, want %d", i, first[i].Version, m.Version)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	// Reopen, as a restart does: nothing is applied again.
	openAt(t, path)
	if diff := cmp.Diff(first, appliedMigrations(t, path)); diff != "" {
		t.Errorf("schema_migrations changed on reopen (-before +after):\n%s", diff)
	}
}

func TestMigrateConcurrentProcesses(t *testing.T) {
	t.Parallel()
	// Several stores on one file migrating at once, as two processes
	// starting together would: each version is applied once.
	path := filepath.Join(t.TempDir(), "bot.db")
	var stores []*sqlite.Store
	for range 4 {
		s, err := sqlite.Open(t.Context(), sqlite.Options{Path: path})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { s.Close() })
		stores = append(stores, s)
	}
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			if err := s.Migrate(t.Context()); err != nil {
				t.Errorf("Migrate: %v", err)
			}
		})
	}
	wg.Wait()
	ms, _ := store.Migrations()
	if got := appliedMigrations(t, path); len(got) != len(ms) {
		t.Errorf("schema_migrations has %d rows, want %d", len(got), len(ms))
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "bot.db")
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	a := &store.Approval{
		ID: "a1", Tenant: "t1", Revision: 1, State: "pending", Seen: true, Function: "f",
		Plan: []byte(`{}`), NextStepAt: now.Add(time.Minute), DeadlineAt: now.Add(time.Hour),
		RequestedAt: now, CreatedAt: now, UpdatedAt: now,
	}

	s := openAt(t, path)
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if err := tx.ApprovalUpsert(ctx, a); err != nil {
			return err
		}
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{{
			ID: "o1", Tenant: "t1", ApprovalID: "a1", Kind: "post_card", Target: "slack:C1",
			Payload: []byte(`{}`), NotBefore: now, Now: now,
		}})
	})
	if err != nil {
		t.Fatalf("InTx: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}

	s = openAt(t, path)
	got, err := s.ApprovalGet(ctx, "a1")
	if err != nil {
		t.Fatalf("ApprovalGet after reopen: %v", err)
	}
	if diff := cmp.Diff(a, got); diff != "" {
		t.Errorf("approval after reopen (-want +got):\n%s", diff)
	}
	rows, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Errorf("OutboxClaim after reopen = %d rows, %v; want 1", len(rows), err)
	}
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openTemp(t)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	now := time.Now()
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"Ping", func() error { return s.Ping(ctx) }},
		{"ApprovalGet", func() error { _, err := s.ApprovalGet(ctx, "a1"); return err }},
		{"InTx", func() error {
			return s.InTx(ctx, func(ctx context.Context, tx store.Tx) error { return nil })
		}},
		{"OutboxClaim", func() error {
			_, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 1})
			return err
		}},
		{"OutboxComplete", func() error {
			return s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o1", Worker: "w", Now: now, Post: &store.Post{}})
		}},
		{"OutboxStats", func() error { _, err := s.OutboxStats(ctx, now); return err }},
		{"Migrate", func() error { return s.Migrate(ctx) }},
	} {
		if err := c.call(); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s on a closed store: %v, want ErrUnavailable", c.name, err)
		}
	}
}

func TestConcurrentWritersAllCommit(t *testing.T) {
	t.Parallel()
	// Eight goroutines writing at once through InTx (read, then write):
	// IMMEDIATE transactions and the busy timeout make them wait for each
	// other instead of failing with SQLITE_BUSY.
	const (
		writers = 8
		each    = 25
	)
	ctx := t.Context()
	s := openTemp(t)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				id := fmt.Sprintf("a-%d-%d", w, i)
				err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
					if _, err := tx.ApprovalGetForUpdate(ctx, id); !errors.Is(err, store.ErrNotFound) {
						return fmt.Errorf("read before write: %v", err)
					}
					if _, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "e-" + id, Tenant: "t1", Type: "x", BodySHA256: "d", ApprovalID: id, ReceivedAt: now}); err != nil {
						return err
					}
					return tx.ApprovalUpsert(ctx, &store.Approval{
						ID: id, Tenant: "t1", Revision: 1, State: "pending", Seen: true, Function: "f",
						NextStepAt: now, DeadlineAt: now.Add(time.Hour),
						RequestedAt: now.Add(time.Duration(w*each+i) * time.Millisecond), CreatedAt: now, UpdatedAt: now,
					})
				})
				if err != nil {
					t.Errorf("writer %d, tx %d: %v", w, i, err)
				}
			}
		})
	}
	wg.Wait()
	got, err := s.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: "t1"})
	if err != nil {
		t.Fatalf("ApprovalListPending: %v", err)
	}
	if len(got) != writers*each {
		t.Errorf("%d approvals committed, want %d", len(got), writers*each)
	}
}

func TestDSNEscapesPath(t *testing.T) {
	t.Parallel()
	// Characters that would end or alter the path in a file: URI.
	dir := t.TempDir()
	path := filepath.Join(dir, "odd ?name#with%25.db")
	s := openAt(t, path)
	if err := s.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("database not at the path given: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "odd ?name#with%25.db") {
			t.Errorf("stray file %q beside the database", e.Name())
		}
	}
}

func TestDSNSettings(t *testing.T) {
	t.Parallel()
	// What the store relies on, read back from a connection.
	path := filepath.Join(t.TempDir(), "bot.db")
	db := openRaw(t, path)
	for _, c := range []struct {
		pragma string
		want   string
	}{
		{"busy_timeout", "10000"},
		{"journal_mode", "wal"},
		{"synchronous", "2"}, // FULL: a commit survives a power cut
		{"foreign_keys", "1"},
	} {
		var got string
		if err := db.QueryRowContext(t.Context(), "PRAGMA "+c.pragma).Scan(&got); err != nil {
			t.Fatalf("PRAGMA %s: %v", c.pragma, err)
		}
		if got != c.want {
			t.Errorf("PRAGMA %s = %s, want %s", c.pragma, got, c.want)
		}
	}
}

func TestClaimsUseIndexes(t *testing.T) {
	t.Parallel()
	// A claim must cost O(due): its plan searches the partial indexes and
	// never scans a table.
	path := filepath.Join(t.TempDir(), "bot.db")
	openAt(t, path)
	db := openRaw(t, path)
	for _, c := range []struct {
		name  string
		query string
		args  []any
		want  []string // index names the plan must use
	}{
		{"outbox claim of a lane", query.OutboxClaimable(true, inList, ""), []any{int64(1), 10, "[]", "chat"}, []string{"outbox_pending_lane", "sqlite_autoindex_pace_1"}},
		{"outbox claim of a lane, unpaced", query.OutboxClaimUnpaced(true, inList, ""), []any{int64(1), 10, `["x"]`, "w", int64(2), "chat"}, []string{"outbox_pending_lane"}},
		{"outbox claim of every lane", query.OutboxClaimable(false, inList, ""), []any{int64(1), 10, "[]"}, []string{"outbox_pending_due"}},
		{"outbox claim of every lane, unpaced", query.OutboxClaimUnpaced(false, inList, ""), []any{int64(1), 10, "[]", "w", int64(2)}, []string{"outbox_pending_due"}},
		{"outbox lease of chosen rows", query.OutboxClaimIDs(inList), []any{"w", int64(2), `["a","b"]`}, []string{"sqlite_autoindex_outbox_1"}},
		{"pace read", query.PaceGet(""), []any{"k"}, []string{"sqlite_autoindex_pace_1"}},
		{"coalesced priority", query.OutboxCoalescePriority, []any{"key", 5}, []string{"outbox_pending_coalesce"}},
		{"pace hold", query.PaceHold, []any{"o1", int64(5)}, []string{"sqlite_autoindex_outbox_1"}},
		{"approval claim", query.ApprovalClaimDue(""), []any{int64(1), 10, "w", int64(2)}, []string{"approvals_next_step_due", "approvals_deadline_due"}},
		{"pending list", query.ApprovalListPending, []any{"t1", 10}, []string{"approvals_pending_by_tenant"}},
		{"coalesce insert", query.OutboxInsert, []any{"i", "t", "a", "k", "g", "key", "{}", int64(1), int64(1), "chat", 0, ""}, []string{"outbox_pending_coalesce"}},
		{"stats", query.OutboxStats, nil, []string{"outbox_pending_lane", "outbox_dead"}},
		// Retention: each batch reads its partial index in age order.
		{"outbox prune", query.OutboxPrune(""), []any{int64(1), 500}, []string{"outbox_finished"}},
		{"outbox scrub", query.OutboxScrubbable(""), []any{"tell", int64(0), int64(1), "slack:%", `%"reply":%`, 500}, []string{"outbox_kind_created"}},
		{"deciding scrub", query.ApprovalScrubbable(""), []any{int64(1), `%"reply":%`, 500}, []string{"approvals_deciding"}},
		{"approval prune", query.ApprovalPrunable(""), []any{int64(1), 500}, []string{"approvals_closed", "outbox_pending_approval"}},
		{"revisions of pruned", query.RevisionDeleteOf(inList), []any{`["a"]`}, []string{"sqlite_autoindex_revisions_1"}},
		{"posts of pruned", query.PostDeleteOf(inList), []any{`["a"]`}, []string{"sqlite_autoindex_posts_1"}},
		{"tombstone", query.ApprovalToTombstone(inList), []any{`["a"]`}, []string{"sqlite_autoindex_approvals_1"}},
		{"forget", query.ApprovalForget(""), []any{int64(1), 500}, []string{"approvals_pruned", "events_by_approval"}},
		{"event prune", query.EventPrune(""), []any{int64(1), 500}, []string{"events_received", "sqlite_autoindex_approvals_1"}},
		// The figures of fatigue: a window's outcomes, the repeat look-up
		// and their retention each read one range of their index.
		{"outcomes of a tenant", query.OutcomeListTenant, []any{"t1", int64(1), int64(2), int64(0), "", 500}, []string{"outcomes_tenant_decided"}},
		{"outcomes of every tenant", query.OutcomeListAll, []any{int64(1), int64(2), int64(0), "", 500}, []string{"outcomes_decided"}},
		{"repeat approval", query.OutcomeRepeated, []any{"a1", int64(86400000)}, []string{"sqlite_autoindex_outcomes_1", "outcomes_approved"}},
		{"outcome prune", query.OutcomePrune(""), []any{int64(1), 500}, []string{"outcomes_decided"}},
	} {
		rows, err := db.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+c.query, c.args...)
		if err != nil {
			t.Fatalf("%s: EXPLAIN: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, unused int
			var detail string
			if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
				t.Fatalf("%s: scan plan: %v", c.name, err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		text := strings.Join(plan, "\n")
		t.Logf("%s plan:\n%s", c.name, text)
		for _, line := range plan {
			if strings.HasPrefix(line, "SCAN outbox") || strings.HasPrefix(line, "SCAN approvals") ||
				strings.HasPrefix(line, "SCAN events") || strings.HasPrefix(line, "SCAN revisions") || strings.HasPrefix(line, "SCAN posts") ||
				strings.HasPrefix(line, "SCAN outcomes") {
				if !strings.Contains(line, "USING INDEX") && !strings.Contains(line, "USING COVERING INDEX") {
					t.Errorf("%s scans a table:\n%s", c.name, text)
				}
			}
		}
		for _, idx := range c.want {
			if !strings.Contains(text, idx) {
				t.Errorf("%s does not use %s:\n%s", c.name, idx, text)
			}
		}
	}
}

// An exclusive store keeps a second process (here: a second Open) out,
// releases a crashed process's claims at once, and is the process's
// alone (store.Alone).
func TestExclusiveLockAndReleaseClaims(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bot.db")
	first, err := sqlite.Open(ctx, sqlite.Options{Path: path, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, sqlite.Options{Path: path, Exclusive: true}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("second exclusive open: %v, want sqlite.ErrLocked", err)
	}
	now := time.UnixMilli(1_800_000_000_000).UTC()
	err = first.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{{ID: "o1", Tenant: "acme", ApprovalID: "a1",
			Kind: "post_card", Target: "slack:C1", Payload: []byte(`{}`), Now: now}})
	})
	if err != nil {
		t.Fatal(err)
	}
	rows, err := first.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "dead", Now: now, Lease: time.Hour, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %v %v", rows, err)
	}
	first.Close() // the process "dies" holding the claim
	second, err := sqlite.Open(ctx, sqlite.Options{Path: path, Exclusive: true})
	if err != nil {
		t.Fatalf("reopen after the holder closed: %v", err)
	}
	defer second.Close()
	if rows, _ := second.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "new", Now: now, Lease: time.Hour, Limit: 10}); len(rows) != 0 {
		t.Fatal("claimed a row still leased to a dead process before release")
	}
	if n, err := second.ReleaseClaims(ctx); err != nil || n != 1 {
		t.Fatalf("release: %d %v", n, err)
	}
	rows, err = second.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "new", Now: now, Lease: time.Hour, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim after release: %v %v", rows, err)
	}
	shared, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "b.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	if _, err := shared.ReleaseClaims(ctx); err == nil {
		t.Fatal("a shared store released claims")
	}
	// Only the exclusive store is the process's alone: the deadline
	// waits for clicks other processes may be recording on the other.
	if !second.Alone() || shared.Alone() {
		t.Errorf("Alone: exclusive %v, shared %v; want true, false", second.Alone(), shared.Alone())
	}
}

func TestMigrationFilesRowsUnderLanes(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bot.db")
	db := openRaw(t, path)
	storetest.LanesMigration(t,
		func(t *testing.T, script string) {
			if _, err := db.ExecContext(t.Context(), script); err != nil {
				t.Fatalf("%s: %v", script, err)
			}
		},
		func(t *testing.T) store.Store { return openAt(t, path) })
}

func TestPacedClaimsAcrossStores(t *testing.T) {
	t.Parallel()
	// Two stores on one file (as a bot and a `bot` subcommand would be),
	// four workers each: the key budgets live in the file, not in a store.
	path := filepath.Join(t.TempDir(), "bot.db")
	a, b := openAt(t, path), openAt(t, path)
	storetest.ClaimPacedConcurrently(t, []store.Store{a, b, a, b, a, b, a, b})
}

// Two processes that reach one database through a symbolic link take one
// lock: the second exclusive open is refused, as through the same name.
func TestExclusiveLockFollowsSymbolicLinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "bot.db")
	first, err := sqlite.Open(ctx, sqlite.Options{Path: path, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	link := filepath.Join(t.TempDir(), "linked.db")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, sqlite.Options{Path: link, Exclusive: true}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("an exclusive open through a symbolic link: %v, want sqlite.ErrLocked", err)
	}
	linkedDir := filepath.Join(t.TempDir(), "data")
	if err := os.Symlink(dir, linkedDir); err != nil {
		t.Fatal(err)
	}
	if _, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(linkedDir, "bot.db"), Exclusive: true}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("an exclusive open through a linked directory: %v, want sqlite.ErrLocked", err)
	}
	// A link to a file that does not exist yet: the first open creates it
	// at the link's target, and locks there.
	target := filepath.Join(t.TempDir(), "later.db")
	dangling := filepath.Join(t.TempDir(), "dangling.db")
	if err := os.Symlink(target, dangling); err != nil {
		t.Fatal(err)
	}
	viaLink, err := sqlite.Open(ctx, sqlite.Options{Path: dangling, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer viaLink.Close()
	if _, err := sqlite.Open(ctx, sqlite.Options{Path: target, Exclusive: true}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("an exclusive open of a file first opened through a dangling link: %v, want sqlite.ErrLocked", err)
	}
	// A relative link to a file not yet created, in a directory reached
	// through a link: ".." is taken from where the directory really is.
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "b", "c"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "b", "c"), filepath.Join(root, "linkdir")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../other.db", filepath.Join(root, "b", "c", "bot.db")); err != nil {
		t.Fatal(err)
	}
	relative, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(root, "linkdir", "bot.db"), Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer relative.Close()
	if _, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(root, "b", "other.db"), Exclusive: true}); !errors.Is(err, sqlite.ErrLocked) {
		t.Fatalf("an exclusive open of the file a relative link through a linked directory created: %v, want sqlite.ErrLocked", err)
	}
}
