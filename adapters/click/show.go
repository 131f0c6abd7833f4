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
