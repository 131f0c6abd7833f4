package threads_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	dto "github.com/prometheus/client_model/go"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// Events that arrive while a transaction commits are committed together,
// one transaction for the group (ingest.go), and each is answered after
// its own commit as if it had been alone.

// gateStore holds its first transaction open until released, counts the
// transactions it runs, and fails those fail says to (by their number,
// from 1), after running them: as a COMMIT that fails. Unarmed, it only
// passes transactions through, uncounted.
type gateStore struct {
	store.Store
	armed   atomic.Bool
	txs     atomic.Int32
	entered chan struct{}
	release chan struct{}
	fail    func(n int32) error
}

func newGateStore(st store.Store) *gateStore {
	g := &gateStore{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	g.armed.Store(true)
	return g
}

func (g *gateStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if !g.armed.Load() {
		return g.Store.InTx(ctx, fn)
	}
	n := g.txs.Add(1)
	errFailed := errors.New("the gate fails this transaction")
	err := g.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		if n == 1 {
			close(g.entered)
			<-g.release
		}
		if err := fn(ctx, tx); err != nil {
			return err
		}
		if g.fail != nil && g.fail(n) != nil {
			return errFailed // rolls the transaction back
		}
		return nil
	})
	if errors.Is(err, errFailed) {
		return fmt.Errorf("%w: commit transaction: %w", store.ErrCommit, g.fail(n))
	}
	return err
}

func (g *gateStore) OneWriter() bool {
	o, ok := g.Store.(store.OneWriter)
	return ok && o.OneWriter()
}

// groupEvent is a fixture's event as another event (evID) of another
// approval (apID), of tenant when set, signed and parsed.
func groupEvent(t *testing.T, name, evID, apID, tenant string) ([]byte, *approval.Event) {
	t.Helper()
	body, _ := readEvent(t, name)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = evID
	m["data"].(map[string]any)["id"] = apID
	if tenant != "" {
		m["tenant"] = tenant
		m["data"].(map[string]any)["tenant"] = tenant
	}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse %s as %s: %v", name, evID, err)
	}
	return body, ev
}

type ingestCall struct {
	body []byte
	ev   *approval.Event
	res  threads.IngestResult
	err  error
}

func (c *ingestCall) run(svc *threads.Service) {
	sum := sha256.Sum256(c.body)
	c.res, c.err = svc.Ingest(context.Background(), threads.IngestRequest{Event: c.ev, BodySHA256: hex.EncodeToString(sum[:])})
}

// ingestGroup ingests first alone, holding the store's first transaction
// open until every one of rest waits for the next, then lets it go: rest
// is then one group.
func ingestGroup(t *testing.T, svc *threads.Service, g *gateStore, first *ingestCall, rest []*ingestCall) {
	t.Helper()
	// One group at a time, as on SQLite, so the events behind the first
	// make one group on PostgreSQL too.
	threads.SetIngestLeaders(svc, 1)
	var wg sync.WaitGroup
	var once sync.Once
	release := func() { once.Do(func() { close(g.release) }) }
	defer wg.Wait()
	defer release() // also when the wait below fails: nothing is left blocked
	wg.Go(func() { first.run(svc) })
	<-g.entered
	for _, c := range rest {
		wg.Go(func() { c.run(svc) })
	}
	threadstest.Eventually(t, fmt.Sprintf("%d events queued for the next transaction", len(rest)), func() bool {
		return threads.IngestQueued(svc) == len(rest)
	})
	release()
	wg.Wait()
}

func groupStores(t *testing.T, run func(t *testing.T, pg bool)) {
	for _, pg := range []bool{false, true} {
		name := "sqlite"
		if pg {
			name = "postgres"
		}
		t.Run(name, func(t *testing.T) { run(t, pg) })
	}
}

// In one group: new approvals, a reask, two copies of one event, an event
// reusing an accepted id with another body, and one naming another
// tenant's approval. Each is answered as alone; the two refused fail
// alone (their savepoints undone), and the group takes one transaction.
func TestIngestGroupCommitsTogetherAndFailsAlone(t *testing.T) {
	groupStores(t, func(t *testing.T, pg bool) {
		var g *gateStore
		h := newHarnessWith(t, func(o *threads.Options) {
			g = newGateStore(openStormStore(t, pg))
			o.Store = g
		})
		// Before the group: an approval of the quiet tenant, and one of
		// acme's at revision 1, which the group asks again.
		g.armed.Store(false)
		quietBody, quietEv := groupEvent(t, "merge.json", "evt-quiet", "a-quiet", "quiet")
		if _, err := h.ingestBody(quietBody, quietEv); err != nil {
			t.Fatal(err)
		}
		h.ingest(t, "merge.json")
		g.armed.Store(true)

		first := &ingestCall{}
		first.body, first.ev = groupEvent(t, "merge.json", "evt-g-first", "a-g-first", "")
		var rest []*ingestCall
		for i := range 4 {
			c := &ingestCall{}
			c.body, c.ev = groupEvent(t, "merge.json", fmt.Sprintf("evt-g%d", i), fmt.Sprintf("a-g%d", i), "")
			rest = append(rest, c)
		}
		reask := &ingestCall{}
		reask.body, reask.ev = readEvent(t, "merge-reasked.json")
		reused := &ingestCall{}
		reused.body, reused.ev = groupEvent(t, "merge.json", "evt-g-first", "a-g-reused", "")
		foreign := &ingestCall{}
		foreign.body, foreign.ev = groupEvent(t, "merge.json", "evt-g-foreign", "a-quiet", "")
		rest = append(rest, reask, reused, foreign)
		ingestGroup(t, h.svc, g, first, rest)

		if n := g.txs.Load(); n != 2 {
			t.Errorf("%d transactions, want 2: the first event's, and one for the %d events behind it", n, len(rest))
		}
		for _, c := range append([]*ingestCall{first, reask}, rest[:4]...) {
			if c.err != nil || c.res.Duplicate || c.res.Ignored != "" {
				t.Errorf("%s: %+v %v, want it ingested", c.ev.ID, c.res, c.err)
			}
			a, err := g.ApprovalGet(context.Background(), c.ev.ApprovalID())
			if err != nil || a.Revision != c.ev.Approval.Revision {
				t.Errorf("%s after the group: %+v %v", c.ev.ApprovalID(), a, err)
			}
		}
		if !errors.Is(reused.err, threads.ErrIDReused) {
			t.Errorf("an accepted id with another body: %v, want ErrIDReused", reused.err)
		}
		if _, err := g.ApprovalGet(context.Background(), "a-g-reused"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("the reused id's approval: %v, want nothing kept", err)
		}
		if !errors.Is(foreign.err, threads.ErrForeignApproval) {
			t.Errorf("another tenant's approval: %v, want ErrForeignApproval", foreign.err)
		}
		// The foreign event's id was not kept: sent again, it is refused
		// again, not taken for a duplicate.
		foreign.run(h.svc)
		if !errors.Is(foreign.err, threads.ErrForeignApproval) {
			t.Errorf("another tenant's approval sent again: %+v %v, want ErrForeignApproval again", foreign.res, foreign.err)
		}
		// The reask is noted as when alone: what it changed, on the frozen
		// plan.
		fz := planOf(t, g, "a-merge1")
		if len(fz.Reasks) != 1 || fz.Reasks[0].From != 1 || fz.Reasks[0].Revision != 2 {
			t.Errorf("the reask in a group: %+v, want one from 1 to 2", fz.Reasks)
		}
		// Sent again, every accepted event is a duplicate.
		for _, c := range append([]*ingestCall{first, reask}, rest[:4]...) {
			c.run(h.svc)
			if c.err != nil || !c.res.Duplicate {
				t.Errorf("%s again: %+v %v, want a duplicate", c.ev.ID, c.res, c.err)
			}
		}
	})
}

// Two copies of one event at once are one event: the second is answered
// as a duplicate once the first committed (an approval's events go one at
// a time, so they never share a group).
func TestIngestSameEventTwiceAtOnce(t *testing.T) {
	h := newHarness(t)
	body, ev := readEvent(t, "merge.json")
	calls := []*ingestCall{{body: body, ev: ev}, {body: body, ev: ev}, {body: body, ev: ev}}
	var wg sync.WaitGroup
	for _, c := range calls {
		wg.Go(func() { c.run(h.svc) })
	}
	wg.Wait()
	fresh := 0
	for _, c := range calls {
		if c.err != nil {
			t.Fatalf("%+v %v", c.res, c.err)
		}
		if !c.res.Duplicate {
			fresh++
		}
	}
	if fresh != 1 {
		t.Errorf("%d of three copies taken as new, want one", fresh)
	}
}

// A group whose transaction fails as a whole (its COMMIT) runs each of its
// events alone: none is lost, each is answered for its own commit.
func TestIngestGroupThatFailsRunsEachAlone(t *testing.T) {
	groupStores(t, testIngestGroupThatFailsRunsEachAlone)
}

func testIngestGroupThatFailsRunsEachAlone(t *testing.T, pg bool) {
	var g *gateStore
	h := newHarnessWith(t, func(o *threads.Options) {
		g = newGateStore(openStormStore(t, pg))
		g.fail = func(n int32) error {
			if n == 2 {
				return errors.New("disk I/O error")
			}
			return nil
		}
		o.Store = g
	})
	first := &ingestCall{}
	first.body, first.ev = groupEvent(t, "merge.json", "evt-f-first", "a-f-first", "")
	var rest []*ingestCall
	for i := range 5 {
		c := &ingestCall{}
		c.body, c.ev = groupEvent(t, "merge.json", fmt.Sprintf("evt-f%d", i), fmt.Sprintf("a-f%d", i), "")
		rest = append(rest, c)
	}
	ingestGroup(t, h.svc, g, first, rest)
	for _, c := range append([]*ingestCall{first}, rest...) {
		if c.err != nil || c.res.Duplicate {
			t.Errorf("%s: %+v %v, want it ingested alone", c.ev.ID, c.res, c.err)
		}
		if _, err := g.ApprovalGet(context.Background(), c.ev.ApprovalID()); err != nil {
			t.Errorf("%s: %v", c.ev.ApprovalID(), err)
		}
	}
	if n := g.txs.Load(); n != 2+int32(len(rest)) {
		t.Errorf("%d transactions, want %d: the first, the group that failed, then each alone", n, 2+len(rest))
	}
}

// A store that cannot commit at all: every event of the group is told so
// (the backend hears 503 and sends it again), and none is kept.
func TestIngestGroupOnAStoreThatCannotCommit(t *testing.T) {
	groupStores(t, testIngestGroupOnAStoreThatCannotCommit)
}

func testIngestGroupOnAStoreThatCannotCommit(t *testing.T, pg bool) {
	var g *gateStore
	h := newHarnessWith(t, func(o *threads.Options) {
		g = newGateStore(openStormStore(t, pg))
		g.fail = func(n int32) error {
			if n >= 2 {
				return fmt.Errorf("%w: disk full", store.ErrUnavailable)
			}
			return nil
		}
		o.Store = g
	})
	first := &ingestCall{}
	first.body, first.ev = groupEvent(t, "merge.json", "evt-d-first", "a-d-first", "")
	var rest []*ingestCall
	for i := range 4 {
		c := &ingestCall{}
		c.body, c.ev = groupEvent(t, "merge.json", fmt.Sprintf("evt-d%d", i), fmt.Sprintf("a-d%d", i), "")
		rest = append(rest, c)
	}
	ingestGroup(t, h.svc, g, first, rest)
	if first.err != nil {
		t.Errorf("the first event, committed before the store failed: %v", first.err)
	}
	for _, c := range rest {
		if !errors.Is(c.err, store.ErrUnavailable) {
			t.Errorf("%s: %+v %v, want the store's failure", c.ev.ID, c.res, c.err)
		}
		if _, err := g.ApprovalGet(context.Background(), c.ev.ApprovalID()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: %v, want nothing kept", c.ev.ApprovalID(), err)
		}
	}
}

// Two copies of an auto_granted event, which names no approval (so
// nothing keeps them out of one group), in one group: the first is
// recorded, the second answered as a duplicate, and the grant counted
// once.
func TestIngestAutoGrantedTwiceInOneGroup(t *testing.T) {
	groupStores(t, func(t *testing.T, pg bool) {
		var g *gateStore
		m := threads.NewMetrics(nil)
		h := newHarnessWith(t, func(o *threads.Options) {
			g = newGateStore(openStormStore(t, pg))
			o.Store = g
			o.Metrics = m
		})
		first := &ingestCall{}
		first.body, first.ev = groupEvent(t, "merge.json", "evt-a-first", "a-a-first", "")
		body, ev := readEvent(t, "auto.json")
		if ev.ApprovalID() != "" {
			t.Fatalf("auto.json names approval %q; the case needs an event naming none", ev.ApprovalID())
		}
		copies := []*ingestCall{{body: body, ev: ev}, {body: body, ev: ev}}
		ingestGroup(t, h.svc, g, first, copies)
		if n := g.txs.Load(); n != 2 {
			t.Errorf("%d transactions, want 2: the first event's, then one for both copies", n)
		}
		fresh, dup := 0, 0
		for _, c := range copies {
			switch {
			case c.err != nil:
				t.Errorf("a copy: %v", c.err)
			case c.res.Duplicate:
				dup++
			default:
				fresh++
			}
		}
		if fresh != 1 || dup != 1 {
			t.Errorf("%d copies recorded and %d answered duplicate, want one of each", fresh, dup)
		}
		var got dto.Metric
		if err := m.AutoGranted.WithLabelValues("acme").Write(&got); err != nil {
			t.Fatal(err)
		}
		if n := got.GetCounter().GetValue(); n != 1 {
			t.Errorf("bot_auto_granted_total = %v, want 1", n)
		}
	})
}

// staleReads is a store whose reads outside a transaction see an
// approval as it stood before the last write, once: another replica's
// event for it committed between the read ingest prepares from and its
// transaction.
type staleReads struct {
	store.Store
	mu    sync.Mutex
	stale map[string]*store.Approval
}

func (s *staleReads) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	s.mu.Lock()
	a, ok := s.stale[id]
	delete(s.stale, id)
	s.mu.Unlock()
	if ok {
		if a == nil {
			return nil, fmt.Errorf("stale read of %s: %w", id, store.ErrNotFound)
		}
		return a, nil
	}
	return s.Store.ApprovalGet(ctx, id)
}

func (s *staleReads) OneWriter() bool {
	o, ok := s.Store.(store.OneWriter)
	return ok && o.OneWriter()
}

// When the approval changed between the read and the transaction, the
// work on the event's content is done again inside it, from the row as it
// stands: the reask is noted as it would have been, and counted.
func TestIngestReworksWhatAnotherWriterChanged(t *testing.T) {
	var sr *staleReads
	m := threads.NewMetrics(nil)
	h := newHarnessWith(t, func(o *threads.Options) {
		sr = &staleReads{Store: o.Store, stale: map[string]*store.Approval{}}
		o.Store = sr
		o.Metrics = m
	})
	h.ingest(t, "merge.json")
	want := newHarness(t)
	want.ingest(t, "merge.json")
	want.ingest(t, "merge-reasked.json")

	// The reask is prepared from a read that does not see revision 1.
	sr.stale["a-merge1"] = nil
	h.ingest(t, "merge-reasked.json")
	var got dto.Metric
	if err := m.IngestReworked.Write(&got); err != nil {
		t.Fatal(err)
	}
	if n := got.GetCounter().GetValue(); n != 1 {
		t.Errorf("bot_ingest_reworked_total = %v, want 1", n)
	}
	if diff := cmp.Diff(planOf(t, want.store, "a-merge1").Reasks, planOf(t, h.store, "a-merge1").Reasks); diff != "" {
		t.Errorf("the reask worked out again (-as alone +reworked):\n%s", diff)
	}
	rev, err := h.store.RevisionGet(context.Background(), "a-merge1", 2)
	if err != nil {
		t.Fatal(err)
	}
	alone, err := want.store.RevisionGet(context.Background(), "a-merge1", 2)
	if err != nil {
		t.Fatal(err)
	}
	if string(rev.Body) != string(alone.Body) {
		t.Errorf("the revision worked out again differs from the one stored alone")
	}
}

func planOf(t *testing.T, st store.Store, id string) threads.Frozen {
	t.Helper()
	a, err := st.ApprovalGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var fz threads.Frozen
	if err := json.Unmarshal(a.Plan, &fz); err != nil {
		t.Fatal(err)
	}
	return fz
}
