package discord

import (
	"context"
	"errors"
	"strconv"
	"strings"

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

// maxTurnEmbeds is Discord's 10 embeds per message.
const maxTurnEmbeds = 10

// renderCard is the message of one copy: the turn card when the copy is
// a call of a turn shown on one card, else the call's own card.
func renderCard(c threads.Card) *Message {
	if c.Turn != nil && len(c.Turn.Rows) > 0 {
		return RenderTurn(templates.BuildTurn(*c.Turn))
	}
	return RenderCard(templates.Build(c.Input()))
}

// RenderTurn renders a turn card (docs/cards.md#the-turn-card): the
// title, the job and what a deny does as the content; one embed per call
// (its number and function as title, its effect, flags, arguments and
// status, the edge coloured by its state), each cut to its share of the
// 6,000 characters all embeds may hold; then the buttons, each row's
// labelled with its number, five to a row, Deny all and Approve all N
// last. templates.MaxTurnRows calls make at most 22 buttons of 25.
func RenderTurn(tc templates.TurnCard) *Message {
	var content strings.Builder
	content.WriteString("**" + escape(tc.Title) + "**\n")
	content.WriteString(metaPart(&templates.Card{Job: tc.Job}) + "\n")
	content.WriteString("**" + escape(tc.Note) + "**")
	if tc.Waiting != "" {
		content.WriteString("\n*" + escape(tc.Waiting) + "*")
	}
	for _, c := range tc.Changed {
		content.WriteString("\n🔄 " + escape(c))
	}
	if tc.NoApproveAll != "" {
		content.WriteString("\n" + escape(tc.NoApproveAll))
	}
	msg := &Message{Content: utf16text.Fit(content.String(), contentMax, cutMarker, trimCut), AllowedMentions: noMentions()}
	rows := tc.Rows
	if len(rows) > maxTurnEmbeds {
		rows = rows[:maxTurnEmbeds] // unreachable within MaxTurnRows
	}
	share := embedTotalMax
	if len(rows) > 0 {
		share = embedTotalMax / len(rows)
	}
	var buttons []templates.Button
	for _, r := range rows {
		title := utf16text.Cut(strconv.Itoa(r.Index)+". "+r.Function, min(embedTitleMax, share/4))
		desc := with("**", escape(r.Effect), "**") + each(r.Flags, "\n⚠️ ", "") + each(r.Warnings, "\n⚠️ **", "**")
		switch {
		case r.Restricted:
			desc += "\n*" + escape(r.RestrictedNote) + "*"
		case r.Args != "":
			desc += code("json", r.Args)
		}
		desc += "\n*" + escape(r.Status) + "*"
		desc = utf16text.Fit(strings.Trim(desc, "\n"), min(embedDescriptionMax, share-utf16text.Len(title)), cutMarker, trimCut)
		msg.Embeds = append(msg.Embeds, Embed{Title: title, Description: desc, Color: toneColors[r.Tone]})
		for _, b := range r.Buttons {
			b.Label = strconv.Itoa(r.Index) + " · " + b.Label
			buttons = append(buttons, b)
		}
	}
	comps := cardButtons(buttons)
	if turn := cardButtons(tc.Buttons); len(turn) > 0 {
		if len(comps) >= rowsMax {
			comps = comps[:rowsMax-1] // unreachable within MaxTurnRows
		}
		comps = append(comps, turn...)
	}
	msg.Components = comps
	return msg
}

// turnButton takes a click on Deny all or Approve all N, its custom_id
// untrusted (ParseTurnAction reads it strictly). It is recorded before
// the answer, which updates the clicked message to the turn as it now
// stands, or tells the person alone why nothing was sent. Discord's
// buttons cannot ask again: Approve all is never offered for a call
// that asks more than one click (templates.BuildTurn).
func (a *Adapter) turnButton(ctx context.Context, customID string, who person) (*answer, threads.Work) {
	act, err := templates.ParseTurnAction(customID)
	tc, ok := a.service.(TurnClicker)
	if err == nil && !ok {
		err = errors.New("the service takes no turn's decision")
	}
	if err != nil {
		a.log.Warn("discord: click on a turn button the bot does not know", "discord_user", who.user, "channel", who.channel,
			"err", err.Error())
		return ephemeral(say.UnknownButton.Text()), threads.Work{}
	}
	if !act.Approve {
		// Deny all asks again, with an optional reason, as Deny does:
		// one click must not end a whole turn.
		return denyAllModal(act), threads.Work{}
	}
	return a.recordTurn(ctx, tc, act, who, "")
}

// recordTurn records a turn's batch before the click is answered.
func (a *Adapter) recordTurn(ctx context.Context, tc TurnClicker, act templates.TurnAction, who person, comment string) (*answer, threads.Work) {
	rctx, cancel := who.receipt.Bound(ctx)
	defer cancel()
	out := tc.ClickTurn(rctx, threads.TurnClickRequest{Action: act, Person: who.threads(), Comment: comment, ReceivedAt: who.receipt.At})
	return a.recorded(out), threads.Work{}
}

// denyAllModal asks for an optional reason before Deny all; its custom_id
// is the Deny all action itself, so the submission says which turn, and
// as shown.
func denyAllModal(act templates.TurnAction) *answer {
	return &answer{Type: answerModal, Data: modal{
		CustomID: templates.EncodeTurnAction(act),
		Title:    utf16text.Cut("Deny the whole turn", modalTitleMax),
		Components: []Component{
			TextDisplay{Content: say.TurnDenyQuestion},
			textField(say.ReasonLabel, say.TurnReasonHint, reasonInputID),
		},
	}}
}

// submitTurn takes Deny all's dialog: only a deny is ever submitted so.
func (a *Adapter) submitTurn(ctx context.Context, data modalData, who person) (*answer, threads.Work) {
	act, err := templates.ParseTurnAction(data.CustomID)
	tc, ok := a.service.(TurnClicker)
	switch {
	case err != nil:
	case act.Approve:
		err = errors.New("the dialog approves a turn: only Deny all asks")
	case !ok:
		err = errors.New("the service takes no turn's decision")
	}
	if err != nil {
		a.log.Warn("discord: turn dialog the bot does not know", "discord_user", who.user, "err", err.Error())
		return ephemeral(say.UnknownDialog.Text()), threads.Work{}
	}
	return a.recordTurn(ctx, tc, act, who, value(data.Components, reasonInputID))
}
