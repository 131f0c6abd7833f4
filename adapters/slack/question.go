package slack

import (
	"cmp"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// An agent's question on Slack (docs/slack.md#questions): the card says
// who asks under its title, shows the question in the agent's box (a
// quote, as "The agent says" is shown: the agent's words, never the
// bot's), its first choices as buttons and the rest in one menu, then
// Answer…, I'm looking and Escalate now. A restricted card shows none of
// the question: Show question tells it to a content holder alone.

// The question's wire names.
const (
	// choiceMenuID is the action_id of the menu of the choices beyond the
	// buttons; each option's value is its choice's payload.
	choiceMenuID = "ab1-choice"
	// answerCallbackID, answerBlockID and answerActionID name Answer…'s
	// dialog and its text field.
	answerCallbackID = "ab1-answer"
	answerBlockID    = "answer"
	answerActionID   = "answer"
)

// Slack's limits a question meets.
const (
	// choiceButtonsMax is how many choices are buttons; the rest go in
	// one menu, which keeps a card's row of buttons readable.
	choiceButtonsMax = 5
	// optionValueMax and optionsMax bound a static_select's options:
	// https://docs.slack.dev/reference/block-kit/composition-objects/option-object
	// https://docs.slack.dev/reference/block-kit/block-elements/select-menu-element#static_select
	optionValueMax = 150
	optionsMax     = 100
	// placeholderMax bounds a menu's or an input's placeholder (same pages).
	placeholderMax = 150
	// textInputMax bounds a plain_text_input's max_length:
	// https://docs.slack.dev/reference/block-kit/block-elements/plain-text-input-element
	textInputMax = 3000
	// labelMax bounds an input block's label and hint:
	// https://docs.slack.dev/reference/block-kit/blocks/input-block
	labelMax = 2000
	hintMax  = 2000
)

// The question's words on Slack: the bot's, plain text.
const (
	questionLabel      = "The agent asks"
	answerLabel        = "The answer"
	choiceMenuHolder   = "More choices…"
	answerTitle        = say.AnswerTitle
	answerSubmit       = say.AnswerSubmit
	answerInputLabel   = say.AnswerLabel
	answerNoText       = "The question is restricted: it is not repeated here."
	shownQuestionLead  = "The question, shown to you alone:"
	shownQuestionFallb = "The question, shown to you alone"
	answerTextLabel    = "Answer…"
)

// questionPart is the question in the agent's box; nothing on a
// restricted card (whose Text is "").
func questionPart(e *elems, q *templates.QuestionCard) {
	if q.Text == "" {
		return
	}
	e.bold(questionLabel)
	e.box(elemQuote, q.Text)
}

// answerPart is the answer a closed card shows, in a box of its own:
// a person's words, never the bot's.
func answerPart(e *elems, q *templates.QuestionCard) {
	if q == nil || q.Answer == "" {
		return
	}
	e.bold(answerLabel)
	e.box(elemQuote, q.Answer)
}

// choiceElements are a question's choices: the first choiceButtonsMax as
// buttons, the rest as ONE static_select whose options' values are the
// choices' payloads (so a pick reads as the button would).
func choiceElements(choices []templates.Button) []slackgo.BlockElement {
	n := min(len(choices), choiceButtonsMax)
	out := buttons(choices[:n])
	var opts []*slackgo.OptionBlockObject
	for _, c := range choices[n:] {
		if len(opts) == optionsMax {
			break
		}
		if len(c.Payload) > optionValueMax {
			continue // unreachable: a choice's payload stays within 90
		}
		opts = append(opts, slackgo.NewOptionBlockObject(c.Payload, plainText(c.Label, optionTextMax), nil))
	}
	if len(opts) > 0 {
		out = append(out, slackgo.NewOptionsSelectBlockElement(slackgo.OptTypeStatic,
			plainText(choiceMenuHolder, placeholderMax), choiceMenuID, opts...))
	}
	return out
}

// choicesTextLen is the text a question's choices add to a message.
func choicesTextLen(q *templates.QuestionCard) int {
	if q == nil {
		return 0
	}
	n := buttonsTextLen(q.Choices)
	if len(q.Choices) > choiceButtonsMax {
		n += utf16text.Len(choiceMenuHolder)
	}
	return n
}

// shownQuestion is the private answer to Show question: the question in
// the agent's box, whole, its choices as on the card, and Answer… when it
// takes words; to the person who pressed it alone.
func shownQuestion(text string, choices []templates.Button, answerText *templates.Action) Message {
	blocks := append([]slackgo.Block{richText(textElem(shownQuestionLead))}, questionBlocks(text)...)
	if els := choiceElements(choices); len(els) > 0 {
		blocks = append(blocks, slackgo.NewActionBlock("", els...))
	}
	if answerText != nil {
		p := templates.EncodeAction(*answerText)
		btn := slackgo.NewButtonBlockElement(p, p, plainText(answerTextLabel, buttonTextMax))
		btn.Style = slackgo.StylePrimary
		blocks = append(blocks, slackgo.NewActionBlock("", btn))
	}
	return Message{Text: shownQuestionFallb, Blocks: blocks}
}

// questionBlocks are a question's text, redacted and shown as cards show
// text, whole (approval.MaxQuestionText at most) in the agent's box: one
// quote per richTextMax, the first under its label.
func questionBlocks(text string) []slackgo.Block {
	s := strings.TrimSpace(templates.Visible(approval.RedactText(text)))
	var out []slackgo.Block
	for i, piece := range chunk.Split(s, richTextMax-utf16text.Len(questionLabel)-1) {
		q := elem{kind: elemQuote, text: strings.TrimSuffix(piece, "\n")}
		if i == 0 {
			out = append(out, richText(boldElem(questionLabel), q))
			continue
		}
		out = append(out, richText(q))
	}
	return out
}

// answerModal is Answer…'s dialog as the core words it: the question
// (none for a restricted one), and one multiline field for the answer of
// at most d.Max characters, which Slack refuses beyond before the bot
// sees them.
func answerModal(d threads.QuestionDialog, meta string) slackgo.ModalViewRequest {
	limit := d.Max
	if limit <= 0 || limit > textInputMax {
		limit = min(approval.MaxAnswerText, textInputMax)
	}
	input := slackgo.NewPlainTextInputBlockElement(nil, answerActionID).WithMultiline(true).WithMaxLength(limit)
	field := slackgo.NewInputBlock(answerBlockID, plainText(cmp.Or(d.Label, answerInputLabel), labelMax),
		plainText(d.Goes, hintMax), input)
	if d.Goes == "" {
		field.Hint = nil
	}
	lead := []slackgo.Block{richText(textElem(answerNoText))}
	if !d.Restricted && strings.TrimSpace(d.Text) != "" {
		lead = questionBlocks(d.Text)
	}
	return slackgo.ModalViewRequest{
		Type:            slackgo.VTModal,
		CallbackID:      answerCallbackID,
		Title:           plainTitle(cmp.Or(d.Title, answerTitle)),
		Submit:          plainTitle(cmp.Or(d.Submit, answerSubmit)),
		Close:           plainTitle(say.DenyClose),
		PrivateMetadata: meta,
		Blocks:          slackgo.Blocks{BlockSet: append(lead, field)},
	}
}
