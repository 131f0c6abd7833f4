package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Sentences a person reads when the bot cannot do what they asked.
const (
	sayUnknownButton = "This button is not one the bot knows; nothing was sent."
	sayUnknownDialog = "This dialog is not one the bot knows; nothing was sent."
	sayUnknownCard   = "The bot knows no such card; nothing was sent."
	sayStarting      = "The bot is starting and cannot take clicks yet; try again in a moment. Nothing was sent."
	sayStoreDown     = "The bot cannot read this card right now; try again in a moment. Nothing was sent."
	sayNotRecorded   = "The bot could not record your decision; try again in a moment. Nothing was sent."
	sayModalFailed   = "The dialog for the reason did not open; click Deny again. Nothing was sent."
	sayLookupFailed  = "The arguments could not be looked up right now; try again in a moment."
	sayShuttingDown  = "the bot is shutting down; try again in a moment"
	sayReasonTooLong = "At most 1,000 characters."
	denyCallbackID   = "ab1-deny"
	reasonBlockID    = "reason"
	reasonActionID   = "reason"
	actionsPerClick  = 1
)

// ackBody is what an interaction is acknowledged with: nothing (an empty 200,
// which also closes a modal), or a view_submission response.
type ackBody = *slackgo.ViewSubmissionResponse

// work is what runs after the ack, with its timeout.
type work struct {
	timeout time.Duration
	run     func(ctx context.Context)
}

// serveInteraction is POST /slack/interactions.
func (a *Adapter) serveInteraction(w http.ResponseWriter, r *http.Request) {
	body, ok := a.verified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || form.Get("payload") == "" {
		a.refuse(w, r, http.StatusBadRequest, "the body holds no payload field", "no payload")
		return
	}
	var cb slackgo.InteractionCallback
	if err := json.Unmarshal([]byte(form.Get("payload")), &cb); err != nil {
		a.refuse(w, r, http.StatusBadRequest, "the payload is not an interaction in JSON", "payload not JSON")
		return
	}
	reply, next := a.interaction(&cb)
	if !a.startWork(next.timeout, next.run) {
		a.refuse(w, r, http.StatusServiceUnavailable, sayShuttingDown, "shutting down")
		return
	}
	writeAck(w, reply)
}

func writeAck(w http.ResponseWriter, reply ackBody) {
	if reply == nil {
		w.WriteHeader(http.StatusOK)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(reply)
}

// interaction is the one handler both transports feed: it decides the
// ack at once, with no I/O, and returns the work to do after it.
func (a *Adapter) interaction(cb *slackgo.InteractionCallback) (ackBody, work) {
	who := person{user: cb.User.ID, channel: cmpOr(cb.Channel.ID, cb.Container.ChannelID), reply: a.allowedReply(cb.ResponseURL)}
	switch cb.Type {
	case slackgo.InteractionTypeBlockActions:
		return nil, a.click(cb, who)
	case slackgo.InteractionTypeViewSubmission:
		return a.submit(cb)
	default:
		// view_closed, shortcuts and the like: nothing to do.
		a.log.Debug("slack: interaction ignored", "type", string(cb.Type))
		return nil, work{}
	}
}

// click handles a button. Its payload is untrusted: ParseAction reads it
// strictly, and a payload that is not one of the card's is answered and
// logged, with nothing sent.
func (a *Adapter) click(cb *slackgo.InteractionCallback, who person) work {
	actions := cb.ActionCallback.BlockActions
	var act templates.Action
	err := errors.New("no action in the click")
	if len(actions) == actionsPerClick {
		act, err = templates.ParseAction(actions[0].ActionID)
		if err == nil && actions[0].Value != "" && actions[0].Value != actions[0].ActionID {
			err = errors.New("the button's value differs from its action id")
		}
	}
	if err != nil {
		a.log.Warn("slack: click on a button the bot does not know", "slack_user", who.user, "channel", who.channel,
			"err", err.Error())
		return work{decideTimeout, func(ctx context.Context) { a.answer(ctx, who, sayUnknownButton) }}
	}
	switch act.Kind {
	case templates.ActionApprove:
		return work{decideTimeout, func(ctx context.Context) { a.decide(ctx, act, who, true, "") }}
	case templates.ActionDeny:
		trigger := cb.TriggerID
		return work{decideTimeout, func(ctx context.Context) { a.askReason(ctx, act, who, trigger) }}
	default: // ActionShowArgs, ActionShowDetails
		return work{showTimeout, func(ctx context.Context) { a.show(ctx, act, who) }}
	}
}

// approvalOf finds the approval a click names, and so its tenant. The
// tenant is never taken from the click: the store holds it from the
// backend's signed event, and threads checks it against the revision.
func (a *Adapter) approvalOf(ctx context.Context, act templates.Action, who person) (*store.Approval, bool) {
	row, err := a.store.ApprovalGet(ctx, act.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		a.log.Info("slack: click for an approval the bot does not hold", "approval_id", act.ApprovalID, "slack_user", who.user)
		a.answer(ctx, who, sayUnknownCard)
		return nil, false
	case err != nil:
		a.log.Error("slack: read the approval of a click", "approval_id", act.ApprovalID, "err", err.Error())
		a.answer(ctx, who, sayStoreDown)
		return nil, false
	}
	return row, true
}

func (who person) threads() threads.Person {
	return threads.Person{Surface: "slack", User: who.user, Channel: who.channel, Reply: who.reply}
}

// decide records an approval or denial through threads and tells the
// person what threads said: that it is on its way, or why not.
func (a *Adapter) decide(ctx context.Context, act templates.Action, who person, approve bool, comment string) {
	svc := a.service()
	if svc == nil {
		a.answer(ctx, who, sayStarting)
		return
	}
	row, ok := a.approvalOf(ctx, act, who)
	if !ok {
		return
	}
	res, err := svc.Decide(ctx, threads.DecideRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID,
		Revision: act.Revision, Approve: approve, Comment: comment, Person: who.threads()})
	if err != nil {
		a.log.Error("slack: record a decision", "tenant", row.Tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", err.Error())
		a.answer(ctx, who, sayNotRecorded)
		return
	}
	if !res.Sent {
		a.log.Info("slack: decision refused", "tenant", row.Tenant, "approval_id", act.ApprovalID, "slack_user", who.user)
	}
	a.answer(ctx, who, res.Text)
}

// mayDecide reports whether the user maps to a member who may decide in
// the tenant as configured now. It only chooses between asking for a
// reason and letting threads word the refusal at once; threads decides.
func (a *Adapter) mayDecide(tenant, user string) bool {
	t, ok := a.tenants()[tenant]
	if !ok {
		return false
	}
	m, ok := t.MemberBySlack(user)
	return ok && m.Role.CanDecide()
}

// denyMeta is the deny modal's private_metadata: the click it answers.
type denyMeta struct {
	Action  string `json:"a"`
	Channel string `json:"c,omitempty"`
	Reply   string `json:"r,omitempty"`
}

// askReason opens the deny modal for a person who may decide; anyone
// else is told at once why not (threads' sentence, nothing recorded).
func (a *Adapter) askReason(ctx context.Context, act templates.Action, who person, trigger string) {
	svc := a.service()
	if svc == nil {
		a.answer(ctx, who, sayStarting)
		return
	}
	row, ok := a.approvalOf(ctx, act, who)
	if !ok {
		return
	}
	if !a.mayDecide(row.Tenant, who.user) {
		a.decide(ctx, act, who, false, "")
		return
	}
	meta := denyMeta{Action: templates.EncodeAction(act), Channel: who.channel, Reply: who.reply}
	raw, _ := json.Marshal(meta) // strings only: cannot fail
	if len(raw) > privateMetadataMax {
		meta.Reply = ""
		raw, _ = json.Marshal(meta)
	}
	mctx, cancel := context.WithTimeout(ctx, modalTimeout)
	defer cancel()
	_, err := a.api.OpenViewContext(mctx, trigger, denyModal(row.Function, act, string(raw)))
	if err != nil {
		a.log.Warn("slack: open the deny dialog", "tenant", row.Tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
		a.answer(ctx, who, sayModalFailed)
	}
}

// denyModal asks for an optional reason, at most 1,000 characters.
func denyModal(function string, act templates.Action, meta string) slackgo.ModalViewRequest {
	text := fmt.Sprintf("Deny *%s* (approval %s, revision %d)? Your reason goes to the job backend and into the card's thread.",
		mrkdwn(chunk.Cut(function, 200)), mrkdwn(act.ApprovalID), act.Revision)
	input := slackgo.NewPlainTextInputBlockElement(
		slackgo.NewTextBlockObject(slackgo.PlainTextType, "Why not? (optional)", false, false), reasonActionID).
		WithMultiline(true).WithMaxLength(reasonMax)
	reason := slackgo.NewInputBlock(reasonBlockID,
		slackgo.NewTextBlockObject(slackgo.PlainTextType, "Reason", false, false), nil, input)
	reason.Optional = true
	return slackgo.ModalViewRequest{
		Type:            slackgo.VTModal,
		CallbackID:      denyCallbackID,
		Title:           slackgo.NewTextBlockObject(slackgo.PlainTextType, chunk.Cut("Deny this call", modalTitleMax), false, false),
		Submit:          slackgo.NewTextBlockObject(slackgo.PlainTextType, "Deny", false, false),
		Close:           slackgo.NewTextBlockObject(slackgo.PlainTextType, "Cancel", false, false),
		PrivateMetadata: meta,
		Blocks: slackgo.Blocks{BlockSet: []slackgo.Block{
			slackgo.NewSectionBlock(slackgo.NewTextBlockObject(slackgo.MarkdownType, text, false, false), nil, nil),
			reason,
		}},
	}
}

// submit handles the deny modal's submission: the modal closes at once
// (or shows what is wrong with the reason), and the denial is recorded
// after.
func (a *Adapter) submit(cb *slackgo.InteractionCallback) (ackBody, work) {
	if cb.View.CallbackID != denyCallbackID {
		a.log.Debug("slack: submission of a view the bot does not know", "callback_id", chunk.Cut(cb.View.CallbackID, 64))
		return nil, work{}
	}
	var meta denyMeta
	err := json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta)
	var act templates.Action
	if err == nil {
		act, err = templates.ParseAction(meta.Action)
	}
	if err == nil && act.Kind != templates.ActionDeny {
		err = errors.New("the dialog's action is not a denial")
	}
	if err != nil {
		a.log.Warn("slack: deny dialog with a payload the bot does not know", "slack_user", cb.User.ID, "err", err.Error())
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{reasonBlockID: sayUnknownDialog}), work{}
	}
	reason := ""
	if cb.View.State != nil {
		reason = cb.View.State.Values[reasonBlockID][reasonActionID].Value
	}
	if len([]rune(reason)) > reasonMax {
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{reasonBlockID: sayReasonTooLong}), work{}
	}
	who := person{user: cb.User.ID, channel: meta.Channel, reply: a.allowedReply(meta.Reply)}
	return nil, work{decideTimeout, func(ctx context.Context) { a.decide(ctx, act, who, false, reason) }}
}
