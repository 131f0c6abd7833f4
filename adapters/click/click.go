// Package click is the one way a chat surface takes a person's Approve or
// Deny: it finds the approval the click names, records the decision
// through threads within threads.RecordBound, and words what the person
// is told, so Slack and Discord say the same sentences. A surface answers
// the click only after Record returns: a 2xx to the platform then means
// the decision is committed and will reach the job backend.
package click

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Sentences a person reads when the bot cannot take what they clicked.
const (
	SayUnknownButton = "This button is not one the bot knows; nothing was sent."
	SayUnknownDialog = "This dialog is not one the bot knows; nothing was sent."
	SayUnknownCard   = "The bot knows no such card; nothing was sent."
	SayStarting      = "The bot is starting and cannot take clicks yet; try again in a moment. Nothing was sent."
	SayStoreDown     = "The bot cannot read this card right now; try again in a moment. Nothing was sent."
	SayNotRecorded   = "The bot could not record your decision; try again in a moment. Nothing was sent."
	SayNotInTime     = "The bot could not record your decision in time (it is very busy); try again in a moment. Nothing was sent."
	SayLookupFailed  = "The arguments could not be looked up right now; try again in a moment."
	SayShuttingDown  = "The bot is shutting down; try again in a moment. Nothing was sent."
	SayReasonTooLong = "The reason is longer than 1,000 characters; nothing was sent."
)

// Approvals reads the approval a click names (the store).
type Approvals interface {
	ApprovalGet(ctx context.Context, id string) (*store.Approval, error)
}

// Decider records decisions (threads.Service).
type Decider interface {
	Decide(ctx context.Context, req threads.DecideRequest) (threads.DecideResult, error)
}

// Outcome is what became of a click.
type Outcome struct {
	Tenant string // the approval's tenant, from the store; "" when unknown
	// Sent: the decision is committed and on its way to the backend.
	Sent bool
	// Text is the sentence for the person (threads' own, or why not).
	Text string
}

// Record finds the approval act names and records the decision. The
// tenant is never taken from the click: the store holds it from the
// backend's signed event, and threads checks it against the revision.
// It returns within threads.RecordBound.
func Record(ctx context.Context, st Approvals, svc Decider, log *slog.Logger, act templates.Action,
	who threads.Person, approve bool, comment string, received time.Time) Outcome {
	if svc == nil {
		return Outcome{Text: SayStarting}
	}
	ctx, cancel := context.WithTimeout(ctx, threads.RecordBound)
	defer cancel()
	row, say := Find(ctx, st, log, act, who)
	if row == nil {
		return Outcome{Text: say}
	}
	logArgs := []any{"surface", who.Surface, "approval_id", act.ApprovalID, "user", who.User}
	res, err := svc.Decide(ctx, threads.DecideRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID,
		Revision: act.Revision, Approve: approve, Comment: comment, Person: who, ReceivedAt: received})
	if err != nil {
		log.Error("record a decision", append(logArgs, "tenant", row.Tenant, "err", err.Error())...)
		return Outcome{Tenant: row.Tenant, Text: sayFailed(err, SayNotRecorded)}
	}
	if !res.Sent {
		log.Info("decision refused", append(logArgs, "tenant", row.Tenant)...)
	}
	return Outcome{Tenant: row.Tenant, Sent: res.Sent, Text: res.Text}
}

// Find reads the approval a click names, and so its tenant; when it
// cannot, it returns nil and the sentence for the person.
func Find(ctx context.Context, st Approvals, log *slog.Logger, act templates.Action, who threads.Person) (*store.Approval, string) {
	logArgs := []any{"surface", who.Surface, "approval_id", act.ApprovalID, "user", who.User}
	row, err := st.ApprovalGet(ctx, act.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		log.Info("click for an approval the bot does not hold", logArgs...)
		return nil, SayUnknownCard
	case err != nil:
		log.Error("read the approval of a click", append(logArgs, "err", err.Error())...)
		return nil, sayFailed(err, SayStoreDown)
	}
	return row, ""
}

func sayFailed(err error, otherwise string) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return SayNotInTime
	}
	return otherwise
}
