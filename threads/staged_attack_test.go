package threads_test

// Attacks on the deadline's deny recorded at the deadline's tick and sent
// once its grace is over (RecordBound after the deadline), with a
// person's click taking its place until then: a click committing as the
// deny goes, replicas whose clocks differ, a restart, a reask, a cancel,
// two clicks racing, a replacement that fails, the ladder's buttons, no
// free worker, one instant shared by the tick and a click.

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// gatedStore holds the next transaction begun after gate is set until
// its release closes: a transaction that waits for the writer (SQLite's
// one writer busy with a tick group) or for a row lock (PostgreSQL).
type gatedStore struct {
	store.Store
	gate atomic.Pointer[txGate]
}

type txGate struct{ entered, release chan struct{} }

func newGate() *txGate {
	return &txGate{entered: make(chan struct{}), release: make(chan struct{})}
}

func (g *gatedStore) OneWriter() bool {
	w, ok := g.Store.(store.OneWriter)
	return ok && w.OneWriter()
}

func (g *gatedStore) InTx(ctx context.Context, fn func(context.Context, store.Tx) error) error {
	if gt := g.gate.Swap(nil); gt != nil {
		close(gt.entered)
		<-gt.release
	}
	return g.Store.InTx(ctx, fn)
}

// hookBackend runs a hook as a decision reaches the backend, before it
// is sent: what else happens while the call is in flight.
type hookBackend struct {
	threads.Backend
	mu sync.Mutex
	// onDeadline runs once, as the deadline's deny is being sent.
	onDeadline func()
	// onPerson runs for every person's decision as it is being sent.
	onPerson func(threads.DecisionCall)
}

func (b *hookBackend) Decide(ctx context.Context, c threads.DecisionCall) (threads.DecisionAnswer, error) {
	b.mu.Lock()
	var f func()
	if c.Surface == threads.DeadlineSurface {
		f, b.onDeadline = b.onDeadline, nil
	}
	p := b.onPerson
	b.mu.Unlock()
	if f != nil {
		f()
	}
	if p != nil && c.Surface != threads.DeadlineSurface {
		p(c)
	}
	return b.Backend.Decide(ctx, c)
}

func (b *hookBackend) setDeadline(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onDeadline = f
}

func (b *hookBackend) setPerson(f func(threads.DecisionCall)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.onPerson = f
}

type stagedHarness struct {
	*decideHarness
	gated *gatedStore
	be    *hookBackend
}

func newStagedHarness(t *testing.T) *stagedHarness {
	t.Helper()
	var gs *gatedStore
	var hb *hookBackend
	h := newDecideHarnessFrom(t, testConfig, time.Minute, func(o *threads.Options) {
		gs = &gatedStore{Store: o.Store}
		o.Store = gs
		hb = &hookBackend{Backend: o.Backend}
		o.Backend = hb
	})
	return &stagedHarness{decideHarness: h, gated: gs, be: hb}
}

var stagedDeadline = requested.Add(24 * time.Hour)

// stage brings a-merge1 to its deadline's tick at a quarter of the grace:
// the deny is recorded, to be sent at the grace's end.
func (h *stagedHarness) stage(t *testing.T) {
	t.Helper()
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.stageTick(t)
}

// stageTick is stage's tick alone.
func (h *stagedHarness) stageTick(t *testing.T) {
	t.Helper()
	h.at(t, 24*time.Hour+threads.RecordBound/4)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v, want its deny staged", r)
	}
	if a := h.state(t, "a-merge1"); !strings.Contains(string(a.Deciding), threads.DeadlineActor) {
		t.Fatalf("after the tick: deciding %s, want the deadline's deny", a.Deciding)
	}
}

func clickAt(svc *threads.Service, approve bool, user string, rev int, received time.Time) (threads.DecideResult, error) {
	return svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: rev, Approve: approve, Person: slackPerson(user), Comment: "from " + user, ReceivedAt: received})
}

func describe(ds []backendDecision) string {
	var s []string
	for _, d := range ds {
		s = append(s, d.actor+" "+d.decision)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

type backendDecision struct{ actor, decision, code string }

func (h *stagedHarness) decisions() []backendDecision {
	var out []backendDecision
	for _, d := range h.fake.Decisions() {
		out = append(out, backendDecision{actor: d.Request.Actor, decision: d.Request.Decision, code: d.Code})
	}
	return out
}

func (h *stagedHarness) tellsTo(user string) []string {
	h.surf.mu.Lock()
	defer h.surf.mu.Unlock()
	var out []string
	for _, tl := range h.surf.tells {
		if tl.User == user {
			out = append(out, tl.Text)
		}
	}
	return out
}

// exactlyOne checks the one outcome allowed for an approve by user:kevin
// received before the deadline and recorded while the deny's grace was
// ending: either his approval was sent (told so) and is the one decision
// the backend got, or he was told it was not sent and the deadline's deny
// is the one decision.
func (h *stagedHarness) exactlyOne(t *testing.T, res threads.DecideResult) {
	t.Helper()
	got := h.decisions()
	a := h.state(t, "a-merge1")
	if res.Sent {
		if len(got) != 1 || got[0].actor != "user:kevin" || got[0].decision != "approve" || a.State != "approved" {
			t.Fatalf("kevin was told %q, but the backend got %s and the approval is %s; kevin was told next %q",
				res.Reason.String(), describe(got), a.State, h.tellsTo("U0KEVIN"))
		}
		return
	}
	if len(got) != 1 || got[0].actor != threads.DeadlineActor || a.State != "expired" {
		t.Fatalf("kevin was told %q (not sent); the backend got %s, state %s: want the deadline's deny alone",
			res.Reason.String(), describe(got), a.State)
	}
}

// A click received before the deadline whose transaction began inside
// the grace (its time read there) but that commits while the deadline's
// deny, its grace over, is already at the backend. Decide judges the
// grace by the time read before its transaction; the deny's row takes the
// deny under the approval's lock before it sends it (takeDeadline), so
// the click either took the deny's place first or is told the deny is on
// its way: never "Sending your approval…" over a deny that then lands.
func TestAClickCommittingAsTheDenyGoesOutIsNotPromisedASend(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.at(t, 24*time.Hour+threads.RecordBound-100*time.Millisecond)
	gate := newGate()
	h.gated.gate.Store(gate)
	type result struct {
		res threads.DecideResult
		err error
	}
	clicked := make(chan result, 1)
	go func() {
		res, err := clickAt(h.svc, true, "U0KEVIN", 1, stagedDeadline.Add(-time.Millisecond))
		clicked <- result{res, err}
	}()
	<-gate.entered // the click's time is read; its transaction waits for the writer
	var click result
	h.be.setDeadline(func() {
		close(gate.release) // the click's transaction gets the writer as the deny is at the backend
		click = <-clicked
	})
	h.at(t, 24*time.Hour+threads.RecordBound) // the grace is over: the deny's row is due
	h.drain(t)
	h.drain(t)
	if click.err != nil {
		t.Fatal(click.err)
	}
	h.exactlyOne(t, click.res)
}

// The same with two replicas whose clocks are 50 ms apart, and no stall
// at all: the replica ahead sends the deny at its grace's end while, on
// the other's clock, the grace still lasts; a click that replica received
// 10 ms before the deadline and records 960 ms later (inside
// RecordBound) must not take the place of a deny already taken to go.
func TestAClickOnAReplicaBehindDoesNotReplaceADenyOnItsWay(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	var res threads.DecideResult
	var err error
	h.be.setDeadline(func() {
		o := h.opts
		o.Clock = clockwork.NewFakeClockAt(h.clock.Now().Add(-50 * time.Millisecond))
		o.Worker = "replica-b"
		b, nerr := threads.New(o)
		if nerr != nil {
			err = nerr
			return
		}
		res, err = clickAt(b, true, "U0KEVIN", 1, stagedDeadline.Add(-10*time.Millisecond))
	})
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	h.drain(t)
	if err != nil {
		t.Fatal(err)
	}
	h.exactlyOne(t, res)
}

// A process restarted between the deny's staging and its sending (the
// rows and the decision in flight are in the store, nothing in memory):
// a click received before the deadline by the new process still takes
// the deny's place, and the backend gets it alone.
func TestStagedDenySurvivesARestart(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.restart(t)
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	res, err := clickAt(h.svc, true, "U0KEVIN", 1, stagedDeadline.Add(-time.Millisecond))
	if err != nil || !res.Sent {
		t.Fatalf("after a restart: %+v %v", res, err)
	}
	h.restart(t)
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	if r := h.tick(t); r.Deadlines != 0 {
		t.Fatalf("the deadline fired again: %+v", r)
	}
	h.drain(t)
	if got := h.decisions(); len(got) != 1 || got[0].actor != "user:kevin" || got[0].decision != "approve" {
		t.Fatalf("backend got %s", describe(got))
	}
	// And with no click: the new process's poll sends the deny once, with
	// no due time in memory, through RunOutbox.
	h2 := newStagedHarness(t)
	h2.stage(t)
	h2.restart(t)
	h2.at(t, 24*time.Hour+threads.RecordBound)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = h2.svc.RunOutbox(ctx, threads.WorkerOptions{Poll: time.Hour}) }()
	defer func() { cancel(); <-done }()
	threadstest.Eventually(t, "the deny sent by the restarted process", func() bool { return len(h2.fake.Decisions()) == 1 })
}

// A reask during the grace: the staged deny is for the old revision; it
// is refused by the bot itself (stale), the same deadline is armed again
// and the next tick denies the new revision, once. A click on the old
// card is superseded, and an Approve on the new one comes after the
// deadline.
func TestStagedDenyAndAReaskInTheGrace(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	h.fake.AddApproval("a-merge1", 2, arguments(t, "a-merge1.r2.json"), false)
	h.ingest(t, "merge-reasked.json")
	if res, err := clickAt(h.svc, true, "U0KEVIN", 1, stagedDeadline.Add(-time.Millisecond)); err != nil || res.Sent {
		t.Fatalf("a click on the superseded card: %+v %v", res, err)
	}
	if res, err := clickAt(h.svc, true, "U0KEVIN", 2, stagedDeadline.Add(threads.RecordBound/2)); err != nil || res.Sent {
		t.Fatalf("an Approve after the deadline on the new card: %+v %v", res, err)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	for range 3 {
		h.tick(t)
		h.drain(t)
		h.clock.Advance(time.Second)
	}
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Actor != threads.DeadlineActor || got[0].Request.Revision != 2 {
		t.Fatalf("backend got %+v, want one deny, of revision 2", got)
	}
	if a := h.state(t, "a-merge1"); a.State != "expired" || len(a.Deciding) != 0 {
		t.Fatalf("state %s deciding %s", a.State, a.Deciding)
	}
}

// A cancel during the grace: nothing reaches the backend, and nothing is
// left in flight.
func TestStagedDenyAndACancelInTheGrace(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	ev := &approval.Event{ID: "evt-merge-cancel", Type: approval.EventCancelled, Tenant: "acme",
		Cancelled: &approval.Cancelled{ApprovalID: "a-merge1", Reason: "the job stopped"}}
	if _, err := h.ingestBody([]byte("merge-cancel"), ev); err != nil {
		t.Fatal(err)
	}
	if res, err := clickAt(h.svc, false, "U0KEVIN", 1, stagedDeadline.Add(threads.RecordBound/2)); err != nil || res.Sent {
		t.Fatalf("a Deny after the cancel: %+v %v", res, err)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	h.tick(t)
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend for a cancelled approval", n)
	}
	if a := h.state(t, "a-merge1"); a.State != "cancelled" || len(a.Deciding) != 0 {
		t.Fatalf("state %s deciding %s", a.State, a.Deciding)
	}
}

// Two clicks race to take the staged deny's place: one does, the other is
// told who is deciding; the backend gets one decision.
func TestTwoClicksRaceToReplaceTheStagedDeny(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	var wg sync.WaitGroup
	res := make([]threads.DecideResult, 2)
	errs := make([]error, 2)
	wg.Go(func() { res[0], errs[0] = clickAt(h.svc, false, "U0KEVIN", 1, h.clock.Now()) })
	wg.Go(func() { res[1], errs[1] = clickAt(h.svc, true, "U0LEE", 1, stagedDeadline.Add(-time.Millisecond)) })
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if res[0].Sent == res[1].Sent {
		t.Fatalf("both or neither sent: %+v", res)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	h.tick(t)
	h.drain(t)
	if got := h.decisions(); len(got) != 1 || got[0].actor == threads.DeadlineActor {
		t.Fatalf("backend got %s, want the one click that was sent", describe(got))
	}
}

// A replacement Deny that the backend refuses arms the same deadline
// again: ticks during and after the grace stage one more deny, sent once;
// an Approve received after the deadline is still refused in between.
func TestReplacedDenyThatFailsRearmsOnce(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.fake.SetForbidden("user:kevin")
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	if res, err := clickAt(h.svc, false, "U0KEVIN", 1, h.clock.Now()); err != nil || !res.Sent {
		t.Fatalf("a Deny in the grace: %+v %v", res, err)
	}
	h.drain(t) // refused by the backend
	if a := h.state(t, "a-merge1"); !a.DeadlineAt.Equal(stagedDeadline) || len(a.Deciding) != 0 {
		t.Fatalf("deadline %v deciding %s", a.DeadlineAt, a.Deciding)
	}
	if r := h.tick(t); r.Deadlines != 1 { // in the grace still: staged again
		t.Fatalf("tick: %+v", r)
	}
	if r := h.tick(t); r.Deadlines != 0 {
		t.Fatalf("staged twice: %+v", r)
	}
	if res, err := clickAt(h.svc, true, "U0LEE", 1, stagedDeadline.Add(time.Millisecond)); err != nil || res.Sent {
		t.Fatalf("an Approve received after the deadline: %+v %v", res, err)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	for range 3 {
		h.drain(t)
		h.tick(t)
		h.clock.Advance(time.Second)
	}
	got := h.decisions()
	if len(got) != 2 || got[0].actor != "user:kevin" || got[1].actor != threads.DeadlineActor || got[1].decision != "deny" {
		t.Fatalf("backend got %s, want kevin's refused deny, then one deadline deny", describe(got))
	}
	if a := h.state(t, "a-merge1"); a.State != "expired" {
		t.Fatalf("state %s", a.State)
	}
}

// I'm looking and Escalate now during the grace record nothing.
func TestLadderButtonsInTheGraceRecordNothing(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	h.at(t, 24*time.Hour+threads.RecordBound/2)
	before := h.state(t, "a-merge1")
	if r := h.look(t, "a-merge1", 1, "U0KEVIN"); r.Done {
		t.Fatalf("I'm looking in the grace: %+v", r)
	}
	if r := h.escalateNow(t, "a-merge1", 1, 0, "U0KEVIN"); r.Done {
		t.Fatalf("Escalate now in the grace: %+v", r)
	}
	if after := h.state(t, "a-merge1"); string(after.LadderState) != string(before.LadderState) || after.StepsDone != before.StepsDone {
		t.Fatalf("ladder changed in the grace")
	}
}

// With one backend worker busy on a person's decision as the staged deny
// falls due (free workers 0), the due time is not lost: the deny goes as
// soon as the worker is free, not at the next (hour-long) poll, and the
// lane does not spin meanwhile.
func TestStagedDenyDueWhileNoWorkerIsFree(t *testing.T) {
	h := newStagedHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.fake.AddApproval("a-sec1", 1, arguments(t, "a-sec1.json"), false)
	h.ingest(t, "merge.json")
	h.ingest(t, "secrets.json")
	h.drain(t)
	h.at(t, 24*time.Hour-time.Second)
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-sec1",
		Revision: 1, Approve: false, Person: slackPerson("U0KEVIN")})
	if err != nil || !res.Sent {
		t.Fatalf("deny of a-sec1: %+v %v", res, err)
	}
	h.stageTick(t) // a-merge1's deny; a-sec1's waits on kevin's
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	h.be.setPerson(func(c threads.DecisionCall) {
		if c.ApprovalID == "a-sec1" {
			started <- struct{}{}
			<-release
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.svc.RunOutbox(ctx, threads.WorkerOptions{Backend: 1, Poll: time.Hour, PacedPoll: time.Hour})
	}()
	defer func() { cancel(); <-done }()
	<-started // the one backend worker waits on a-sec1's decision
	h.at(t, 24*time.Hour+threads.RecordBound)
	time.Sleep(50 * time.Millisecond) // the lane wakes at the due time, with no worker free
	for _, d := range h.fake.Decisions() {
		if d.Request.Actor == threads.DeadlineActor {
			t.Fatal("the deny went with no worker free")
		}
	}
	close(release)
	threadstest.Eventually(t, "the deadline's deny once the worker is free", func() bool {
		for _, d := range h.fake.Decisions() {
			if d.Request.Actor == threads.DeadlineActor {
				return true
			}
		}
		return false
	})
}

// A person's click that takes the staged deny's place at the very clock
// reading the tick staged it at (a coarse or stepped clock; any fake
// clock): a decision row names its decision by time, actor and surface,
// so the deny's row does not take the person's decision for its own, and
// the backend gets one decision, not the same one under two keys.
func TestTheDenysRowDoesNotSendTheClickThatReplacedItAtTheSameInstant(t *testing.T) {
	h := newStagedHarness(t)
	h.stage(t)
	// The same instant as the tick: no clock move.
	if res, err := clickAt(h.svc, false, "U0KEVIN", 1, h.clock.Now()); err != nil || !res.Sent {
		t.Fatalf("a Deny in the grace: %+v %v", res, err)
	}
	var mu sync.Mutex
	calls := 0
	second := make(chan struct{})
	h.be.setPerson(func(c threads.DecisionCall) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			select { // the first call waits for a second, should one come
			case <-second:
			case <-time.After(2 * time.Second):
			}
			return
		}
		close(second)
	})
	h.at(t, 24*time.Hour+threads.RecordBound) // both rows due: the lane claims them together
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = h.svc.RunOutbox(ctx, threads.WorkerOptions{Backend: 4, Poll: time.Hour, PacedPoll: time.Hour})
	}()
	threadstest.Eventually(t, "kevin's deny recorded", func() bool { return h.state(t, "a-merge1").State == "denied" })
	time.Sleep(2500 * time.Millisecond) // a second call, if any, is answered
	cancel()
	<-done
	if got := h.decisions(); len(got) != 1 {
		t.Fatalf("the backend got %d decisions for one approval: %s (codes %+v)", len(got), describe(got), got)
	}
}
