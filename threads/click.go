package threads

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"time"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// A person's click, on a chat card or on the decision page, comes to
// Click. It reads the approval the click names once (its tenant comes
// from the store, never from the click), checks and records in one pass,
// and returns the whole outcome: why, in say's terms, the dialog to
// open, the clicked card as the decision's transaction left it, or what
// to show. A surface keeps only its wire format.
//
// A surface answers a decision's click only after Click returns: a 2xx
// to the platform then means the decision is committed and will reach
// the job backend.

// ClickDo is what a click asks of the core.
type ClickDo uint8

// What a click asks.
const (
	// ClickAsk is a click that opens a dialog before anything is decided
	// (Deny, Approve with comment…, a destructive call's Approve where
	// buttons cannot ask again): the Dialog, or why not.
	ClickAsk ClickDo = iota + 1
	// ClickRecord is a decision (Approve, or a dialog's submission).
	ClickRecord
	// ClickLadder is I'm looking or Escalate now.
	ClickLadder
	// ClickShow is Show all arguments or Show details.
	ClickShow
	// ClickReveal shows a content holder the restricted call their
	// Approve asked to decide (Clicked.Reveal), then the Approve that
	// decides it.
	ClickReveal
	// ClickView is the decision page opening a link (Link): what the
	// page may show and offer (Clicked.Page). Nothing is recorded.
	ClickView
)

// ClickRequest is one click a surface has verified.
type ClickRequest struct {
	Do ClickDo
	// Action is the button, or the decision a dialog submits: the
	// approval, the revision clicked and whether it approves.
	Action templates.Action
	// Person is who clicked, on which surface.
	Person Person
	// Comment is a dialog's reason or comment (ClickRecord).
	Comment string
	// ReceivedAt is when the surface got the click (Receipt.At): the
	// deadline judges a decision by it.
	ReceivedAt time.Time
	// ShownDigest is the decision page's (DecideRequest.ShownDigest).
	ShownDigest string
	// Passkey is the decision page's (DecideRequest.Passkey).
	Passkey bool
	// Typed is the decision page's (DecideRequest.Typed).
	Typed string
	// Link is the decision link a ClickView opens; nil for other clicks.
	Link *PageLink
	// Grant is the grant dialog's submission (ClickRecord of a
	// templates.ActionGrant); nil for every other click.
	Grant *GrantAsk
}

// Clicked is what became of a click.
type Clicked struct {
	Tenant string // the approval's tenant, from the store; "" when unknown
	// Sent: what the click asked is committed: a decision on its way to
	// the backend, an acknowledgement, a step fired at once. Card shows
	// the clicked copy as it now stands.
	Sent bool
	// Retry: nothing was recorded, and the same click (or dialog) may be
	// tried again: the bot could not do its part (the store, the record,
	// the time, a look-up), or the text is too long.
	Retry bool
	// Reason is what the person is told when there is no card, dialog or
	// answer to show: why nothing was done, or threads' own sentence.
	Reason say.Reason
	// Reveal: nothing was recorded; the person holds the content
	// permission and was not shown the restricted call they approve. The
	// surface answers with ClickReveal's answer.
	Reveal bool
	// Dialog is ClickAsk's dialog to open; nil for none.
	Dialog *Dialog
	// Card is the clicked copy as the click's transaction left the
	// approval, when Sent; nil when nothing was recorded, or it could not
	// be built (logged): the person is then told Reason.
	Card *Card
	// Shown is what ClickShow and ClickReveal show; nil when nothing is
	// (Reason says why).
	Shown *Shown
	// Page is what ClickView's page shows; nil when the link opens none
	// (Reason says why).
	Page *Page
}

// Dialog is what a decision's dialog says of the call it decides: the
// reason dialog of Deny, the comment dialog of Approve with comment…, and
// the confirmation a surface whose buttons cannot ask again shows for a
// destructive call's Approve.
type Dialog struct {
	Function string
	// Effect is the card's effect line ("DESTRUCTIVE · reaches outside
	// the tenant"); Destructive, whether Approve asks again.
	Effect      string
	Destructive bool
	// Restricted: the call's content is restricted, so a reason or a
	// comment stays off shared places (say.ReasonHint). False when the
	// revision cannot be read: the dialog then says the text goes onto
	// the card, a promise that errs on the side of care.
	Restricted bool
	// Grant is "Approve and allow…"'s offer (templates.ActionGrant); nil
	// for every other dialog.
	Grant *GrantOffer
	// Question is Answer…'s dialog (templates.ActionAnswerText): the
	// question and the words' bound; nil for every other dialog, whose
	// call fields it leaves empty.
	Question *QuestionDialog
}

// Shown is what Show all arguments, Show details and a Reveal show the
// person who clicked, to them alone. The surface lays it out.
type Shown struct {
	Arguments ShowResult
	// Details is the card of Show details with RevealContent set, for the
	// surface to render without buttons; nil for Show all arguments, or
	// for a restricted call, whose content is never stored.
	Details *templates.Input
	// Lead heads a Reveal's answer: what it is and that nothing was sent.
	Lead say.Reason
	// Approve is the Approve a Reveal's answer ends with, which decides
	// the revision shown, and ApproveNote its Approve with comment…; nil
	// but for a Reveal.
	Approve, ApproveNote *templates.Action
	// TooLarge is a Reveal's whole answer instead, when the surface finds
	// before sending anything that the content does not all fit: no part,
	// no Lead, no Approve.
	TooLarge say.Reason
	// Question is Show question's answer on a restricted question: the
	// question to show that person alone, with the controls that answer
	// it; nil for every other showing (Arguments is then empty).
	Question *ShownQuestion
}

// Click takes one click. A decision (ClickRecord) and a ladder click
// return within RecordBound, and are recorded before Click returns; a
// dialog's reads are bounded by ctx (the caller's answer decides how
// long they may take).
func (s *Service) Click(ctx context.Context, req ClickRequest) Clicked {
	switch req.Do {
	case ClickAsk:
		if req.Action.Kind == templates.ActionAnswerText {
			return s.askAnswer(ForPerson(ctx), req)
		}
		return s.clickAsk(ForPerson(ctx), req)
	case ClickRecord:
		switch req.Action.Kind {
		case templates.ActionRevokeGrant:
			return s.clickRevoke(ForPerson(ctx), req)
		case templates.ActionAnswer, templates.ActionAnswerText:
			return s.clickAnswer(ForPerson(ctx), req)
		}
		return s.clickRecord(ForPerson(ctx), req)
	case ClickLadder:
		return s.clickLadder(ForPerson(ctx), req)
	case ClickShow, ClickReveal:
		return s.clickShow(ctx, req)
	case ClickView:
		if req.Link != nil {
			return s.clickView(ctx, req)
		}
	}
	return Clicked{Reason: say.Reason{Kind: say.UnknownButton}}
}

// approves reports whether the click's action approves.
func (req ClickRequest) approves() bool {
	switch req.Action.Kind {
	case templates.ActionApprove, templates.ActionApproveSeen, templates.ActionApproveNote, templates.ActionApproveNoteSeen,
		templates.ActionGrant:
		return true
	}
	return false
}

func (req ClickRequest) logArgs() []any {
	return []any{"surface", req.Person.Surface, "approval_id", req.Action.ApprovalID, "user", req.Person.User}
}

// clickedRow reads the approval a click names, and so its tenant; when
// it cannot, it returns nil and the outcome.
func (s *Service) clickedRow(ctx context.Context, req ClickRequest) (*store.Approval, Clicked) {
	row, err := s.store.ApprovalGet(ctx, req.Action.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.log.Info("click for an approval the bot does not hold", req.logArgs()...)
		return nil, Clicked{Reason: say.Reason{Kind: say.UnknownCard}}
	case err != nil:
		s.log.Error("read the approval of a click", append(req.logArgs(), "err", err.Error())...)
		return nil, Clicked{Retry: true, Reason: failed(err, say.StoreDown, say.Decision)}
	}
	return row, Clicked{}
}

// failed is what a person is told when the bot could not do its part:
// that it ran out of time, or otherwise.
func failed(err error, otherwise say.Kind, act say.Act) say.Reason {
	if errors.Is(err, context.DeadlineExceeded) {
		return say.Reason{Kind: say.NotInTime, Act: act}
	}
	return say.Reason{Kind: otherwise, Act: act}
}

// clickRecord records a decision, a reason or comment longer than
// MaxComment refused before anything is read.
func (s *Service) clickRecord(ctx context.Context, req ClickRequest) Clicked {
	approve := req.approves()
	if utf8.RuneCountInString(req.Comment) > MaxComment {
		return Clicked{Retry: true, Reason: say.Reason{Kind: say.TooLong, Approve: approve}}
	}
	ctx, cancel := context.WithTimeout(ctx, RecordBound)
	defer cancel()
	row, out := s.clickedRow(ctx, req)
	if row == nil {
		return out
	}
	act := req.Action
	if (act.Kind == templates.ActionGrant) != (req.Grant != nil) {
		// A grant comes only from its dialog, and only its dialog's
		// action carries one.
		return Clicked{Tenant: row.Tenant, Reason: say.Reason{Kind: say.UnknownButton}}
	}
	// Only the Approve of a private answer that showed the call's
	// content says the person was shown it.
	res, err := s.decide(ctx, DecideRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID, Revision: act.Revision,
		Approve: approve, Comment: req.Comment, Person: req.Person, ReceivedAt: req.ReceivedAt,
		Shown: approve && act.Kind.Seen(), ShownDigest: req.ShownDigest, Passkey: req.Passkey, Typed: req.Typed,
		Grant: req.Grant}, row)
	if err != nil {
		s.log.Error("record a decision", append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
		return Clicked{Tenant: row.Tenant, Retry: true, Reason: failed(err, say.NotRecorded, say.Decision)}
	}
	if !res.Sent {
		s.refused(req, row.Tenant, res.Reason)
	}
	return Clicked{Tenant: row.Tenant, Sent: res.Sent, Reason: res.Reason, Reveal: res.Reveal, Card: res.Card}
}

// refused logs why a decision was refused, as the person is told: the
// state, the role or the revision, never a value of the call.
func (s *Service) refused(req ClickRequest, tenant string, why say.Reason) {
	s.log.Info("decision refused", append(req.logArgs(), "tenant", tenant, "why", why.String())...)
}

// clickAsk decides what a click that opens a dialog gets. For a person
// who may decide in the approval's tenant as configured now, on a card
// that can still be decided, it returns the Dialog, and records nothing.
// Anyone else, or a click on a superseded or closed card, is not asked
// what would be refused: the outcome says why, as the decision would be
// refused. A revision that cannot be read gives a Dialog that asks
// again, as for a destructive call, and is not Restricted. A member who
// holds the content permission, asking to approve a restricted call from
// the card, gets no dialog but Reveal: they are shown the call first.
func (s *Service) clickAsk(ctx context.Context, req ClickRequest) Clicked {
	row, out := s.clickedRow(ctx, req)
	if row == nil {
		return out
	}
	out = Clicked{Tenant: row.Tenant}
	act, approve := req.Action, req.approves()
	t, m, why := s.member(row.Tenant, req.Person, say.Decision)
	if !why.IsZero() || !stale(row, act.Revision, say.Decision).IsZero() {
		return s.wouldRefuse(ctx, req, row, why)
	}
	if isQuestionRow(row) {
		// A question is answered, never approved or denied: a call's
		// dialog on its id is a button no card of it carries.
		out.Reason = say.Reason{Kind: say.UnknownButton}
		return out
	}
	d := &Dialog{Function: templates.VisibleLine(row.Function), Destructive: true}
	logArgs := append(req.logArgs(), "tenant", row.Tenant)
	rev, err := s.store.RevisionGet(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		s.log.Warn("read the revision a dialog names; asking again as for a destructive call", append(logArgs, "err", err.Error())...)
		if act.Kind == templates.ActionGrant {
			// No grant is offered on a call the bot cannot read.
			out.Retry, out.Reason = true, say.Reason{Kind: say.CannotCheck}
			return out
		}
		out.Dialog = d
		return out
	}
	var a approval.Approval
	if err := json.Unmarshal(rev.Body, &a); err != nil {
		// The error may quote a value of the call: not logged.
		s.log.Warn("decode the revision a dialog names; asking again as for a destructive call", logArgs...)
		if act.Kind == templates.ActionGrant {
			out.Reason = say.Reason{Kind: say.CannotCheck}
			return out
		}
		out.Dialog = d
		return out
	}
	d.Function = templates.VisibleLine(cmp.Or(a.Call.Function, row.Function)) // a modal's title shows it as is
	d.Effect = approval.EffectLine(a.Call.Annotations)
	d.Destructive = a.Destructive()
	d.Restricted = a.ContentRestricted()
	// No dialog asks for what the revision refuses (a private chat's
	// call, the job's own starter where self-approval is forbidden).
	var refused say.Reason
	if a.Tenant == row.Tenant {
		refused = refuse(t, m, &a, approve)
	} else if a.DecidedByContentHolders() && !m.Content {
		refused = say.Reason{Kind: say.UnknownCard}
	}
	if refused.IsZero() && approve && a.Tenant == row.Tenant {
		// Nor for an approval the call's quorum would not count (not
		// eligible, the starter, approved already).
		if c, err := s.cardOf(row, &a, s.clock.Now()); err == nil {
			refused = c.counts(m.User)
		}
	}
	if refused.IsZero() && approve && a.Tenant == row.Tenant && tenant.PasskeyRequired(t.Passkeys, PasskeyFacts(&a)) {
		// Nor for an Approve only a passkey gives: the member is sent to
		// their decision page.
		refused = s.passkeyNeeded(t, m, &a)
	}
	if refused.IsZero() && act.Kind == templates.ActionGrant {
		// Nor for a grant the call or this member may not give.
		refused = say.Reason{Kind: say.UnknownCard}
		if a.Tenant == row.Tenant {
			fz, err := frozenOf(row)
			if err != nil {
				refused = say.Reason{Kind: say.CannotCheck}
			} else if refused = s.grantBar(t, &a, &fz); refused.IsZero() {
				o := grantOffer(t, &a)
				d.Grant = &o
			}
		}
	}
	if !refused.IsZero() {
		out.Reason = refused
		s.refused(req, row.Tenant, refused)
		return out
	}
	if approve && d.Restricted && !act.Kind.Seen() && m.Content {
		// A content holder does not approve a restricted call blind: no
		// dialog yet; the surface shows them the call first (Reveal),
		// with the controls that decide it.
		out.Reveal = true
		return out
	}
	out.Dialog = d
	return out
}

// wouldRefuse is a dialog's click by someone who may not decide (why),
// or on a card that can no longer be decided: why, as the decision
// would be refused, bounded as a decision is. Nothing is recorded.
func (s *Service) wouldRefuse(ctx context.Context, req ClickRequest, row *store.Approval, why say.Reason) Clicked {
	if why.IsZero() {
		ctx, cancel := context.WithTimeout(ctx, RecordBound)
		defer cancel()
		act := req.Action
		_, why2, err := s.decidable(ctx, row.Tenant, act.ApprovalID, act.Revision, req.Person, req.approves())
		if err != nil {
			s.log.Error("record a decision", append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
			return Clicked{Tenant: row.Tenant, Retry: true, Reason: failed(err, say.NotRecorded, say.Decision)}
		}
		why = cmp.Or(why2, stale(row, act.Revision, say.Decision))
	}
	s.refused(req, row.Tenant, why)
	return Clicked{Tenant: row.Tenant, Reason: why}
}

// clickLadder records a click on one of the ladder's buttons: I'm
// looking (the ladder's next steps wait while the clicker looks) or
// Escalate now (the next step fires at once; the action carries how many
// steps the card showed escalated, so a second press of one card fires
// nothing).
func (s *Service) clickLadder(ctx context.Context, req ClickRequest) Clicked {
	ctx, cancel := context.WithTimeout(ctx, RecordBound)
	defer cancel()
	row, out := s.clickedRow(ctx, req)
	if row == nil {
		return out
	}
	act := req.Action
	lr := LadderRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID, Revision: act.Revision, Person: req.Person,
		Escalations: act.Escalations}
	call, what := s.acknowledge, "record an acknowledgement"
	if act.Kind == templates.ActionEscalate {
		call, what = s.escalateNow, "record an escalation"
	}
	res, err := call(ctx, lr)
	if err != nil {
		s.log.Error(what, append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
		return Clicked{Tenant: row.Tenant, Retry: true, Reason: failed(err, say.NotRecorded, say.Ladder)}
	}
	if !res.Done {
		s.log.Info("ladder click refused", append(req.logArgs(), "tenant", row.Tenant, "kind", string(act.Kind))...)
	}
	return Clicked{Tenant: row.Tenant, Sent: res.Done, Reason: res.Reason, Card: res.Card}
}

// clickShow answers Show all arguments, Show details and a Reveal: the
// arguments are looked up at the backend as the person who clicked and
// shown only when they may see them and they match the card's digest.
// A Reveal ends with an Approve (templates.ActionApproveSeen) bound to
// the same revision, and so to the same digest.
func (s *Service) clickShow(ctx context.Context, req ClickRequest) Clicked {
	row, out := s.clickedRow(ctx, req)
	if row == nil {
		return out
	}
	if req.Action.Kind == templates.ActionShowDetails && isQuestionRow(row) {
		return s.showQuestion(ctx, req, row)
	}
	out = Clicked{Tenant: row.Tenant}
	act := req.Action
	res, rev, err := s.showArguments(ctx, showRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID,
		Revision: act.Revision, Person: req.Person})
	if err != nil {
		s.log.Error("look up arguments", append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
		out.Retry, out.Reason = true, say.Reason{Kind: say.LookupFailed}
		return out
	}
	if !res.Refusal.IsZero() {
		out.Reason = res.Refusal
		return out
	}
	shown := &Shown{Arguments: res}
	switch {
	case req.Do == ClickReveal:
		shown.Lead = say.Reason{Kind: say.RevealFirst}
		shown.Approve = &templates.Action{Kind: templates.ActionApproveSeen, ApprovalID: act.ApprovalID, Revision: act.Revision}
		shown.ApproveNote = &templates.Action{Kind: templates.ActionApproveNoteSeen, ApprovalID: act.ApprovalID, Revision: act.Revision}
		shown.TooLarge = say.Reason{Kind: say.RevealTooLarge, Console: templates.VisibleLine(rev.ConsoleURL),
			Mail: s.mailApproves(row.Tenant)}
	case act.Kind == templates.ActionShowDetails:
		// The person holds the content permission (showArguments
		// checked): the card's hidden parts come first.
		shown.Details = details(row, rev, act)
	}
	out.Shown = shown
	return out
}

// details is the clicked revision's card with its restricted parts
// shown, for the one person allowed to see them; nil for a restricted
// call, whose content is never stored: the arguments looked up at the
// backend are all its details show.
func details(row *store.Approval, rev *approval.Stored, act templates.Action) *templates.Input {
	if rev.Form.ContentWithheld {
		return nil
	}
	in := templates.Input{Approval: &rev.Approval, State: approval.State(row.State), Superseded: act.Revision < row.Revision,
		RevealContent: true, ContentHolder: true, Tenant: row.Tenant}
	if len(row.Decision) > 0 {
		var d approval.Decision
		if json.Unmarshal(row.Decision, &d) == nil {
			in.Decision = &d
		}
	}
	return &in
}

// mailApproves reports whether the tenant's escalation mail carries
// Approve links to the decision page.
func (s *Service) mailApproves(tenant string) bool {
	t, ok := s.tenants.Tenant(tenant)
	return ok && t != nil && t.MailDecides(true)
}
