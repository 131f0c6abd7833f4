package threads_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"time"

	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads"
)

// pacedRecorder is the recorder as a surface whose platform limits it.
type pacedRecorder struct{ *recorder }

func (pacedRecorder) PaceKey(kind, target string) string {
	if kind == threads.KindEditCard {
		return "slack:update"
	}
	return "slack:post:" + target
}

func (pacedRecorder) Pace(key string) (time.Duration, int) { return time.Second, 1 }

// Each row goes into its lane with its priority and the budget it
// spends: a decision in the backend lane, where no chat row can hold a
// worker; cards, replies and edits in the chat lane, ordered by what a
// person needs first, paced per channel.
func TestRowsGoIntoTheirLanes(t *testing.T) {
	h := newHarnessWith(t, func(o *threads.Options) {
		o.Surfaces = map[string]threads.Surface{"slack": pacedRecorder{o.Fallback.(*recorder)}}
	})
	h.ingest(t, "merge.json")
	ctx := context.Background()
	claim := func(lane string) []*store.OutboxRow {
		rows, err := h.store.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "test", Now: h.clock.Now(),
			Lease: time.Minute, Limit: 100, Lane: lane})
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	if rows := claim(threads.LaneBackend); len(rows) != 0 {
		t.Fatalf("a request put %d rows in the backend lane", len(rows))
	}
	rows := claim(threads.LaneChat)
	slackCards := 0
	for _, r := range rows {
		if r.Kind != threads.KindPostCard || r.Priority != threads.PriorityCard || r.Lane != threads.LaneChat {
			t.Errorf("row %s %s: lane %s priority %d", r.Kind, r.Target, r.Lane, r.Priority)
		}
		switch r.Target {
		case "slack:C0APPROVALS":
			slackCards++
			if r.PaceKey != "slack:post:slack:C0APPROVALS" {
				t.Errorf("the Slack card spends %q", r.PaceKey)
			}
		default:
			if r.PaceKey != "" {
				t.Errorf("%s is not a paced surface here, yet its row spends %q", r.Target, r.PaceKey)
			}
		}
	}
	if slackCards != 1 {
		t.Fatalf("%d Slack cards claimed, want 1: %+v", slackCards, rows)
	}

	h2 := newDecideHarness(t, time.Minute)
	h2.ingest(t, "merge.json")
	h2.drain(t)
	if res := h2.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("decide: %+v", res)
	}
	dec, err := h2.store.OutboxClaim(ctx, store.OutboxClaimParams{Worker: "test", Now: h2.clock.Now(),
		Lease: time.Minute, Limit: 100, Lane: threads.LaneBackend})
	if err != nil {
		t.Fatal(err)
	}
	if len(dec) != 1 || dec[0].Kind != threads.KindDecision || dec[0].PaceKey != "" {
		t.Fatalf("the backend lane holds %+v, want the one decision, unpaced", dec)
	}
}

// flakyComplete is a store whose OutboxComplete fails the first n times,
// as a full disk or a lost connection does.
type flakyComplete struct {
	store.Store
	mu    sync.Mutex
	fails int
	calls int
}

func (f *flakyComplete) OutboxComplete(ctx context.Context, p store.OutboxCompleteParams) error {
	f.mu.Lock()
	f.calls++
	fail := f.calls <= f.fails
	f.mu.Unlock()
	if fail {
		return fmt.Errorf("complete outbox row: %w", store.ErrUnavailable)
	}
	return f.Store.OutboxComplete(ctx, p)
}

// A performed effect whose record fails is recorded again at once, in
// process, not left to its lease: after the lease another worker would
// perform it again (a card posted twice, the first copy's buttons live).
func TestAFailedRecordIsRetriedInProcess(t *testing.T) {
	var flaky *flakyComplete
	h := newHarnessWith(t, func(o *threads.Options) {
		flaky = &flakyComplete{Store: o.Store, fails: 3}
		o.Store = flaky
	})
	h.ingest(t, "merge.json")
	h.drain(t)
	if n := len(h.surf.posts); n != 2 {
		t.Fatalf("%d cards posted, want one a target", n)
	}
	if flaky.calls < 4 {
		t.Fatalf("OutboxComplete was called %d times: the failed records were not retried", flaky.calls)
	}
	// Nothing is left to perform again, whenever the lease would lapse.
	h.clock.Advance(time.Hour)
	if n := h.drain(t); n != 0 {
		t.Fatalf("%d rows performed again after the lease", n)
	}
	if n := len(h.surf.posts); n != 2 {
		t.Fatalf("%d cards posted after the lease, want still 2", n)
	}
}

// jumpClock is the bubble's clock, moved on at will: a clock that jumps.
type jumpClock struct{ offset atomic.Int64 }

func (c *jumpClock) Now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

// gatedRecorder holds every post until the gate opens.
type gatedRecorder struct {
	*recorder
	gate  chan struct{}
	calls atomic.Int64
}

func (g *gatedRecorder) Post(ctx context.Context, req threads.PostRequest) (threads.PostResult, error) {
	g.calls.Add(1)
	<-g.gate
	return g.recorder.Post(ctx, req)
}

// A clock that jumps past the lease while rows are in flight does not
// make their lane claim them again: the rows it performs are excluded
// from its claims, so each card is posted once.
func TestAClockJumpDoesNotRepeatRowsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, err := config.Parse("bot.yaml", []byte(testConfig), func(string) (string, bool) { return "", false })
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		if err := st.Migrate(ctx); err != nil {
			t.Fatal(err)
		}
		clock := &jumpClock{}
		surf := &gatedRecorder{recorder: &recorder{}, gate: make(chan struct{})}
		svc, err := threads.New(threads.Options{Store: st, Tenants: tenants{cfg}, Clock: clock, Fallback: surf})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{svc: svc, store: st, surf: surf.recorder}
		h.ingest(t, "merge.json") // a card for each of two targets
		run, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = svc.RunOutbox(run, threads.WorkerOptions{Lease: 10 * time.Second})
		}()
		synctest.Wait() // both cards in flight, held at the surface
		if n := surf.calls.Load(); n != 2 {
			t.Fatalf("%d posts in flight, want 2", n)
		}
		clock.offset.Store(int64(time.Hour)) // far past the lease
		svc.Wake()
		time.Sleep(3 * time.Second) // virtual: the lanes poll again and again
		synctest.Wait()
		if n := surf.calls.Load(); n != 2 {
			t.Fatalf("after the clock jumped past the lease, %d posts were started, want still 2", n)
		}
		close(surf.gate)
		synctest.Wait()
		stop()
		<-done
		if n := len(surf.posts); n != 2 {
			t.Fatalf("%d cards posted, want 2", n)
		}
	})
}

// Closing an approval drops its escalations still waiting: nobody need
// be told to look at it, and a row that would post nothing must not
// spend its channel's budget.
func TestClosingDropsWaitingEscalations(t *testing.T) {
	metrics := threads.NewMetrics(prometheus.NewRegistry())
	h := newHarnessWith(t, func(o *threads.Options) { o.Metrics = metrics })
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 15*time.Minute) // the first step: a mention in each thread
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the step did not fire: %+v", r)
	}
	h.ingest(t, "merge-resolved.json") // decided in the console before the mentions went out
	h.drain(t)
	if n := len(h.escalations()); n != 0 {
		t.Fatalf("%d escalations posted for a closed approval", n)
	}
	if n := testutil.ToFloat64(metrics.Deliveries.WithLabelValues("log", threads.KindEscalation, "ok")); n != 0 {
		t.Errorf("%v escalation rows were performed after the approval closed, want them dropped", n)
	}
	st, err := h.store.OutboxStats(context.Background(), h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if st.Pending != 0 || st.Dead != 0 {
		t.Errorf("outbox after the drop: %+v", st)
	}
}
