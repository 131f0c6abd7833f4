package threads

import (
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
		pos.Next = next.Step.Targets()
	}
	return pos
}
