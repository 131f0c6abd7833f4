package slack

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/strictjson"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// askAnswer opens Answer…'s dialog for a person who may answer the
// question; anyone else is told at once why not (threads' reason,
// nothing recorded), as for Deny.
func (a *Adapter) askAnswer(ctx context.Context, act templates.Action, who person, trigger string, received time.Time) {
	ctx = threads.ForPerson(ctx) // the dialog opens within the trigger's 3 s
	out := a.click(ctx, threads.ClickAsk, act, who, "", received)
	d := out.Dialog
	if d == nil || d.Question == nil {
		a.afterRecord(ctx, act, who, out)
		return
	}
	q := *d.Question
	a.openDialog(ctx, act, who, trigger, out.Tenant, func(meta string) slackgo.ModalViewRequest {
		return answerModal(q, meta)
	})
}

// submitAnswer records the words of Answer…'s dialog as the answer to
// the revision it was opened on: recorded before the modal closes; the
// modal stays open, saying why, when nothing was recorded and a retry
// may be. The words go to the core as typed: the backend receives them
// so, and every surface shows them redacted.
func (a *Adapter) submitAnswer(ctx context.Context, cb *slackgo.InteractionCallback, received time.Time) (ackBody, threads.Work) {
	meta, act, err := dialogMeta(cb.View.PrivateMetadata)
	if err == nil && act.Kind != templates.ActionAnswerText {
		err = errors.New("the dialog's action is not its own")
	}
	if err != nil {
		a.log.Warn("slack: answer dialog with a payload the bot does not know", "slack_user", cb.User.ID, "err", err.Error())
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{answerBlockID: say.UnknownDialog.Text()}), threads.Work{}
	}
	words := ""
	if cb.View.State != nil {
		words = cb.View.State.Values[answerBlockID][answerActionID].Value
	}
	who := person{user: cb.User.ID, channel: meta.Channel, reply: a.allowedReply(meta.Reply)}
	out := a.click(ctx, threads.ClickRecord, act, who, words, received)
	if out.Retry {
		// Nothing was recorded (the words blank or too long, the store
		// down): the modal stays open with the words in it, saying why.
		return slackgo.NewErrorsViewSubmissionResponse(map[string]string{answerBlockID: out.Reason.String()}), threads.Work{}
	}
	return nil, threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.afterRecord(ctx, act, who, out) }}
}

// dialogMeta reads a dialog's private_metadata strictly: the click it
// answers, and where.
func dialogMeta(raw string) (denyMeta, templates.Action, error) {
	var meta denyMeta
	err := strictjson.Check([]byte(raw), denyMetaKeys)
	if err == nil {
		err = json.Unmarshal([]byte(raw), &meta)
	}
	var act templates.Action
	if err == nil {
		act, err = templates.ParseAction(meta.Action)
	}
	return meta, act, err
}

// showQuestion tells a restricted question, its choices and Answer…, to
// the content holder who pressed Show question, alone.
func (a *Adapter) showQuestion(ctx context.Context, act templates.Action, who person, tenant string, q *threads.ShownQuestion) {
	if err := a.tell(ctx, who, []Message{shownQuestion(q.Text, q.Choices, q.AnswerText)}); err != nil {
		a.log.Warn("slack: could not show a restricted question", "tenant", tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
	}
}
