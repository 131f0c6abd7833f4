package click

import (
	"context"
	"errors"

	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Ladder records a click on one of the ladder's buttons: I'm looking
// (threads.Acknowledge: the ladder's next steps wait while the clicker
// looks) or Escalate now (threads.EscalateNow: the next step fires at
// once; the action carries how many steps the card showed escalated, so
// a second press of one card fires nothing). Like Record, it returns
// within threads.RecordBound, and the surface answers the click only
// after it: a recorded click's answer shows the clicked card as it now
// stands (Card), anything else tells out.Text to the clicker alone.
func (f *Flow) Ladder(ctx context.Context, act templates.Action, who threads.Person) Outcome {
	who = f.person(who)
	ctx, cancel := context.WithTimeout(ctx, threads.RecordBound)
	defer cancel()
	row, out := f.find(ctx, act, who)
	if row == nil {
		return out
	}
	req := threads.LadderRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID, Revision: act.Revision, Person: who,
		Escalations: act.Escalations}
	call, what := f.service.Acknowledge, "record an acknowledgement"
	if act.Kind == templates.ActionEscalate {
		call, what = f.service.EscalateNow, "record an escalation"
	}
	res, err := call(ctx, req)
	if err != nil {
		f.log.Error(what, append(f.logArgs(act, who), "tenant", row.Tenant, "err", err.Error())...)
		text := SayLadderNotRecorded
		if errors.Is(err, context.DeadlineExceeded) {
			text = SayLadderNotInTime
		}
		return Outcome{Tenant: row.Tenant, Retry: true, Text: text}
	}
	if !res.Done {
		f.log.Info("ladder click refused", append(f.logArgs(act, who), "tenant", row.Tenant, "kind", string(act.Kind))...)
	}
	return Outcome{Tenant: row.Tenant, Sent: res.Done, Text: res.Text}
}
