package ladder

import (
	"fmt"
	"strings"
	"time"
)

// Labels say what a card calls a target, by its text form (Target.String):
// a member's user id, or a label the tenant configured. Frozen into a Plan
// with its ladder, like its rotations.
type Labels map[string]string

// Label is what the card calls t, or "" when it has no label.
func (l Labels) Label(t Target) string { return l[t.String()] }

// kindWords name a target without a label: what it is, then its id.
var kindWords = map[TargetKind]string{
	KindSlackChannel:   "Slack channel ",
	KindSlackUser:      "Slack user ",
	KindSlackUserGroup: "Slack group ",
	KindDiscordChannel: "Discord channel ",
	KindDiscordUser:    "Discord user ",
	KindDiscordRole:    "Discord role ",
	KindRotation:       "rotation ",
	KindApprovers:      "the approvers still missing",
}

// Say words whom a planned step tells, as a card's plan line says it
// (docs/cards.md#plan-the-escalation-ladder-shown-once): each target by
// its label, else by what it is and its id, written so that it mentions
// nobody; a rotation with who it puts on call at the step's time.
// countEmail counts the step's addresses, so no recipient of a mail reads
// the others'. "" for a step without targets.
func (p Plan) Say(s PlannedStep, countEmail bool) string {
	st := s.Step
	var parts []string
	for _, a := range []struct {
		verb    string
		targets []Target
	}{{"post to", st.Post}, {"mention", st.Mention}, {"DM", st.DM}, {"email", st.Email}, {"push to", st.Push}} {
		if len(a.targets) == 0 {
			continue
		}
		if a.verb == "email" && countEmail {
			n := len(a.targets)
			parts = append(parts, fmt.Sprintf("email %d %s", n, plural(n, "person", "people")))
			continue
		}
		names := make([]string, len(a.targets))
		for i, t := range a.targets {
			names[i] = p.name(t, s.At)
		}
		parts = append(parts, a.verb+" "+list(names))
	}
	return strings.Join(parts, "; ")
}

// name is what the plan line calls t at a step planned for at.
func (p Plan) name(t Target, at time.Time) string {
	s := p.Labels.Label(t)
	if s == "" {
		s = kindWords[t.Kind] + t.ID
	}
	if t.IsRotation() {
		if shift, ok := p.OnDuty(t.ID, at); ok && shift.Member.User != "" {
			s += " (" + shift.Member.User + " on call)"
		}
	}
	return s
}

// list joins names as a sentence does: "a", "a and b", "a, b and c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
