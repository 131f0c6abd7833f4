package threads

import (
	"approvalsbot/ladder"
	"approvalsbot/templates"
)

// Input is what the card renderings take for this copy: the request, the
// state (a decision in flight included), and the ladder as it was frozen
// at request. Which steps have fired is not in it, on purpose: a pending
// card is the same before and after each step fires, so a step edits no
// card (docs/cards.md); its thread reply says what happened.
func (c Card) Input() templates.Input {
	return templates.Input{
		Approval:   c.Approval,
		State:      c.State,
		Decision:   c.Decision,
		Superseded: c.Superseded,
		Deciding:   c.Deciding,
		Ladder:     plan(c.Frozen.Plan),
		Tenant:     c.Tenant,
		ThreadURL:  c.ThreadURL,
	}
}

// plan puts a frozen plan into the card's words: every step, skipped ones
// included, at its time, and the deadline.
func plan(p ladder.Plan) templates.LadderPlan {
	out := templates.LadderPlan{Deadline: p.Deadline}
	if len(p.Steps) > 0 {
		out.Steps = make([]templates.PlanStep, len(p.Steps))
	}
	for i, s := range p.Steps {
		out.Steps[i] = templates.PlanStep{At: s.At, Who: s.Step.Targets(), Skipped: s.Skipped}
	}
	return out
}
