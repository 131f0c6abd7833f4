package ladder

import (
	"fmt"
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
	// ladder order. A repeating step is here once per firing. Skipped
	// steps stay in the list (the card says they were skipped) and count
	// towards the done counter Due takes.
	Steps []PlannedStep `json:"steps"`
	// Rotations are the definitions the steps' rotation targets name, as
	// they were when the approval arrived; Resolve reads who they put on
	// duty at the moment a step fires.
	Rotations map[string]Rotation `json:"rotations,omitempty"`
	// AckPause is the ladder's ack_pause as it was when the approval
	// arrived; zero (a plan frozen before acknowledgements existed)
	// means DefaultAckPause. Pause reads it.
	AckPause time.Duration `json:"ack_pause,omitempty"`
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
	// Index is the step's position in Ladder.Steps, so messages can say
	// "step 2" the way the config numbers it.
	Index int `json:"index"`
	// Repeat is 0 for the step's first firing and k for its k-th
	// repetition (Step.Repeat).
	Repeat int       `json:"repeat,omitempty"`
	At     time.Time `json:"at"`
	// HeldFrom is when the step was due before its window (Step.During)
	// held it to the window's next opening, At; zero when the window did
	// not move it.
	HeldFrom time.Time `json:"held_from,omitzero"`
	// Skipped is set when the step falls at or after the deadline (its
	// window's next opening included), or before the request; such a step
	// never fires.
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
// expires at deadline. A step is skipped when it would fall at or after the
// deadline (the deadline denies first) or before the request (a
// before_deadline step longer than the whole deadline); a step falling
// exactly at the request fires at once. A step with a window that is due
// while the window is shut waits for its next opening, and is skipped
// when that comes at or after the deadline. A repeating step is planned
// once per firing, each repetition Every after the firing before it.
// The rotations the steps name are frozen into the plan with them.
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
	}
	return p
}

// targets is every target the step names.
func (s Step) targets() []Target {
	return slices.Concat(s.Mention, s.DM, s.Email, s.Post)
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
// is replaced by the member its frozen definition puts on duty at t, in
// the form verb needs. For VerbMention and VerbDM that is the member's
// user on each of surfaces they have one on (a mention in a Slack thread
// pings their Slack user), or, when they have none there, their chat
// users elsewhere, which a thread shows by name; for VerbEmail it is
// their address. Other targets pass as they are. A rotation the plan
// does not hold, or a member with no way to be reached so, reaches nobody
// (config refuses both).
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

// DueOpen is Due for steps that may fire at now: it stops before the
// first due step held to a window (Step.During) that is shut at now, and
// returns with the steps before it when that window next opens. Such a
// step came due late, after a pause or while the bot was down, and its
// window has closed since: it waits for the opening like any step due
// outside its window, and the steps after it wait with it, so the ladder
// keeps its order. (When the opening comes at or after the deadline, the
// deadline denies first and the step never fires.) opens is zero when
// nothing waits for a window.
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
// behind it, under a hold that lasts until hold (an acknowledgement; zero
// for none): the upcoming step's time, or the hold's end when that is
// later, for a step the hold keeps waiting goes when it ends. False when
// no step is left. The hold never moves the deadline, which the caller
// keeps apart: a step held past it never fires, as the deadline denies
// first.
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

// Through returns what firing the next step now means, once done steps
// are behind it: the steps not yet handled up to and including the next
// one that fires, and every other step planned at that same time, as the
// runner would hand them over at that time (skipped ones included, so
// done advances past them by len(result); the caller fires only those
// not Skipped). It is nil when no step is left to fire. "Escalate now"
// fires these.
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
// deadline line. A repeating step has a line per firing ("45m mention
// slack:S0ONCALL (repeat 1 of 3)"). A step with a window is placed when it
// is due, and its line names the window and how long it may wait for it
// ("· during mon-fri 09:00-18:00 Europe/Berlin: may wait up to 63h, so
// skipped when the deadline comes first"): when it fires depends on when
// the request comes. A ladder with a step that can fire ends with what
// the card's buttons do to it: "any time: I'm looking holds the steps to
// come 30m (never the deadline) · Escalate now fires the next one at
// once". A deadline of zero or less means DefaultDeadline.
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
