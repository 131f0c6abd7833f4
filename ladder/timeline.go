package ladder

import (
	"slices"
	"strings"
	"time"
)

// Plan is the concrete schedule of one approval: every step of its ladder
// at an absolute time, in time order, with the ones that can never fire
// marked Skipped. It is computed once when the approval arrives and stored
// with it (it marshals to JSON, targets in their text form), so the runner
// and the card read the schedule the approval was promised even after the
// config changes.
type Plan struct {
	// Ladder is the name of the ladder the plan was made from.
	Ladder    string    `json:"ladder,omitempty"`
	Requested time.Time `json:"requested"`
	Deadline  time.Time `json:"deadline"`
	// Steps are ordered by At; steps falling at the same time keep their
	// ladder order. Skipped steps stay in the list (the card says they were
	// skipped) and count towards the done counter Due takes.
	Steps []PlannedStep `json:"steps"`
}

// PlannedStep is one step of a Plan.
type PlannedStep struct {
	// Index is the step's position in Ladder.Steps, so messages can say
	// "step 2" the way the config numbers it.
	Index int       `json:"index"`
	At    time.Time `json:"at"`
	// Skipped is set when the step falls at or after the deadline, or before
	// the request; such a step never fires.
	Skipped bool `json:"skipped,omitempty"`
	Step    Step `json:"step"`
}

// Why a step is skipped, as the timeline and the card say it.
const (
	SkipAfterDeadline = "falls after the deadline"
	SkipBeforeRequest = "falls before the request"
)

// Plan schedules the ladder for an approval requested at requested that
// expires at deadline. A step is skipped when it would fall at or after the
// deadline (the deadline denies first) or before the request (a
// before_deadline step longer than the whole deadline); a step falling
// exactly at the request fires at once.
func (l Ladder) Plan(requested, deadline time.Time) Plan {
	p := Plan{
		Ladder:    l.Name,
		Requested: requested,
		Deadline:  deadline,
		Steps:     make([]PlannedStep, 0, len(l.Steps)),
	}
	for i, s := range l.Steps {
		at := s.At(requested, deadline)
		p.Steps = append(p.Steps, PlannedStep{
			Index:   i,
			At:      at,
			Skipped: !at.Before(deadline) || at.Before(requested),
			Step:    s,
		})
	}
	// Stable, so equal times keep ladder order and the plan is deterministic.
	slices.SortStableFunc(p.Steps, func(a, b PlannedStep) int { return a.At.Compare(b.At) })
	return p
}

// Len is the number of steps in the plan, skipped ones included.
func (p Plan) Len() int { return len(p.Steps) }

// SkipReason says why s is skipped under this plan (SkipAfterDeadline or
// SkipBeforeRequest), or "" when it is not.
func (p Plan) SkipReason(s PlannedStep) string {
	switch {
	case !s.Skipped:
		return ""
	case s.At.Before(p.Requested):
		return SkipBeforeRequest
	default:
		return SkipAfterDeadline
	}
}

// Next returns the first step that will fire strictly after the given time.
func (p Plan) Next(after time.Time) (PlannedStep, bool) {
	for _, s := range p.Steps {
		if !s.Skipped && s.At.After(after) {
			return s, true
		}
	}
	return PlannedStep{}, false
}

// Upcoming returns the first step that will fire once done steps are behind
// it: what the runner stores as the approval's next_step_at. Unlike Next it
// cannot lose a step that shares its time with one already fired.
func (p Plan) Upcoming(done int) (PlannedStep, bool) {
	for _, s := range p.Steps[clamp(done, len(p.Steps)):] {
		if !s.Skipped {
			return s, true
		}
	}
	return PlannedStep{}, false
}

// Due returns the steps not yet handled whose time has come: those after
// the first done steps (done counts steps already fired or passed over)
// with At at or before now. Several come back when the bot was down through
// them, so the caller can merge them into one message. Skipped steps are
// included so that done advances past them by len(result); the caller fires
// only those not Skipped.
func (p Plan) Due(now time.Time, done int) []PlannedStep {
	rest := p.Steps[clamp(done, len(p.Steps)):]
	n := 0
	for n < len(rest) && !rest[n].At.After(now) {
		n++
	}
	if n == 0 {
		return nil
	}
	return slices.Clone(rest[:n])
}

func clamp(i, n int) int { return min(max(i, 0), n) }

// deadlineLine ends every timeline: the deadline only ever denies.
const deadlineLine = "deadline: denied, nobody answered"

// Timeline renders what a request would see under a deadline that far from
// the request, one line per event, for `bot check`:
//
//	0s post slack:C0APPROVALS discord:channel:112233445566778899
//	15m mention slack:U0KEVIN slack:S0ONCALL
//	1h dm slack:U0LEAD · email leads@acme.example
//	23h mention slack:S0ONCALL (1h before the deadline)
//	24h deadline: denied, nobody answered
//
// post is step 0, where the card goes, and always comes first. Steps that
// can never fire say so ("… skipped: falls after the deadline") and are
// placed by their time, so those at or after the deadline follow the
// deadline line. A deadline of zero or less means DefaultDeadline.
func (l Ladder) Timeline(post []Target, deadline time.Duration) []string {
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	// Any fixed instant works: the timeline only shows offsets from it.
	requested := time.Unix(0, 0).UTC()
	plan := l.Plan(requested, requested.Add(deadline))

	lines := make([]string, 0, len(plan.Steps)+2)
	lines = append(lines, "0s "+action("post", post))
	deadlineDone := false
	for _, s := range plan.Steps {
		off := s.At.Sub(requested)
		if !deadlineDone && off >= deadline {
			lines = append(lines, FormatDuration(deadline)+" "+deadlineLine)
			deadlineDone = true
		}
		lines = append(lines, FormatDuration(off)+" "+describe(s.Step, plan.SkipReason(s)))
	}
	if !deadlineDone {
		lines = append(lines, FormatDuration(deadline)+" "+deadlineLine)
	}
	return lines
}

// describe is a step's part of a timeline line, after its time.
func describe(s Step, skip string) string {
	text := s.Targets()
	if text == "" {
		text = "(no targets)"
	}
	if s.Anchor == AnchorDeadline {
		text += " (" + FormatDuration(s.BeforeDeadline) + " before the deadline)"
	}
	if skip != "" {
		text += " skipped: " + skip
	}
	return text
}

// Targets says whom a step tells, e.g. "mention slack:U0KEVIN · email
// leads@acme.example"; "" for a step with none. The timeline and the
// card's "next at …" both use it.
func (s Step) Targets() string {
	var parts []string
	for _, a := range []struct {
		verb    string
		targets []Target
	}{{"post", s.Post}, {"mention", s.Mention}, {"dm", s.DM}, {"email", s.Email}} {
		if len(a.targets) > 0 {
			parts = append(parts, action(a.verb, a.targets))
		}
	}
	return strings.Join(parts, " · ")
}

func action(verb string, targets []Target) string {
	if len(targets) == 0 {
		return verb + " (no targets)"
	}
	s := make([]string, len(targets))
	for i, t := range targets {
		s[i] = t.String()
	}
	return verb + " " + strings.Join(s, " ")
}
