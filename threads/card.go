package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
)

// Input is what the card renderings take for this copy: the request, the
// state (a decision in flight, who is looking and the steps fired at once
// with Escalate now included), the ladder as it was frozen at request,
// and what the reasks changed. Which steps have fired is not in it, on
// purpose: a pending card is the same before and after each step fires,
// so a step edits no card (docs/cards.md); its thread reply says what
// happened. A press of I'm looking or Escalate now is state, and edits
// every copy.
func (c Card) Input() templates.Input {
	in := templates.Input{
		Approval:   c.Approval,
		State:      c.State,
		Decision:   c.Decision,
		Superseded: c.Superseded,
		Deciding:   c.Deciding,
		Ladder:     plan(c.Frozen.Plan),
		Tenant:     c.Tenant,
		ThreadURL:  c.ThreadURL,
		Now:        c.Now,
		Zone:       c.Frozen.zone(),
	}
	in.Looking, in.Escalations = ladderCard(c.ladder, c.Frozen.Plan, false)
	if c.Approval != nil {
		in.Reask, in.SupersededBy = c.Frozen.reasksAround(c.Approval.Revision)
		if named := c.Approval.Ladder; named != "" && c.Frozen.Plan.Ladder != "" && named != c.Frozen.Plan.Ladder {
			in.Ladder.Unknown = named
		}
	}
	return in
}

// MailInput is Input as a mail (and the decision page, which shows the
// mail's card) shows it: the email addresses of the ladder's steps, and
// of the steps escalated now, counted rather than named, so no recipient
// reads the others' addresses.
func (c Card) MailInput() templates.Input {
	in := c.Input()
	in.Ladder = MailPlan(in.Ladder, c.Frozen.Plan)
	_, in.Escalations = ladderCard(c.ladder, c.Frozen.Plan, true)
	return in
}

// plan puts a frozen plan into the card's words: every step, skipped ones
// included (with the plan's reason), at its time, and the deadline. The
// steps keep the plan's order: MailPlan reads them by index.
func plan(p ladder.Plan) templates.LadderPlan {
	out := templates.LadderPlan{Deadline: p.Deadline, Name: p.Ladder}
	if len(p.Steps) > 0 {
		out.Steps = make([]templates.PlanStep, len(p.Steps))
	}
	for i, s := range p.Steps {
		out.Steps[i] = templates.PlanStep{At: s.At, Who: s.Step.Targets(), Skipped: s.Skipped,
			Skip: skipReason(p.SkipReason(s)), HeldFrom: s.HeldFrom}
	}
	return out
}

// skipReason is the plan's reason for skipping a step in the card's
// words; "" for a step that runs.
func skipReason(why string) templates.SkipReason {
	switch why {
	case ladder.SkipAfterDeadline:
		return templates.SkipAfterDeadline
	case ladder.SkipBeforeRequest:
		return templates.SkipBeforeRequest
	case ladder.SkipWindowShut:
		return templates.SkipWindowShut
	}
	return ""
}

// reasksAround finds, for a card of revision rev, the reask that made
// that revision (what changed since the one before) and the reask that
// replaced it (why it is superseded); nil for either that is not kept.
func (fz Frozen) reasksAround(rev int) (made, replaced *approval.Reask) {
	for i := range fz.Reasks {
		r := &fz.Reasks[i]
		if r.Revision == rev {
			made = r
		}
		if r.From <= rev && r.Revision > rev && (replaced == nil || r.Revision < replaced.Revision) {
			replaced = r
		}
	}
	return made, replaced
}

// maxReasks bounds the reasks kept with one approval: a call asked again
// more often than that keeps its latest.
const maxReasks = 20

// noteReask keeps with the approval what a reask to next (as stored)
// changed (reaskChange, worked out before the transaction), so every card
// of either revision, and every mail, can say it without reading both
// revisions again. It writes row's frozen plan back in tx and returns it.
func (s *Service) noteReask(ctx context.Context, tx store.Tx, row *store.Approval, change approval.Reask, next *approval.Approval) (*Frozen, error) {
	fz, err := frozenOf(row)
	if err != nil {
		return nil, err
	}
	fz.Reasks = append(fz.Reasks, change)
	// Restriction is sticky: a reask that walls the content off walls it
	// for every later reply and card (stickyRestriction).
	fz.Restricted = fz.Restricted || next.ContentRestricted()
	if n := len(fz.Reasks); n > maxReasks {
		fz.Reasks = fz.Reasks[n-maxReasks:]
	}
	row.Plan, err = json.Marshal(fz)
	if err != nil {
		return nil, fmt.Errorf("encode plan of %s: %w", row.ID, err)
	}
	if err := tx.ApprovalUpsert(ctx, row); err != nil {
		return nil, fmt.Errorf("store approval %s: %w", row.ID, err)
	}
	s.log.Info("call asked again", "tenant", row.Tenant, "approval_id", row.ID, "from", change.From, "revision", next.Revision,
		"why", string(next.Why), "paths_changed", len(change.Arguments)+change.More)
	return &fz, nil
}

// reaskChange is what a reask of approval id from revision from to next
// changed, compared with the revision kept (approval.CompareRevisions);
// when that revision is gone (pruned, or never kept) only why. It reads
// the kept revision outside any transaction: a revision never changes
// once written.
func (s *Service) reaskChange(ctx context.Context, id string, from int, next *approval.Approval) (approval.Reask, error) {
	change := approval.Reask{From: from, Revision: next.Revision, Why: next.Why, Withheld: true}
	rev, err := s.store.RevisionGet(ctx, id, from)
	switch {
	case errors.Is(err, store.ErrNotFound):
		// Pruned or never kept: the card says why, not what changed.
	case err != nil:
		return change, fmt.Errorf("read revision %d of %s: %w", from, id, err)
	default:
		var prev approval.Approval
		if json.Unmarshal(rev.Body, &prev) == nil {
			change = approval.CompareRevisions(&prev, next, s.fingerprints...)
		}
	}
	return change, nil
}

// shownSuperseded reports whether p is a card a newer revision's card
// was posted after: its copy says "Superseded" whatever the approval does
// next (a decision, a cancel), so editing it again would send the same
// text. The supersede itself edits it once (the newest revision's posts
// are not yet among posts then).
func shownSuperseded(posts []*store.Post, p *store.Post) bool {
	for _, q := range posts {
		if q.Revision > p.Revision {
			return true
		}
	}
	return false
}

// frozeFor says in the log that a request named a ladder its tenant does
// not have, so the tool override's or the default ran as if it named
// none; its card says the same (Card.Input).
func (s *Service) frozeFor(rec approval.Record, a *approval.Approval, fz *Frozen) {
	if a.Ladder == "" || a.Ladder == fz.Plan.Ladder {
		return
	}
	s.log.Warn("the request names a ladder the tenant does not have; running the one it would get naming none",
		"tenant", rec.Tenant, "approval_id", rec.ID, "ladder", approval.RedactText(a.Ladder), "instead", fz.Plan.Ladder)
}

// zone is the frozen zone's location; UTC for none, or for a name this
// machine cannot load (the config loaded it when it was read).
func (fz Frozen) zone() *time.Location {
	if fz.Zone == "" {
		return nil
	}
	loc, err := time.LoadLocation(fz.Zone)
	if err != nil {
		return nil
	}
	return loc
}
