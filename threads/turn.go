package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// A turn is several calls of one model turn that wait as a whole
// (docs/protocol.md#turns): a deny of any of them ends the turn, so the
// others are not made. With a backend that supports the `turns` feature
// (Options.Turns) its members are shown on one card, each a row with its
// own Deny and Approve (single decisions, as on any card), and the card
// carries Deny all and Approve all N: one batch, every member's decision
// bound to its own revision and digest, recorded on every member in one
// transaction and sent in one request the backend applies all or nothing.

// TurnBackend is a Backend that takes a turn's batch decision. The client
// of a backend configured with the `turns` feature is one; the core sends
// no batch to a backend that is not.
type TurnBackend interface {
	DecideTurn(ctx context.Context, c TurnDecisionCall) (TurnDecisionAnswer, error)
}

// TurnDecisionCall is one batch decision: every member's, one intent.
type TurnDecisionCall struct {
	TurnID  string
	Approve bool
	Actor   string
	Surface string
	User    string
	Comment string
	// Members are the decided calls in the turn's order, each bound as a
	// single decision would be (ArgsSHA256 exactly when the person holds
	// the content permission).
	Members        []TurnMemberCall
	IdempotencyKey string
}

// TurnMemberCall is one member of a batch.
type TurnMemberCall struct {
	ApprovalID string
	Revision   int
	ArgsSHA256 string
}

// TurnDecisionAnswer is the backend's answer to a batch: Outcome as for a
// single decision, for the batch as a whole; ApprovalID names the member
// a refusal is about (stale_revision, already_decided, not_found…) when
// the backend says.
type TurnDecisionAnswer struct {
	DecisionAnswer
	ApprovalID string
}

// TurnClickRequest is a click on Deny all or Approve all N.
type TurnClickRequest struct {
	Action     templates.TurnAction
	Person     Person
	Comment    string
	ReceivedAt time.Time
}

// turnBatch is what a batch's outbox row sends: the turn and each
// member's decision; every member carries the same deciding (but for its
// revision and digest) while the batch is in flight.
type turnBatch struct {
	ID      string            `json:"id"`
	Members []turnBatchMember `json:"members"`
}

type turnBatchMember struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Digest     string `json:"digest,omitempty"`
}

// turnPayload reads a decision row's batch; false for a single decision.
func turnPayload(row *store.OutboxRow) (decisionPayload, bool) {
	var p decisionPayload
	if json.Unmarshal(row.Payload, &p) != nil || p.Turn == nil {
		return decisionPayload{}, false
	}
	return p, true
}

// turnMember is one member of a turn as the bot holds it now: the
// approval and its newest revision's request, or nil for a call that has
// not arrived (or is not of this turn).
type turnMember struct {
	ID  string
	Row *store.Approval
	Req *approval.Approval
}

// turnOf reads the members of a's turn in the turn's order, as a (the
// newest revision of one member) lists them. Only approvals of the same
// tenant whose own newest revision names the same turn count: a member
// list cannot pull another turn's or tenant's call onto a card.
func (s *Service) turnOf(ctx context.Context, a *approval.Approval) ([]turnMember, error) {
	out := make([]turnMember, len(a.Turn.Members))
	for i, id := range a.Turn.Members {
		out[i].ID = id
		row, err := s.store.ApprovalGet(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read turn member %s: %w", id, err)
		}
		if row.Tenant != a.Tenant {
			continue
		}
		req, err := s.newestRequest(ctx, row)
		if err != nil {
			return nil, err
		}
		if req.Turn.ID != a.Turn.ID {
			continue
		}
		out[i].Row, out[i].Req = row, req
	}
	return out, nil
}

// newestRequest is row's newest revision as stored.
func (s *Service) newestRequest(ctx context.Context, row *store.Approval) (*approval.Approval, error) {
	rev, err := s.store.RevisionGet(ctx, row.ID, row.Revision)
	if err != nil {
		return nil, fmt.Errorf("read revision %d of %s: %w", row.Revision, row.ID, err)
	}
	var a approval.Approval
	if err := json.Unmarshal(rev.Body, &a); err != nil {
		return nil, fmt.Errorf("decode revision %d of %s: %w", row.Revision, row.ID, err)
	}
	return &a, nil
}

// present is the members that arrived, in the turn's order.
func present(ms []turnMember) []turnMember {
	out := make([]turnMember, 0, len(ms))
	for _, m := range ms {
		if m.Row != nil {
			out = append(out, m)
		}
	}
	return out
}

// turnCheck is the check of the members as they stand now.
func turnCheck(ms []turnMember) string {
	shown := make([]templates.TurnMember, len(ms))
	for i, m := range ms {
		shown[i] = templates.TurnMember{ApprovalID: m.ID, Revision: m.Row.Revision}
	}
	return templates.TurnCheck(shown)
}

// changedSince names the member whose reask made the check differ from
// the card's: the one member one revision on from what was shown. "" when
// no single reask explains it (several, or a call that arrived since).
// At most MaxTurnMembers checks of as many members: bounded.
func changedSince(ms []turnMember, check string) string {
	shown := make([]templates.TurnMember, len(ms))
	for i, m := range ms {
		shown[i] = templates.TurnMember{ApprovalID: m.ID, Revision: m.Row.Revision}
	}
	for i, m := range ms {
		if m.Row.Revision < 2 {
			continue
		}
		shown[i].Revision--
		if templates.TurnCheck(shown) == check {
			return m.Req.Call.Function
		}
		shown[i].Revision++
	}
	return ""
}

// ClickTurn takes a click on Deny all or Approve all N. It refuses the
// batch whole, and sends nothing, unless every member it would decide is
// as the card showed it (the action's check) and may be decided so by
// this person; else it records every member's decision and the batch's
// row in one transaction, within RecordBound.
func (s *Service) ClickTurn(ctx context.Context, req TurnClickRequest) Clicked {
	ctx, cancel := context.WithTimeout(ForPerson(ctx), RecordBound)
	defer cancel()
	approve := req.Action.Approve
	if !s.turnCards {
		return Clicked{Reason: say.Reason{Kind: say.TurnUnknown}}
	}
	if utf8.RuneCountInString(req.Comment) > MaxComment {
		return Clicked{Retry: true, Reason: say.Reason{Kind: say.TooLong, Approve: approve}}
	}
	logArgs := []any{"surface", req.Person.Surface, "approval_id", req.Action.ApprovalID, "user", req.Person.User}
	row, out := s.clickedRow(ctx, ClickRequest{Action: templates.Action{ApprovalID: req.Action.ApprovalID}, Person: req.Person})
	if row == nil {
		return out
	}
	res, err := s.decideTurn(ctx, req, row)
	if err != nil {
		s.log.Error("record a turn's decision", append(logArgs, "tenant", row.Tenant, "err", err.Error())...)
		return Clicked{Tenant: row.Tenant, Retry: true, Reason: failed(err, say.NotRecorded, say.Decision)}
	}
	if !res.Sent {
		s.log.Info("turn decision refused", append(logArgs, "tenant", row.Tenant, "why", res.Reason.String())...)
	}
	return Clicked{Tenant: row.Tenant, Sent: res.Sent, Reason: res.Reason, Card: res.Card}
}

// turnTarget is a member a batch decides, with the decision it records.
type turnTarget struct {
	m turnMember
	d deciding
}

func (s *Service) decideTurn(ctx context.Context, req TurnClickRequest, row *store.Approval) (DecideResult, error) {
	approve := req.Action.Approve
	refused := func(r say.Reason) (DecideResult, error) { return DecideResult{Reason: r}, nil }
	t, m, why := s.member(row.Tenant, req.Person, say.Decision)
	if !why.IsZero() {
		return refused(why)
	}
	lead, err := s.newestRequest(ctx, row)
	if err != nil {
		return DecideResult{}, err
	}
	if !lead.InTurn() {
		return refused(say.Reason{Kind: say.TurnUnknown})
	}
	all, err := s.turnOf(ctx, lead)
	if err != nil {
		return DecideResult{}, err
	}
	shown := present(all)
	if turnCheck(shown) != req.Action.Check {
		return refused(say.Reason{Kind: say.TurnChanged, Function: changedSince(shown, req.Action.Check)})
	}
	var pending []turnMember
	for _, tm := range shown {
		if tm.Row.State == string(approval.StatePending) && tm.Row.Seen {
			pending = append(pending, tm)
		}
	}
	switch {
	case approve && len(pending) < len(all):
		return refused(say.Reason{Kind: say.TurnIncomplete, Count: len(pending), Need: len(all)})
	case len(pending) == 0:
		return refused(say.Reason{Kind: say.TurnNothing})
	}
	now := s.clock.Now()
	comment := strings.TrimSpace(req.Comment)
	targets := make([]turnTarget, 0, len(pending))
	for _, tm := range pending {
		// Each member is checked as its own decision would be: the role,
		// the wall, self-approval, a typed confirmation, protected paths.
		chk, why, err := s.decidable(ctx, row.Tenant, tm.ID, tm.Row.Revision, req.Person, approve)
		if err != nil {
			return DecideResult{}, err
		}
		if !why.IsZero() {
			return refused(why)
		}
		if approve {
			if why := s.turnApproveBlock(t, tm); why != "" {
				return refused(say.Reason{Kind: say.TurnNotAll, Function: tm.Req.Call.Function, Message: why})
			}
		}
		d := deciding{Actor: m.User, Approve: approve, Surface: req.Person.Surface, User: req.Person.User,
			Channel: req.Person.Channel, Reply: req.Person.Reply, Comment: comment, Revision: tm.Row.Revision,
			At: now, Turn: lead.Turn.ID}
		if m.Content {
			d.Digest = chk.request.Call.ArgsSHA256
		}
		targets = append(targets, turnTarget{m: tm, d: d})
	}
	received := req.ReceivedAt
	if received.IsZero() {
		received = now
	}
	// Locked in one order, so two batches over the same calls never wait
	// on each other's locks.
	order := slices.Clone(targets)
	slices.SortFunc(order, func(a, b turnTarget) int { return strings.Compare(a.m.ID, b.m.ID) })
	var res DecideResult
	var written *store.Approval
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		res, written = DecideResult{}, nil
		var first *store.Approval
		for _, tg := range order {
			cur, err := tx.ApprovalGetForUpdate(ctx, tg.m.ID)
			if err != nil {
				return err
			}
			if cur.Revision != tg.d.Revision {
				res = DecideResult{Reason: say.Reason{Kind: say.TurnChanged, Function: tg.m.Req.Call.Function}}
				return nil
			}
			if why := stale(cur, tg.d.Revision, say.Decision); !why.IsZero() {
				res = DecideResult{Reason: why}
				return nil
			}
			if approve && !cur.DeadlineAt.IsZero() && !received.Before(cur.DeadlineAt) {
				res = DecideResult{Reason: say.Reason{Kind: say.DeadlinePassed}}
				return nil
			}
			if other, ok := decidingOf(cur); ok {
				res = DecideResult{Reason: say.Reason{Kind: say.Deciding, Actor: other.Actor}}
				return nil
			}
			cur.UpdatedAt = now
			cur.Deciding, _ = json.Marshal(tg.d) // plain data: cannot fail
			if err := tx.ApprovalUpsert(ctx, cur); err != nil {
				return err
			}
			if tg.m.ID == targets[0].m.ID {
				first = cur
			}
		}
		batch := turnBatch{ID: lead.Turn.ID, Members: make([]turnBatchMember, len(targets))}
		for i, tg := range targets {
			batch.Members[i] = turnBatchMember{ApprovalID: tg.m.ID, Revision: tg.d.Revision, Digest: tg.d.Digest}
		}
		d := targets[0].d
		body, _ := json.Marshal(decisionPayload{At: d.At, Actor: d.Actor, Surface: d.Surface, Turn: &batch}) // plain data
		res = DecideResult{Sent: true, Reason: say.Reason{Kind: say.TurnSending, Approve: approve, Count: len(targets)}}
		written = first
		return s.insert(ctx, tx, []store.OutboxInsertParams{{ID: s.newID(now), Tenant: first.Tenant, ApprovalID: first.ID,
			Kind: KindDecision, Target: surfaceBackend, Payload: body, NotBefore: now, Now: now}})
	})
	if errors.Is(err, store.ErrCommit) && written != nil && s.recorded(ctx, written.ID, targets[0].d, false) {
		err, res.Sent = nil, true // committed though its answer was lost (decide)
	}
	if err != nil {
		return DecideResult{}, fmt.Errorf("record the turn's decision on %s: %w", row.ID, err)
	}
	if res.Sent {
		s.Wake()
		res.Card = s.turnCardOr(ctx, s.clickedCard(written, targets[0].m.Req, now))
	}
	return res, nil
}

// turnApproveBlock says why Approve all may not take the member, "" when
// it may: the call's own (approval.TurnApproveBlock), or the tenant's
// rules that ask more than one click of one person (a quorum, a passkey).
func (s *Service) turnApproveBlock(t *tenant.Tenant, tm turnMember) string {
	if why := tm.Req.TurnApproveBlock(); why != "" {
		return why
	}
	if fz, err := frozenOf(tm.Row); err != nil || fz.Quorum != nil {
		return "it needs the approvals of several people."
	}
	if tenant.PasskeyRequired(t.Passkeys, PasskeyFacts(tm.Req)) {
		return "it needs a passkey."
	}
	return ""
}

// performTurn sends a batch's decisions in one request and applies the
// answer to every member in one transaction. A member no longer in
// flight (answered, or replaced) or asked again since leaves the batch
// unsent: every member gets its buttons back and the person is told.
func (s *Service) performTurn(ctx context.Context, row *store.OutboxRow, p decisionPayload) error {
	tb, ok := s.backend.(TurnBackend)
	if !ok {
		return Permanent(errors.New("the backend client takes no turn decisions"))
	}
	batch := p.Turn
	type flight struct {
		id string
		d  deciding
		fn string
	}
	var live []flight
	var stopped say.Reason
	for _, bm := range batch.Members {
		a, err := s.store.ApprovalGet(ctx, bm.ApprovalID)
		if errors.Is(err, store.ErrNotFound) {
			stopped = say.Reason{Kind: say.TurnChanged}
			continue
		}
		if err != nil {
			return fmt.Errorf("read turn member %s: %w", bm.ApprovalID, err)
		}
		d, ok := decidingOf(a)
		if !ok || d.Turn != batch.ID || !p.sends(d) {
			stopped = say.Reason{Kind: say.TurnChanged}
			continue
		}
		fn := ""
		if req, err := s.newestRequest(ctx, a); err == nil {
			fn = req.Call.Function
		}
		if d.Revision < a.Revision || approval.State(a.State).Final() {
			stopped = say.Reason{Kind: say.TurnChanged, Function: fn}
		}
		live = append(live, flight{id: a.ID, d: d, fn: fn})
	}
	if len(live) == 0 {
		return nil // answered already (a repeat after a crash)
	}
	answers := make([]*DecisionAnswer, len(live))
	tell := stopped
	if stopped.IsZero() {
		c := TurnDecisionCall{TurnID: batch.ID, Approve: live[0].d.Approve, Actor: live[0].d.Actor,
			Surface: live[0].d.Surface, User: live[0].d.User, Comment: live[0].d.Comment, IdempotencyKey: row.ID}
		for _, f := range live {
			c.Members = append(c.Members, TurnMemberCall{ApprovalID: f.id, Revision: f.d.Revision, ArgsSHA256: f.d.Digest})
		}
		ans, err := tb.DecideTurn(ctx, c)
		switch {
		case err != nil && stopping(ctx):
			return err // in flight for the next start, under the same key
		case err != nil:
			s.log.Warn("turn decision not recorded", "approval_id", row.ApprovalID, "tenant", row.Tenant, "err", err)
			tell = say.Reason{Kind: say.NotAnswered, Approve: c.Approve,
				Refused: !errors.Is(err, ErrBackendUnavailable) && !errors.Is(err, context.DeadlineExceeded)}
		case ans.Outcome == DecisionRecorded:
			// One message for the turn: said once, in the turn card's
			// thread, not once per call.
			quiet := ans.DecisionAnswer
			quiet.Message = ""
			for i := range live {
				answers[i] = &quiet
			}
			answers[0] = &ans.DecisionAnswer
			tell = say.Reason{Kind: say.Recorded, Approve: c.Approve}
		default:
			// All or nothing: the member the refusal names takes the
			// answer (a decision made first, a call gone); the others
			// were not decided, and get their buttons back.
			named := slices.IndexFunc(live, func(f flight) bool { return f.id == ans.ApprovalID })
			_, tell = outcome(&store.Approval{ID: row.ApprovalID, Tenant: row.Tenant}, live[0].d, ans.DecisionAnswer)
			if named >= 0 {
				answers[named] = &ans.DecisionAnswer
				if ans.Outcome == DecisionStaleRevision {
					tell = say.Reason{Kind: say.TurnChanged, Function: live[named].fn}
				}
			}
		}
	}
	now := s.clock.Now()
	var enqueued int
	var closed []*closing
	err := s.commit(context.WithoutCancel(ctx), func(ctx context.Context, tx store.Tx) error {
		enqueued, closed = 0, nil
		if err := tx.OutboxComplete(ctx, store.OutboxCompleteParams{ID: row.ID, Worker: s.worker, Now: now}); err != nil {
			return err
		}
		var all []store.OutboxInsertParams
		var lead *store.Approval
		// Locked in id order, as every transaction over several calls of
		// a turn locks them (decideTurn, claimTurnCard).
		order := make([]int, len(live))
		for i := range order {
			order[i] = i
		}
		slices.SortFunc(order, func(a, b int) int { return strings.Compare(live[a].id, live[b].id) })
		for _, i := range order {
			f := live[i]
			rows, c, err := s.settleIn(ctx, tx, f.id, f.d, answers[i], say.Reason{}, now, true)
			if err != nil {
				return err
			}
			if c != nil {
				closed = append(closed, c)
			}
			all = append(all, rows...)
			if i == 0 {
				if lead, err = tx.ApprovalGetForUpdate(ctx, f.id); err != nil {
					return err
				}
			}
		}
		if text := tell.String(); text != "" && live[0].d.Surface != SurfaceEmail && live[0].d.Surface != tenant.SurfacePage {
			all = append(all, s.tellRow(lead, live[0].d, text, now))
		}
		enqueued = len(all)
		if len(all) == 0 {
			return nil
		}
		return s.insert(ctx, tx, all)
	})
	if err != nil {
		return fmt.Errorf("apply the backend's answer to turn %s: %w", batch.ID, err)
	}
	for _, c := range closed {
		s.count(ctx, c)
	}
	if enqueued > 0 {
		s.Wake()
	}
	return errSettled
}
