package threads_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// stubBackend is a job backend the test decides the behaviour of: each
// decision waits for answer (nil: until its context ends, as a client
// retrying a backend that is down does) and is then recorded.
type stubBackend struct {
	answer <-chan struct{}
	mu     sync.Mutex
	calls  []threads.DecisionCall
	ended  []error // the context's error of each call that gave up
}

func (b *stubBackend) Decide(ctx context.Context, c threads.DecisionCall) (threads.DecisionAnswer, error) {
	b.mu.Lock()
	b.calls = append(b.calls, c)
	b.mu.Unlock()
	select {
	case <-b.answer:
	case <-ctx.Done():
		b.mu.Lock()
		b.ended = append(b.ended, ctx.Err())
		b.mu.Unlock()
		return threads.DecisionAnswer{}, fmt.Errorf("decide %s: stopped retrying: %w", c.ApprovalID, ctx.Err())
	}
	status := approval.StateDenied
	if c.Approve {
		status = approval.StateApproved
	}
	return threads.DecisionAnswer{Outcome: threads.DecisionRecorded, Status: status, Message: "recorded by the stub"}, nil
}

func (b *stubBackend) Arguments(context.Context, threads.ArgumentsCall) (threads.ArgumentsAnswer, error) {
	return threads.ArgumentsAnswer{}, threads.ErrBackendUnavailable
}

func (b *stubBackend) record() ([]threads.DecisionCall, []error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]threads.DecisionCall(nil), b.calls...), append([]error(nil), b.ended...)
}

// answered is a closed channel: a backend that answers at once.
func answered() <-chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// A stop waits StopGrace for a decision in flight and no longer: a
// decision still retrying against a backend that is down then goes back
// to the outbox, neither failed nor told to the person as not recorded,
// and the next start sends it under the same idempotency key. Both kinds
// of decision: a person's, and the deadline's.
func TestAStopLeavesADecisionInFlightForTheNextStart(t *testing.T) {
	for _, c := range []struct {
		name   string
		decide func(t *testing.T, h *harness)
		want   approval.State
	}{
		{"a person's approval", func(t *testing.T, h *harness) {
			res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
				Revision: 1, Approve: true, Person: slackPerson("U0KEVIN")})
			if err != nil || !res.Sent {
				t.Fatalf("decide: %+v %v", res, err)
			}
		}, approval.StateApproved},
		{"the deadline's deny", func(t *testing.T, h *harness) {
			h.at(t, 24*time.Hour+threads.RecordBound)
			if r := h.tick(t); r.Deadlines != 1 {
				t.Fatalf("the deadline did not fire: %+v", r)
			}
		}, approval.StateExpired},
	} {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				down := &stubBackend{} // never answers
				h := newHarnessWith(t, func(o *threads.Options) { o.Backend = down })
				h.ingest(t, "merge.json")
				h.drain(t)
				c.decide(t, h)
				tellsBefore := len(h.surf.tells)

				const grace = 5 * time.Second
				run := func(t *testing.T, wait func()) {
					ctx, stop := context.WithCancel(context.Background())
					done := make(chan struct{})
					go func() {
						defer close(done)
						_ = h.svc.RunOutbox(ctx, threads.WorkerOptions{Lease: 2 * time.Minute, StopGrace: grace})
					}()
					wait()
					stop()
					<-done // under synctest: returns once the grace is over, in virtual time
				}
				run(t, synctest.Wait) // the decision in flight, held by the backend
				calls, ended := down.record()
				if len(calls) != 1 || len(ended) != 1 {
					t.Fatalf("the backend that is down got %d calls, %d gave up; want 1 cut short by the stop", len(calls), len(ended))
				}
				a := h.state(t, "a-merge1")
				if a.State != string(approval.StatePending) || len(a.Deciding) == 0 {
					t.Fatalf("after the stop: %s, deciding %q; want still pending with the decision in flight", a.State, a.Deciding)
				}
				st, err := h.store.OutboxStats(context.Background(), h.clock.Now())
				if err != nil {
					t.Fatal(err)
				}
				if n := st.Lanes[threads.LaneBackend].Pending; n != 1 || st.Dead != 0 {
					t.Fatalf("after the stop the backend lane holds %d rows (%d dead), want the decision's 1", n, st.Dead)
				}
				for _, tell := range h.surf.tells[tellsBefore:] {
					if strings.Contains(tell.Text, "not recorded") {
						t.Errorf("the person was told %q: the decision is not lost, only late", tell.Text)
					}
				}
				// The row is due now and its attempt not counted: the
				// next start claims it at once.
				rows, err := h.store.OutboxClaim(context.Background(), store.OutboxClaimParams{Worker: "peek", Now: h.clock.Now(),
					Lease: time.Second, Limit: 10, Lane: threads.LaneBackend})
				if err != nil || len(rows) != 1 {
					t.Fatalf("claim after the stop: %d rows, %v", len(rows), err)
				}
				if rows[0].Attempts != 0 || !strings.HasPrefix(rows[0].LastError, "stopped in flight") {
					t.Errorf("the stopped row: %d attempts, last error %q; want 0 and why it stopped", rows[0].Attempts, rows[0].LastError)
				}
				if err := h.store.OutboxRetry(context.Background(), store.OutboxRetryParams{ID: rows[0].ID, Worker: "peek",
					Now: h.clock.Now(), NextAttemptAt: h.clock.Now(), Error: rows[0].LastError}); err != nil {
					t.Fatal(err)
				}

				// The next start, with the backend back.
				up := &stubBackend{answer: answered()}
				h.opts.Backend = up
				h.restart(t)
				run(t, synctest.Wait)
				got, _ := up.record()
				if len(got) != 1 || got[0].IdempotencyKey != calls[0].IdempotencyKey || got[0].Approve != calls[0].Approve {
					t.Fatalf("after the restart the backend got %+v; want the same decision as before the stop (%+v)", got, calls[0])
				}
				if a := h.state(t, "a-merge1"); a.State != string(c.want) || len(a.Deciding) != 0 {
					t.Errorf("after the restart: %s, deciding %q; want %s", a.State, a.Deciding, c.want)
				}
			})
		})
	}
}

// What finishes within the grace is finished, not put back: a stop that
// comes while a decision waits on a backend that answers in a second
// records the answer before RunOutbox returns.
func TestAStopFinishesWhatEndsWithinTheGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		gate := make(chan struct{})
		slow := &stubBackend{answer: gate}
		h := newHarnessWith(t, func(o *threads.Options) { o.Backend = slow })
		h.ingest(t, "merge.json")
		h.drain(t)
		if res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
			Revision: 1, Approve: true, Person: slackPerson("U0KEVIN")}); err != nil || !res.Sent {
			t.Fatalf("decide: %+v %v", res, err)
		}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			_ = h.svc.RunOutbox(ctx, threads.WorkerOptions{Lease: 2 * time.Minute, StopGrace: 5 * time.Second})
		}()
		synctest.Wait()
		stop() // the decision is in flight
		go func() {
			time.Sleep(time.Second) // virtual: the backend answers a second into the grace
			close(gate)
		}()
		<-done
		if _, ended := slow.record(); len(ended) != 0 {
			t.Errorf("%d calls were cut short; the answer came within the grace", len(ended))
		}
		if a := h.state(t, "a-merge1"); a.State != string(approval.StateApproved) || len(a.Deciding) != 0 {
			t.Errorf("after the stop: %s, deciding %q; want approved", a.State, a.Deciding)
		}
	})
}
