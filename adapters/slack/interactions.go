package slack

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/strictjson"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// The dialogs' wire names, and how many actions a click carries.
const (
	denyCallbackID    = "ab1-deny"
	approveCallbackID = "ab1-approve"
	reasonBlockID     = "reason"
	reasonActionID    = "reason"
	commentBlockID    = "comment"
	commentActionID   = "comment"
	actionsPerClick   = 1
)

// ackBody is what an interaction is acknowledged with: nothing (an empty 200,
// which also closes a modal), or a view_submission response.
type ackBody = *slackgo.ViewSubmissionResponse

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
	if field, ok := oneValueEach(form); !ok {
		a.refuse(w, r, http.StatusBadRequest, "the body holds the field "+field+" twice", "form field twice")
		return
	}
	payload := []byte(form.Get("payload"))
	if reason, ok := oneReading(payload); !ok {
		a.refuse(w, r, http.StatusBadRequest, "the payload is not one interaction: "+reason, "payload with a key twice")
		return
	}
	var cb slackgo.InteractionCallback
	if err := json.Unmarshal(payload, &cb); err != nil {
		a.refuse(w, r, http.StatusBadRequest, "the payload is not an interaction in JSON", "payload not JSON")
		return
	}
	if a.work.Closing() {
		// Refused before anything is recorded: "nothing was sent" is true.
		a.refuse(w, r, http.StatusServiceUnavailable, say.ShuttingDown.Text(), "shutting down")
		return
	}
	// The click is received once it is verified and read.
	rc := a.service.Receive()
	defer rc.Done()
	reply, next := a.interaction(r.Context(), &cb, rc)
	if !a.work.Start(next) {
		// Closing began while the click was recorded: it is on its way,
		// and the outbox's answer will reach the person.
		a.log.Warn("slack: the answer to a recorded click dropped: shutting down", "slack_user", cb.User.ID)
	}
	writeAck(w, reply)
}

// oneValueEach reports whether every field of a form Slack signed comes
// once: url.Values.Get reads the first copy of a field where another
// reader may read the last. It names (quoted, cut) a field that repeats.
func oneValueEach(form url.Values) (field string, ok bool) {
	for k, vs := range form {
		if len(vs) > 1 {
			return strconv.Quote(utf16text.Cut(k, 64)), false
		}
	}
	return "", true
}

// oneReading reports whether an interaction payload has one reading: no
// object holds a key twice, or two differing only in case. Slack sends
// none, so such a payload is forged or broken, and refused before it is
// read (docs/design.md#json-with-one-reading).
func oneReading(payload []byte) (reason string, ok bool) {
	var ke *strictjson.KeyError
	if err := strictjson.Check(payload, nil); errors.As(err, &ke) {
		return ke.Error(), false
	}
	return "", true
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
// decision first (within threads.RecordBound of the click's receipt, rc),
// decides the ack, and returns the work to do after it. The deadline
// judges the click by when rc says the bot got it.
func (a *Adapter) interaction(ctx context.Context, cb *slackgo.InteractionCallback, rc *threads.Receipt) (ackBody, threads.Work) {
	ctx, cancel := rc.Bound(ctx)
	defer cancel()
	received := rc.At
	who := person{user: cb.User.ID, channel: cmp.Or(cb.Channel.ID, cb.Container.ChannelID), reply: a.allowedReply(cb.ResponseURL)}
	switch cb.Type {
	case slackgo.InteractionTypeBlockActions:
		return nil, a.button(ctx, cb, who, received)
	case slackgo.InteractionTypeViewSubmission:
		return a.submit(ctx, cb, received)
	default:
		// view_closed, shortcuts and the like: nothing to do.
		a.log.Debug("slack: interaction ignored", "type", string(cb.Type))
		return nil, threads.Work{}
	}
}

// button handles a click on a button, its payload untrusted (ParseAction
// reads it strictly). Approve, I'm looking and Escalate now are recorded
// before the ack; a dialog opens after it (views.open needs the
// trigger_id, not an ack).
func (a *Adapter) button(ctx context.Context, cb *slackgo.InteractionCallback, who person, received time.Time) threads.Work {
	actions := cb.ActionCallback.BlockActions
	if isTurnClick(actions) {
		return a.turnButton(ctx, *actions[0], who, received) // turn.go
	}
	var act templates.Action
	err := errors.New("no action in the click")
	if len(actions) == actionsPerClick {
		act, err = clickedAction(actions[0])
	}
	if err != nil {
		a.log.Warn("slack: click on a button the bot does not know", "slack_user", who.user, "channel", who.channel,
			"err", err.Error())
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.answer(ctx, who, say.UnknownButton.Text()) }}
	}
	if act.Kind.Seen() && !cb.Container.IsEphemeral {
		// The bot puts this button only on the private answer that shows
		// the call: from anywhere else it would approve unseen.
		a.log.Warn("slack: a private answer's Approve pressed on a message that is not private", "slack_user", who.user,
			"channel", who.channel, "approval_id", act.ApprovalID)
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.answer(ctx, who, say.ApproveFromAnswer.Text()) }}
	}
	switch act.Kind {
	case templates.ActionApprove, templates.ActionApproveSeen, templates.ActionAnswer:
		// A question's choice (a button, or the menu's option) is
		// recorded before the ack, as Approve is.
		// ActionApproveSeen (reveal's Approve) decides the card's revision.
		out := a.click(ctx, threads.ClickRecord, act, who, "", received)
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
	case templates.ActionDeny:
		trigger := cb.TriggerID
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.askReason(ctx, act, who, trigger, received) }}
	case templates.ActionApproveNote, templates.ActionApproveNoteSeen:
		// Slack's confirm dialog takes no text: the comment comes through
		// a modal, opened after the ack like Deny's.
		trigger := cb.TriggerID
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.askComment(ctx, act, who, trigger, received) }}
	case templates.ActionAnswerText:
		// Answer… opens its dialog after the ack, like Deny.
		trigger := cb.TriggerID
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.askAnswer(ctx, act, who, trigger, received) }}
	case templates.ActionRevokeGrant:
		// Recorded before the person is told; the outbox tells the backend.
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.revokeGrant(ctx, act, who) }}
	case templates.ActionGrant:
		// Approve and allow… opens its dialog after the ack, like Deny.
		trigger := cb.TriggerID
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.askGrant(ctx, act, who, trigger, received) }}
	case templates.ActionLook, templates.ActionEscalate:
		// Recorded before the ack, like Approve.
		out := a.click(ctx, threads.ClickLadder, act, who, "", received)
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
	default: // ActionShowArgs, ActionShowDetails
		return threads.Work{Timeout: showTimeout, Run: func(ctx context.Context) { a.show(ctx, act, who) }}
	}
}

// clickedAction reads the action of a click: a button's payload is both
// its action_id and its value; the choices' menu (question.go) carries
// the chosen choice's payload as the option's value, and nothing else.
func clickedAction(ba *slackgo.BlockAction) (templates.Action, error) {
	if ba.ActionID == choiceMenuID {
		if ba.Type != slackgo.ActionType(slackgo.OptTypeStatic) {
			return templates.Action{}, errors.New("the choices' menu is not a static_select")
		}
		act, err := templates.ParseAction(ba.SelectedOption.Value)
		if err == nil && act.Kind != templates.ActionAnswer {
			err = errors.New("the choices' menu holds an option that is no choice")
		}
		return act, err
	}
	act, err := templates.ParseAction(ba.ActionID)
	if err == nil && ba.Value != "" && ba.Value != ba.ActionID {
		err = errors.New("the button's value differs from its action id")
	}
	return act, err
}

func (who person) threads() threads.Person {
	return threads.Person{Surface: surfaceName, User: who.user, Channel: who.channel, Reply: who.reply}
}

// click takes a click to threads.
func (a *Adapter) click(ctx context.Context, do threads.ClickDo, act templates.Action, who person, comment string,
	received time.Time) threads.Clicked {
	return a.service.Click(ctx, threads.ClickRequest{Do: do, Action: act, Person: who.threads(), Comment: comment,
		ReceivedAt: received})
}

// afterRecord shows the person what became of their click: the clicked
// card as it now stands, through the response_url (which spends none of
// chat.update's budget), or, when nothing was recorded, why.
func (a *Adapter) afterRecord(ctx context.Context, act templates.Action, who person, out threads.Clicked) {
	// The clicked card changes at once: its reads take the connections
	// kept for people.
	ctx = threads.ForPerson(ctx)
	if out.Reveal {
		// Nothing was recorded: a content holder does not approve a
		// restricted call blind. They are shown it, alone, first.
		a.reveal(ctx, act, who)
		return
	}
	if who.reply != "" && out.Card != nil && a.replaceClicked(ctx, act, who, *out.Card) {
		return
	}
	a.answer(ctx, who, out.Reason.String())
}

// replaceClicked replaces the clicked message with card through the
// response_url; false when it could not.
func (a *Adapter) replaceClicked(ctx context.Context, act templates.Action, who person, card threads.Card) bool {
	if err := a.replace(ctx, who.reply, card); err != nil {
		a.log.Info("slack: the response_url did not take the clicked card", "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
		return false
	}
	// The outbox may have shown the backend's answer on this message while
	// the card above was on its way: a crossed replacement is replaced again.
	now, err := a.service.Card(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		a.log.Warn("slack: read the clicked card again", "approval_id", act.ApprovalID, "err", err.Error())
	} else if !card.SameState(now) {
		if err := a.replace(ctx, who.reply, now); err != nil {
			a.log.Info("slack: the response_url did not take the clicked card again", "approval_id", act.ApprovalID,
				"slack_user", who.user, "err", scrub(err).Error())
		}
	}
	return true
}

// replace posts a card to a response_url in place of the message clicked.
func (a *Surface) replace(ctx context.Context, responseURL string, card threads.Card) error {
	msg := cardMessage(card)
	opts := append(msg.MsgOptions(), slackgo.MsgOptionReplaceOriginal(responseURL))
	_, _, err := a.api.PostMessageContext(ctx, "", opts...)
	return err
}

// denyMeta is a dialog's private_metadata: the click it answers.
type denyMeta struct {
	Action  string `json:"a"`
	Channel string `json:"c,omitempty"`
	Reply   string `json:"r,omitempty"`
}

// metaAction is the action a dialog's private_metadata names, "" when
// it cannot be read (submit then refuses it, strictly).
func metaAction(raw string) string {
	var meta denyMeta
	if json.Unmarshal([]byte(raw), &meta) != nil {
		return ""
	}
	return meta.Action
}

// denyMetaKeys are denyMeta's field names: the metadata the bot wrote
// has each once, in its own letter case.
var denyMetaKeys = strictjson.For[denyMeta]()

// askReason opens the deny modal for a person who may decide; anyone
// else is told at once why not (threads' reason, nothing recorded).
func (a *Adapter) askReason(ctx context.Context, act templates.Action, who person, trigger string, received time.Time) {
	ctx = threads.ForPerson(ctx) // the dialog opens within the trigger's 3 s
	out := a.click(ctx, threads.ClickAsk, act, who, "", received)
	d := out.Dialog
	if d == nil {
		a.afterRecord(ctx, act, who, out)
		return
	}
	a.openDialog(ctx, act, who, trigger, out.Tenant, func(meta string) slackgo.ModalViewRequest {
		return denyModal(*d, act, meta)
	})
}

// askComment opens the comment modal of Approve with comment… for a
// person who may decide; anyone else is told at once why not.
func (a *Adapter) askComment(ctx context.Context, act templates.Action, who person, trigger string, received time.Time) {
	ctx = threads.ForPerson(ctx) // the dialog opens within the trigger's 3 s
	out := a.click(ctx, threads.ClickAsk, act, who, "", received)
	d := out.Dialog
	if d == nil {
		a.afterRecord(ctx, act, who, out)
		return
	}
	a.openDialog(ctx, act, who, trigger, out.Tenant, func(meta string) slackgo.ModalViewRequest {
		return approveModal(*d, act, meta)
	})
}

// openDialog opens a dialog that answers act, its private_metadata
// carrying the click (the response_url left out when it does not fit);
// when it does not open the person is told so.
func (a *Adapter) openDialog(ctx context.Context, act templates.Action, who person, trigger, tenant string,
	modal func(meta string) slackgo.ModalViewRequest) {
	meta := denyMeta{Action: templates.EncodeAction(act), Channel: who.channel, Reply: who.reply}
	raw, _ := json.Marshal(meta) // strings only: cannot fail
	if len(raw) > privateMetadataMax {
		meta.Reply = ""
		raw, _ = json.Marshal(meta)
	}
	mctx, cancel := context.WithTimeout(ctx, modalTimeout)
	defer cancel()
	if _, err := a.api.OpenViewContext(mctx, trigger, modal(string(raw))); err != nil {
		a.log.Warn("slack: open a dialog", "tenant", tenant, "approval_id", act.ApprovalID, "kind", string(act.Kind),
			"slack_user", who.user, "err", scrub(err).Error())
		a.answer(ctx, who, say.DialogFailed.Text())
	}
}

// approveModal asks for an optional comment (threads.MaxComment at most),
// saying what the call does: for a destructive call it is the
// confirmation too.
func approveModal(d threads.Dialog, act templates.Action, meta string) slackgo.ModalViewRequest {
	input := slackgo.NewPlainTextInputBlockElement(nil, commentActionID).WithMultiline(true).WithMaxLength(threads.MaxComment)
	comment := slackgo.NewInputBlock(commentBlockID,
		slackgo.NewTextBlockObject(slackgo.PlainTextType, say.CommentLabel, false, false),
		slackgo.NewTextBlockObject(slackgo.PlainTextType, say.CommentHint(d.Restricted), false, false), input)
	comment.Optional = true
	return slackgo.ModalViewRequest{
		Type:            slackgo.VTModal,
		CallbackID:      approveCallbackID,
		Title:           slackgo.NewTextBlockObject(slackgo.PlainTextType, utf16text.Cut(say.ApproveTitle(d.Function), modalTitleMax), false, false),
		Submit:          slackgo.NewTextBlockObject(slackgo.PlainTextType, say.ApproveSubmit, false, false),
		Close:           slackgo.NewTextBlockObject(slackgo.PlainTextType, say.DenyClose, false, false),
		PrivateMetadata: meta,
		Blocks: slackgo.Blocks{BlockSet: []slackgo.Block{
			// The function and the id are the backend's: literal text.
			richText(withBold(say.ApproveQuestion(placeholder, act.ApprovalID, act.Revision, d.Effect), utf16text.Cut(d.Function, 200))...),
			comment,
		}},
	}
}

// denyModal asks for an optional reason, at most threads.MaxComment
// characters, saying where it goes: not onto a restricted call's card.
func denyModal(d threads.Dialog, act templates.Action, meta string) slackgo.ModalViewRequest {
	input := slackgo.NewPlainTextInputBlockElement(nil, reasonActionID).WithMultiline(true).WithMaxLength(threads.MaxComment)
	reason := slackgo.NewInputBlock(reasonBlockID,
		slackgo.NewTextBlockObject(slackgo.PlainTextType, say.ReasonLabel, false, false), nil, input)
	reason.Optional = true
	return slackgo.ModalViewRequest{
		Type:            slackgo.VTModal,
		CallbackID:      denyCallbackID,
		Title:           slackgo.NewTextBlockObject(slackgo.PlainTextType, utf16text.Cut(say.DenyTitle(d.Function), modalTitleMax), false, false),
		Submit:          slackgo.NewTextBlockObject(slackgo.PlainTextType, say.DenySubmit, false, false),
		Close:           slackgo.NewTextBlockObject(slackgo.PlainTextType, say.DenyClose, false, false),
		PrivateMetadata: meta,
		Blocks: slackgo.Blocks{BlockSet: []slackgo.Block{
			// The function and the id are the backend's: literal text.
			richText(withBold(say.DenyQuestion(placeholder, act.ApprovalID, act.Revision, d.Restricted),
				utf16text.Cut(d.Function, 200))...),
			reason,
		}},
	}
}

// submit handles a dialog's submission: the decision is recorded first,
// then the modal closes (or stays, saying what is wrong), and the clicked
// card is replaced through the response_url kept in private_metadata.
func (a *Adapter) submit(ctx context.Context, cb *slackgo.InteractionCallback, received time.Time) (ackBody, threads.Work) {
	// Each dialog's action, and the field that holds its text.
	switch cb.View.CallbackID {
	case grantCallbackID:
		return a.submitGrant(ctx, cb, received)
	case answerCallbackID:
		return a.submitAnswer(ctx, cb, received) // question_click.go
	}
	var kind templates.ActionKind
	var blockID, actionID string
	switch cb.View.CallbackID {
	case denyCallbackID:
		kind, blockID, actionID = templates.ActionDeny, reasonBlockID, reasonActionID
	case approveCallbackID:
		kind, blockID, actionID = templates.ActionApproveNote, commentBlockID, commentActionID
		if act, err := templates.ParseAction(metaAction(cb.View.PrivateMetadata)); err == nil && act.Kind == templates.ActionApproveNoteSeen {
			// The comment dialog of reveal's private answer.
			kind = templates.ActionApproveNoteSeen
		}
	default:
		a.log.Debug("slack: submission of a view the bot does not know", "callback_id", utf16text.Cut(cb.View.CallbackID, 64))
		return nil, threads.Work{}
	}
	var meta denyMeta
	err := strictjson.Check([]byte(cb.View.PrivateMetadata), denyMetaKeys)
	if err == nil {
		err = json.Unmarshal([]byte(cb.View.PrivateMetadata), &meta)
	}
	var act templates.Action
	if err == nil {
		act, err = templates.ParseAction(meta.Action)
	}
	if err == nil && act.Kind != kind {
		err = errors.New("the dialog's action is not its own")
	}
	if err != nil {
		a.log.Warn("slack: dialog with a payload the bot does not know", "slack_user", cb.User.ID,
			"callback_id", cb.View.CallbackID, "err", err.Error())
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{blockID: say.UnknownDialog.Text()}), threads.Work{}
	}
	text := ""
	if cb.View.State != nil {
		text = cb.View.State.Values[blockID][actionID].Value
	}
	who := person{user: cb.User.ID, channel: meta.Channel, reply: a.allowedReply(meta.Reply)}
	approve := kind == templates.ActionApproveNote || kind == templates.ActionApproveNoteSeen
	// The decision recorded is the card's own (approve or deny) of the
	// clicked revision, whatever button opened the dialog.
	decided := templates.Action{Kind: templates.ActionDeny, ApprovalID: act.ApprovalID, Revision: act.Revision}
	if approve {
		decided.Kind = templates.ActionApprove
	}
	if kind == templates.ActionApproveNoteSeen {
		decided.Kind = templates.ActionApproveSeen
	}
	out := a.click(ctx, threads.ClickRecord, decided, who, text, received)
	if out.Retry {
		// Nothing was recorded, and submitting again may be: the modal
		// stays open with the text in it.
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{blockID: out.Reason.String()}), threads.Work{}
	}
	act = decided
	return nil, threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
}
