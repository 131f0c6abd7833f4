package threads_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
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
		cfg, st := bubbleStore(t)
		ctx := context.Background()
		clock := &jumpClock{}
		// The fixture's time, not the bubble's year 2000, which would put
		// its requested_at in the future.
		clock.offset.Store(int64(time.Until(threadstest.FixtureNow)))
		surf := &gatedRecorder{recorder: &recorder{}, gate: make(chan struct{})}
		svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clock, Fallback: surf})
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
		clock.offset.Add(int64(time.Hour)) // far past the lease
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
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 15*time.Minute) // the first step: a mention in each thread
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the step did not fire: %+v", r)
	}
	h.ingest(t, "merge-resolved.json") // decided in the console before the mentions went out
	rows, err := h.store.OutboxClaim(context.Background(), store.OutboxClaimParams{Worker: "test", Now: h.clock.Now(),
		Lease: time.Minute, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if strings.Contains(string(r.Payload), `"thread":"escalation"`) {
			t.Errorf("the escalation %s of a closed approval is still to be performed", r.ID)
		}
	}
	if len(rows) == 0 {
		t.Fatal("the resolve queued nothing (its edits and reply): the test sees nothing")
	}
}

// More approvals than one claim takes reach their deadline together: a
// tick inside the deadline's grace (clicks received before it may still
// be being recorded) records every deny and returns; the next tick claims
// none of them again; and the denies fall due only once the grace is
// over.
func TestATickInTheGraceReturns(t *testing.T) {
	h := newHarness(t)
	body, _ := readEvent(t, "merge.json")
	const n = 250 // more than one claim's batch (200)
	for i := range n {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		m["id"] = fmt.Sprintf("evt-grace-%03d", i)
		m["data"].(map[string]any)["id"] = fmt.Sprintf("a-grace%03d", i)
		b, _ := json.Marshal(m)
		ev, err := approval.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.ingestBody(b, ev); err != nil {
			t.Fatal(err)
		}
	}
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := h.svc.Tick(ctx)
	if err != nil || res.Deadlines != n {
		t.Fatalf("a tick in the grace: %+v, %v (it must record the %d denies, and return)", res, err, n)
	}
	if r := h.tick(t); r.Approvals != 0 || r.Deadlines != 0 {
		t.Fatalf("a second tick in the grace: %+v, want nothing claimed again", r)
	}
	waiting := func() store.LaneStats {
		t.Helper()
		st, err := h.store.OutboxStats(context.Background(), h.clock.Now())
		if err != nil {
			t.Fatal(err)
		}
		return st.Lanes[threads.LaneBackend]
	}
	if w := waiting(); w.Pending != n || w.OldestAge != 0 {
		t.Fatalf("in the grace the denies are %+v, want %d waiting and none due", w, n)
	}
	h.at(t, 24*time.Hour+threads.RecordBound+time.Millisecond)
	if w := waiting(); w.Pending != n || w.OldestAge == 0 {
		t.Fatalf("after the grace the denies are %+v, want all %d due", w, n)
	}
}

// A deadline deny that does not land (the call changed at the last
// moment) re-arms the same deadline, not a later one: an approval
// received after the real deadline is still refused.
func TestADeadlineReArmsItself(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	deadline := requested.Add(24 * time.Hour)
	h.at(t, 24*time.Hour+threads.RecordBound)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("at the deadline: %+v", r)
	}
	h.ingest(t, "merge-reasked.json") // revision 2, before the deny went out
	h.drain(t)                        // the deny of revision 1 is refused by the bot itself
	if a := h.state(t, "a-merge1"); a.State != "pending" || !a.DeadlineAt.Equal(deadline) {
		t.Fatalf("after the deny missed: %s, deadline %v, want pending with the deadline %v", a.State, a.DeadlineAt, deadline)
	}
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 2, Approve: true, Person: slackPerson("U0KEVIN"), ReceivedAt: deadline.Add(threads.RecordBound / 2)})
	if err != nil || res.Sent {
		t.Fatalf("an approval received after the real deadline: %+v %v, want it refused", res, err)
	}
}

// lateCommit is a store whose commits are confirmed only after the
// caller's context has run out, as a slow flush or a synchronous standby
// makes them: the transaction commits, the caller's context ends (out),
// and the caller hears its error, as a failed COMMIT (store.ErrCommit).
// The context ends only once the commit is through, not on a timer that
// a stalled click could meet in its reads before the transaction.
type lateCommit struct {
	store.Store
	out context.CancelFunc
}

func (l *lateCommit) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if err := l.Store.InTx(context.WithoutCancel(ctx), fn); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		return nil
	}
	l.out()
	<-ctx.Done()
	return fmt.Errorf("%w: commit transaction: %w", store.ErrCommit, ctx.Err())
}

// notBegun is a store whose transactions, once it is broken, never
// begin (no connection came in time), and which counts the reads of an
// approval.
type notBegun struct {
	store.Store
	broken atomic.Bool
	reads  atomic.Int32
}

func (n *notBegun) InTx(ctx context.Context, fn func(ctx context.Context, tx store.Tx) error) error {
	if !n.broken.Load() {
		return n.Store.InTx(ctx, fn)
	}
	<-ctx.Done()
	return fmt.Errorf("begin transaction: %w", ctx.Err())
}

func (n *notBegun) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	n.reads.Add(1)
	return n.Store.ApprovalGet(ctx, id)
}

// A click whose transaction never began is not read again to learn
// whether it committed: nothing did, and the person hears so at once
// rather than after a read that waits for the same busy store.
func TestAClickThatNeverBeganIsNotReadAgain(t *testing.T) {
	var nb *notBegun
	h := newHarnessWith(t, func(o *threads.Options) { nb = &notBegun{Store: o.Store}; o.Store = nb })
	h.ingest(t, "merge.json")
	nb.broken.Store(true)
	before := nb.reads.Load()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	res, err := h.svc.Decide(ctx, threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN")})
	if err == nil || res.Sent {
		t.Fatalf("a click whose transaction never began: %+v %v, want an error", res, err)
	}
	if n := nb.reads.Load() - before; n != 0 {
		t.Errorf("the approval was read %d times after the failure, want none", n)
	}
}

// A click whose commit went through after its time ran out is reported
// as sent: the decision is on its way, so "nothing was sent" would be
// false.
func TestACommitConfirmedLateIsSent(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	h := newHarnessWith(t, func(o *threads.Options) { o.Store = &lateCommit{Store: o.Store, out: cancel} })
	h.ingest(t, "merge.json")
	res, err := h.svc.Decide(ctx, threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN")})
	if err != nil || !res.Sent {
		t.Fatalf("a click committed late: %+v %v, want it sent", res, err)
	}
	if a := h.state(t, "a-merge1"); len(a.Deciding) == 0 {
		t.Fatal("the decision is not in flight")
	}
}

// The outbox's idle poll runs on the injected clock: a row that waits for
// a time the test's fake clock reaches is performed when the clock is
// advanced there, without any wall-clock wait (under testing/synctest a
// poll on the wall clock would still be sleeping when the bubble settles).
func TestTheIdlePollRunsOnTheInjectedClock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg, st := bubbleStore(t)
		ctx := context.Background()
		clock := clockwork.NewFakeClockAt(threadstest.FixtureNow)
		// Every post is refused, asking for 10 s, until the clock is there.
		open := threadstest.FixtureNow.Add(10 * time.Second)
		var refused atomic.Int64
		surf := &recorder{fail: func(op string) error {
			if op == "post" && clock.Now().Before(open) {
				refused.Add(1)
				return threads.RetryAfter(errors.New("rate limited"), 10*time.Second)
			}
			return nil
		}}
		svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clock, Fallback: surf})
		if err != nil {
			t.Fatal(err)
		}
		h := &harness{svc: svc, store: st, surf: surf}
		h.ingest(t, "search.json") // its cards, refused with a 10 s wait
		run, stop := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = svc.RunOutbox(run, threads.WorkerOptions{Poll: time.Second, PacedPoll: time.Second})
		}()
		synctest.Wait()
		cards := refused.Load()
		if cards == 0 || postCount(surf) != 0 {
			t.Fatalf("%d posts refused, %d made: want every card refused and waiting", cards, postCount(surf))
		}
		clock.Advance(10 * time.Second)
		synctest.Wait()
		if n := postCount(surf); n != int(cards) || refused.Load() != cards {
			t.Fatalf("%d posts made once the fake clock reached the rows' time (%d refused), want all %d without any wall-clock wait",
				n, refused.Load(), cards)
		}
		stop()
		<-done
	})
}

// postCount is how many posts the recorder took, read under its lock.
func postCount(r *recorder) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.posts)
}

// bubbleStore is the test configuration and a store on disk, opened in
// the caller's testing/synctest bubble (its pool's goroutine is the
// bubble's) and closed when the test ends.
func bubbleStore(t *testing.T) (*config.Config, store.Store) {
	t.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(testConfig), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	return cfg, threadstest.OpenSQLite(t)
}
