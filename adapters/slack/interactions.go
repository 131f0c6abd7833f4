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
	"approvalsbot/adapters/click"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Sentences a person reads: those of a click are package click's, so
// Slack and Discord say the same.
const (
	sayUnknownButton = click.SayUnknownButton
	sayUnknownDialog = click.SayUnknownDialog
	sayUnknownCard   = click.SayUnknownCard
	sayStarting      = click.SayStarting
	sayStoreDown     = click.SayStoreDown
	sayModalFailed   = "The dialog for the reason did not open; click Deny again. Nothing was sent."
	sayLookupFailed  = click.SayLookupFailed
	sayShuttingDown  = click.SayShuttingDown
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
	received := a.now()
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
	if a.isClosing() {
		// Refused before anything is recorded: "nothing was sent" is true.
		a.refuse(w, r, http.StatusServiceUnavailable, sayShuttingDown, "shutting down")
		return
	}
	reply, next := a.interaction(r.Context(), &cb, received)
	if !a.startWork(next.timeout, next.run) {
		// Closing began while the click was recorded: it is on its way,
		// and the outbox's answer will reach the person.
		a.log.Warn("slack: the answer to a recorded click dropped: shutting down", "slack_user", cb.User.ID)
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

// interaction is the one handler both transports feed: it records a
// decision first (within threads.RecordBound), decides the ack, and
// returns the work to do after it. received is when the bot got the
// click: the deadline judges the click by it.
func (a *Adapter) interaction(ctx context.Context, cb *slackgo.InteractionCallback, received time.Time) (ackBody, work) {
	who := person{user: cb.User.ID, channel: cmpOr(cb.Channel.ID, cb.Container.ChannelID), reply: a.allowedReply(cb.ResponseURL)}
	switch cb.Type {
	case slackgo.InteractionTypeBlockActions:
		return nil, a.click(ctx, cb, who, received)
	case slackgo.InteractionTypeViewSubmission:
		return a.submit(ctx, cb, received)
	default:
		// view_closed, shortcuts and the like: nothing to do.
		a.log.Debug("slack: interaction ignored", "type", string(cb.Type))
		return nil, work{}
	}
}

// click handles a button. Its payload is untrusted: ParseAction reads it
// strictly, and a payload that is not one of the card's is answered and
// logged, with nothing sent.
func (a *Adapter) click(ctx context.Context, cb *slackgo.InteractionCallback, who person, received time.Time) work {
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
		out := a.record(ctx, act, who, true, "", received)
		return work{decideTimeout, func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
	case templates.ActionDeny:
		trigger := cb.TriggerID
		return work{decideTimeout, func(ctx context.Context) { a.askReason(ctx, act, who, trigger) }}
	default: // ActionShowArgs, ActionShowDetails
		return work{showTimeout, func(ctx context.Context) { a.show(ctx, act, who) }}
	}
}

// approvalOf finds the approval a click names (package click), telling
// the person when it cannot.
func (a *Adapter) approvalOf(ctx context.Context, act templates.Action, who person) (*store.Approval, bool) {
	row, say := click.Find(ctx, a.store, a.log, act, who.threads())
	if row == nil {
		a.answer(ctx, who, say)
		return nil, false
	}
	return row, true
}

func (who person) threads() threads.Person {
	return threads.Person{Surface: "slack", User: who.user, Channel: who.channel, Reply: who.reply}
}

// record records an approval or denial before the click is answered
// (package click).
func (a *Adapter) record(ctx context.Context, act templates.Action, who person, approve bool, comment string, received time.Time) click.Outcome {
	return click.Record(ctx, a.store, a.service(), a.log, act, who.threads(), approve, comment, received)
}

// afterRecord shows the person what became of their click: the clicked
// card as it now stands (its buttons gone, the decision on its way),
// through the click's own response_url, which spends none of
// chat.update's budget; or, when nothing was recorded, why, to them
// alone, the card keeping its buttons.
func (a *Adapter) afterRecord(ctx context.Context, act templates.Action, who person, out click.Outcome) {
	if out.Sent && who.reply != "" && a.replaceClicked(ctx, act, who) {
		return
	}
	a.answer(ctx, who, out.Text)
}

// replaceClicked replaces the clicked message with its card as the
// approval now stands, through the response_url; false when it could not.
func (a *Adapter) replaceClicked(ctx context.Context, act templates.Action, who person) bool {
	svc := a.service()
	if svc == nil {
		return false
	}
	card, err := svc.Card(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		a.log.Warn("slack: read the clicked card", "approval_id", act.ApprovalID, "err", err.Error())
		return false
	}
	if err := a.replace(ctx, who.reply, card); err != nil {
		a.log.Info("slack: the response_url did not take the clicked card", "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
		return false
	}
	// The backend may have answered, and the outbox shown the outcome on
	// this message, while the card above was on its way: a replacement
	// that crossed a newer state is replaced again with the card as it
	// stands now.
	if now, err := svc.Card(ctx, act.ApprovalID, act.Revision); err == nil && !card.SameState(now) {
		if err := a.replace(ctx, who.reply, now); err != nil {
			a.log.Info("slack: the response_url did not take the clicked card again", "approval_id", act.ApprovalID,
				"slack_user", who.user, "err", scrub(err).Error())
		}
	}
	return true
}

// replace posts a card to a response_url in place of the message clicked.
func (a *Adapter) replace(ctx context.Context, responseURL string, card threads.Card) error {
	msg := a.render.Slack(templates.Build(card.Input()))
	opts := append(msg.MsgOptions(), slackgo.MsgOptionReplaceOriginal(responseURL))
	_, _, err := a.api.PostMessageContext(ctx, "", opts...)
	return err
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
		// Threads words the refusal; nothing is recorded.
		a.answer(ctx, who, a.record(ctx, act, who, false, "", a.now()).Text)
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

// submit handles the deny modal's submission: the denial is recorded
// first, then the modal closes (or shows what is wrong with the reason,
// or that the denial could not be recorded, so the person can submit it
// again), and the clicked card is replaced through the response_url the
// click carried in the modal's private_metadata.
func (a *Adapter) submit(ctx context.Context, cb *slackgo.InteractionCallback, received time.Time) (ackBody, work) {
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
	out := a.record(ctx, act, who, false, reason, received)
	switch out.Text {
	case click.SayStarting, click.SayStoreDown, click.SayNotRecorded, click.SayNotInTime:
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{reasonBlockID: out.Text}), work{}
	}
	return nil, work{decideTimeout, func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
}
