package click

import (
	"context"
	"encoding/json"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Shown is what a click on Show all arguments or Show details shows the
// person who clicked, to them alone: Say when nothing is shown (why), else
// the arguments and, for Show details, the clicked revision's card with
// its restricted parts, to go first. The surface lays them out.
type Shown struct {
	Say       string
	Tenant    string // "" when the approval could not be read
	Arguments threads.ShowResult
	// Details is the card of Show details with RevealContent set, for the
	// surface to render without buttons; nil for Show all arguments, or
	// when the revision could not be read (logged): the arguments are
	// still shown.
	Details *templates.Input
	// Lead heads a Reveal's answer: what it is and that nothing was sent.
	Lead string
	// Approve is the Approve a Reveal's answer ends with, which decides
	// the revision shown, and ApproveNote its Approve with comment…;
	// nil for Show all arguments and Show details.
	Approve, ApproveNote *templates.Action
}

// Reveal answers the Approve of a member who holds the content
// permission on a restricted call they were not shown (Outcome.Reveal):
// the call's arguments and, for a changeset, its files and patch, looked
// up and checked as Show details checks them, to them alone, then an
// Approve (templates.ActionApproveSeen) bound to the same revision, and
// so to the same digest. Nothing is shown, and no Approve offered, when
// the look-up is refused or does not match.
func (f *Flow) Reveal(ctx context.Context, act templates.Action, who threads.Person) Shown {
	shown := f.Show(ctx, templates.Action{Kind: templates.ActionShowArgs, ApprovalID: act.ApprovalID, Revision: act.Revision}, who)
	if shown.Say != "" {
		return shown
	}
	shown.Lead = threads.SayRevealFirst
	shown.Approve = &templates.Action{Kind: templates.ActionApproveSeen, ApprovalID: act.ApprovalID, Revision: act.Revision}
	shown.ApproveNote = &templates.Action{Kind: templates.ActionApproveNoteSeen, ApprovalID: act.ApprovalID, Revision: act.Revision}
	return shown
}

// RevealTooLarge is a Reveal's whole answer instead, when the surface
// finds before sending anything that the content does not all fit in its
// answer (SayRevealTooLarge): no part, no Lead, no Approve. It reads the
// revision for its console address, so it is asked for only then.
func (f *Flow) RevealTooLarge(ctx context.Context, act templates.Action, tenant string) string {
	return SayRevealTooLarge(f.consoleURL(ctx, act), f.mailApproves(tenant))
}

// Show answers Show all arguments and Show details: threads looks the
// arguments up at the backend as the person who clicked and returns them
// only when they may see them and they match the card's digest.
func (f *Flow) Show(ctx context.Context, act templates.Action, who threads.Person) Shown {
	who = f.person(who)
	row, out := f.find(ctx, act, who)
	if row == nil {
		return Shown{Say: out.Text}
	}
	res, err := f.service.ShowArguments(ctx, threads.ShowRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID,
		Revision: act.Revision, Person: who})
	if err != nil {
		f.log.Error("look up arguments", append(f.logArgs(act, who), "tenant", row.Tenant, "err", err.Error())...)
		return Shown{Say: SayLookupFailed, Tenant: row.Tenant}
	}
	if res.Refusal != "" {
		return Shown{Say: res.Refusal, Tenant: row.Tenant}
	}
	shown := Shown{Tenant: row.Tenant, Arguments: res}
	if act.Kind == templates.ActionShowDetails {
		// The person holds the content permission (threads checked): the
		// card's hidden parts come first, then the whole arguments.
		shown.Details = f.details(ctx, row, act)
	}
	return shown
}

// details is the clicked revision's card with its restricted parts shown,
// for the one person allowed to see them.
func (f *Flow) details(ctx context.Context, row *store.Approval, act templates.Action) *templates.Input {
	logArgs := []any{"surface", f.surface, "tenant", row.Tenant, "approval_id", act.ApprovalID, "revision", act.Revision}
	rev, err := f.store.RevisionGet(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		f.log.Warn("read the revision for Show details", append(logArgs, "err", err.Error())...)
		return nil
	}
	var req approval.Stored
	if err := json.Unmarshal(rev.Body, &req); err != nil {
		// The error may quote a value of the call: not logged.
		f.log.Warn("decode the revision for Show details", logArgs...)
		return nil
	}
	if req.Form.ContentWithheld {
		// A restricted call's content is never stored: the arguments
		// looked up at the backend are all its details show.
		return nil
	}
	in := templates.Input{Approval: &req.Approval, State: approval.State(row.State), Superseded: act.Revision < row.Revision,
		RevealContent: true, ContentHolder: true, Tenant: row.Tenant}
	if len(row.Decision) > 0 {
		var d approval.Decision
		if json.Unmarshal(row.Decision, &d) == nil {
			in.Decision = &d
		}
	}
	return &in
}

// consoleURL is the console address of the revision act names, as its
// event gave it; "" when it cannot be read.
func (f *Flow) consoleURL(ctx context.Context, act templates.Action) string {
	rev, err := f.store.RevisionGet(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		return ""
	}
	var req approval.Stored
	if json.Unmarshal(rev.Body, &req) != nil {
		return ""
	}
	return templates.VisibleLine(req.Approval.ConsoleURL)
}

// mailApproves reports whether the tenant's escalation mail carries
// Approve links to the decision page.
func (f *Flow) mailApproves(tenant string) bool {
	t, ok := f.tenants()[tenant]
	return ok && t != nil && t.MailDecides(true)
}
