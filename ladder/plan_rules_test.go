package ladder_test

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// firing is what a planned repetition is checked by.
type firing struct {
	Index, Repeat int
	At            time.Time
	Skipped       bool
}

func firings(p ladder.Plan) []firing {
	out := make([]firing, len(p.Steps))
	for i, s := range p.Steps {
		out[i] = firing{s.Index, s.Repeat, s.At, s.Skipped}
	}
	return out
}

// pager is a ladder whose first step pages at 15m and repeats every 30m
// three more times; a second step DMs at 1h.
func pager(t *testing.T) ladder.Ladder {
	t.Helper()
	s0 := ladder.AfterStep(15 * time.Minute)
	s0.Mention = mustTargets(t, "slack:S0ONCALL")
	s0.Repeat = &ladder.Repeat{Every: 30 * time.Minute, Times: 3}
	s1 := ladder.AfterStep(time.Hour)
	s1.DM = mustTargets(t, "slack:U0LEAD")
	return ladder.Ladder{Name: "pager", Steps: []ladder.Step{s0, s1}}
}

func TestPlanRepeats(t *testing.T) {
	t.Parallel()
	l := pager(t)
	tests := []struct {
		name     string
		deadline time.Time
		want     []firing
	}{
		{"every repetition before a 24h deadline, interleaved by time", at(24, 0), []firing{
			{0, 0, at(0, 15), false},
			{0, 1, at(0, 45), false},
			{1, 0, at(1, 0), false},
			{0, 2, at(1, 15), false},
			{0, 3, at(1, 45), false},
		}},
		{"repetitions at or after a 1h15m deadline are skipped", at(1, 15), []firing{
			{0, 0, at(0, 15), false},
			{0, 1, at(0, 45), false},
			{1, 0, at(1, 0), false},
			{0, 2, at(1, 15), true},
			{0, 3, at(1, 45), true},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := l.Plan(requested, tt.deadline)
			if diff := cmp.Diff(tt.want, firings(p)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

// Repetitions missed while the bot was down come due together, so they
// merge into one message; none comes back once done counts it.
func TestMissedRepetitionsComeDueTogether(t *testing.T) {
	t.Parallel()
	p := pager(t).Plan(requested, at(24, 0))
	due := p.Due(at(1, 20), 1) // the first firing went out; then the bot was down
	if diff := cmp.Diff([]firing{{0, 1, at(0, 45), false}, {1, 0, at(1, 0), false}, {0, 2, at(1, 15), false}}, firings(ladder.Plan{Steps: due})); diff != "" {
		t.Errorf("due after downtime (-want +got):\n%s", diff)
	}
	if again := p.Due(at(1, 20), 1+len(due)); len(again) != 0 {
		t.Errorf("%d came due again", len(again))
	}
	if next, ok := p.Upcoming(1 + len(due)); !ok || next.Repeat != 3 || !next.At.Equal(at(1, 45)) {
		t.Errorf("upcoming %+v %v, want the third repetition at 1h45m", next, ok)
	}
}

// TestDueOpen: steps that come due late (a pause, the bot down) fire up
// to the first one whose window is shut now, which waits for the window's
// next opening with the steps after it; in its window, everything due
// fires.
func TestDueOpen(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	office := &ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "09:00-18:00"), Zone: berlin}
	s0 := ladder.AfterStep(15 * time.Minute)
	s0.Mention = mustTargets(t, "slack:S0ONCALL")
	s1 := ladder.AfterStep(30 * time.Minute)
	s1.DM = mustTargets(t, "slack:U0LEAD")
	s1.During = office
	s2 := ladder.AfterStep(time.Hour)
	s2.Mention = mustTargets(t, "slack:S0LEADS")
	l := ladder.Ladder{Name: "office", Steps: []ladder.Step{s0, s1, s2}}
	b := func(m time.Month, d, hh, mm int) time.Time { return local(t, berlin, 2026, m, d, hh, mm) }
	req := b(10, 23, 16, 45) // a Friday afternoon, two days before the clocks go back
	p := l.Plan(req, req.Add(7*24*time.Hour))
	for _, c := range []struct {
		name  string
		now   time.Time
		fires int
		opens time.Time
	}{
		{"in the window, everything due fires", b(10, 23, 17, 50), 3, time.Time{}},
		{"friday night: the step before fires, the shut one waits for monday", b(10, 23, 23, 0), 1, b(10, 26, 9, 0)},
		{"sunday past the change to winter time", b(10, 25, 12, 0), 1, b(10, 26, 9, 0)},
		{"monday at the opening", b(10, 26, 9, 0), 3, time.Time{}},
	} {
		due, opens := p.DueOpen(c.now, 0)
		if len(due) != c.fires || !opens.Equal(c.opens) {
			t.Errorf("%s: %d due, opens %v; want %d, %v", c.name, len(due), opens, c.fires, c.opens)
		}
	}
	// What has fired is not held again.
	if due, opens := p.DueOpen(b(10, 23, 23, 0), 2); len(due) != 1 || !opens.IsZero() {
		t.Errorf("after the shut step: %d due, opens %v", len(due), opens)
	}
}

// A step due outside its window waits for the next opening; so does each
// repetition, planned from when the one before it is planned. When the next
// opening comes at or after the deadline the step is skipped, and the
// plan says why.
func TestPlanWindows(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	office := &ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "09:00-18:00"), Zone: berlin}
	s0 := ladder.AfterStep(15 * time.Minute)
	s0.Mention = mustTargets(t, "slack:S0ONCALL")
	s0.During = office
	s0.Repeat = &ladder.Repeat{Every: 30 * time.Minute, Times: 2}
	s1 := ladder.AfterStep(30 * time.Minute)
	s1.DM = mustTargets(t, "slack:U0LEAD") // no window: fires at once
	l := ladder.Ladder{Name: "office", Steps: []ladder.Step{s0, s1}}
	b := func(m time.Month, d, hh, mm int) time.Time { return local(t, berlin, 2026, m, d, hh, mm) }

	t.Run("a monday afternoon: fires in hours, the rest waits for tuesday", func(t *testing.T) {
		t.Parallel()
		req := b(11, 30, 17, 20)
		p := l.Plan(req, req.Add(48*time.Hour))
		want := []firing{
			{0, 0, b(11, 30, 17, 35), false},
			{1, 0, b(11, 30, 17, 50), false},
			{0, 1, b(12, 1, 9, 0), false},  // due 18:05, held to the opening
			{0, 2, b(12, 1, 9, 30), false}, // 30m after the one before fired
		}
		if diff := cmp.Diff(want, firings(p)); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
		if held := p.Steps[2].HeldFrom; !held.Equal(b(11, 30, 18, 5)) {
			t.Errorf("held from %s, want 18:05", held)
		}
		if !p.Steps[0].HeldFrom.IsZero() {
			t.Error("a step due in its window was marked held")
		}
	})
	t.Run("friday evening with a 24h deadline: skipped, the window is shut", func(t *testing.T) {
		t.Parallel()
		req := b(12, 4, 18, 30)
		p := l.Plan(req, req.Add(24*time.Hour))
		reasons := map[[2]int]string{}
		for _, s := range p.Steps {
			reasons[[2]int{s.Index, s.Repeat}] = p.SkipReason(s)
			if s.Index == 0 && (!s.At.Equal(b(12, 7, 9, 0).Add(time.Duration(s.Repeat)*30*time.Minute)) || !s.Skipped) {
				t.Errorf("repetition %d at %s skipped %v, want monday and skipped", s.Repeat, s.At, s.Skipped)
			}
		}
		want := map[[2]int]string{{0, 0}: ladder.SkipWindowShut, {0, 1}: ladder.SkipAfterDeadline, {0, 2}: ladder.SkipAfterDeadline, {1, 0}: ""}
		if diff := cmp.Diff(want, reasons); diff != "" {
			t.Errorf("skip reasons (-want +got):\n%s", diff)
		}
		if next, ok := p.Upcoming(0); !ok || next.Index != 1 {
			t.Errorf("upcoming %+v: want the step without a window", next)
		}
	})
	t.Run("friday evening with a 72h deadline: monday 09:00", func(t *testing.T) {
		t.Parallel()
		req := b(12, 4, 18, 30)
		p := l.Plan(req, req.Add(72*time.Hour))
		if s := p.Steps[1]; s.Index != 0 || !s.At.Equal(b(12, 7, 9, 0)) || s.Skipped {
			t.Errorf("held step %+v, want monday 09:00", s)
		}
	})
	t.Run("across the spring change: 09:00 is 07:00 UTC", func(t *testing.T) {
		t.Parallel()
		req := time.Date(2026, 3, 27, 17, 0, 0, 0, time.UTC) // Friday 18:00 CET
		p := l.Plan(req, req.Add(96*time.Hour))
		if s := p.Steps[1]; s.Index != 0 || !s.At.Equal(time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)) {
			t.Errorf("first held step %+v at %s, want 2026-03-30 07:00 UTC", s, s.At.UTC())
		}
	})
	t.Run("across the autumn change: 09:00 is 08:00 UTC", func(t *testing.T) {
		t.Parallel()
		req := time.Date(2026, 10, 23, 16, 0, 0, 0, time.UTC) // Friday 18:00 CEST
		p := l.Plan(req, req.Add(96*time.Hour))
		if s := p.Steps[1]; s.Index != 0 || !s.At.Equal(time.Date(2026, 10, 26, 8, 0, 0, 0, time.UTC)) {
			t.Errorf("first held step %+v at %s, want 2026-10-26 08:00 UTC", s, s.At.UTC())
		}
	})
	t.Run("a last call before the request stays skipped", func(t *testing.T) {
		t.Parallel()
		last := ladder.BeforeDeadlineStep(2 * time.Hour)
		last.Mention = mustTargets(t, "slack:S0ONCALL")
		last.During = office
		req := b(12, 5, 12, 0) // Saturday
		p := ladder.Ladder{Steps: []ladder.Step{last}}.Plan(req, req.Add(time.Hour))
		if s := p.Steps[0]; !s.Skipped || p.SkipReason(s) != ladder.SkipBeforeRequest || !s.HeldFrom.IsZero() {
			t.Errorf("%+v: %q", s, p.SkipReason(s))
		}
	})
}

func TestTimelineShowsRepeatsWindowsAndRotations(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	s0 := ladder.AfterStep(15 * time.Minute)
	s0.Mention = mustTargets(t, "rotation:primary")
	s0.Repeat = &ladder.Repeat{Every: 30 * time.Minute, Times: 2}
	s1 := ladder.AfterStep(time.Hour)
	s1.Email = mustTargets(t, "rotation:primary")
	s1.During = &ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "09:00-18:00"), Zone: berlin}
	s2 := ladder.BeforeDeadlineStep(time.Hour)
	s2.DM = mustTargets(t, "slack:U0LEAD")
	s2.During = &ladder.Window{Days: ladder.EveryDay, Hours: mustHours(t, "08:00-22:00"), Zone: berlin}
	l := ladder.Ladder{Name: "default", Steps: []ladder.Step{s0, s1, s2}}
	post := mustTargets(t, "slack:C0APPROVALS")
	tests := []struct {
		deadline time.Duration
		want     []string
	}{
		{72 * time.Hour, []string{
			"0s post slack:C0APPROVALS",
			"15m mention rotation:primary (then every 30m, 2 more times)",
			"45m mention rotation:primary (repeat 1 of 2)",
			"1h email rotation:primary · during mon-fri 09:00-18:00 Europe/Berlin: may wait up to 63h",
			"1h15m mention rotation:primary (repeat 2 of 2)",
			"71h dm slack:U0LEAD (1h before the deadline) · during every day 08:00-22:00 Europe/Berlin: may wait up to 10h, so skipped when the deadline comes first",
			"72h deadline: denied, nobody answered",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
		{time.Hour, []string{
			"0s post slack:C0APPROVALS",
			"0s dm slack:U0LEAD (1h before the deadline) · during every day 08:00-22:00 Europe/Berlin: may wait up to 10h, so skipped when the deadline comes first",
			"15m mention rotation:primary (then every 30m, 2 more times)",
			"45m mention rotation:primary (repeat 1 of 2)",
			"1h deadline: denied, nobody answered",
			"1h email rotation:primary skipped: falls after the deadline",
			"1h15m mention rotation:primary (repeat 2 of 2) skipped: falls after the deadline",
			"any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once",
		}},
	}
	for _, tt := range tests {
		got := l.Timeline(post, tt.deadline)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("timeline under %s (-want +got):\n%s", tt.deadline, diff)
		}
	}
}
