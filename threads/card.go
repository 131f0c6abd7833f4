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

// Input is what the card renderings take for this copy: the request, its
// state (a decision in flight, who is looking, the steps escalated now),
// the ladder as frozen and what the reasks changed. Which steps have fired
// is left out on purpose: a step edits no card (docs/cards.md).
func (c Card) Input() templates.Input {
	in := templates.Input{
		Approval:    c.Approval,
		State:       c.State,
		Decision:    c.Decision,
		Superseded:  c.Superseded,
		Deciding:    c.Deciding,
		Ladder:      plan(c.Frozen.Plan),
		Tenant:      c.Tenant,
		ThreadURL:   c.ThreadURL,
		Now:         c.Now,
		Zone:        c.Frozen.zone(),
		Quorum:      c.quorumCard(),
		TypedOnPage: c.TypedOnPage,
		Grants:      c.Grants,
		TurnTooMany: c.turnTooMany,
		// An answer at a revision newer than the card's names its
		// choice by number: the card's choices are not the ones chosen
		// from.
		HeldRevision: c.HeldRevision,
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

// MailInput is Input as a mail (and the decision page) shows it: the
// ladder's email addresses counted, so no recipient reads the others'.
func (c Card) MailInput() templates.Input {
	in := c.Input()
	in.Ladder = MailPlan(in.Ladder, c.Frozen.Plan)
	_, in.Escalations = ladderCard(c.ladder, c.Frozen.Plan, true)
	return in
}

// plan puts a frozen plan into the card's words, skipped steps included,
// in the plan's order: MailPlan reads them by index.
func plan(p ladder.Plan) templates.LadderPlan {
	out := templates.LadderPlan{Deadline: p.Deadline, Name: p.Ladder}
	if len(p.Steps) > 0 {
		out.Steps = make([]templates.PlanStep, len(p.Steps))
	}
	for i, s := range p.Steps {
		out.Steps[i] = templates.PlanStep{At: s.At, Who: p.Say(s, false), Skipped: s.Skipped,
			Skip: skipReason(p.SkipReason(s)), HeldFrom: s.HeldFrom, Index: s.Index, Repeat: s.Repeat, Every: s.Step.Every()}
	}
	return out
}

// skipReason words the plan's reason for skipping a step; "" if none.
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

// reasksAround finds, for a card of revision rev, the reask that made it
// and the one that replaced it; nil for either not kept.
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

// maxReasks bounds the reasks kept with one approval; the latest stay.
const maxReasks = 20

// noteReask keeps with the approval what a reask to next changed, so its
// cards and mails can say it without reading both revisions, and writes
// the frozen plan back in tx.
func (s *Service) noteReask(ctx context.Context, tx store.Tx, row *store.Approval, change approval.Reask, next *approval.Approval) (*Frozen, error) {
	fz, err := frozenOf(row)
	if err != nil {
		return nil, err
	}
	fz.Reasks = append(fz.Reasks, change)
	// Restriction is sticky (stickyRestriction).
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

// reaskChange is what a reask from revision from to next changed
// (approval.CompareRevisions); only why when from is gone. It reads
// outside any transaction: a revision never changes once written.
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

// shownSuperseded reports whether a newer revision's card was posted
// after p, whose copy then says "Superseded" whatever comes next: editing
// it again would send the same text. The supersede itself edits it once.
func shownSuperseded(posts []*store.Post, p *store.Post) bool {
	for _, q := range posts {
		if q.Revision > p.Revision {
			return true
		}
	}
	return false
}

// frozeFor logs a request naming a ladder its tenant lacks, which ran the
// one it would get naming none; its card says so too.
func (s *Service) frozeFor(rec approval.Record, a *approval.Approval, fz *Frozen) {
	if a.Ladder == "" || a.Ladder == fz.Plan.Ladder {
		return
	}
	s.log.Warn("the request names a ladder the tenant does not have; running the one it would get naming none",
		"tenant", rec.Tenant, "approval_id", rec.ID, "ladder", approval.RedactText(a.Ladder), "instead", fz.Plan.Ladder)
}

// zone is the frozen zone's location; nil (UTC) for none, or one this
// machine cannot load.
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
