package ladder_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// acmeDefault is the documented example default ladder (docs/ladders.md).
func acmeDefault(t *testing.T) ladder.Ladder {
	t.Helper()
	s0 := ladder.AfterStep(15 * time.Minute)
	s0.Mention = mustTargets(t, "slack:U0KEVIN", "slack:S0ONCALL", "discord:role:998877665544332211")
	s1 := ladder.AfterStep(time.Hour)
	s1.DM = mustTargets(t, "slack:U0LEAD")
	s1.Email = mustTargets(t, "leads@acme.example")
	s2 := ladder.AfterStep(4 * time.Hour)
	s2.Email = mustTargets(t, "owner@acme.example")
	s3 := ladder.BeforeDeadlineStep(time.Hour)
	s3.Mention = mustTargets(t, "slack:S0ONCALL")
	return ladder.Ladder{Name: "default", Steps: []ladder.Step{s0, s1, s2, s3}}
}

var requested = time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)

func at(h, m int) time.Time {
	return requested.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute)
}

// shape is what a planned step is checked by; the Step itself is checked
// once in TestPlanKeepsSteps.
type shape struct {
	Index   int
	At      time.Time
	Skipped bool
}

func shapes(p ladder.Plan) []shape {
	out := make([]shape, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = shape{s.Index, s.At, s.Skipped}
	}
	return out
}

func TestPlan(t *testing.T) {
	t.Parallel()
	l := acmeDefault(t)
	// The same steps, listed with the last call first: Plan orders by time.
	shuffled := ladder.Ladder{Name: "shuffled", Steps: []ladder.Step{l.Steps[3], l.Steps[2], l.Steps[0], l.Steps[1]}}
	tests := []struct {
		name     string
		ladder   ladder.Ladder
		deadline time.Time
		want     []shape
	}{
		{"24h deadline: all fire, last call 1h before", l, at(24, 0), []shape{
			{0, at(0, 15), false},
			{1, at(1, 0), false},
			{2, at(4, 0), false},
			{3, at(23, 0), false},
		}},
		{"2h deadline: the 4h step is skipped, the last call shares 1h", l, at(2, 0), []shape{
			{0, at(0, 15), false},
			{1, at(1, 0), false},
			{3, at(1, 0), false}, // equal times keep ladder order
			{2, at(4, 0), true},
		}},
		{"30m deadline: the last call falls before the request", l, at(0, 30), []shape{
			{3, at(-1, 30), true},
			{0, at(0, 15), false},
			{1, at(1, 0), true},
			{2, at(4, 0), true},
		}},
		{"a step exactly at the deadline is skipped", l, at(4, 0), []shape{
			{0, at(0, 15), false},
			{1, at(1, 0), false},
			{3, at(3, 0), false},
			{2, at(4, 0), true},
		}},
		{"listed out of order", shuffled, at(24, 0), []shape{
			{2, at(0, 15), false},
			{3, at(1, 0), false},
			{1, at(4, 0), false},
			{0, at(23, 0), false},
		}},
		{"empty ladder", ladder.Ladder{Name: "default"}, at(24, 0), []shape{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := tt.ladder.Plan(requested, tt.deadline)
			if diff := cmp.Diff(tt.want, shapes(p)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
			if p.Len() != len(tt.ladder.Steps) || !p.Deadline.Equal(tt.deadline) || p.Ladder != tt.ladder.Name {
				t.Errorf("plan has Len %d, deadline %v, ladder %q", p.Len(), p.Deadline, p.Ladder)
			}
		})
	}
}

func TestPlanKeepsSteps(t *testing.T) {
	t.Parallel()
	l := acmeDefault(t)
	p := l.Plan(requested, at(24, 0))
	for _, s := range p.Steps {
		if diff := cmp.Diff(l.Steps[s.Index], s.Step); diff != "" {
			t.Errorf("planned step %d differs from the ladder's (-ladder +plan):\n%s", s.Index, diff)
		}
	}
}

func TestPlanSkipReason(t *testing.T) {
	t.Parallel()
	p := acmeDefault(t).Plan(requested, at(0, 30))
	got := map[int]string{}
	for _, s := range p.Steps {
		got[s.Index] = p.SkipReason(s)
	}
	want := map[int]string{0: "", 1: ladder.SkipAfterDeadline, 2: ladder.SkipAfterDeadline, 3: ladder.SkipBeforeRequest}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("skip reasons (-want +got):\n%s", diff)
	}
}

func TestPlanJSON(t *testing.T) {
	t.Parallel()
	p := acmeDefault(t).Plan(requested, at(2, 0))
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	// Targets are stored in their text form, readable in the database.
	for _, w := range []string{`"slack:S0ONCALL"`, `"discord:role:998877665544332211"`, `"owner@acme.example"`, `"anchor":"deadline"`, `"skipped":true`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("plan JSON lacks %s:\n%s", w, b)
		}
	}
	var back ladder.Plan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("JSON round trip (-before +after):\n%s", diff)
	}
}

func TestDueNextUpcoming(t *testing.T) {
	t.Parallel()
	// Under a 2h deadline: 0 at 10:15, 1 at 11:00, 3 at 11:00, 2 skipped at 14:00.
	p := acmeDefault(t).Plan(requested, at(2, 0))

	indexes := func(ss []ladder.PlannedStep) []int {
		out := []int{}
		for _, s := range ss {
			out = append(out, s.Index)
		}
		return out
	}
	dueTests := []struct {
		name string
		now  time.Time
		done int
		want []int
	}{
		{"nothing yet", at(0, 14), 0, []int{}},
		{"first at its exact time", at(0, 15), 0, []int{0}},
		{"two at the same time", at(1, 30), 1, []int{1, 3}},
		{"missed while down: all at once", at(1, 30), 0, []int{0, 1, 3}},
		{"all fired, skipped one not yet due", at(1, 59), 3, []int{}},
		{"skipped one comes back so done moves past it", at(5, 0), 3, []int{2}},
		{"done past the end", at(5, 0), 9, []int{}},
		{"negative done counts as none", at(0, 15), -1, []int{0}},
	}
	for _, tt := range dueTests {
		t.Run("Due/"+tt.name, func(t *testing.T) {
			got := indexes(p.Due(tt.now, tt.done))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Due(%v, %d) (-want +got):\n%s", tt.now.Format("15:04"), tt.done, diff)
			}
		})
	}

	nextTests := []struct {
		name  string
		after time.Time
		want  int // -1: none
	}{
		{"from the request", at(0, 0), 0},
		{"strictly after", at(0, 15), 1},
		{"skipped steps never come next", at(1, 0), -1},
	}
	for _, tt := range nextTests {
		got, ok := p.Next(tt.after)
		if (tt.want < 0) == ok || ok && got.Index != tt.want {
			t.Errorf("Next(%s) = %d, %v; want %d", tt.after.Format("15:04"), got.Index, ok, tt.want)
		}
	}

	for done, want := range map[int]int{0: 0, 1: 1, 2: 3, 3: -1, 4: -1} {
		got, ok := p.Upcoming(done)
		if (want < 0) == ok || ok && got.Index != want {
			t.Errorf("Upcoming(%d) = %d, %v; want %d", done, got.Index, ok, want)
		}
	}
}

func TestTimeline(t *testing.T) {
	t.Parallel()
	post := mustTargets(t, "slack:C0APPROVALS", "discord:channel:112233445566778899")
	finance := mustTargets(t, "slack:C0FINANCE")
	payments0 := ladder.AfterStep(5 * time.Minute)
	payments0.Mention = mustTargets(t, "slack:S0FINANCE")
	payments1 := ladder.AfterStep(30 * time.Minute)
	payments1.Email = mustTargets(t, "cfo@acme.example")
	payments1.Post = mustTargets(t, "slack:C0CFO")
	payments := ladder.Ladder{Name: "payments", Steps: []ladder.Step{payments0, payments1}}

	tests := []struct {
		name     string
		ladder   ladder.Ladder
		post     []ladder.Target
		deadline time.Duration
		want     []string
	}{
		{"the documented default under 24h", acmeDefault(t), post, 24 * time.Hour, []string{
			"0s post slack:C0APPROVALS discord:channel:112233445566778899",
			"15m mention slack:U0KEVIN slack:S0ONCALL discord:role:998877665544332211",
			"1h dm slack:U0LEAD · email leads@acme.example",
			"4h email owner@acme.example",
			"23h mention slack:S0ONCALL (1h before the deadline)",
			"24h deadline: denied, nobody answered",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{"zero deadline means 24h", acmeDefault(t), post, 0, []string{
			"0s post slack:C0APPROVALS discord:channel:112233445566778899",
			"15m mention slack:U0KEVIN slack:S0ONCALL discord:role:998877665544332211",
			"1h dm slack:U0LEAD · email leads@acme.example",
			"4h email owner@acme.example",
			"23h mention slack:S0ONCALL (1h before the deadline)",
			"24h deadline: denied, nobody answered",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{"2h deadline skips the 4h step", acmeDefault(t), finance, 2 * time.Hour, []string{
			"0s post slack:C0FINANCE",
			"15m mention slack:U0KEVIN slack:S0ONCALL discord:role:998877665544332211",
			"1h dm slack:U0LEAD · email leads@acme.example",
			"1h mention slack:S0ONCALL (1h before the deadline)",
			"2h deadline: denied, nobody answered",
			"4h email owner@acme.example skipped: falls after the deadline",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{"30m deadline: last call before the request", acmeDefault(t), finance, 30 * time.Minute, []string{
			"0s post slack:C0FINANCE",
			"-30m mention slack:S0ONCALL (1h before the deadline) skipped: falls before the request",
			"15m mention slack:U0KEVIN slack:S0ONCALL discord:role:998877665544332211",
			"30m deadline: denied, nobody answered",
			"1h dm slack:U0LEAD · email leads@acme.example skipped: falls after the deadline",
			"4h email owner@acme.example skipped: falls after the deadline",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{"a step exactly at the deadline", payments, finance, 30 * time.Minute, []string{
			"0s post slack:C0FINANCE",
			"5m mention slack:S0FINANCE",
			"30m deadline: denied, nobody answered",
			"30m post slack:C0CFO · email cfo@acme.example skipped: falls after the deadline",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{"odd durations print compactly", payments, finance, 90 * time.Minute, []string{
			"0s post slack:C0FINANCE",
			"5m mention slack:S0FINANCE",
			"30m post slack:C0CFO · email cfo@acme.example",
			"1h30m deadline: denied, nobody answered",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{"empty ladder", ladder.Ladder{Name: "default"}, post, 24 * time.Hour, []string{
			"0s post slack:C0APPROVALS discord:channel:112233445566778899",
			"24h deadline: denied, nobody answered",
		}},
		{"a pause of its own", ladder.Ladder{Name: "payments", Steps: payments.Steps, AckPause: 45 * time.Minute}, finance, time.Hour, []string{
			"0s post slack:C0FINANCE",
			"5m mention slack:S0FINANCE",
			"30m post slack:C0CFO · email cfo@acme.example",
			"1h deadline: denied, nobody answered",
			"any time: I'm looking holds the steps to come 45m (never the deadline) · Escalate now fires the next one at once",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.ladder.Timeline(tt.post, tt.deadline)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Timeline (-want +got):\n%s", diff)
			}
		})
	}
}
