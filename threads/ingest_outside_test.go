package threads_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	dto "github.com/prometheus/client_model/go"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// txMarker is the store as the bot uses it, marking the context each of
// its transactions' work runs in, so that a watch on the service's
// content work tells work inside a transaction from work before it.
type txMarker struct {
	store.Store
}

type inTxKey struct{}

func (s *txMarker) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return fn(context.WithValue(ctx, inTxKey{}, true), tx)
	})
}

func (s *txMarker) OneWriter() bool {
	o, ok := s.Store.(store.OneWriter)
	return ok && o.OneWriter()
}

// contentWorkWatch counts where the service worked on events' content.
type contentWorkWatch struct {
	mu             sync.Mutex
	before, inside int
}

func (w *contentWorkWatch) saw(ctx context.Context) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if ctx.Value(inTxKey{}) != nil {
		w.inside++
	} else {
		w.before++
	}
}

// took returns the counts since it was last called.
func (w *contentWorkWatch) took() (before, inside int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	before, inside = w.before, w.inside
	w.before, w.inside = 0, 0
	return before, inside
}

// slowEvent is fixture's event for approval id, its arguments one string
// of piece repeated to hostileSize bytes: an event slow to redact.
func slowEvent(t *testing.T, fixture, id, piece string) ([]byte, *approval.Event) {
	t.Helper()
	body, _ := readEvent(t, fixture)
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	m["id"] = "evt-" + strings.TrimSuffix(fixture, ".json") + "-" + id
	data := m["data"].(map[string]any)
	data["id"] = id
	data["call"].(map[string]any)["arguments"] = map[string]any{"url": strings.Repeat(piece, hostileSize/len(piece))}
	body, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse %s as %s: %v", fixture, id, err)
	}
	return body, ev
}

// The work on an event's content (the stored form's projection,
// redaction and fingerprints, what a reask changed) runs before the
// transaction, which only reads and writes rows: ingesting an event
// whose redaction takes tens of milliseconds does that work once, before
// its transaction, as a request and as a reask; and the same reask
// worked out inside the transaction (when another writer changed the
// approval meanwhile) shows that the watch sees such work.
func TestIngestContentWorkOutsideTheTransaction(t *testing.T) {
	var sr *staleReads
	m := threads.NewMetrics(nil)
	h := newHarnessWith(t, func(o *threads.Options) {
		sr = &staleReads{Store: &txMarker{Store: o.Store}, stale: map[string]*store.Approval{}}
		o.Store = sr
		o.Metrics = m
	})
	watch := &contentWorkWatch{}
	threads.WatchContentWork(h.svc, watch.saw)
	const piece = "a=" // among the slowest shapes to redact (docs/performance.md)
	reworked := func() float64 {
		var got dto.Metric
		if err := m.IngestReworked.Write(&got); err != nil {
			t.Fatal(err)
		}
		return got.GetCounter().GetValue()
	}
	ingest := func(fixture, id string) (before, inside int) {
		t.Helper()
		body, ev := slowEvent(t, fixture, id, piece)
		watch.took()
		if _, err := h.ingestBody(body, ev); err != nil {
			t.Fatalf("ingest %s of %s: %v", fixture, id, err)
		}
		return watch.took()
	}

	for _, fixture := range []string{"merge.json", "merge-reasked.json"} {
		if before, inside := ingest(fixture, "a-out"); before != 1 || inside != 0 {
			t.Errorf("%s: its content was worked on %d times before its transaction and %d in it, want once before and never in it",
				fixture, before, inside)
		}
	}
	if n := reworked(); n != 0 {
		t.Fatalf("%v events worked on inside their transaction, want none", n)
	}

	// The control: a reask prepared from a read that does not see its
	// approval is worked on before its transaction as a new request, and
	// again inside it from the row as it stands.
	ingest("merge.json", "a-in")
	sr.mu.Lock()
	sr.stale["a-in"] = nil
	sr.mu.Unlock()
	if before, inside := ingest("merge-reasked.json", "a-in"); before != 1 || inside != 1 {
		t.Errorf("the control's content was worked on %d times before its transaction and %d in it, want once each",
			before, inside)
	}
	if n := reworked(); n != 1 {
		t.Fatalf("%v events worked on inside their transaction, want the control's one", n)
	}
}
