package ladder

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Plan is one approval's schedule: every step of its ladder at a time, in
// time order, those that can never fire Skipped. It is made once, when the
// approval arrives, and stored with it: the runner and the card read the
// schedule the approval was promised whatever the config says since.
type Plan struct {
	Ladder    string    `json:"ladder,omitempty"`
	Requested time.Time `json:"requested"`
	Deadline  time.Time `json:"deadline"`
	// Steps are ordered by At, then ladder order, a repeating step once per
	// firing. Skipped steps stay (the card says so) and count towards done.
	Steps []PlannedStep `json:"steps"`
	// Rotations are the steps' rotations as they were when the approval
	// arrived; Resolve reads who is on duty when a step fires.
	Rotations map[string]Rotation `json:"rotations,omitempty"`
	// AckPause is the ladder's ack_pause when the approval arrived; zero
	// (frozen before acknowledgements existed) means DefaultAckPause.
	AckPause time.Duration `json:"ack_pause,omitempty"`
	// Labels say what the card calls the steps' targets (Say); a plan
	// frozen before labels existed has none, and names each by its id.
	Labels Labels `json:"labels,omitempty"`
}

// Pause is how long an acknowledgement holds this plan's steps.
func (p Plan) Pause() time.Duration {
	if p.AckPause <= 0 {
		return DefaultAckPause
	}
	return p.AckPause
}

// PlannedStep is one step of a Plan.
type PlannedStep struct {
	// Index is the step's position in Ladder.Steps, as messages number it.
	Index int `json:"index"`
	// Repeat is 0 for the first firing, k for the k-th repetition.
	Repeat int       `json:"repeat,omitempty"`
	At     time.Time `json:"at"`
	// HeldFrom is when the step was due before its window held it to At;
	// zero when the window did not move it.
	HeldFrom time.Time `json:"held_from,omitzero"`
	// Skipped: the step falls at or after the deadline, or before the
	// request, and never fires (Plan.SkipReason says which).
	Skipped bool `json:"skipped,omitempty"`
	Step    Step `json:"step"`
}

// Why a step is skipped, as the timeline and the card say it.
const (
	SkipAfterDeadline = "falls after the deadline"
	SkipBeforeRequest = "falls before the request"
	SkipWindowShut    = "its window does not open before the deadline"
)

// Plan schedules the ladder for an approval requested at requested that
// expires at deadline, freezing the rotations the steps name. How steps are
// placed and skipped: docs/design.md#a-plan-is-made-once.
func (l Ladder) Plan(requested, deadline time.Time) Plan {
	return l.plan(requested, deadline, true)
}

// plan is Plan; without windows, each step is planned when it is due,
// as the timeline shows it for a request at any time.
func (l Ladder) plan(requested, deadline time.Time, windows bool) Plan {
	p := Plan{
		Ladder:    l.Name,
		Requested: requested,
		Deadline:  deadline,
		Steps:     make([]PlannedStep, 0, len(l.Steps)),
		AckPause:  l.Pause(),
	}
	for i, s := range l.Steps {
		due := s.At(requested, deadline)
		for k := 0; k <= s.repeats(); k++ {
			if k > 0 {
				due = p.Steps[len(p.Steps)-1].At.Add(s.Repeat.Every)
			}
			ps := PlannedStep{Index: i, Repeat: k, At: due, Step: s}
			// A step that falls before the request is skipped as it
			// stands: its window cannot bring it back.
			if windows && s.During != nil && !due.Before(requested) {
				if at := s.During.Next(due); !at.Equal(due) {
					ps.At, ps.HeldFrom = at, due
				}
			}
			ps.Skipped = !ps.At.Before(deadline) || ps.At.Before(requested)
			p.Steps = append(p.Steps, ps)
		}
	}
	// Stable, so equal times keep ladder order and the plan is deterministic.
	slices.SortStableFunc(p.Steps, func(a, b PlannedStep) int { return a.At.Compare(b.At) })
	for _, s := range l.Steps {
		for _, t := range s.targets() {
			r, ok := l.Rotations[t.ID]
			if !t.IsRotation() || !ok {
				continue
			}
			if p.Rotations == nil {
				p.Rotations = map[string]Rotation{}
			}
			p.Rotations[t.ID] = r.between(requested, deadline)
		}
		for _, t := range s.targets() {
			if name := l.Labels.Label(t); name != "" {
				if p.Labels == nil {
					p.Labels = Labels{}
				}
				p.Labels[t.String()] = name
			}
		}
	}
	return p
}

// targets is every target the step names.
func (s Step) targets() []Target {
	return slices.Concat(s.Mention, s.DM, s.Email, s.Push, s.Post)
}

// Len is the number of steps in the plan, skipped ones included.
func (p Plan) Len() int { return len(p.Steps) }

// SkipReason says why s is skipped under this plan (SkipAfterDeadline,
// SkipBeforeRequest or SkipWindowShut), or "" when it is not.
func (p Plan) SkipReason(s PlannedStep) string {
	switch {
	case !s.Skipped:
		return ""
	case s.At.Before(p.Requested):
		return SkipBeforeRequest
	case !s.HeldFrom.IsZero() && s.HeldFrom.Before(p.Deadline):
		return SkipWindowShut
	default:
		return SkipAfterDeadline
	}
}

// Ways a step reaches people, for Resolve.
const (
	VerbMention = "mention"
	VerbDM      = "dm"
	VerbEmail   = "email"
	VerbPush    = "push"
)

// OnDuty is the shift the plan's frozen rotation name runs at t.
func (p Plan) OnDuty(name string, t time.Time) (Shift, bool) {
	r, ok := p.Rotations[name]
	if !ok || len(r.Members) == 0 {
		return Shift{}, false
	}
	return r.OnDuty(t), true
}

// Resolve gives whom targets reach when a step fires at t: each rotation
// becomes its member on duty at t, by address for VerbEmail, as a member
// (KindMember) for VerbPush, else by their users on surfaces (or, with
// none there, elsewhere, shown by name). One that cannot reach anyone so
// reaches nobody (config refuses it).
func (p Plan) Resolve(targets []Target, verb string, surfaces []string, t time.Time) []Target {
	out := make([]Target, 0, len(targets))
	for _, tg := range targets {
		if !tg.IsRotation() {
			out = append(out, tg)
			continue
		}
		shift, ok := p.OnDuty(tg.ID, t)
		if !ok {
			continue
		}
		m := shift.Member
		if verb == VerbPush {
			if mt, ok := m.MemberTarget(); ok {
				out = append(out, mt)
			}
			continue
		}
		if verb == VerbEmail {
			if e, ok := m.EmailTarget(); ok {
				out = append(out, e)
			}
			continue
		}
		var here []Target
		for _, s := range surfaces {
			if u, ok := m.UserOn(s); ok {
				here = append(here, u)
			}
		}
		if len(here) == 0 {
			here = m.ChatUsers()
		}
		out = append(out, here...)
	}
	return out
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

// Upcoming returns the first step to fire once done steps are behind it.
// Unlike Next it cannot lose a step sharing its time with one fired.
func (p Plan) Upcoming(done int) (PlannedStep, bool) {
	for _, s := range p.Steps[clamp(done, len(p.Steps)):] {
		if !s.Skipped {
			return s, true
		}
	}
	return PlannedStep{}, false
}

// Due returns the steps after the first done whose time has come, to merge
// into one message. Skipped ones are included, so that done advances by
// len(result); the caller fires only the others.
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

// DueOpen is Due stopping before the first step whose window is shut at
// now: it and the steps after it wait for opens, so the ladder keeps its
// order (docs/ladders.md, "Working hours"). opens is zero when none waits.
func (p Plan) DueOpen(now time.Time, done int) (due []PlannedStep, opens time.Time) {
	due = p.Due(now, done)
	for i, st := range due {
		if st.Skipped || st.Step.During == nil {
			continue
		}
		if next := st.Step.During.Next(now); next.After(now) {
			return due[:i], next
		}
	}
	return due, time.Time{}
}

func clamp(i, n int) int { return min(max(i, 0), n) }

// NextAt is when the runner next has a step to fire once done steps are
// behind it: the upcoming step's time, or hold's end (an acknowledgement)
// when later; false when none is left. A hold never moves the deadline.
func (p Plan) NextAt(done int, hold time.Time) (time.Time, bool) {
	st, ok := p.Upcoming(done)
	if !ok {
		return time.Time{}, false
	}
	if hold.After(st.At) {
		return hold, true
	}
	return st.At, true
}

// Through returns what "Escalate now" fires once done steps are behind it:
// Due at the next step's time, as the runner would hand them over then;
// nil when no step is left.
func (p Plan) Through(done int) []PlannedStep {
	next, ok := p.Upcoming(done)
	if !ok {
		return nil
	}
	return p.Due(next.At, done)
}

// deadlineLine ends every timeline: the deadline only ever denies.
const deadlineLine = "deadline: denied, nobody answered"

// Timeline renders what a request would see under a deadline that far from
// it (zero or less: DefaultDeadline), one line per event, for `bot check`:
//
//	0s post slack:C0APPROVALS
//	15m mention slack:U0KEVIN slack:S0ONCALL
//	24h deadline: denied, nobody answered
//
// The other lines: docs/design.md#the-timeline-bot-check-prints.
func (l Ladder) Timeline(post []Target, deadline time.Duration) []string {
	if deadline <= 0 {
		deadline = DefaultDeadline
	}
	// Any fixed instant works: the timeline only shows offsets from it.
	requested := time.Unix(0, 0).UTC()
	plan := l.plan(requested, requested.Add(deadline), false)

	lines := make([]string, 0, len(plan.Steps)+2)
	lines = append(lines, "0s "+action("post", post))
	deadlineDone := false
	for _, s := range plan.Steps {
		off := s.At.Sub(requested)
		if !deadlineDone && off >= deadline {
			lines = append(lines, FormatDuration(deadline)+" "+deadlineLine)
			deadlineDone = true
		}
		lines = append(lines, FormatDuration(off)+" "+describe(s, plan.SkipReason(s), deadline-off))
	}
	if !deadlineDone {
		lines = append(lines, FormatDuration(deadline)+" "+deadlineLine)
	}
	if _, ok := plan.Upcoming(0); ok { // a step that can fire: the buttons matter
		lines = append(lines, ackLine(l.Pause()))
	}
	return lines
}

// ackLine ends the timeline of a ladder with a step that can fire: what
// the card's "I'm looking" and "Escalate now" do to it.
func ackLine(pause time.Duration) string {
	return fmt.Sprintf("any time: I'm looking holds the steps to come %s (never the deadline) · Escalate now fires the next one at once",
		FormatDuration(pause))
}

// describe is a planned step's part of a timeline line, after its time;
// left is how long it has before the deadline.
func describe(ps PlannedStep, skip string, left time.Duration) string {
	s := ps.Step
	text := s.Targets()
	if text == "" {
		text = "(no targets)"
	}
	if s.Anchor == AnchorDeadline {
		text += " (" + FormatDuration(s.BeforeDeadline) + " before the deadline)"
	}
	switch n := s.repeats(); {
	case n > 0 && ps.Repeat == 0:
		text += fmt.Sprintf(" (then every %s, %d more %s)", FormatDuration(s.Repeat.Every), n, plural(n, "time", "times"))
	case n > 0:
		text += fmt.Sprintf(" (repeat %d of %d)", ps.Repeat, n)
	}
	if w := s.During; w != nil && skip == "" {
		text += " · during " + w.String()
		if wait := w.LongestClosed(); wait > 0 {
			text += ": may wait up to " + FormatDuration(wait)
			if wait >= left {
				text += ", so skipped when the deadline comes first"
			}
		}
	}
	if skip != "" {
		text += " skipped: " + skip
	}
	return text
}

// Targets says whom a step tells ("mention slack:U0KEVIN · email
// leads@acme.example"), in the config's words, for the timeline; "" for none.
func (s Step) Targets() string {
	var parts []string
	for _, a := range []struct {
		verb    string
		targets []Target
	}{{"post", s.Post}, {"mention", s.Mention}, {"dm", s.DM}, {"email", s.Email}, {"push", s.Push}} {
		if len(a.targets) > 0 {
			parts = append(parts, action(a.verb, a.targets))
		}
	}
	return strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
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
