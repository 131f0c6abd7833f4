package discord

import (
	"context"
	"errors"
	"fmt"
	"time"

	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// The modals' text inputs.
const (
	reasonInputID  = "reason"
	commentInputID = "comment"
)

// person is who clicked, where, the interaction token that answers them
// alone (15 minutes), and their click's receipt.
type person struct {
	user    string
	channel string
	guild   string
	token   string
	receipt *threads.Receipt
}

func (p person) threads() threads.Person {
	return threads.Person{Surface: surfaceName, User: p.user, Channel: p.channel, Reply: p.token}
}

// click takes a click to threads, received when who's receipt says.
func (a *Adapter) click(ctx context.Context, do threads.ClickDo, act templates.Action, who person, comment string) threads.Clicked {
	return a.service.Click(ctx, threads.ClickRequest{Do: do, Action: act, Person: who.threads(), Comment: comment,
		ReceivedAt: who.receipt.At})
}

// deferUpdate acknowledges a click without a visible answer; the work
// answers with ephemeral follow-ups.
func deferUpdate() *answer { return &answer{Type: answerDeferredUpdate} }

// ephemeral answers at once, to the clicker alone.
func ephemeral(text string) *answer {
	return messageAnswer(ephemeralMessage(text))
}

// ephemeralMessage is one sentence to one person: no ping, no preview.
func ephemeralMessage(text string) *Message {
	return &Message{Content: utf16text.Cut(markdown(text), contentMax), Flags: ephemeralText,
		AllowedMentions: noMentions()}
}

// interaction is the one handler both transports feed: it decides the
// first answer, with no I/O but local store reads and a decision's
// record, and returns the work after it; nil for a type it does not take.
func (a *Adapter) interaction(ctx context.Context, in *inbound) (*answer, threads.Work) {
	// The click is received now: the deadline judges it by then, and
	// what it records (after a dialog's reads, too) is recorded within
	// threads.RecordBound of then (record).
	ctx = threads.ForPerson(ctx)
	rc := a.service.Receive()
	defer rc.Done()
	who := person{user: in.user(), channel: in.ChannelID, guild: in.GuildID, token: in.Token, receipt: rc}
	if who.user == "" {
		return ephemeral(say.UnknownButton.Text()), threads.Work{}
	}
	switch in.Type {
	case interactionComponent:
		return a.button(ctx, in, who)
	case interactionModalSubmit:
		return a.submit(ctx, in, who)
	case interactionCommand:
		return a.command(in, who)
	case interactionAutocomplete:
		return &answer{Type: answerChoices, Data: choices{Choices: []struct{}{}}}, threads.Work{}
	}
	return nil, threads.Work{}
}

// button handles a click on a button. Its custom_id is untrusted:
// ParseAction reads it strictly, and one that is not the card's is
// answered and logged, with nothing sent.
func (a *Adapter) button(ctx context.Context, in *inbound, who person) (*answer, threads.Work) {
	var data componentData
	err := in.data(&data)
	if err == nil && data.ComponentType == componentButton && templates.IsTurnAction(data.CustomID) {
		return a.turnButton(ctx, data.CustomID, who) // turn.go
	}
	if err == nil && data.ComponentType == componentStringSelect {
		return a.choose(ctx, data, who) // answer.go: a question's menu
	}
	var act templates.Action
	if err == nil {
		act, err = templates.ParseAction(data.CustomID)
	}
	if err == nil && data.ComponentType != componentButton {
		err = errors.New("the component is not a button")
	}
	if err != nil {
		a.log.Warn("discord: click on a button the bot does not know", "discord_user", who.user, "channel", who.channel,
			"err", err.Error())
		return ephemeral(say.UnknownButton.Text()), threads.Work{}
	}
	if act.Kind.Seen() && !in.fromPrivateAnswer() {
		// The bot puts this button only on the private answer that shows
		// the call: from anywhere else it would approve unseen.
		a.log.Warn("discord: a private answer's Approve pressed on a message that is not private", "discord_user", who.user,
			"channel", who.channel, "approval_id", act.ApprovalID)
		return ephemeral(say.ApproveFromAnswer.Text()), threads.Work{}
	}
	switch act.Kind {
	case templates.ActionApprove, templates.ActionApproveSeen:
		// ActionApproveSeen (reveal's Approve) decides the card's revision.
		return a.approve(ctx, act, who)
	case templates.ActionApproveNote, templates.ActionApproveNoteSeen:
		return a.askComment(ctx, act, who)
	case templates.ActionDeny:
		return a.askReason(ctx, act, who), threads.Work{}
	case templates.ActionGrant:
		return a.askGrant(ctx, act, who)
	case templates.ActionRevokeGrant:
		return a.revokeGrant(ctx, act, who), threads.Work{}
	case templates.ActionAnswer:
		// A question's choice: recorded, then answered, as Approve is.
		return a.record(ctx, act, who, "")
	case templates.ActionAnswerText:
		return a.askAnswer(ctx, act, who)
	case templates.ActionLook, templates.ActionEscalate:
		// Recorded before the answer: the clicked card as it now stands.
		return a.recorded(a.click(ctx, threads.ClickLadder, act, who, "")), threads.Work{}
	default: // ActionShowArgs, ActionShowDetails
		return deferUpdate(), threads.Work{Timeout: showTimeout, Run: func(ctx context.Context) { a.show(ctx, act, who) }}
	}
}

// approve answers Approve: a Discord button cannot ask again as Slack's
// confirm does, so a destructive call's Approve first opens a modal whose
// submission approves; any other is recorded at once.
func (a *Adapter) approve(ctx context.Context, act templates.Action, who person) (*answer, threads.Work) {
	out := a.click(ctx, threads.ClickAsk, act, who, "")
	switch d := out.Dialog; {
	case d == nil:
		return a.revealOr(act, who, out)
	case d.Destructive:
		return confirmModal(*d, act), threads.Work{}
	}
	return a.record(ctx, act, who, "")
}

// askComment answers Approve with comment… with its modal, or refuses.
func (a *Adapter) askComment(ctx context.Context, act templates.Action, who person) (*answer, threads.Work) {
	out := a.click(ctx, threads.ClickAsk, act, who, "")
	if out.Dialog == nil {
		return a.revealOr(act, who, out)
	}
	return commentModal(*out.Dialog, act), threads.Work{}
}

// revealOr answers a click that recorded nothing: with reveal for a
// content holder's Approve of a restricted call, else as recorded does.
func (a *Adapter) revealOr(act templates.Action, who person, out threads.Clicked) (*answer, threads.Work) {
	if out.Reveal {
		return deferUpdate(), threads.Work{Timeout: showTimeout, Run: func(ctx context.Context) { a.reveal(ctx, act, who) }}
	}
	return a.recorded(out), threads.Work{}
}

// askReason answers Deny with the reason modal for a person who may
// decide, anyone else refused at once. The modal must be the first
// answer, so the store is read before answering.
func (a *Adapter) askReason(ctx context.Context, act templates.Action, who person) *answer {
	out := a.click(ctx, threads.ClickAsk, act, who, "")
	if out.Dialog == nil {
		return a.recorded(out)
	}
	return denyModal(*out.Dialog, act)
}

// denyModal asks for an optional reason in a label (Discord deprecated
// action rows in modals); its custom_id is the Deny action itself, so the
// submission says which card and revision it denies.
func denyModal(d threads.Dialog, act templates.Action) *answer {
	return &answer{Type: answerModal, Data: modal{
		CustomID: templates.EncodeAction(act),
		Title:    utf16text.Cut(say.DenyTitle(d.Function), modalTitleMax),
		Components: []Component{
			textField(say.ReasonLabel, say.ReasonHint(d.Restricted), reasonInputID),
		},
	}}
}

// commentModal asks for an optional comment to approve with; its
// custom_id is the Approve with comment… action.
func commentModal(d threads.Dialog, act templates.Action) *answer {
	return &answer{Type: answerModal, Data: modal{
		CustomID: templates.EncodeAction(act),
		Title:    utf16text.Cut(say.ApproveTitle(d.Function), modalTitleMax),
		Components: []Component{
			TextDisplay{Content: question(d, act)},
			textField(say.CommentLabel, say.CommentHint(d.Restricted), commentInputID),
		},
	}}
}

// confirmModal asks again before a destructive call is approved, and
// takes an optional comment. Its custom_id is the Approve action.
func confirmModal(d threads.Dialog, act templates.Action) *answer {
	return &answer{Type: answerModal, Data: modal{
		CustomID: templates.EncodeAction(act),
		Title:    utf16text.Cut(say.ConfirmTitle, modalTitleMax),
		Components: []Component{
			TextDisplay{Content: question(d, act)},
			textField(say.CommentLabel, say.CommentHint(d.Restricted), commentInputID),
		},
	}}
}

// question is a dialog's question in markdown: the function (the
// backend's, escaped) in bold, and what it does.
func question(d threads.Dialog, act templates.Action) string {
	return utf16text.Cut(say.ApproveQuestion("**"+markdown(utf16text.Cut(d.Function, 200))+"**", markdown(act.ApprovalID),
		act.Revision, markdown(d.Effect)), textDisplayMax)
}

// textField is an optional labelled paragraph, threads.MaxComment at most.
func textField(label, description, id string) Label {
	return Label{
		Label:       utf16text.Cut(label, textInputLabelMax),
		Description: utf16text.Cut(description, labelDescriptionMax),
		Component: TextInput{
			CustomID:  id,
			Style:     textInputParagraph,
			MaxLength: threads.MaxComment,
			Required:  false,
		},
	}
}

// submit handles a modal's submission (Deny's reason, a comment, a
// destructive call's confirmed Approve, a question's answer): recorded,
// then answered.
func (a *Adapter) submit(ctx context.Context, in *inbound, who person) (*answer, threads.Work) {
	var data modalData
	err := in.data(&data)
	if err == nil && templates.IsTurnAction(data.CustomID) {
		return a.submitTurn(ctx, data, who) // turn.go
	}
	var act templates.Action
	if err == nil {
		act, err = templates.ParseAction(data.CustomID)
	}
	if err == nil && act.Kind == templates.ActionGrant {
		return a.submitGrant(ctx, in, act, who)
	}
	if err == nil && act.Kind == templates.ActionAnswerText {
		// Answer…'s modal: the words as typed answer the revision.
		return a.record(ctx, act, who, value(data.Components, answerInputID))
	}
	if err == nil && act.Kind != templates.ActionDeny && act.Kind != templates.ActionApprove && act.Kind != templates.ActionApproveNote &&
		!act.Kind.Seen() {
		err = fmt.Errorf("the dialog's action %s decides nothing", act.Kind)
	}
	if err != nil {
		a.log.Warn("discord: dialog the bot does not know", "discord_user", who.user, "err", err.Error())
		return ephemeral(say.UnknownDialog.Text()), threads.Work{}
	}
	if act.Kind == templates.ActionDeny {
		return a.record(ctx, act, who, value(data.Components, reasonInputID))
	}
	// The decision is the card's Approve of the clicked revision, whichever
	// dialog asked; one from reveal's private answer says it was shown.
	if act.Kind.Seen() {
		act.Kind = templates.ActionApproveSeen
	} else {
		act.Kind = templates.ActionApprove
	}
	return a.record(ctx, act, who, value(data.Components, commentInputID))
}

// record records an approval or denial before the click is answered
// (recorded); a content holder's Approve of a restricted call they were
// not shown records nothing and shows them the call (reveal).
func (a *Adapter) record(ctx context.Context, act templates.Action, who person, comment string) (*answer, threads.Work) {
	rctx, cancel := who.receipt.Bound(ctx)
	defer cancel()
	return a.revealOr(act, who, a.click(rctx, threads.ClickRecord, act, who, comment))
}

// recorded is the first answer to a click on Approve, Deny, I'm looking
// or Escalate now: a recorded click updates the clicked message to its
// card as it now stands (which spends no edit budget); anything else is
// told to the person alone.
func (a *Adapter) recorded(out threads.Clicked) *answer {
	if card := out.Card; card != nil {
		msg := renderCard(*card)
		// Every field set, so buttons that are gone are removed.
		return &answer{Type: answerUpdate, Data: msg.Edit()}
	}
	return ephemeral(out.Reason.String())
}

// answer tells the clicker one sentence, ephemerally, logging a failure.
func (a *Adapter) answer(ctx context.Context, who person, text string) {
	if err := a.followup(ctx, who.token, ephemeralMessage(text), true); err != nil {
		a.log.Warn("discord: could not answer a person", "discord_user", who.user, "channel", who.channel,
			"err", scrub(err).Error())
	}
}

// followup posts through an interaction's webhook. Right after an HTTP
// answer Discord may not have recorded it yet and says Unknown Webhook:
// fresh retries that for a few seconds. A 429 waits as Discord asks, a
// few times, within ctx.
func (a *Surface) followup(ctx context.Context, token string, msg *Message, fresh bool) error {
	if token == "" {
		return threads.Permanent(errors.New("no interaction token to answer with"))
	}
	return a.retryWebhook(ctx, fresh, func() error {
		_, err := a.call(ctx, "POST", endpointFollowup(a.appID, token)+"?wait=true", msg, endpointFollowup(a.appID, ""))
		return err
	})
}

// editOriginal edits the interaction's original message (the one
// clicked, or a deferred answer's placeholder), retried as followup is.
func (a *Surface) editOriginal(ctx context.Context, token string, edit *MessageEdit, fresh bool) error {
	if token == "" {
		return threads.Permanent(errors.New("no interaction token to answer with"))
	}
	return a.retryWebhook(ctx, fresh, func() error {
		_, err := a.call(ctx, "PATCH", endpointOriginal(a.appID, token), edit, endpointOriginal(a.appID, ""))
		return err
	})
}

func (a *Surface) retryWebhook(ctx context.Context, fresh bool, try func() error) error {
	settle := time.Now().Add(followupSettle)
	limited := 0
	for n := 1; ; n++ {
		err := try()
		if err == nil {
			return nil
		}
		wait, again := time.Duration(0), false
		if d, ok := retryAfter(err); ok && limited < 3 {
			limited++
			wait, again = d, true
		} else if code := restCode(err); fresh && (code == codeUnknownWebhook || code == codeUnknownInteraction) && time.Now().Before(settle) {
			wait, again = time.Duration(min(n, 5))*100*time.Millisecond, true
		}
		if !again || !pause(ctx, wait) {
			return err
		}
	}
}
