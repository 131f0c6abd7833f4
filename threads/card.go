package threads

import (
	"strings"

	"approvalsbot/ladder"
	"approvalsbot/templates"
)

// Input is what the card renderings take for this copy: the request, the
// state, and where the approval stands on its frozen ladder.
func (c Card) Input() templates.Input {
	return templates.Input{
		Approval:   c.Approval,
		State:      c.State,
		Decision:   c.Decision,
		Superseded: c.Superseded,
		Ladder:     position(c.Frozen.Plan, c.StepsDone),
		Tenant:     c.Tenant,
		ThreadURL:  c.ThreadURL,
	}
}

// position puts a frozen plan and the steps done into the card's words.
func position(p ladder.Plan, done int) templates.LadderPosition {
	pos := templates.LadderPosition{Deadline: p.Deadline}
	for i, s := range p.Steps {
		if s.Skipped {
			pos.Skipped++
			continue
		}
		pos.Steps++
		if i < done {
			pos.Step++
		}
	}
	if next, ok := p.Upcoming(done); ok {
		pos.NextAt = next.At
		pos.Next = who(next.Step)
	}
	return pos
}

// who says whom a step tells, e.g. "mention slack:U0KEVIN · email leads@acme.example".
func who(s ladder.Step) string {
	var parts []string
	add := func(verb string, ts []ladder.Target) {
		if len(ts) == 0 {
			return
		}
		names := make([]string, len(ts))
		for i, t := range ts {
			names[i] = t.String()
		}
		parts = append(parts, verb+" "+strings.Join(names, " "))
	}
	add("post", s.Post)
	add("mention", s.Mention)
	add("dm", s.DM)
	add("email", s.Email)
	return strings.Join(parts, " · ")
}
