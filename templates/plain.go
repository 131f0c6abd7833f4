package templates

import (
	"strconv"
	"strings"

	"approvalsbot/approval"
)

// Text renders c as plain text for logs and bot preview.
func (r *Renderer) Text(c Card) string {
	s, err := execText(r.text, "card", &c)
	if err != nil {
		return brokenPart + "\n"
	}
	return squeezeBlankLines(s)
}

// squeezeBlankLines leaves at most one blank line between paragraphs and
// one final newline, so templates may skip parts; other lines stay as is.
func squeezeBlankLines(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	var b strings.Builder
	b.Grow(len(s))
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			blank = true
			continue
		}
		if blank && b.Len() > 0 {
			b.WriteByte('\n')
		}
		blank = false
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String()
}

// QuestionTitle is a question card's title line, said by the bot: who
// asks, on every surface. The question itself is the agent's words,
// shown in its box.
func (c Card) QuestionTitle() string {
	if strings.TrimSpace(c.Job.Agent) == "" {
		return "The agent asks"
	}
	return c.Job.Agent + " asks"
}

// ChoiceLines are the choices as a list reads them: "1. acct-1".
func (q *QuestionCard) ChoiceLines() []string {
	out := make([]string, len(q.Choices))
	for i, b := range q.Choices {
		out[i] = strconv.Itoa(i+1) + ". " + b.Label
	}
	return out
}

// HowToAnswer says what a waiting question takes, under its choices:
// "" on a card that takes no answer now (closed, superseded, an answer on
// its way) or shows no question (restricted).
func (c Card) HowToAnswer() string {
	q := c.Question
	if q == nil || q.Text == "" || c.Superseded || c.Deciding || (c.State != "" && c.State != approval.StatePending) {
		return ""
	}
	switch {
	case len(q.Choices) > 0 && q.FreeText:
		return "Answer with one of these, or in your own words."
	case len(q.Choices) > 0:
		return "Answer with one of these."
	case q.FreeText:
		return "Answer in your own words."
	}
	return ""
}
