package threads

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"approvalsbot/store"
	"approvalsbot/store/sqlite"
)

// gatedStore counts the transactions it runs, and holds the first one
// open until the test lets it go.
type gatedStore struct {
	store.Store
	txs     atomic.Int32
	entered chan struct{} // closed when the first transaction runs
	release chan struct{} // the first transaction commits once closed
	once    sync.Once
}

func (g *gatedStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	g.txs.Add(1)
	return g.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		first := false
		g.once.Do(func() { first = true })
		if first {
			close(g.entered)
			<-g.release
		}
		return fn(ctx, tx)
	})
}

// OneWriter: the SQLite store underneath runs one writer at a time.
func (g *gatedStore) OneWriter() bool { return true }

func openGated(t *testing.T) (*Service, *gatedStore) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := &gatedStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	return &Service{store: g}, g
}

func groupApproval(id string) *store.Approval {
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	return &store.Approval{ID: id, Tenant: "acme", Revision: 1, State: "pending", Seen: true,
		Function: "github.merge_pr", Plan: []byte(`{}`), RequestedAt: at, CreatedAt: at, UpdatedAt: at}
}

// queued waits until n callers wait in the group's queue. It polls the
// queue's length, the thing the test is waiting for, not a time.
func queued(t *testing.T, s *Service, n int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		s.group.mu.Lock()
		got := len(s.group.queue)
		s.group.mu.Unlock()
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers queued, want %d", got, n)
		}
	}
}

// Callers that arrive while a transaction commits share the next one:
// eleven decisions' answers cost two transactions, not eleven, and each
// caller's writes are all there.
func TestCommitGroupsConcurrentCallers(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 11)
	write := func(i int) {
		errs[i] = s.commit(ctx, func(ctx context.Context, tx store.Tx) error {
			return tx.ApprovalUpsert(ctx, groupApproval(fmt.Sprintf("a-group%02d", i)))
		})
	}
	wg.Go(func() { write(0) })
	<-g.entered // the first leads alone and holds the writer
	for i := 1; i < len(errs); i++ {
		wg.Go(func() { write(i) })
	}
	queued(t, s, len(errs)-1)
	close(g.release)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", i, err)
		}
		if _, err := s.store.ApprovalGet(ctx, fmt.Sprintf("a-group%02d", i)); err != nil {
			t.Errorf("caller %d's write: %v", i, err)
		}
	}
	if n := g.txs.Load(); n != 2 {
		t.Errorf("%d transactions for %d callers, want 2 (one alone, then one for the ten queued behind it)", n, len(errs))
	}
	if s.group.leading != 0 || len(s.group.queue) != 0 {
		t.Errorf("after every caller returned: leading %v, %d queued", s.group.leading, len(s.group.queue))
	}
}

// One caller's failure is its own: the shared transaction is rolled back
// and each of its callers runs alone, so the others commit and only the
// failing one sees its error, and nothing of its writes is kept.
func TestCommitFailureIsOnlyTheFailingCallers(t *testing.T) {
	s, g := openGated(t)
	ctx := context.Background()
	boom := errors.New("boom")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	runs := make([]atomic.Int32, len(errs))
	write := func(i int) {
		errs[i] = s.commit(ctx, func(ctx context.Context, tx store.Tx) error {
			runs[i].Add(1)
			if err := tx.ApprovalUpsert(ctx, groupApproval(fmt.Sprintf("a-fail%02d", i))); err != nil {
				return err
			}
			if i == 3 {
				return boom
			}
			return nil
		})
	}
	wg.Go(func() { write(0) })
	<-g.entered
	for i := 1; i < len(errs); i++ {
		wg.Go(func() { write(i) })
	}
	queued(t, s, len(errs)-1)
	close(g.release)
	wg.Wait()
	for i, err := range errs {
		_, got := s.store.ApprovalGet(ctx, fmt.Sprintf("a-fail%02d", i))
		if i == 3 {
			if !errors.Is(err, boom) {
				t.Errorf("the failing caller got %v, want its own error", err)
			}
			if !errors.Is(got, store.ErrNotFound) {
				t.Errorf("the failing caller's write: %v, want none kept", got)
			}
			continue
		}
		if err != nil || got != nil {
			t.Errorf("caller %d: %v, its write: %v", i, err, got)
		}
	}
	// The first ran alone; the five behind it ran together until the
	// failing one, then each alone: seven transactions.
	if n := g.txs.Load(); n != 7 {
		t.Errorf("%d transactions, want 7 (one alone, the group of five, then each of them alone)", n)
	}
	if n := runs[3].Load(); n != 2 {
		t.Errorf("the failing caller's function ran %d times, want 2 (in the group, then alone)", n)
	}
}

// Under many callers at once every one returns, with its write kept, and
// the lead passes on until the queue is empty.
func TestCommitManyCallers(t *testing.T) {
	s, g := openGated(t)
	close(g.release) // no gate here
	ctx := context.Background()
	var wg sync.WaitGroup
	const callers = 300
	errs := make([]error, callers)
	for i := range callers {
		wg.Go(func() {
			errs[i] = s.commit(ctx, func(ctx context.Context, tx store.Tx) error {
				return tx.ApprovalUpsert(ctx, groupApproval(fmt.Sprintf("a-many%03d", i)))
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("caller %d: %v", i, err)
		}
	}
	pending, err := s.store.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: "acme"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pending) != callers {
		t.Fatalf("%d approvals written, want %d", len(pending), callers)
	}
}

// sideBySide is a store whose writers run side by side (no OneWriter),
// as PostgreSQL's do, counting its transactions.
type sideBySide struct {
	store.Store
	txs atomic.Int32
}

func (s *sideBySide) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	s.txs.Add(1)
	return s.Store.InTx(ctx, fn)
}

// Where writers run side by side, each caller has its own transaction:
// a shared one would hold every caller's row locks for the group's work.
func TestCommitAloneWhereWritersRunSideBySide(t *testing.T) {
	s, g := openGated(t)
	close(g.release)
	st := &sideBySide{Store: g.Store}
	s.store = st
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Go(func() {
			if err := s.commit(context.Background(), func(ctx context.Context, tx store.Tx) error {
				return tx.ApprovalUpsert(ctx, groupApproval(fmt.Sprintf("a-side%02d", i)))
			}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := st.txs.Load(); n != 20 {
		t.Fatalf("%d transactions for 20 callers, want one each", n)
	}
}

// parallelStore runs every transaction at once, with no writer to wait
// for: leaders finish as close together as the scheduler lets them.
type parallelStore struct{ store.Store }

func (parallelStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return fn(ctx, parallelTx{})
}

type parallelTx struct{ store.Tx }

func (parallelTx) Savepoint(ctx context.Context, fn func(context.Context) error) error {
	return fn(ctx)
}

// Several leaders at once (a store whose writers run side by side): under
// many callers arriving together every one returns, each run once, and no
// lead is lost or handed twice, so each round ends with no leader and
// nobody queued.
func TestCommitManyCallersSeveralLeaders(t *testing.T) {
	s := &Service{store: parallelStore{}, log: slog.New(slog.DiscardHandler)}
	grp := &groupCommit{leaders: 4, savepoints: true, ordered: true}
	ctx := context.Background()
	for round := range 200 {
		var wg sync.WaitGroup
		const callers = 64
		var runs [callers]atomic.Int32
		errs := make([]error, callers)
		for i := range callers {
			wg.Go(func() {
				errs[i] = s.runGrouped(ctx, grp, &commitCall{key: fmt.Sprint(i), fn: func(ctx context.Context, tx store.Tx) error {
					runs[i].Add(1)
					return nil
				}})
			})
		}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			grp.mu.Lock()
			leading, queued := grp.leading, len(grp.queue)
			grp.mu.Unlock()
			t.Fatalf("round %d: callers still waiting after 10 s, %d leaders, %d queued: a lead was lost", round, leading, queued)
		}
		for i, err := range errs {
			if err != nil || runs[i].Load() != 1 {
				t.Fatalf("round %d, caller %d: %v, run %d times", round, i, err, runs[i].Load())
			}
		}
		grp.mu.Lock()
		leading, queued := grp.leading, len(grp.queue)
		grp.mu.Unlock()
		if leading != 0 || queued != 0 {
			t.Fatalf("round %d over: %d leaders, %d queued; want none", round, leading, queued)
		}
	}
}

// A caller whose work panics in a group gets an error; the others commit,
// and the group goes on leading the callers after them.
func TestCommitPanicInAGroupIsTheCallersError(t *testing.T) {
	s, g := openGated(t)
	s.log = slog.New(slog.DiscardHandler)
	grp := &groupCommit{savepoints: true}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, 5)
	write := func(i int) {
		id := fmt.Sprintf("a-panic%02d", i)
		errs[i] = s.runGrouped(ctx, grp, &commitCall{fn: func(ctx context.Context, tx store.Tx) error {
			if err := tx.ApprovalUpsert(ctx, groupApproval(id)); err != nil {
				return err
			}
			if i == 2 {
				panic("a bug in one event's work")
			}
			return nil
		}})
	}
	wg.Go(func() { write(0) })
	<-g.entered
	for i := 1; i < len(errs); i++ {
		wg.Go(func() { write(i) })
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(time.Millisecond) {
		grp.mu.Lock()
		n := len(grp.queue)
		grp.mu.Unlock()
		if n == len(errs)-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d callers queued", n)
		}
	}
	close(g.release)
	wg.Wait()
	for i, err := range errs {
		_, got := s.store.ApprovalGet(ctx, fmt.Sprintf("a-panic%02d", i))
		if i == 2 {
			if err == nil || !errors.Is(got, store.ErrNotFound) {
				t.Errorf("the panicking caller: %v, its write %v; want an error and nothing kept", err, got)
			}
			continue
		}
		if err != nil || got != nil {
			t.Errorf("caller %d: %v, its write: %v", i, err, got)
		}
	}
	if err := s.runGrouped(ctx, grp, &commitCall{fn: func(ctx context.Context, tx store.Tx) error {
		return tx.ApprovalUpsert(ctx, groupApproval("a-panic-after"))
	}}); err != nil {
		t.Fatalf("a caller after the panic: %v", err)
	}
}

// take bounds a group by maxGroup callers and maxGroupBytes of their
// weight: those past either bound stay queued, in their order, for the
// next group, even a light one behind a heavy one; the leader is in its
// own group however heavy; an ordered group runs in key order.
func TestTakeBoundsAGroup(t *testing.T) {
	call := func(key string, weight int) *commitCall { return &commitCall{key: key, weight: weight} }
	lights := func(n int) []*commitCall {
		var out []*commitCall
		for i := range n {
			out = append(out, call(fmt.Sprintf("q%02d", i), 100))
		}
		return out
	}
	keys := func(cs []*commitCall) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.key)
		}
		return out
	}
	const mib = 1 << 20
	cases := []struct {
		name    string
		own     *commitCall
		queue   []*commitCall
		ordered bool
		taken   int      // callers in the group, the leader's included
		want    []string // the group's keys in order, when checked
		left    []string // the queue's keys after, when checked
	}{
		{name: "at most maxGroup callers", own: call("own", 100), queue: lights(maxGroup + 6), taken: maxGroup,
			left: keys(lights(maxGroup + 6)[maxGroup-1:])},
		{name: "all that are queued when fewer", own: call("own", 100), queue: lights(5), taken: 6, left: nil},
		{name: "up to maxGroupBytes, which is allowed", own: call("own", mib),
			queue: []*commitCall{call("a", 2*mib), call("b", mib), call("c", mib), call("d", 10)},
			taken: 3, want: []string{"own", "a", "b"}, left: []string{"c", "d"}},
		{name: "a heavy leader alone", own: call("own", 5*mib), queue: []*commitCall{call("x", 10)},
			taken: 1, want: []string{"own"}, left: []string{"x"}},
		{name: "a heavy caller first in the queue waits, and so do those behind it", own: call("own", 10),
			queue: []*commitCall{call("heavy", 5*mib), call("y", 10)},
			taken: 1, want: []string{"own"}, left: []string{"heavy", "y"}},
		{name: "ordered by key, ties in arrival order", own: call("m", 10), ordered: true,
			queue: []*commitCall{call("z", 10), call("a", 10), call("m", 20)},
			taken: 4, want: []string{"a", "m", "m", "z"}, left: nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := &groupCommit{queue: slices.Clone(c.queue), ordered: c.ordered}
			got := g.take(c.own)
			if len(got) != c.taken {
				t.Errorf("took %d callers, want %d", len(got), c.taken)
			}
			if c.want != nil && !slices.Equal(keys(got), c.want) {
				t.Errorf("group %v, want %v", keys(got), c.want)
			}
			if c.ordered && got[1] != c.own {
				t.Errorf("the leader is not first of the callers of its key, who came after it")
			}
			if !slices.Equal(keys(g.queue), c.left) {
				t.Errorf("left queued %v, want %v", keys(g.queue), c.left)
			}
		})
	}
}
