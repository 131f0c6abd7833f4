package threads_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// txTimer is the store as the bot uses it, adding up how long its
// transactions' work runs (the write lock held, on SQLite), commit aside.
type txTimer struct {
	store.Store
	mu sync.Mutex
	in time.Duration
}

func (s *txTimer) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	return s.Store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		start := time.Now()
		defer func() {
			s.mu.Lock()
			s.in += time.Since(start)
			s.mu.Unlock()
		}()
		return fn(ctx, tx)
	})
}

// took returns the time added up since it was last called.
func (s *txTimer) took() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.in
	s.in = 0
	return d
}

func (s *txTimer) OneWriter() bool {
	o, ok := s.Store.(store.OneWriter)
	return ok && o.OneWriter()
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
// whose redaction takes tens of milliseconds holds a transaction open
// for a small part of that, as a request and as a reask; and the same
// reask worked out inside the transaction (when another writer changed
// the approval meanwhile) shows that the measure sees such work.
func TestIngestContentWorkOutsideTheTransaction(t *testing.T) {
	var timer *txTimer
	var sr *staleReads
	m := threads.NewMetrics(nil)
	h := newHarnessWith(t, func(o *threads.Options) {
		timer = &txTimer{Store: o.Store}
		sr = &staleReads{Store: timer, stale: map[string]*store.Approval{}}
		o.Store = sr
		o.Metrics = m
	})
	const piece = "a=" // among the slowest shapes to redact (docs/performance.md)
	reworked := func() float64 {
		var got dto.Metric
		if err := m.IngestReworked.Write(&got); err != nil {
			t.Fatal(err)
		}
		return got.GetCounter().GetValue()
	}
	ingest := func(fixture, id string) time.Duration {
		t.Helper()
		body, ev := slowEvent(t, fixture, id, piece)
		timer.took()
		if _, err := h.ingestBody(body, ev); err != nil {
			t.Fatalf("ingest %s of %s: %v", fixture, id, err)
		}
		return timer.took()
	}

	_, ev := slowEvent(t, "merge-reasked.json", "a-measure", piece)
	start := time.Now()
	if _, err := approval.StoredForm(ev.Approval); err != nil {
		t.Fatal(err)
	}
	content := time.Since(start)

	request := ingest("merge.json", "a-out")
	reask := ingest("merge-reasked.json", "a-out")
	if n := reworked(); n != 0 {
		t.Fatalf("%v events worked on inside their transaction, want none", n)
	}
	t.Logf("the content work alone: %v; in the transaction: the request %v, the reask %v", content, request, reask)
	for what, d := range map[string]time.Duration{"request": request, "reask": reask} {
		if d > content/2 {
			t.Errorf("the %s's transaction ran %v, its content work alone takes %v: that work is in the transaction", what, d, content)
		}
	}

	// The control: a reask prepared from a read that does not see its
	// approval is worked on inside its transaction.
	ingest("merge.json", "a-in")
	sr.mu.Lock()
	sr.stale["a-in"] = nil
	sr.mu.Unlock()
	inside := ingest("merge-reasked.json", "a-in")
	if n := reworked(); n != 1 {
		t.Fatalf("%v events worked on inside their transaction, want the control's one", n)
	}
	t.Logf("the reask worked on inside its transaction: %v", inside)
	if inside < content/2 {
		t.Errorf("the control's transaction, with the content work in it, ran %v, under half the work alone (%v): the measure does not see that work", inside, content)
	}
}
