package discord

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Answering an agent's question on Discord: a choice (a button, or the
// card's menu) is recorded before the click is answered, as Approve is;
// Answer… opens a modal whose submission is the answer in the person's
// words; Show question answers a content holder alone with the
// restricted question, its choices and Answer….

// The Answer… modal's text input, and the adapter's own words: the
// modal's title, label and what it says come from the core
// (threads.QuestionDialog), these stand in for any it leaves empty.
// Discord bounds a modal's title and a label at 45 characters, a label's
// description at 100: a longer description goes under the question.
const (
	answerInputID     = "answer"
	answerModalTitle  = "Answer the question"
	answerInputLabel  = "Your answer"
	answerQuestionCut = "*[cut to fit the dialog; the card shows more]*"
	shownQuestionLead = "Only you see this question. Answer it here:"
)

// choose handles a choice in a question card's menu: its custom_id and
// its one value are read as strictly as a button's, and must name the
// same question and revision; then the choice is the answer.
func (a *Adapter) choose(ctx context.Context, data componentData, who person) (*answer, threads.Work) {
	act, err := menuChoice(data)
	if err != nil {
		a.log.Warn("discord: choice in a menu the bot does not know", "discord_user", who.user, "channel", who.channel,
			"err", err.Error())
		return ephemeral(say.UnknownButton.Text()), threads.Work{}
	}
	return a.record(ctx, act, who, "")
}

// menuChoice is the answer a menu's choice gives: the value's action,
// a choice of the question and revision the menu's custom_id names.
func menuChoice(data componentData) (templates.Action, error) {
	menu, err := templates.ParseAction(data.CustomID)
	if err != nil {
		return templates.Action{}, fmt.Errorf("the menu's custom_id: %w", err)
	}
	if len(data.Values) != 1 {
		return templates.Action{}, errors.New("a menu's choice is one value")
	}
	act, err := templates.ParseAction(data.Values[0])
	switch {
	case err != nil:
		return templates.Action{}, fmt.Errorf("the menu's choice: %w", err)
	case menu.Kind != templates.ActionAnswer || act.Kind != templates.ActionAnswer:
		return templates.Action{}, errors.New("the menu holds no question's choices")
	case act.ApprovalID != menu.ApprovalID || act.Revision != menu.Revision:
		return templates.Action{}, errors.New("the choice is not of the menu's question")
	}
	return act, nil
}

// askAnswer answers Answer… with the answer modal for a person who may
// answer; anyone else is told at once why not.
func (a *Adapter) askAnswer(ctx context.Context, act templates.Action, who person) (*answer, threads.Work) {
	out := a.click(ctx, threads.ClickAsk, act, who, "")
	if out.Dialog == nil || out.Dialog.Question == nil {
		return a.recorded(out), threads.Work{}
	}
	return answerTextModal(*out.Dialog, act), threads.Work{}
}

// answerTextModal asks for the answer in the person's words: the question
// above it, cut to what a modal shows (the card above the modal shows it
// whole; a restricted one's, none), then a required paragraph of at most
// the answer's bound. Its custom_id is the Answer… action.
func answerTextModal(d threads.Dialog, act templates.Action) *answer {
	q := d.Question
	maxLen := q.Max
	if maxLen <= 0 || maxLen > approval.MaxAnswerText {
		maxLen = approval.MaxAnswerText
	}
	title, label := cmp.Or(q.Title, answerModalTitle), cmp.Or(q.Label, answerInputLabel)
	hint, note := q.Goes, ""
	if utf16text.Len(hint) > labelDescriptionMax {
		// Said whole under the question, not cut in the field's label.
		hint, note = "", "*"+markdown(hint)+"*"
	}
	question := ""
	if q.Text != "" && !q.Restricted && !d.Restricted {
		// The question gives way, cut visibly; the note is kept whole.
		room := textDisplayMax - utf16text.Len(note) - utf16text.Len(partSep)
		question = utf16text.Fit(questionBoxTitle+"\n"+quoted(templates.Visible(q.Text)), room, answerQuestionCut, trimCut)
	}
	var comps []Component
	if text := joinNonEmpty(question, note); text != "" {
		comps = append(comps, TextDisplay{Content: utf16text.Cut(text, textDisplayMax)})
	}
	comps = append(comps, Label{
		Label:       utf16text.Cut(label, textInputLabelMax),
		Description: utf16text.Cut(hint, labelDescriptionMax),
		Component:   TextInput{CustomID: answerInputID, Style: textInputParagraph, MaxLength: maxLen, Required: true},
	})
	return &answer{Type: answerModal, Data: modal{
		CustomID:   templates.EncodeAction(act),
		Title:      utf16text.Cut(title, modalTitleMax),
		Components: comps,
	}}
}

// joinNonEmpty joins the texts that are not empty, a blank line between.
func joinNonEmpty(texts ...string) string {
	var out []string
	for _, t := range texts {
		if t != "" {
			out = append(out, t)
		}
	}
	return strings.Join(out, partSep)
}

// showQuestion answers Show question on a restricted question: its text,
// its choices and Answer…, to the content holder alone.
func (a *Adapter) showQuestion(ctx context.Context, act templates.Action, who person, tenant string, q threads.ShownQuestion) {
	if err := a.followup(ctx, who.token, shownQuestion(q), true); err != nil {
		a.log.Warn("discord: could not show a restricted question", "tenant", tenant, "approval_id", act.ApprovalID,
			"discord_user", who.user, "err", scrub(err).Error())
	}
}

// shownQuestion is Show question's private answer: the question in the
// agent's box (an embed, which holds it whole where a message's content
// would not), then its choices as on the card, and Answer….
func shownQuestion(q threads.ShownQuestion) *Message {
	var others []templates.Button
	if q.AnswerText != nil {
		others = append(others, templates.Button{Label: "Answer…", Style: templates.StylePrimary,
			Action: *q.AnswerText, Payload: templates.EncodeAction(*q.AnswerText)})
	}
	choices := make([]templates.Button, len(q.Choices))
	for i, b := range q.Choices {
		// The core's labels, shown as a card's are: one line, redacted,
		// every invisible character shown.
		b.Label = utf16text.Cut(templates.VisibleLine(approval.RedactText(b.Label)), buttonLabelMax)
		choices[i] = b
	}
	desc := utf16text.Fit(questionBoxTitle+"\n"+quoted(templates.Visible(q.Text)), embedDescriptionMax, cutMarker, trimCut)
	return &Message{
		Content:         shownQuestionLead,
		Embeds:          []Embed{{Description: desc, Color: toneColors[templates.TonePending]}},
		Components:      choiceRows(choices, others),
		Flags:           flagEphemeral,
		AllowedMentions: noMentions(),
	}
}
