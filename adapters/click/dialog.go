package click

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Dialog is what a decision's dialog says of the call it decides: the
// reason dialog of Deny, the comment dialog of Approve with comment…, and
// the confirmation a surface whose buttons cannot ask again shows for a
// destructive call's Approve.
type Dialog struct {
	Tenant   string
	Function string
	// Effect is the card's effect line ("DESTRUCTIVE · reaches outside
	// the tenant"); Destructive, whether Approve asks again.
	Effect      string
	Destructive bool
	// Restricted: the call's content is restricted, so a reason or a
	// comment stays off shared places (ReasonHint, CommentHint). False
	// when the revision cannot be read: the dialog then says the text
	// goes onto the card, a promise that errs on the side of care.
	Restricted bool
}

// Ask decides what a click that opens a dialog gets. For a person who
// may decide in the approval's tenant as configured now, on a card that
// can still be decided, it returns the Dialog to open, and records
// nothing. Anyone else, or a click on a superseded or closed card, is
// not asked what would be refused: the decision (approve or not) goes to
// threads at once, which words the refusal and records nothing, and Ask
// returns that outcome, as it does when the card cannot be read. The reads are bounded
// by ctx alone (the caller's answer decides how long they may take); the
// refusal, like Record, by threads.RecordBound. A revision that cannot be
// read gives a Dialog that asks again, as for a destructive call, and
// is not Restricted. A member who holds the content permission, asking to
// approve a restricted call from the card, gets no dialog but an Outcome
// with Reveal set: they are shown the call first.
func (f *Flow) Ask(ctx context.Context, act templates.Action, who threads.Person, approve bool, received time.Time) (*Dialog, Outcome) {
	row, out := f.ask(ctx, act, who, approve, received)
	if row == nil {
		return nil, out
	}
	d := &Dialog{Tenant: row.Tenant, Function: templates.VisibleLine(row.Function), Destructive: true}
	rev, err := f.store.RevisionGet(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		f.log.Warn("read the revision a dialog names; asking again as for a destructive call",
			append(f.logArgs(act, who), "tenant", row.Tenant, "err", err.Error())...)
		return d, Outcome{Tenant: row.Tenant}
	}
	var a approval.Approval
	if err := json.Unmarshal(rev.Body, &a); err != nil {
		// The error may quote a value of the call: not logged.
		f.log.Warn("decode the revision a dialog names; asking again as for a destructive call",
			append(f.logArgs(act, who), "tenant", row.Tenant)...)
		return d, Outcome{Tenant: row.Tenant}
	}
	d.Function = templates.VisibleLine(cmp.Or(a.Call.Function, row.Function)) // a modal's title shows it as is
	d.Effect = approval.EffectLine(a.Call.Annotations)
	d.Destructive = a.Destructive()
	d.Restricted = a.ContentRestricted()
	if a.DecidedByContentHolders() && !f.holdsContent(row.Tenant, who.User) {
		// A private chat's call: threads words the refusal, and no dialog
		// asks for what would be refused.
		rctx, cancel := context.WithTimeout(ctx, threads.RecordBound)
		defer cancel()
		return nil, f.record(rctx, row, threads.DecideRequest{Revision: act.Revision, Approve: approve, Person: f.person(who),
			ReceivedAt: received, RefuseOnly: true}, act)
	}
	if approve && d.Restricted && !act.Kind.Seen() && f.holdsContent(row.Tenant, f.person(who).User) {
		// A content holder does not approve a restricted call blind: no
		// dialog yet; the surface shows them the call first (Reveal),
		// with the controls that decide it.
		return nil, Outcome{Tenant: row.Tenant, Reveal: true}
	}
	return d, Outcome{Tenant: row.Tenant}
}

// ask is Deny's and Ask's common part: the approval for a person who may
// decide, or the outcome of letting threads refuse anyone else.
func (f *Flow) ask(ctx context.Context, act templates.Action, who threads.Person, approve bool, received time.Time) (*store.Approval, Outcome) {
	who = f.person(who)
	row, out := f.find(ctx, act, who)
	if row == nil {
		return nil, out
	}
	if !f.mayDecide(row.Tenant, who.User) || stale(row, act) {
		// threads words the refusal and records nothing, even if the
		// configuration or the approval changed since this read: the
		// decision comes only from the dialog, which was not opened.
		ctx, cancel := context.WithTimeout(ctx, threads.RecordBound)
		defer cancel()
		return nil, f.record(ctx, row, threads.DecideRequest{Revision: act.Revision, Approve: approve, Person: who,
			ReceivedAt: received, RefuseOnly: true}, act)
	}
	return row, Outcome{}
}

// stale reports whether the card clicked can no longer be decided: the
// call changed since (a newer revision) or closed. A dialog would only
// be refused when submitted, so threads words the refusal at once.
func stale(row *store.Approval, act templates.Action) bool {
	return act.Revision < row.Revision || approval.State(row.State).Final() || !row.Seen
}
