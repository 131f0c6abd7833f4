package discord

import (
	"encoding/json"
	"strings"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
)

// An agent's question on Discord (docs/discord.md#questions): the card's
// embed is titled "<agent> asks" over the job's line, the question in the
// agent's quoted box; its choices are buttons, five a row, in as many rows
// as Discord's five leave beside the card's other buttons, and the rest in
// one string select whose option values are the choices' payloads.

// Discord's limits a question's components meet:
// https://discord.com/developers/docs/components/reference#string-select
const (
	// selectOptionsMax is a string select's options.
	selectOptionsMax = 25
	// selectPlaceholderMax is a string select's placeholder.
	selectPlaceholderMax = 150
)

// The question's own words on Discord.
const (
	questionBoxTitle = "**The agent asks**"
	answerBoxTitle   = "**The answer**"
	moreChoices      = "More choices…"
	questionFooter   = "question "
)

// ChoiceMenu is a message's string select (in an action row of its own)
// that takes exactly one option. Unlike StringSelect, which sits in a
// modal's label, it says no "required", a modal's field only.
type ChoiceMenu struct {
	CustomID    string
	Placeholder string
	Options     []SelectOption
}

func (ChoiceMenu) component() {}

// MarshalJSON writes a message's string select of one choice.
func (m ChoiceMenu) MarshalJSON() ([]byte, error) {
	type option struct {
		Label string `json:"label"`
		Value string `json:"value"`
	}
	opts := make([]option, len(m.Options))
	for i, o := range m.Options {
		opts[i] = option{Label: utf16text.Cut(o.Label, selectOptionMax), Value: o.Value}
	}
	return json.Marshal(struct {
		Type        int      `json:"type"`
		CustomID    string   `json:"custom_id"`
		Placeholder string   `json:"placeholder,omitempty"`
		Options     []option `json:"options"`
		MinValues   int      `json:"min_values"`
		MaxValues   int      `json:"max_values"`
	}{componentStringSelect, m.CustomID, utf16text.Cut(m.Placeholder, selectPlaceholderMax), opts, 1, 1})
}

// quoted is text escaped in a block quote, every line of it, so none
// escapes the quote: the agent's or a person's words, never the bot's.
func quoted(text string) string {
	if text == "" {
		return ""
	}
	return "> " + strings.ReplaceAll(escape(text), "\n", "\n> ")
}

// questionPart is the question in the agent's box, where a call's card
// has what the agent says; none on a restricted card.
func questionPart(c *templates.Card) string {
	return with(questionBoxTitle+"\n", quoted(c.Question.Text), "")
}

// answerLines is a closed question's answer under its status, quoted as
// the person wrote it (redacted); none on a restricted card.
func answerLines(c *templates.Card) string {
	if c.Question == nil {
		return ""
	}
	return with("\n", quoted(c.Question.Answer), "")
}

// choiceRows lays out a question's choices and the card's other buttons
// within Discord's five rows of five: every choice a button when they
// all fit, else as many as the rows beside the others and one menu
// leave, and the rest in the menu (at most 25 options, which a question's
// choices never exceed). Choices come first, then the menu, then the
// other buttons.
func choiceRows(choices, others []templates.Button) []Component {
	other := buttonRows(others)
	rowsOf := func(n int) int { return (n + buttonsPerRow - 1) / buttonsPerRow }
	asButtons := len(choices)
	if rowsOf(len(choices))+len(other) > rowsMax {
		asButtons = max(0, (rowsMax-len(other)-1)*buttonsPerRow)
	}
	rows := buttonRows(choices[:asButtons])
	if rest := choices[asButtons:]; len(rest) > 0 {
		rows = append(rows, ActionRow{Components: []Component{choiceMenu(rest)}})
	}
	rows = append(rows, other...)
	if len(rows) > rowsMax {
		rows = rows[:rowsMax] // unreachable: the others are one row
	}
	return rows
}

// choiceMenu is the select of the choices with no room as buttons. Its
// custom_id is the first one's payload (unique in the message, since
// that choice has no button); each option's value is its choice's
// payload, read as strictly as a button's.
func choiceMenu(choices []templates.Button) ChoiceMenu {
	m := ChoiceMenu{CustomID: choices[0].Payload, Placeholder: moreChoices}
	for _, b := range choices {
		if len(m.Options) == selectOptionsMax {
			break
		}
		if len(b.Payload) > selectOptionMax {
			continue // unreachable: templates.MaxActionLen is below it
		}
		m.Options = append(m.Options, SelectOption{Label: b.Label, Value: b.Payload})
	}
	return m
}

// questionFooterText names the question, its revision and its tenant.
func questionFooterText(c *templates.Card) string {
	return questionFooter + strings.TrimPrefix(cardFooter(c), "approval ")
}
