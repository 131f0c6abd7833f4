package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
)

// What people do to a waiting approval's ladder, I'm looking (acknowledge)
// and Escalate now (escalateNow): see
// docs/design.md#im-looking-and-escalate-now.

// ladderState is what people did to an approval's ladder while it waits
// (store.Approval.LadderState).
type ladderState struct {
	// Looking is the acknowledgement in force, or the last one.
	Looking *looking `json:"looking,omitempty"`
	// Escalations are the steps fired at once, oldest first.
	Escalations []escalation `json:"escalations,omitempty"`
	// Last is the latest act's id: reads with one Last show one state.
	Last string `json:"last,omitempty"`
}

// looking is one acknowledgement.
type looking struct {
	ID      string `json:"id"`
	Actor   string `json:"actor"`
	Surface string `json:"surface"`
	User    string `json:"user,omitempty"`
	// Since is when Actor said they are looking (a second press keeps it);
	// Until is when the hold ends.
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// From is whom Actor took over from, while that member's hold lasted.
	From string `json:"from,omitempty"`
}

// escalation is one press of Escalate now: the plan's steps From to To
// (exclusive) it handed over, the one it fired planned for Planned.
type escalation struct {
	ID      string    `json:"id"`
	Actor   string    `json:"actor"`
	Surface string    `json:"surface"`
	User    string    `json:"user,omitempty"`
	At      time.Time `json:"at"`
	From    int       `json:"from"`
	To      int       `json:"to"`
	Planned time.Time `json:"planned"`
}

// ladderStateOf reads the row's ladder state; one this release cannot
// read shows nobody looking rather than no card.
func ladderStateOf(row *store.Approval) ladderState {
	var st ladderState
	if len(row.LadderState) > 0 {
		_ = json.Unmarshal(row.LadderState, &st) // our own JSON
	}
	return st
}

// hold is when the hold of the member looking ends; zero for none.
func (st ladderState) hold() time.Time {
	if st.Looking == nil {
		return time.Time{}
	}
	return st.Looking.Until
}

// holds reports whether the steps wait for someone at now.
func (st ladderState) holds(now time.Time) bool { return now.Before(st.hold()) }

// nextStepAt is the row's next_step_at after done steps: the next step's
// time, or the hold's end if later; zero when none is left. The deadline
// is not its business.
func nextStepAt(p ladder.Plan, done int, st ladderState) time.Time {
	at, _ := p.NextAt(done, st.hold())
	return at
}

// LadderRequest is a click on I'm looking or Escalate now.
type LadderRequest struct {
	Tenant     string
	ApprovalID string
	Revision   int // the revision of the card clicked
	Person     Person
	// Escalations is how many escalations the clicked card showed: a press
	// on a card that is behind fires nothing.
	Escalations int
}

// LadderResult says what became of the click.
type LadderResult struct {
	// Done: recorded, with the edits of every copy.
	Done   bool
	Reason say.Reason // what the person is told
	// Card is the clicked copy as the click left it, when Done; nil when it
	// could not be built (logged).
	Card *Card
}

// acknowledge records that a member who may decide is looking: the
// ladder's next steps wait for the frozen ack_pause; the deadline stays.
func (s *Service) acknowledge(ctx context.Context, req LadderRequest) (LadderResult, error) {
	ctx = ForPerson(ctx)
	who, why, err := s.ladderClicker(ctx, req)
	if !why.IsZero() || err != nil {
		return LadderResult{Reason: why}, err
	}
	m, a := who.member, who.request
	if who.tenant.ForbidSelfApproval && a.Job.StartedBy != "" && m.User == a.Job.StartedBy {
		return LadderResult{Reason: say.Reason{Kind: say.OwnJob, Act: say.Ladder, Job: a.Job.ID, Tenant: a.Tenant}}, nil
	}
	now := s.clock.Now()
	act := looking{ID: s.newID(now), Actor: m.User, Surface: req.Person.Surface, User: req.Person.User, Since: now}
	var res LadderResult
	var written *store.Approval
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		row, fz, refusal, err := s.waitingRow(ctx, tx, req, now)
		if !refusal.IsZero() || err != nil {
			res = LadderResult{Reason: refusal}
			return err
		}
		st := ladderStateOf(row)
		act.Since, act.From, act.Until = now, "", now.Add(fz.Plan.Pause())
		k := personClock{zone: fz.zone(), now: now}
		res.Reason = say.Reason{Kind: say.Looking, Function: row.Function, Until: k.at(act.Until)}
		if !row.DeadlineAt.IsZero() && !act.Until.Before(row.DeadlineAt) {
			res.Reason.Until, res.Reason.UntilDeadline = k.at(row.DeadlineAt), true
		}
		switch prev := st.Looking; {
		case prev != nil && prev.Actor == m.User && st.holds(now):
			act.Since, act.From = prev.Since, prev.From
			res.Reason.Kind = say.StillLooking
		case prev != nil && st.holds(now):
			act.From = prev.Actor
			res.Reason.Kind, res.Reason.Actor = say.TookOver, prev.Actor
		}
		st.Looking, st.Last = &act, act.ID
		row.LadderState, _ = json.Marshal(st) // plain data: cannot fail
		row.NextStepAt = nextStepAt(fz.Plan, row.StepsDone, st)
		row.UpdatedAt = now
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		res.Done, written = true, row
		return s.editCopies(ctx, tx, row, now)
	})
	if errors.Is(err, store.ErrCommit) && s.actRecorded(ctx, req.ApprovalID, act.ID) {
		err = nil // committed after all, though its answer was lost (decide's recorded)
	}
	if err != nil {
		return LadderResult{}, fmt.Errorf("record an acknowledgement of %s: %w", req.ApprovalID, err)
	}
	if res.Done {
		res.Card = s.clickedCard(written, a, now)
		s.log.Info("acknowledged", "tenant", req.Tenant, "approval_id", req.ApprovalID, "actor", m.User,
			"surface", req.Person.Surface, "until", act.Until, "took_over_from", act.From)
		s.Wake()
	}
	return res, nil
}

// escalateNow fires the ladder's next step at once, for a member who may
// decide, as the tick would at its time. A press on a card that is behind
// (LadderRequest.Escalations) fires nothing, so each step fires once.
func (s *Service) escalateNow(ctx context.Context, req LadderRequest) (LadderResult, error) {
	ctx = ForPerson(ctx)
	who, why, err := s.ladderClicker(ctx, req)
	if !why.IsZero() || err != nil {
		return LadderResult{Reason: why}, err
	}
	m := who.member
	now := s.clock.Now()
	act := escalation{ID: s.newID(now), Actor: m.User, Surface: req.Person.Surface, User: req.Person.User, At: now}
	var res LadderResult
	var written *store.Approval
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		row, fz, refusal, err := s.waitingRow(ctx, tx, req, now)
		if !refusal.IsZero() || err != nil {
			res = LadderResult{Reason: refusal}
			return err
		}
		st := ladderStateOf(row)
		k := personClock{zone: fz.zone(), now: now}
		if n := len(st.Escalations); req.Escalations != n {
			res.Reason = say.Reason{Kind: say.EscalateStale}
			if req.Escalations < n {
				last := st.Escalations[n-1]
				res.Reason = say.Reason{Kind: say.EscalatedBefore, Actor: last.Actor, At: k.at(last.At), Who: firedWho(fz.Plan, last, false)}
			}
			return nil
		}
		if len(st.Escalations) >= templates.MaxEscalations {
			res.Reason = say.Reason{Kind: say.EscalatedMax, Count: len(st.Escalations)}
			return nil
		}
		due := fz.Plan.Through(row.StepsDone)
		if len(due) == 0 {
			res.Reason = say.Reason{Kind: say.StepsAllGone}
			if !row.DeadlineAt.IsZero() {
				res.Reason.At = k.at(row.DeadlineAt)
			}
			return nil
		}
		act.From, act.To, act.Planned = row.StepsDone, row.StepsDone+len(due), due[len(due)-1].At
		row.StepsDone = act.To
		rows, err := s.stepRows(ctx, tx, row, fz, due, now, m.User)
		if err != nil {
			return err
		}
		st.Escalations, st.Last = append(st.Escalations, act), act.ID
		row.LadderState, _ = json.Marshal(st) // plain data: cannot fail
		row.NextStepAt = nextStepAt(fz.Plan, row.StepsDone, st)
		row.UpdatedAt = now
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		if err := s.insert(ctx, tx, rows); err != nil {
			return err
		}
		res = LadderResult{Done: true, Reason: say.Reason{Kind: say.Escalated, Who: firedWho(fz.Plan, act, false), Planned: k.at(act.Planned)}}
		written = row
		return s.editCopies(ctx, tx, row, now)
	})
	if errors.Is(err, store.ErrCommit) && s.actRecorded(ctx, req.ApprovalID, act.ID) {
		err = nil
	}
	if err != nil {
		return LadderResult{}, fmt.Errorf("record an escalation of %s: %w", req.ApprovalID, err)
	}
	if res.Done {
		s.countSteps(written, act.To-act.From, StepsByPerson)
		res.Card = s.clickedCard(written, who.request, now)
		s.log.Info("escalated now", "tenant", req.Tenant, "approval_id", req.ApprovalID, "actor", m.User,
			"surface", req.Person.Surface, "steps", act.To-act.From)
		s.Wake()
	}
	return res, nil
}

// ladderClicker finds the tenant, the member who clicked and the revision
// clicked; when the click cannot go on, it returns why.
func (s *Service) ladderClicker(ctx context.Context, req LadderRequest) (decider, say.Reason, error) {
	t, m, why := s.member(req.Tenant, req.Person, say.Ladder)
	if !why.IsZero() {
		return decider{}, why, nil
	}
	a, why, err := s.revisionOf(ctx, req.Tenant, req.ApprovalID, req.Revision, say.Ladder)
	if !why.IsZero() || err != nil {
		return decider{}, why, err
	}
	return decider{tenant: t, member: m, request: a}, say.Reason{}, nil
}

// waitingRow reads the approval in tx, locked, while a card can still
// decide it (not closed, not superseded, nothing in flight, its deadline
// not passed); else it returns why nothing is recorded.
func (s *Service) waitingRow(ctx context.Context, tx store.Tx, req LadderRequest, now time.Time) (*store.Approval, Frozen, say.Reason, error) {
	unknown := say.Reason{Kind: say.UnknownCard, Act: say.Ladder}
	row, err := tx.ApprovalGetForUpdate(ctx, req.ApprovalID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, Frozen{}, unknown, nil
	}
	if err != nil {
		return nil, Frozen{}, say.Reason{}, err
	}
	if row.Tenant != req.Tenant {
		return nil, Frozen{}, unknown, nil
	}
	if why := stale(row, req.Revision, say.Ladder); !why.IsZero() {
		return nil, Frozen{}, why, nil
	}
	if len(row.Deciding) > 0 {
		var other deciding
		_ = json.Unmarshal(row.Deciding, &other) // our own JSON
		if other.Surface == DeadlineSurface {
			return nil, Frozen{}, say.Reason{Kind: say.DeadlineDenying, Act: say.Ladder}, nil
		}
		return nil, Frozen{}, say.Reason{Kind: say.Deciding, Act: say.Ladder, Actor: other.Actor}, nil
	}
	if !row.DeadlineAt.IsZero() && !now.Before(row.DeadlineAt) {
		return nil, Frozen{}, say.Reason{Kind: say.DeadlinePassed, Act: say.Ladder}, nil
	}
	fz, err := frozenOf(row)
	if err != nil {
		return nil, Frozen{}, say.Reason{}, err
	}
	return row, fz, say.Reason{}, nil
}

// editCopies enqueues the edits of every copy (editEveryCopy).
func (s *Service) editCopies(ctx context.Context, tx store.Tx, row *store.Approval, now time.Time) error {
	edits, err := s.editEveryCopy(ctx, tx, row, now)
	if err != nil {
		return err
	}
	if len(edits) == 0 {
		return nil
	}
	return s.insert(ctx, tx, edits)
}

// actRecorded is recorded for ladder acts: whether act id is the latest.
func (s *Service) actRecorded(ctx context.Context, approvalID, id string) bool {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), RecordBound)
	defer cancel()
	row, err := s.store.ApprovalGet(rctx, approvalID)
	if err != nil {
		return false
	}
	return ladderStateOf(row).Last == id
}

// firedWho words whom an escalation's steps told, as the plan line does
// ("DM user:lee; email leads@acme.example"); mail counts addresses.
func firedWho(p ladder.Plan, e escalation, mail bool) string {
	var parts []string
	for i := max(e.From, 0); i < min(e.To, len(p.Steps)); i++ {
		st := p.Steps[i]
		if st.Skipped {
			continue
		}
		if who := p.Say(st, mail); who != "" {
			parts = append(parts, who)
		}
	}
	return strings.Join(parts, " · ")
}

// ladderCard puts the ladder state into the card's words.
func ladderCard(st ladderState, p ladder.Plan, mail bool) (*templates.Looking, []templates.EscalatedStep) {
	var l *templates.Looking
	if st.Looking != nil {
		l = &templates.Looking{Actor: st.Looking.Actor, Since: st.Looking.Since, Until: st.Looking.Until, From: st.Looking.From}
	}
	var es []templates.EscalatedStep
	for _, e := range st.Escalations {
		es = append(es, templates.EscalatedStep{Actor: e.Actor, At: e.At, Who: firedWho(p, e, mail), Planned: e.Planned})
	}
	return l, es
}

// personClock words a time for the clicker in the approval's frozen zone.
type personClock struct {
	zone *time.Location
	now  time.Time
}

func (k personClock) at(t time.Time) string { return TimeAt(t, k.now, k.zone) }

// TimeAt words t as a card does, in zone (nil is UTC): its time of day
// ("21:00 CET"), with its date when not on now's ("2026-11-30 19:00 CET").
func TimeAt(t, now time.Time, zone *time.Location) string {
	if zone == nil {
		zone = time.UTC
	}
	t, now = t.In(zone), now.In(zone)
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04 MST")
	}
	return t.Format("2006-01-02 15:04 MST")
}
