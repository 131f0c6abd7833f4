package ladder_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// A hold (an acknowledgement) keeps the next step waiting until it ends,
// and no longer: a step due after the hold keeps its own time.
func TestNextAtUnderAHold(t *testing.T) {
	t.Parallel()
	p := acmeDefault(t).Plan(requested, at(24, 0))
	tests := []struct {
		name string
		done int
		hold time.Time
		want time.Time
		ok   bool
	}{
		{"no hold: the step's own time", 0, time.Time{}, at(0, 15), true},
		{"a hold past the step: its end", 0, at(0, 40), at(0, 40), true},
		{"a hold that ends before the step: the step's time", 1, at(0, 40), at(1, 0), true},
		{"a hold that ends with the step", 1, at(1, 0), at(1, 0), true},
		{"a hold past the deadline: its end, which the deadline beats", 3, at(30, 0), at(30, 0), true},
		{"nothing left", 4, at(0, 40), time.Time{}, false},
	}
	for _, tt := range tests {
		got, ok := p.NextAt(tt.done, tt.hold)
		if ok != tt.ok || !got.Equal(tt.want) {
			t.Errorf("%s: NextAt(%d, %v) = %v, %v; want %v, %v", tt.name, tt.done, tt.hold, got, ok, tt.want, tt.ok)
		}
	}
}

// Through is what Escalate now fires: the next step that can fire, the
// skipped ones before it, and the others planned at its very time.
func TestThroughFiresTheNextStep(t *testing.T) {
	t.Parallel()
	// Under a 2h deadline the last call (1h before it) shares 1h with
	// step 1, and the 4h step is skipped.
	p := acmeDefault(t).Plan(requested, at(2, 0))
	tests := []struct {
		name string
		done int
		want []int // ladder indexes
	}{
		{"the first step", 0, []int{0}},
		{"two steps at one time go together", 1, []int{1, 3}},
		{"none left that can fire", 3, nil},
		{"past the end", 9, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ladderIndexes(p.Through(tt.done))); diff != "" {
			t.Errorf("%s: Through(%d) (-want +got):\n%s", tt.name, tt.done, diff)
		}
	}
	// A skipped step before the next one is handed over with it, so done
	// moves past both.
	short := acmeDefault(t).Plan(requested, at(0, 30)) // the last call falls before the request
	if got := ladderIndexes(short.Through(0)); !cmp.Equal(got, []int{3, 0}) {
		t.Errorf("Through(0) under 30m = %v, want the skipped last call, then step 0", got)
	}
}

// The pause is frozen with the plan; a plan frozen before there was one
// reads as the default.
func TestPauseIsFrozenWithThePlan(t *testing.T) {
	t.Parallel()
	l := acmeDefault(t)
	if got := l.Pause(); got != ladder.DefaultAckPause {
		t.Errorf("a ladder without ack_pause pauses %v", got)
	}
	l.AckPause = 45 * time.Minute
	p := l.Plan(requested, at(24, 0))
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back ladder.Plan
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	if back.Pause() != 45*time.Minute {
		t.Errorf("frozen pause %v, want 45m", back.Pause())
	}
	var old ladder.Plan
	if err := json.Unmarshal([]byte(`{"requested":"2026-11-29T10:00:00Z","deadline":"2026-11-30T10:00:00Z","steps":[]}`), &old); err != nil {
		t.Fatal(err)
	}
	if old.Pause() != ladder.DefaultAckPause {
		t.Errorf("a plan frozen before ack_pause pauses %v", old.Pause())
	}
}

// ladderIndexes is the ladder position of each planned step; nil for none.
func ladderIndexes(steps []ladder.PlannedStep) []int {
	var out []int
	for _, s := range steps {
		out = append(out, s.Index)
	}
	return out
}
