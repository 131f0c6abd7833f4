package slack

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TurnClicker takes Deny all and Approve all N; *threads.Service is one.
// A Service that is not answers them as buttons the bot does not know.
type TurnClicker interface {
	ClickTurn(ctx context.Context, req threads.TurnClickRequest) threads.Clicked
}

var _ TurnClicker = (*threads.Service)(nil)

// cardMessage is the message of one copy: the turn card when the copy is
// a call of a turn shown on one card, else the call's own card.
func cardMessage(c threads.Card) Message {
	if c.Turn != nil && len(c.Turn.Rows) > 0 {
		return TurnMessage(templates.BuildTurn(*c.Turn))
	}
	return CardMessage(templates.Build(c.Input()))
}

// TurnMessage renders a turn card (docs/cards.md#the-turn-card): the
// title as a header, the job and what a deny does, then each call as a
// rich_text block with its own actions block, then Deny all and Approve
// all N. MaxTurnRows calls make at most 26 blocks of Slack's 50, and at
// most 12,000 characters of text: each row's text is cut to its share.
func TurnMessage(tc templates.TurnCard) Message {
	blocks := []slackgo.Block{slackgo.NewHeaderBlock(plainText(tc.Title, headerTextMax))}
	var head elems
	metaPart(&head, &templates.Card{Job: tc.Job})
	head.br()
	head.bold(tc.Note)
	if tc.Waiting != "" {
		head.br()
		head.italic(tc.Waiting)
	}
	for _, c := range tc.Changed {
		head.br()
		head.icon("arrows_counterclockwise")
		head.text(c)
	}
	blocks = append(blocks, richTextBlock(cutElems(head, richTextMax)))
	share := richTextMax
	if n := len(tc.Rows); n > 0 {
		share = min(richTextMax, (blocksTextMax-utf16text.Len(tc.Title)-elemsLen(head)-1000)/n)
	}
	for _, r := range tc.Rows {
		blocks = append(blocks, richTextBlock(cutElems(turnRowElems(r), share)))
		if acts := buttons(r.Buttons); len(acts) > 0 {
			blocks = append(blocks, slackgo.NewActionBlock("", acts...))
		}
	}
	if tc.NoApproveAll != "" {
		blocks = append(blocks, contextText(tc.NoApproveAll))
	}
	if acts := buttons(tc.Buttons); len(acts) > 0 {
		blocks = append(blocks, slackgo.NewActionBlock("", acts...))
	}
	if len(blocks) > maxBlocks {
		blocks = blocks[:maxBlocks] // unreachable within MaxTurnRows
	}
	return Message{Text: utf16text.Cut(mrkdwn(tc.Headline), messageTextMax), Blocks: blocks}
}

// turnRowElems is one call's row: its number and function, its effect,
// flags and warnings, its arguments on one line (or why not), its status.
func turnRowElems(r templates.TurnRow) elems {
	var e elems
	e.bold(strconv.Itoa(r.Index) + ". " + r.Function)
	if r.Effect != "" {
		e.text(" · ")
		e.bold(r.Effect)
	}
	for _, f := range r.Flags {
		e.br()
		e.icon("warning")
		e.text(f)
	}
	for _, w := range r.Warnings {
		e.br()
		e.icon("warning")
		e.bold(w)
	}
	switch {
	case r.Restricted:
		e.br()
		e.italic(r.RestrictedNote)
	case r.Args != "":
		e.br()
		e.styled(r.Args, codeStyle)
	}
	e.br()
	e.italic(r.Status)
	return e
}

// turnButton takes a click on Deny all or Approve all N, its payload
// untrusted (ParseTurnAction reads it strictly). It is recorded before
// the ack, as Approve is; the clicked message then shows the turn as it
// stands, or the person is told why nothing was sent.
func (a *Adapter) turnButton(ctx context.Context, action slackgo.BlockAction, who person, received time.Time) threads.Work {
	act, err := templates.ParseTurnAction(action.ActionID)
	if err == nil && action.Value != "" && action.Value != action.ActionID {
		err = errors.New("the button's value differs from its action id")
	}
	tc, ok := a.service.(TurnClicker)
	if err == nil && !ok {
		err = errors.New("the service takes no turn's decision")
	}
	if err != nil {
		a.log.Warn("slack: click on a turn button the bot does not know", "slack_user", who.user, "channel", who.channel,
			"err", err.Error())
		return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) { a.answer(ctx, who, say.UnknownButton.Text()) }}
	}
	out := tc.ClickTurn(ctx, threads.TurnClickRequest{Action: act, Person: who.threads(), ReceivedAt: received})
	return threads.Work{Timeout: decideTimeout, Run: func(ctx context.Context) {
		ctx = threads.ForPerson(ctx)
		if who.reply != "" && out.Card != nil {
			err := a.replace(ctx, who.reply, *out.Card)
			if err == nil {
				return
			}
			a.log.Info("slack: the response_url did not take the clicked turn card", "approval_id", act.ApprovalID,
				"slack_user", who.user, "err", scrub(err).Error())
		}
		a.answer(ctx, who, out.Reason.String())
	}}
}

// isTurnClick reports whether a click's one action is a turn button.
func isTurnClick(actions []*slackgo.BlockAction) bool {
	return len(actions) == actionsPerClick && strings.HasPrefix(actions[0].ActionID, "ab1|turn_") &&
		templates.IsTurnAction(actions[0].ActionID)
}
