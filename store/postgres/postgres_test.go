package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"approvalsbot/store"
	"approvalsbot/store/internal/query"
	"approvalsbot/store/postgres"
	"approvalsbot/store/storetest"
)

// envURL names the server the tests use; without it they skip.
const envURL = "BOT_TEST_POSTGRES_URL"

// baseURL is the test server's DSN, or skips the test.
func baseURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(envURL)
	if u == "" {
		t.Skipf("PostgreSQL tests need %s, e.g. %s=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable", envURL, envURL)
	}
	return u
}

// testDB is one test's schema in the test database.
type testDB struct {
	schema string
	// dsn reaches the schema (search_path); its sessions are named after
	// the schema (application_name), so a test can find and end them.
	dsn string
	// rawDSN reaches the schema under another name, for looking under the
	// store without counting among its sessions.
	rawDSN string
}

// newSchema creates a schema of the test's own, dropped when the test
// ends (after the stores registered later are closed). A schema costs a
// few milliseconds where a database costs far more, and the migration
// lock is per schema, so tests do not wait for each other.
func newSchema(t testing.TB) testDB {
	t.Helper()
	return newSchemaIn(t, baseURL(t))
}

// newSchemaIn is newSchema in the database base names.
func newSchemaIn(t testing.TB, base string) testDB {
	t.Helper()
	var b [8]byte
	rand.Read(b[:])
	schema := "bot_test_" + hex.EncodeToString(b[:])
	exec(t, base, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Errorf("drop schema %s: %v", schema, err)
		}
	})
	return testDB{
		schema: schema,
		dsn:    withParams(t, base, map[string]string{"search_path": schema, "application_name": schema}),
		rawDSN: withParams(t, base, map[string]string{"search_path": schema, "application_name": schema + "-raw"}),
	}
}

// withParams sets connection parameters in a DSN of either form.
func withParams(t testing.TB, dsn string, params map[string]string) string {
	t.Helper()
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatalf("%s does not parse as a URL", envURL)
		}
		q := u.Query()
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	for k, v := range params { // key=value: a later key wins
		dsn += " " + k + "='" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
	}
	return dsn
}

// exec runs statements on a connection of their own.
func exec(t testing.TB, dsn string, sqls ...string) {
	t.Helper()
	conn := rawConn(t, dsn)
	for _, sql := range sqls {
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
}

// rawConn is a plain pgx connection, closed when the test ends.
func rawConn(t testing.TB, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dsn)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// open opens a store, closed when the test ends, without migrating.
func open(t testing.TB, o postgres.Options) *postgres.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), o)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// openMigrated opens a store on dsn and migrates it.
func openMigrated(t testing.TB, dsn string) *postgres.Store {
	t.Helper()
	s := open(t, postgres.Options{DSN: dsn})
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// terminate ends every session named app from another connection, as an
// operator or a failover would, and returns how many it ended.
func terminate(t testing.TB, app string) int {
	t.Helper()
	conn := rawConn(t, baseURL(t))
	var n int
	err := conn.QueryRow(t.Context(),
		`SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1) AS ended`,
		app).Scan(&n)
	if err != nil {
		t.Fatalf("terminate sessions of %s: %v", app, err)
	}
	return n
}

// at is the tests' clock: a fixed instant plus d.
func at(d time.Duration) time.Time {
	return time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC).Add(d)
}

func pendingApproval(id string, requested time.Time) *store.Approval {
	return &store.Approval{
		ID: id, Tenant: "t1", Revision: 1, State: "pending", Seen: true, Function: "f",
		Plan: []byte(`{}`), NextStepAt: requested.Add(time.Minute), DeadlineAt: requested.Add(time.Hour),
		RequestedAt: requested, CreatedAt: requested, UpdatedAt: requested,
	}
}

func effect(id, key string, due time.Time) store.OutboxInsertParams {
	return store.OutboxInsertParams{
		ID: id, Tenant: "t1", ApprovalID: "a1", Kind: "edit_cards", Target: "slack:C1",
		CoalesceKey: key, Payload: []byte(`{}`), NotBefore: due, Now: due,
	}
}

func enqueue(t testing.TB, s store.Store, rows ...store.OutboxInsertParams) {
	t.Helper()
	err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error { return tx.OutboxInsert(ctx, rows) })
	if err != nil {
		t.Fatalf("enqueue: %v", err)
	}
}

func claimIDs(t testing.TB, s store.Store, worker string, now time.Time) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	rows, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: worker, Now: now, Lease: time.Minute, Limit: 100})
	if err != nil {
		t.Fatalf("OutboxClaim(%s): %v", worker, err)
	}
	ids := []string{}
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

func wantIDs(t testing.TB, what string, got []string, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s (-want +got):\n%s", what, diff)
	}
}

func TestConformance(t *testing.T) {
	baseURL(t) // skip once, not in each case
	t.Parallel()
	storetest.Run(t, func(t *testing.T) store.Store { return openMigrated(t, newSchema(t).dsn) })
}

// countingHandler counts the log records with a message, across stores.
type countingHandler struct {
	msg string
	n   *atomic.Int64
}

func (h countingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h countingHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.n.Add(1)
	}
	return nil
}
func (h countingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h countingHandler) WithGroup(string) slog.Handler      { return h }

func TestMigrateConcurrentReplicas(t *testing.T) {
	t.Parallel()
	// Four replicas starting together on one fresh schema, each with its
	// own pool: each migration is applied once (a second CREATE TABLE
	// would fail), and recorded once.
	ms, err := store.Migrations()
	if err != nil {
		t.Fatalf("Migrations: %v", err)
	}
	db := newSchema(t)
	var applied atomic.Int64
	logger := slog.New(countingHandler{msg: "store migration applied", n: &applied})
	var stores []*postgres.Store
	for range 4 {
		stores = append(stores, open(t, postgres.Options{DSN: db.dsn, Logger: logger}))
	}
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Go(func() {
			<-start
			if err := s.Migrate(t.Context()); err != nil {
				t.Errorf("Migrate: %v", err)
			}
		})
	}
	close(start)
	wg.Wait()
	if got := applied.Load(); got != int64(len(ms)) {
		t.Errorf("%d migrations applied across the replicas, want %d (each once)", got, len(ms))
	}

	var versions []int64
	rows, err := rawConn(t, db.rawDSN).Query(t.Context(), `SELECT version FROM schema_migrations ORDER BY version`)
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	versions, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		t.Fatalf("read schema_migrations: %v", err)
	}
	var want []int64
	for _, m := range ms {
		want = append(want, int64(m.Version))
	}
	if diff := cmp.Diff(want, versions); diff != "" {
		t.Errorf("schema_migrations versions (-want +got):\n%s", diff)
	}

	// Again, as a restart does: nothing more is applied.
	if err := stores[0].Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate again: %v", err)
	}
	if got := applied.Load(); got != int64(len(ms)) {
		t.Errorf("Migrate on a migrated schema applied %d more", got-int64(len(ms)))
	}
}

func TestMigrateWaitsForTheLockHolder(t *testing.T) {
	t.Parallel()
	// While another session holds the schema's migration lock, Migrate
	// waits; it gives up when its context ends.
	db := newSchema(t)
	s := open(t, postgres.Options{DSN: db.dsn})
	holder := rawConn(t, db.rawDSN)
	if _, err := holder.Exec(t.Context(), `SELECT pg_advisory_lock($1, $2)`, int32(0x6d696772), lockKeyOf(db.schema)); err != nil {
		t.Fatalf("hold lock: %v", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
	defer cancel()
	if err := s.Migrate(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Migrate while the lock is held elsewhere: %v, want it to wait until its deadline", err)
	}
	if _, err := holder.Exec(t.Context(), `SELECT pg_advisory_unlock($1, $2)`, int32(0x6d696772), lockKeyOf(db.schema)); err != nil {
		t.Fatalf("release lock: %v", err)
	}
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate after release: %v", err)
	}
}

// lockKeyOf is the store's lock key (FNV-1a, 32 bits) of a name.
func lockKeyOf(name string) int32 {
	h := uint32(2166136261)
	for i := range len(name) {
		h ^= uint32(name[i])
		h *= 16777619
	}
	return int32(h)
}

func TestApprovalGetForUpdateSerialisesWriters(t *testing.T) {
	t.Parallel()
	// Two writers of one approval: the second reads only after the first
	// commits, and then reads what it wrote. It holds for an approval that
	// does not exist yet, which FOR UPDATE alone would not lock.
	s := openMigrated(t, newSchema(t).dsn)
	for _, exists := range []bool{false, true} {
		t.Run(fmt.Sprintf("exists=%v", exists), func(t *testing.T) {
			id := fmt.Sprintf("a-%v", exists)
			if exists {
				upsert(t, s, pendingApproval(id, at(0)))
			}
			firstHolds, releaseFirst := make(chan struct{}), make(chan struct{})
			type read struct {
				a   *store.Approval
				err error
			}
			secondRead := make(chan read, 1)
			var wg sync.WaitGroup
			defer wg.Wait()
			defer func() {
				select {
				case <-releaseFirst:
				default:
					close(releaseFirst)
				}
			}()
			wg.Go(func() {
				err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
					_, err := tx.ApprovalGetForUpdate(ctx, id)
					if exists != (err == nil) {
						return fmt.Errorf("first read: %w", err)
					}
					close(firstHolds)
					<-releaseFirst
					a := pendingApproval(id, at(0))
					a.Revision = 2
					return tx.ApprovalUpsert(ctx, a)
				})
				if err != nil {
					t.Errorf("first writer: %v", err)
				}
			})
			select {
			case <-firstHolds:
			case <-time.After(10 * time.Second):
				t.Fatal("first writer did not read")
			}
			wg.Go(func() {
				err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
					a, err := tx.ApprovalGetForUpdate(ctx, id)
					secondRead <- read{a, err}
					return err
				})
				if err != nil {
					t.Errorf("second writer: %v", err)
				}
			})
			select {
			case r := <-secondRead:
				t.Fatalf("second writer read %+v, %v while the first held the approval", r.a, r.err)
			case <-time.After(300 * time.Millisecond):
			}
			// Another approval is not held up.
			err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
				_, err := tx.ApprovalGetForUpdate(ctx, "other")
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				return err
			})
			if err != nil {
				t.Fatalf("writer of another approval: %v", err)
			}
			close(releaseFirst)
			select {
			case r := <-secondRead:
				if r.err != nil || r.a.Revision != 2 {
					t.Errorf("second writer read %+v, %v; want the first writer's revision 2", r.a, r.err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("second writer still waits after the first committed")
			}
		})
	}
}

func upsert(t testing.TB, s store.Store, as ...*store.Approval) {
	t.Helper()
	err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
		for _, a := range as {
			if err := tx.ApprovalUpsert(ctx, a); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
}

func TestClaimsSkipLockedRows(t *testing.T) {
	t.Parallel()
	// A row another transaction has locked is passed over, not waited
	// for: claims never queue behind each other or behind a writer.
	db := newSchema(t)
	s := openMigrated(t, db.dsn)
	now := at(0)
	enqueue(t, s, effect("o1", "", now), effect("o2", "", now))

	locker := rawConn(t, db.rawDSN)
	lockTx, err := locker.Begin(t.Context())
	if err != nil {
		t.Fatalf("begin: %v", err)
	}
	if _, err := lockTx.Exec(t.Context(), `SELECT id FROM outbox WHERE id = 'o1' FOR UPDATE`); err != nil {
		t.Fatalf("lock o1: %v", err)
	}
	wantIDs(t, "claim while o1 is locked", claimIDs(t, s, "w1", now), "o2")
	if err := lockTx.Commit(t.Context()); err != nil {
		t.Fatalf("commit: %v", err)
	}
	wantIDs(t, "claim after", claimIDs(t, s, "w2", now), "o1")

	// The ladder's claim passes over an approval a writer holds.
	a1, a2 := pendingApproval("a1", now.Add(-time.Hour)), pendingApproval("a2", now.Add(-time.Hour))
	upsert(t, s, a1, a2)
	holds, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
			if _, err := tx.ApprovalGetForUpdate(ctx, "a1"); err != nil {
				return err
			}
			close(holds)
			<-release
			return nil
		})
		if err != nil {
			t.Errorf("writer: %v", err)
		}
	})
	<-holds
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	got, err := s.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{Worker: "ladder", Now: now, Lease: time.Minute, Limit: 10})
	close(release)
	wg.Wait()
	if err != nil {
		t.Fatalf("ApprovalClaimDue: %v", err)
	}
	if len(got) != 1 || got[0].ID != "a2" {
		t.Errorf("ApprovalClaimDue while a1 is held = %v, want a2 only", got)
	}
}

func TestCrashedReplicasClaimsReturnAfterLease(t *testing.T) {
	t.Parallel()
	// Replica A claims and dies holding its claims; replica B gets them
	// when their lease lapses, not before.
	db := newSchema(t)
	a := openMigrated(t, db.dsn)
	b := open(t, postgres.Options{DSN: db.dsn})
	now := at(0)
	enqueue(t, a, effect("o1", "", now), effect("o2", "", now))
	upsert(t, a, pendingApproval("due", now.Add(-time.Hour)))

	wantIDs(t, "A claims", claimIDs(t, a, "replica-a", now), "o1", "o2")
	claimedDue, err := a.ApprovalClaimDue(t.Context(), store.ApprovalClaimDueParams{Worker: "replica-a", Now: now, Lease: time.Minute, Limit: 10})
	if err != nil || len(claimedDue) != 1 {
		t.Fatalf("A claims due approvals: %v, %v", claimedDue, err)
	}
	a.Close() // the replica dies

	wantIDs(t, "B within the lease", claimIDs(t, b, "replica-b", now.Add(59*time.Second)))
	wantIDs(t, "B when the lease lapses", claimIDs(t, b, "replica-b", now.Add(time.Minute)), "o1", "o2")
	got, err := b.ApprovalClaimDue(t.Context(), store.ApprovalClaimDueParams{Worker: "replica-b", Now: now.Add(time.Minute), Lease: time.Minute, Limit: 10})
	if err != nil || len(got) != 1 || got[0].ClaimedBy != "replica-b" {
		t.Errorf("B claims the due approval after the lease: %v, %v", got, err)
	}
	for _, id := range []string{"o1", "o2"} {
		if err := b.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: id, Worker: "replica-b", Now: now.Add(time.Minute)}); err != nil {
			t.Errorf("B completes %s: %v", id, err)
		}
	}
}

func TestCoalescedRowNotClaimedBeforeCommit(t *testing.T) {
	t.Parallel()
	// A row that coalesces into a waiting one relies on that one to
	// render the state its transaction commits. The coalescing decision
	// is made with the transaction's queued writes, right before COMMIT,
	// and locks the waiting row until then: a worker that claims the
	// waiting row while the transaction is open makes the transaction
	// add its own row instead. Either way a row is claimable after the
	// commit, to render the state committed.
	s := openMigrated(t, newSchema(t).dsn)
	now := at(0)
	const key = "edit:a1:slack:C1"
	enqueue(t, s, effect("r1", key, now))

	inserted, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
			if err := tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("r2", key, now)}); err != nil {
				return err
			}
			close(inserted)
			<-release
			return nil
		})
		if err != nil {
			t.Errorf("InTx: %v", err)
		}
	})
	<-inserted
	during := claimIDs(t, s, "w1", now)
	close(release)
	wg.Wait()
	after := claimIDs(t, s, "w2", now)
	switch {
	case len(during) == 0:
		wantIDs(t, "claim after the commit (coalesced into r1)", after, "r1")
	default:
		wantIDs(t, "claim while the transaction was open", during, "r1")
		wantIDs(t, "claim after the commit (r1 was in flight: a row of its own)", after, "r2")
	}
}

// The coalescing insert locks the waiting row from the moment it runs
// until COMMIT: a claim in between passes it by.
func TestCoalescedRowLockedUntilCommit(t *testing.T) {
	t.Parallel()
	s := openMigrated(t, newSchema(t).dsn)
	now := at(0)
	const key = "edit:a1:slack:C1"
	enqueue(t, s, effect("r1", key, now))
	inserted, release := make(chan struct{}), make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
			if err := tx.OutboxInsert(ctx, []store.OutboxInsertParams{effect("r2", key, now)}); err != nil {
				return err
			}
			// A read sends the queued writes now, inside the transaction.
			if _, err := tx.PostList(ctx, "a1"); err != nil {
				return err
			}
			close(inserted)
			<-release
			return nil
		})
		if err != nil {
			t.Errorf("InTx: %v", err)
		}
	})
	<-inserted
	got := claimIDs(t, s, "w1", now)
	close(release)
	wg.Wait()
	wantIDs(t, "claim while the coalescing transaction is open", got)
	wantIDs(t, "claim after it committed", claimIDs(t, s, "w1", now), "r1")
}

func TestClaimsUseIndexes(t *testing.T) {
	t.Parallel()
	// A claim costs O(due): among many pending approvals that are not due
	// and many finished outbox rows, the plans search the partial indexes
	// and never scan a table.
	db := newSchema(t)
	openMigrated(t, db.dsn)
	conn := rawConn(t, db.rawDSN)
	seed(t, conn,
		`INSERT INTO approvals (id, tenant, revision, state, seen, function, steps_done, next_step_at, deadline_at,
		    requested_at, created_at, updated_at)
		 SELECT 'a' || i, 't' || (i % 50), 1, CASE WHEN i % 10 = 0 THEN 'approved' ELSE 'pending' END, 1, 'f', 0,
		    CASE WHEN i <= 10 THEN 1000 ELSE 9000000000000 END, 9000000000000, i, i, i
		 FROM generate_series(1, 50000) AS i`,
		`INSERT INTO outbox (id, tenant, approval_id, kind, target, payload, next_attempt_at, state, created_at, done_at)
		 SELECT 'o' || i, 't1', 'a1', 'edit_cards', 'slack:C1', '{}', i,
		    CASE WHEN i <= 10 THEN 'pending' ELSE 'done' END, i, i
		 FROM generate_series(1, 50000) AS i`,
		`ANALYZE approvals`,
		`ANALYZE outbox`,
	)
	const skipLockedOutbox = " FOR UPDATE OF outbox SKIP LOCKED"
	for _, c := range []explained{
		{"outbox claim of every lane", query.OutboxClaimable(false, inList, skipLockedOutbox), []any{int64(2000), 32, []string{}}, []string{"outbox_pending_due"}},
		{"outbox lease of chosen rows", query.OutboxClaimIDs(inList), []any{"w", int64(3000), []string{"o1", "o2"}}, []string{"outbox_pkey"}},
		{"pace lock", query.PaceGet(" FOR UPDATE"), []any{"k"}, []string{"pace_pkey"}},
		{"coalesced priority", query.OutboxCoalescePriority, []any{"key", 5}, []string{"outbox_pending_coalesce"}},
		{"pace hold", query.PaceHold, []any{"o1", int64(5)}, []string{"outbox_pkey"}},
		{"approval claim", query.ApprovalClaimDue(" FOR UPDATE SKIP LOCKED"), []any{int64(2000), 32, "w", int64(3000)}, []string{"approvals_next_step_due", "approvals_deadline_due"}},
		{"pending list", query.ApprovalListPending, []any{"t1", 10}, []string{"approvals_pending_by_tenant"}},
		{"coalesce insert", query.OutboxInsertLocking(" FOR SHARE"), []any{"i", "t", "a", "k", "g", "key", "{}", int64(1), int64(1), "chat", 0, ""}, []string{"outbox_pending_coalesce"}},
		{"stats", query.OutboxStats, nil, []string{"outbox_dead"}},
	} {
		c.check(t, conn)
	}

	// The figures of fatigue read one range of their indexes, however
	// many outcomes the table holds.
	seed(t, conn,
		`INSERT INTO outcomes (approval_id, tenant, job_id, function, args_sha256, effect, ladder, restricted,
		    revision, state, requested_at, decided_at)
		 SELECT 'a' || i, 't' || (i % 50), 'j', 'f' || (i % 100), 'd' || (i % 7), 'write', 'default', 0, 1,
		    CASE WHEN i % 3 = 0 THEN 'denied' ELSE 'approved' END, i, CASE WHEN i % 20 = 0 THEN 0 ELSE i + 10 END
		 FROM generate_series(1, 50000) AS i`,
		`ANALYZE outcomes`,
	)
	for _, c := range []explained{
		{"outcomes of a tenant", query.OutcomeListTenant, []any{"t1", int64(40000), int64(41000), int64(0), "", 500}, []string{"outcomes_tenant_decided"}},
		{"outcomes of every tenant", query.OutcomeListAll, []any{int64(40000), int64(41000), int64(0), "", 500}, []string{"outcomes_decided"}},
		{"repeat approval", query.OutcomeRepeated, []any{"a1", int64(86400000)}, []string{"outcomes_pkey", "outcomes_approved"}},
	} {
		c.check(t, conn)
	}

	// Under load (a ladder step due for thousands of approvals over 50
	// channels, half of them out of budget, beside the backend's and the
	// mail's own backlogs) a lane's claim reads its lane in claim order
	// and stops at the limit, rather than sorting every due row.
	seed(t, conn,
		`INSERT INTO outbox (id, tenant, approval_id, kind, target, payload, next_attempt_at, state, created_at,
		    lane, priority, pace_key)
		 SELECT 'c' || i, 't1', 'a' || i, 'edit_card', 'slack:C' || (i % 50), '{}', 1000 + i % 500, 'pending', i,
		    'chat', CASE WHEN i % 7 = 0 THEN 10 ELSE 0 END, 'slack:C' || (i % 50)
		 FROM generate_series(1, 20000) AS i`,
		`INSERT INTO outbox (id, tenant, approval_id, kind, target, payload, next_attempt_at, state, created_at, lane)
		 SELECT 'd' || i, 't1', 'a' || i, 'decision', 'backend', '{}', 1000 + i, 'pending', i, 'backend'
		 FROM generate_series(1, 5000) AS i`,
		`INSERT INTO outbox (id, tenant, approval_id, kind, target, payload, next_attempt_at, state, created_at, lane)
		 SELECT 'm' || i, 't1', 'a' || i, 'email', 'email:x', '{}', 9000000000000, 'pending', i, 'mail'
		 FROM generate_series(1, 5000) AS i`,
		`INSERT INTO pace (key, tat, ready_at)
		 SELECT 'slack:C' || i, 5000, CASE WHEN i % 2 = 0 THEN 4000 ELSE 1000 END FROM generate_series(0, 49) AS i`,
		`ANALYZE outbox`,
		`ANALYZE pace`,
	)
	for _, c := range []explained{
		{"paced claim of the chat lane", query.OutboxClaimable(true, inList, skipLockedOutbox), []any{int64(3000), 32, []string{}, "chat"}, []string{"outbox_pending_lane"}},
		{"unpaced claim of the chat lane", query.OutboxClaimUnpaced(true, inList, skipLockedOutbox), []any{int64(3000), 32, []string{"x"}, "w", int64(4000), "chat"}, []string{"outbox_pending_lane"}},
		{"claim of the backend lane", query.OutboxClaimUnpaced(true, inList, skipLockedOutbox), []any{int64(3000), 32, []string{}, "w", int64(4000), "backend"}, []string{"outbox_pending_lane"}},
		{"stats under load", query.OutboxStats, nil, []string{"outbox_dead"}},
	} {
		c.check(t, conn)
	}
}

func seed(t *testing.T, conn *pgx.Conn, sqls ...string) {
	t.Helper()
	for _, sql := range sqls {
		if _, err := conn.Exec(t.Context(), sql); err != nil {
			t.Fatalf("seed: %v", err)
		}
	}
}

// explained is a query whose plan must use the indexes named and never
// scan outbox or approvals, which grow with traffic. The pace table may
// be scanned: it holds one row per channel, and PostgreSQL rightly reads
// it once per claim into a hash of the keys not ready.
type explained struct {
	name  string
	query string
	args  []any
	want  []string
}

func (c explained) check(t *testing.T, conn *pgx.Conn) {
	t.Helper()
	rows, err := conn.Query(t.Context(), "EXPLAIN "+c.query, c.args...)
	if err != nil {
		t.Fatalf("%s: EXPLAIN: %v", c.name, err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatalf("%s: EXPLAIN: %v", c.name, err)
	}
	text := strings.Join(plan, "\n")
	t.Logf("%s plan:\n%s", c.name, text)
	if strings.Contains(text, "Seq Scan on outbox") || strings.Contains(text, "Seq Scan on approvals") || strings.Contains(text, "Seq Scan on outcomes") {
		t.Errorf("%s scans a table:\n%s", c.name, text)
	}
	for _, idx := range c.want {
		if !strings.Contains(text, idx) {
			t.Errorf("%s does not use %s:\n%s", c.name, idx, text)
		}
	}
}

// inList is the store's query.List for PostgreSQL (the ids as a text[]).
func inList(column string, n int) string {
	return fmt.Sprintf("%s = ANY(CAST($%d AS TEXT[]))", column, n)
}

func TestClosedStoreIsUnavailable(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openMigrated(t, newSchema(t).dsn)
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	for _, c := range unavailableCalls(at(0)) {
		if err := c.call(ctx, s); !errors.Is(err, store.ErrUnavailable) {
			t.Errorf("%s on a closed store: %v, want ErrUnavailable", c.name, err)
		}
	}
	if err := s.Listen(ctx, func() {}); !errors.Is(err, store.ErrUnavailable) {
		t.Errorf("Listen on a closed store: %v, want ErrUnavailable", err)
	}
}

// unavailableCalls is one call of each kind the store makes, for the
// tests that cut it off from the database.
func unavailableCalls(now time.Time) []struct {
	name string
	call func(ctx context.Context, s *postgres.Store) error
} {
	return []struct {
		name string
		call func(ctx context.Context, s *postgres.Store) error
	}{
		{"Ping", func(ctx context.Context, s *postgres.Store) error { return s.Ping(ctx) }},
		{"ApprovalGet", func(ctx context.Context, s *postgres.Store) error { _, err := s.ApprovalGet(ctx, "a1"); return err }},
		{"InTx", func(ctx context.Context, s *postgres.Store) error {
			return s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				_, err := tx.ApprovalGetForUpdate(ctx, "a1")
				if errors.Is(err, store.ErrNotFound) {
					return nil
				}
				return err
			})
		}},
		{"OutboxClaim", func(ctx context.Context, s *postgres.Store) error {
			_, err := s.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 1})
			return err
		}},
		{"OutboxComplete", func(ctx context.Context, s *postgres.Store) error {
			return s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o1", Worker: "w", Now: now, Post: &store.Post{}})
		}},
		{"ApprovalClaimDue", func(ctx context.Context, s *postgres.Store) error {
			_, err := s.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{Worker: "w", Now: now, Lease: time.Minute, Limit: 1})
			return err
		}},
		{"OutboxStats", func(ctx context.Context, s *postgres.Store) error { _, err := s.OutboxStats(ctx, now); return err }},
		{"Migrate", func(ctx context.Context, s *postgres.Store) error { return s.Migrate(ctx) }},
	}
}

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	// These need no server.
	ctx := t.Context()
	const secret = "s3cr3t-Pa55"
	for _, c := range []struct {
		name        string
		dsn         string
		unavailable bool
	}{
		{"empty", "", false},
		{"malformed URL", "postgres://bot:" + secret + "@127.0.0.1:5432/db?sslmode=bogus%zz", false},
		{"malformed key=value", "host=127.0.0.1 password=" + secret + " sslmode=nonsense", false},
		{"nothing listens", "postgres://bot:" + secret + "@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", true},
	} {
		s, err := postgres.Open(ctx, postgres.Options{DSN: c.dsn})
		if err == nil {
			s.Close()
			t.Errorf("%s: Open succeeded", c.name)
			continue
		}
		if errors.Is(err, store.ErrUnavailable) != c.unavailable {
			t.Errorf("%s: %v; unavailable = %v, want %v", c.name, err, !c.unavailable, c.unavailable)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error shows the password: %v", c.name, err)
		}
	}
	if _, err := postgres.Open(ctx, postgres.Options{DSN: "postgres://127.0.0.1/db", MaxConns: -1}); err == nil {
		t.Error("Open with negative MaxConns succeeded")
	}
}

func TestOpenBoundsThePool(t *testing.T) {
	t.Parallel()
	// The pool never holds more than MaxConns sessions however many
	// callers want one; the one more counted is the connection kept for
	// people's clicks, opened by Open's ping and idle here (no caller is
	// a person's).
	db := newSchema(t)
	s := open(t, postgres.Options{DSN: db.dsn, MaxConns: 3, PersonConns: 1})
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	conn := rawConn(t, db.rawDSN)
	var (
		wg       sync.WaitGroup
		sessions []int
		mu       sync.Mutex
	)
	for range 10 {
		wg.Go(func() {
			err := s.InTx(t.Context(), func(ctx context.Context, tx store.Tx) error {
				mu.Lock() // one conn, one query at a time
				defer mu.Unlock()
				var n int
				if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM pg_stat_activity WHERE application_name = $1`, db.schema).Scan(&n); err != nil {
					return err
				}
				sessions = append(sessions, n)
				return nil
			})
			if err != nil {
				t.Errorf("InTx: %v", err)
			}
		})
	}
	wg.Wait()
	if m := slices.Max(sessions); m > 3+1 {
		t.Errorf("%d sessions at once, want at most MaxConns 3 and the people's idle one", m)
	}
}

// openPools opens a migrated store with its two pools sized so.
func openPools(t *testing.T, maxConns, personConns int32) *postgres.Store {
	t.Helper()
	s := open(t, postgres.Options{DSN: newSchema(t).dsn, MaxConns: maxConns, PersonConns: personConns})
	if err := s.Migrate(t.Context()); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return s
}

// hold begins n transactions on ctx, all at once, and keeps them open
// until the test ends; it returns once all n have begun, or fails when
// ctx ends first (each test bounds it only so a regression fails rather
// than hangs).
func hold(ctx context.Context, t *testing.T, s *postgres.Store, n int, what string) {
	t.Helper()
	start, began, release := make(chan struct{}), make(chan struct{}, n), make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(release); wg.Wait() })
	for range n {
		wg.Go(func() {
			<-start
			_ = s.InTx(ctx, func(context.Context, store.Tx) error {
				began <- struct{}{}
				<-release
				return nil
			})
		})
	}
	close(start)
	for i := range n {
		select {
		case <-began:
		case <-ctx.Done():
			t.Fatalf("only %d of %d %s began together", i, n, what)
		}
	}
}

// bounded is ctx, bounded only so a regression fails rather than hangs.
func bounded(ctx context.Context, t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// A person's click (store.ForPerson) gets a connection while background
// work holds every connection of the main pool: it never queues behind
// the outbox's workers for one.
func TestAPersonsPathHasConnectionsOfItsOwn(t *testing.T) {
	t.Parallel()
	s := openPools(t, 2, 1)
	hold(bounded(t.Context(), t), t, s, 2, "background transactions")
	ctx := bounded(store.ForPerson(t.Context()), t)
	err := s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.ApprovalGetForUpdate(ctx, "a-none")
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		return err
	})
	if err != nil {
		t.Fatalf("a person's transaction with the main pool held: %v", err)
	}
	if _, err := s.ApprovalGet(ctx, "a-none"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a person's read with the main pool held: %v", err)
	}
}

// The connections kept for people are a reserve, not a cage: with every
// one of them in use, a person's transaction takes the main pool's.
func TestAPersonOverflowsToTheMainPool(t *testing.T) {
	t.Parallel()
	s := openPools(t, 2, 1)
	person := bounded(store.ForPerson(t.Context()), t)
	hold(person, t, s, 1, "people's transactions")
	if err := s.InTx(person, func(context.Context, store.Tx) error { return nil }); err != nil {
		t.Fatalf("a second person's transaction with the kept connection in use: %v", err)
	}
}

// Many clicks at once: each takes a kept connection only if it gets one
// at once, the rest the main pool's, so none queues for the reserve while
// the main pool has room (all twenty are in their transactions together).
func TestABurstOfPeopleOverflowsAtOnce(t *testing.T) {
	t.Parallel()
	s := openPools(t, 30, 2)
	hold(bounded(store.ForPerson(t.Context()), t), t, s, 20, "people's transactions")
}

func TestMigrationFilesRowsUnderLanes(t *testing.T) {
	t.Parallel()
	db := newSchema(t)
	conn := rawConn(t, db.rawDSN)
	storetest.LanesMigration(t,
		func(t *testing.T, script string) {
			if _, err := conn.Exec(t.Context(), script); err != nil { // no args: the simple protocol, several statements
				t.Fatalf("%s: %v", script, err)
			}
		},
		func(t *testing.T) store.Store { return openMigrated(t, db.dsn) })
}

func TestPacedClaimsAcrossReplicas(t *testing.T) {
	t.Parallel()
	// Four replicas on one schema, each with a pool of its own and two
	// workers: they share each key's budget through the pace rows, and
	// never wait for each other in a cycle (a deadlock would fail a claim
	// with 40P01).
	db := newSchema(t)
	var stores []store.Store
	stores = append(stores, openMigrated(t, db.dsn))
	for range 3 {
		stores = append(stores, open(t, postgres.Options{DSN: db.dsn, MaxConns: 2}))
	}
	storetest.ClaimPacedConcurrently(t, append(stores, stores...))
}
