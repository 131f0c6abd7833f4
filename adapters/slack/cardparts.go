package slack

import (
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/templates"
)

// elems is a part of a card being written, element by element; the
// card's text is cleaned already, and an empty text adds nothing.
type elems []elem

func (e *elems) text(s string)   { e.styled(s, nil) }
func (e *elems) bold(s string)   { e.styled(s, boldStyle) }
func (e *elems) italic(s string) { e.styled(s, italicStyle) }
func (e *elems) br()             { *e = append(*e, elem{kind: elemBreak}) }

func (e *elems) styled(s string, style *slackgo.RichTextSectionTextStyle) {
	if s != "" {
		*e = append(*e, elem{kind: elemText, text: s, style: style})
	}
}

// icon is an emoji by name and a space after it.
func (e *elems) icon(name string) {
	*e = append(*e, elem{kind: elemEmoji, text: name})
	e.text(" ")
}

// link is the bot's label linked to a checked URL, or the label alone.
func (e *elems) link(url, label string) {
	u := templates.Linkable(url)
	if u == "" {
		e.text(label)
		return
	}
	*e = append(*e, elem{kind: elemLink, url: u, text: label})
}

// box is a preformatted (elemPre) or quote (elemQuote) box of its own.
func (e *elems) box(kind elemKind, s string) {
	if s != "" {
		*e = append(*e, elem{kind: kind, text: s})
	}
}

// timed writes a line in a style, each of its times a date element (the
// line's text its fallback); a time not where it says in s stays text.
func (e *elems) timed(s string, style *slackgo.RichTextSectionTextStyle, at []templates.Stamp) {
	for text, t := range templates.Spans(s, at) {
		e.styled(text, style)
		if t != nil {
			*e = append(*e, elem{kind: elemDate, text: t.Text, unix: t.At.Unix(), format: dateFormat, style: style})
		}
	}
}

// statusElems is the status with the lines that follow it on a card.
func statusElems(c *templates.Card) elems {
	var e elems
	e.timed(c.Status, boldStyle, c.Times.Status)
	if c.StatusDetail != "" {
		e.br()
		e.timed(c.StatusDetail, nil, c.Times.StatusDetail)
	}
	if c.Message != "" {
		e.br()
		e.text(c.Message)
	}
	if c.StatusNote != "" {
		e.br()
		e.italic(c.StatusNote)
	}
	if c.Looking != "" {
		e.br()
		e.icon("eyes")
		e.timed(c.Looking, nil, c.Times.Looking)
	}
	for i, line := range c.Escalated {
		e.br()
		e.icon("rotating_light")
		e.timed(line, nil, c.Times.EscalatedLine(i))
	}
	return e
}

// partWriters write each part of templates.CardParts.
var partWriters = map[string]func(*elems, *templates.Card){
	"card.meta":       metaPart,
	"card.quorum":     func(e *elems, c *templates.Card) { e.timed(c.Quorum, nil, c.Times.Quorum) },
	"card.effect":     func(e *elems, c *templates.Card) { e.bold(c.Effect) },
	"card.flags":      func(e *elems, c *templates.Card) { warnings(e, c.Flags, e.text) },
	"card.asked":      askedPart,
	"card.warning":    func(e *elems, c *templates.Card) { warnings(e, c.Warnings, e.bold) },
	"card.reask":      reaskPart,
	"card.args":       argsPart,
	"card.digest":     digestPart,
	"card.roles":      rolesPart,
	"card.changes":    changesPart,
	"card.patch":      patchPart,
	"card.agent":      agentPart,
	"card.turn":       func(e *elems, c *templates.Card) { e.text(c.Turn) },
	"card.ladder":     ladderPart,
	"card.confirm":    confirmPart,
	"card.restricted": restrictedPart,
}

func metaPart(e *elems, c *templates.Card) {
	if c.Job.URL != "" {
		e.link(c.Job.URL, "job")
	} else {
		e.text("job")
	}
	e.text(" ")
	e.text(c.Job.ID)
	if c.Job.StartedBy != "" {
		e.text(" · started by ")
		e.text(c.Job.StartedBy)
	}
	if c.Job.Agent != "" {
		e.text(" · agent ")
		e.text(c.Job.Agent)
	}
	if c.Job.Level != "" {
		e.text(" · ")
		e.text(c.Job.Level)
	}
}

// warnings writes one line each, after a warning sign.
func warnings(e *elems, lines []string, write func(string)) {
	for i, l := range lines {
		if i > 0 {
			e.br()
		}
		e.icon("warning")
		write(l)
	}
}

func askedPart(e *elems, c *templates.Card) {
	e.text(c.AskedBy)
	for _, r := range c.Reasons {
		e.br()
		e.text("• ")
		e.text(r)
	}
}

func reaskPart(e *elems, c *templates.Card) {
	r := c.Reask
	if r == nil {
		return
	}
	e.icon("repeat")
	e.bold(r.Line)
	if len(r.Changes) > 0 {
		e.box(elemPre, strings.Join(r.Changes, "\n"))
	}
	e.text(r.Note)
}

func argsPart(e *elems, c *templates.Card) {
	a := c.Arguments
	if a == nil {
		return
	}
	e.bold("Arguments")
	if a.Marks != "" {
		e.text(" (")
		e.text(a.Marks)
		e.text(")")
	}
	e.box(elemPre, a.JSON)
	e.text(a.CutNote)
}

func digestPart(e *elems, c *templates.Card) {
	if c.Digest != "" {
		e.text("digest ")
		e.text(c.Digest)
	}
	if c.Digest != "" && c.Snapshot != "" {
		e.br()
	}
	if c.Snapshot != "" {
		e.text("snapshot ")
		e.text(c.Snapshot)
	}
}

func rolesPart(e *elems, c *templates.Card) {
	r := c.Roles
	if r == nil {
		return
	}
	e.bold("Argument roles")
	e.box(elemPre, r.Table)
	for i, n := range r.Notes {
		if i > 0 {
			e.br()
		}
		e.text(n)
	}
}

func changesPart(e *elems, c *templates.Card) {
	ch := c.Changes
	if ch == nil {
		return
	}
	e.bold("Changes")
	e.text(" · ")
	e.text(ch.Summary)
	if ch.ProtectedNote != "" {
		e.br()
		e.icon("warning")
		e.bold(ch.ProtectedNote)
	}
	if ch.GovernanceNote != "" {
		e.br()
		e.text(ch.GovernanceNote)
	}
	for _, f := range ch.Files {
		e.br()
		e.text("• ")
		if f.Protected {
			e.bold("protected")
			e.text(" ")
		}
		e.styled(f.Path, codeStyle)
	}
	if ch.FilesNote != "" {
		e.br()
		e.text(ch.FilesNote)
	}
}

func patchPart(e *elems, c *templates.Card) {
	ch := c.Changes
	if ch == nil || ch.Patch == "" {
		return
	}
	e.bold("Patch")
	e.box(elemPre, ch.Patch)
	if ch.PatchCutNote != "" {
		e.text(ch.PatchCutNote)
		e.br()
	}
	if ch.PatchDigest != "" {
		e.text("patch digest ")
		e.text(ch.PatchDigest)
	}
}

func agentPart(e *elems, c *templates.Card) {
	if c.Question != nil {
		// The question is the agent's words, in its box (question.go).
		questionPart(e, c.Question)
		return
	}
	if c.AgentSays != "" {
		e.bold("The agent says")
		e.box(elemQuote, c.AgentSays)
	}
}

func ladderPart(e *elems, c *templates.Card) {
	if c.Ladder != "" {
		e.timed(c.Ladder, nil, c.Times.Ladder)
	}
	if c.Ladder != "" && c.LadderNote != "" {
		e.text(" · ")
	}
	e.text(c.LadderNote)
}

func confirmPart(e *elems, c *templates.Card) {
	if c.ConfirmLine == "" {
		return
	}
	e.icon("lock")
	e.bold(c.ConfirmLine)
	if c.ConsoleURL != "" {
		e.br()
		e.link(c.ConsoleURL, "Open it in the console")
	}
}

func restrictedPart(e *elems, c *templates.Card) {
	if c.RestrictedNote != "" {
		e.icon("lock")
		e.italic(c.RestrictedNote)
	}
}
