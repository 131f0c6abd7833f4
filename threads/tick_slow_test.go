package threads_test

import (
	"context"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/store"
)

// slowRounds is a store whose every ladder claim takes `step` of the clock,
// as a round of 200 approvals can on a loaded store; it counts the claims.
type slowRounds struct {
	store.Store
	clock   *clockwork.FakeClock
	step    time.Duration
	claims  int
	claimed map[string]int
}

func (s *slowRounds) ApprovalClaimDue(ctx context.Context, p store.ApprovalClaimDueParams) ([]*store.Approval, error) {
	s.claims++
	as, err := s.Store.ApprovalClaimDue(ctx, p)
	for _, a := range as {
		s.claimed[a.ID]++
	}
	s.clock.Advance(s.step) // the round takes this long
	return as, err
}
func (s *slowRounds) OneWriter() bool { w, ok := s.Store.(store.OneWriter); return ok && w.OneWriter() }
func (s *slowRounds) Alone() bool     { a, ok := s.Store.(store.Alone); return ok && a.Alone() }

// However slow a tick's rounds (a loaded store), one tick claims an
// approval that waits for a decision on its way once, and reaches the
// approvals behind 200 of them, on the deadline's path and a step's.
func TestSlowRoundsDoNotGoRoundTheHeld(t *testing.T) {
	for _, c := range []struct {
		name string
		at   time.Duration // when the clicks and the tick come
		step time.Duration // how long a round takes
		// most is how often one tick may claim a held approval: twice
		// when a round outlasts the hold's claim, as the round that
		// claims one again is the tick's last (and the approvals behind
		// wait for the next tick).
		most  int
		reach bool
	}{
		{"deadline, 1.1s rounds", 72*time.Hour + time.Second, 1100 * time.Millisecond, 1, true},
		{"step hold, 0.4s rounds", 14 * time.Minute, 400 * time.Millisecond, 1, true},
		{"step hold, rounds slower than its claim", 14 * time.Minute, 16 * time.Second, 2, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, _ := newOncallHarness(t)
			slow := &slowRounds{Store: h.store, clock: h.clock, claimed: map[string]int{}}
			h.opts.Store = slow
			h.restart(t)
			heldApprovals(t, h, c.at, time.Hour)
			h.at(t, c.at+time.Minute)
			slow.step = c.step
			r := h.tick(t)
			if slow.claimed["a-h000"] > c.most {
				t.Errorf("one Tick claimed the held a-h000 %d times (%d claim rounds)", slow.claimed["a-h000"], slow.claims)
			}
			if c.reach && slow.claimed["a-h200"] == 0 {
				t.Errorf("the approval behind the held ones was never reached: %+v", r)
			}
		})
	}
}
