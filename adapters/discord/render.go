package discord

import (
	"regexp"
	"strconv"
	"strings"

	"approvalsbot/adapters/chunk"
	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
)

// The card and thread replies as Discord markdown, from the neutral card.
// Everything from the backend, the agent or a person goes through escape,
// timed or chunk.Fence, links through linkEscaper: only this file's own
// markup is live.

// Colours of a card embed's edge, by tone.
var toneColors = map[templates.Tone]int{
	templates.TonePending:  0xE8A33D,
	templates.ToneApproved: 0x2EB67D,
	templates.ToneDenied:   0xE01E5A,
	templates.ToneClosed:   0x8D8D8D,
}

const (
	partSep   = "\n\n"
	cutMarker = "*[cut to fit Discord; the console shows all]*"
	leftOut   = "*[%s left out to fit Discord; the console shows all]*"
)

// RenderCard renders c as a message: the status as its content, one
// embed with the function as title and the parts fitted to Discord's
// limits (templates.FitParts), and the buttons in rows. Edit a posted
// card with the message's Edit, which removes buttons that are gone.
func RenderCard(c templates.Card) *Message {
	content := utf16text.Fit(trimLines(cardContent(&c)), contentMax, cutMarker, trimCut)
	names := templates.CardParts()
	parts := make([]templates.Part[string], 0, len(names))
	seps := -utf16text.Len(partSep) // between the parts shown
	for _, name := range names {
		text := trimLines(cardPart(name, &c))
		if text != "" {
			seps += utf16text.Len(partSep)
		}
		parts = append(parts, templates.Part[string]{Name: name, Content: text})
	}
	title, footer := c.Function, cardFooter(&c)
	if c.Question != nil {
		title, footer = escape(templates.VisibleLine(c.QuestionTitle())), questionFooterText(&c)
	}
	title, footer = utf16text.Cut(title, embedTitleMax), utf16text.Cut(trimLines(footer), embedFooterMax)
	budget := min(embedDescriptionMax, embedTotalMax-utf16text.Len(title)-utf16text.Len(footer))
	templates.FitParts(parts, budget-seps, fitText)
	// FitParts always fits today (every part can shrink far below the
	// budget); this cut keeps the limit whatever the parts become.
	desc := utf16text.Fit(joinParts(parts), budget, cutMarker, trimCut)

	embed := Embed{
		Title:       title,
		URL:         c.ConsoleURL,
		Description: desc,
		Color:       toneColors[c.Tone],
	}
	if footer != "" {
		embed.Footer = &EmbedFooter{Text: footer}
	}
	components := cardButtons(c.Buttons)
	if c.Question != nil {
		components = choiceRows(c.Question.Choices, c.Buttons)
	}
	return &Message{
		Content:    content,
		Embeds:     []Embed{embed},
		Components: components,
		// A card pings nobody: its text comes from the backend and the agent.
		AllowedMentions: noMentions(),
	}
}

// trimLines drops the blank lines around a part.
func trimLines(s string) string { return strings.Trim(s, "\n") }

// fitText cuts a part's markdown as Discord reads it; a part cut or
// left out is never empty, so the separators between parts stay as many.
var fitText = templates.Fitter[string]{
	Len:     utf16text.Len,
	Cut:     func(s string, max int) string { return utf16text.Fit(s, max, cutMarker, trimCut) },
	LeftOut: func(what string) string { return strings.ReplaceAll(leftOut, "%s", what) },
}

func joinParts(parts []templates.Part[string]) string {
	texts := make([]string, len(parts))
	for i, p := range parts {
		texts[i] = p.Content
	}
	return joinNonEmpty(texts...)
}

// cardContent is the status in bold, then the lines that follow it.
func cardContent(c *templates.Card) string {
	s := "**" + timed(c.Status, c.Times.Status) + "**" + with("\n", timed(c.StatusDetail, c.Times.StatusDetail), "") +
		answerLines(c) + with("\n", escape(c.Message), "") + with("\n*", escape(c.StatusNote), "*") +
		with("\n👀 ", timed(c.Looking, c.Times.Looking), "")
	for i, e := range c.Escalated {
		s += "\n🚨 " + timed(e, c.Times.EscalatedLine(i))
	}
	return s
}

// cardFooter names the approval, its revision and its tenant; a footer
// reads no markdown.
func cardFooter(c *templates.Card) string {
	if c.ApprovalID == "" {
		return ""
	}
	return "approval " + c.ApprovalID + " · revision " + strconv.Itoa(c.Revision) + with(" · tenant ", c.Tenant, "")
}

// with is pre+s+post, or "" for no s.
func with(pre, s, post string) string {
	if s == "" {
		return ""
	}
	return pre + s + post
}

// each is every item escaped, each after pre and before post.
func each(items []string, pre, post string) string {
	var s string
	for _, it := range items {
		s += pre + escape(it) + post
	}
	return s
}

// code is s in a ``` block of the given language, after a newline.
func code(lang, s string) string { return "\n```" + lang + "\n" + chunk.Fence(s) + "\n```" }

// cardParts writes each of templates.CardParts.
var cardParts = map[string]func(c *templates.Card) string{
	"card.meta":   metaPart,
	"card.quorum": quorumPart,
	"card.effect": func(c *templates.Card) string { return with("**", escape(c.Effect), "**") },
	"card.flags":  func(c *templates.Card) string { return each(c.Flags, "\n⚠️ ", "") },
	"card.asked":  func(c *templates.Card) string { return escape(c.AskedBy) + each(c.Reasons, "\n• ", "") },
	"card.warning": func(c *templates.Card) string {
		return each(c.Warnings, "\n⚠️ **", "**")
	},
	"card.reask":   reaskPart,
	"card.args":    argsPart,
	"card.digest":  digestPart,
	"card.roles":   rolesPart,
	"card.changes": changesPart,
	"card.patch":   patchPart,
	// The agent's text is quoted, every line of it, so none escapes the
	// quote into the card.
	"card.agent": func(c *templates.Card) string {
		return with("**The agent says**\n> ", strings.ReplaceAll(escape(c.AgentSays), "\n", "\n> "), "")
	},
	"card.turn": func(c *templates.Card) string { return escape(c.Turn) },
	"card.ladder": func(c *templates.Card) string {
		ladder, note := timed(c.Ladder, c.Times.Ladder), escape(c.LadderNote)
		if ladder != "" && note != "" {
			return ladder + "\n" + note
		}
		return ladder + note
	},
	"card.confirm": func(c *templates.Card) string {
		if c.ConfirmLine == "" {
			return ""
		}
		return "🔒 **" + escape(c.ConfirmLine) + "**" + with("\n[Open it in the console](", linkEscaper.Replace(c.ConsoleURL), ")")
	},
	"card.restricted": func(c *templates.Card) string { return with("🔒 *", escape(c.RestrictedNote), "*") },
}

// cardPart writes the part of that name; a name it does not know (a
// part added to the card but not here) is left out, and a test fails.
func cardPart(name string, c *templates.Card) string {
	if c.Question != nil && name == "card.agent" {
		return questionPart(c)
	}
	if f, ok := cardParts[name]; ok {
		return f(c)
	}
	return ""
}

func metaPart(c *templates.Card) string {
	job := escape(c.Job.ID)
	if c.Job.URL != "" {
		job = "[" + job + "](" + linkEscaper.Replace(c.Job.URL) + ")"
	}
	return "job " + job + with(" · started by ", escape(c.Job.StartedBy), "") + with(" · agent ", escape(c.Job.Agent), "") +
		with(" · ", escape(c.Job.Level), "")
}

// quorumPart names people by the ids the backend or config gave:
// escaped as the status's actor is, each time a timestamp.
func quorumPart(c *templates.Card) string { return timed(c.Quorum, c.Times.Quorum) }

func reaskPart(c *templates.Card) string {
	r := c.Reask
	if r == nil {
		return ""
	}
	s := "🔁 **" + escape(r.Line) + "**"
	if len(r.Changes) > 0 {
		s += code("", strings.Join(r.Changes, "\n"))
	}
	return s + with("\n", escape(r.Note), "")
}

func argsPart(c *templates.Card) string {
	a := c.Arguments
	if a == nil {
		return ""
	}
	s := "**Arguments**" + with(" (", escape(a.Marks), ")")
	if a.JSON != "" {
		s += code("json", a.JSON)
	}
	return s + with("\n", escape(a.CutNote), "")
}

// digestPart shows the arguments' digest and the function's snapshot:
// a digest in a code span, a snapshot that is none ("not given") as text.
func digestPart(c *templates.Card) string {
	s := with("digest `", c.Digest, "`")
	if c.Digest != "" && c.Snapshot != "" {
		s += "\n"
	}
	if approval.ValidDigest(c.Snapshot) {
		return s + "snapshot `" + c.Snapshot + "`"
	}
	return s + with("snapshot ", escape(c.Snapshot), "")
}

func rolesPart(c *templates.Card) string {
	r := c.Roles
	if r == nil {
		return ""
	}
	s := "**Argument roles**"
	if r.Table != "" {
		s += code("", r.Table)
	}
	return s + each(r.Notes, "\n", "")
}

func changesPart(c *templates.Card) string {
	ch := c.Changes
	if ch == nil {
		return ""
	}
	s := "**Changes** · " + escape(ch.Summary) + with("\n⚠️ **", escape(ch.ProtectedNote), "**") + with("\n", escape(ch.GovernanceNote), "")
	for _, f := range ch.Files {
		s += "\n• "
		if f.Protected {
			s += "**protected** "
		}
		// A path is shown exactly, in a code span; one holding a
		// backtick cannot be, and is shown escaped.
		if f.Path == "" || strings.Contains(f.Path, "`") {
			s += escape(f.Path)
		} else {
			s += "`" + f.Path + "`"
		}
	}
	return s + with("\n", escape(ch.FilesNote), "")
}

func patchPart(c *templates.Card) string {
	ch := c.Changes
	if ch == nil || ch.Patch == "" {
		return ""
	}
	return "**Patch**" + code("diff", ch.Patch) + with("\n", escape(ch.PatchCutNote), "") + with("\npatch digest `", ch.PatchDigest, "`")
}

// cardButtons lays the buttons out in rows of at most five, and at most
// Discord's five rows.
func cardButtons(buttons []templates.Button) []Component {
	rows := buttonRows(buttons)
	if len(rows) > rowsMax {
		rows = rows[:rowsMax]
	}
	return rows
}

// buttonRows lays the buttons out in rows of at most five.
func buttonRows(buttons []templates.Button) []Component {
	var rows []Component
	var row ActionRow
	for _, b := range buttons {
		if len(b.Payload) > customIDMax {
			continue // unreachable: templates.MaxActionLen is Discord's custom_id
		}
		style := buttonSecondary
		switch b.Style {
		case templates.StylePrimary:
			style = buttonSuccess
		case templates.StyleDanger:
			style = buttonDanger
		}
		row.Components = append(row.Components, Button{
			Label:    utf16text.Cut(b.Label, buttonLabelMax),
			Style:    style,
			CustomID: b.Payload,
		})
		if len(row.Components) == buttonsPerRow {
			rows = append(rows, row)
			row = ActionRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	return rows
}

// dateStyle always names the day (docs/cards.md#times-on-a-card):
// https://discord.com/developers/docs/reference#message-formatting-timestamp-styles
const dateStyle = "f"

// timestamp is a time a card prints as Discord's <t:UNIX:STYLE>.
func timestamp(st templates.Stamp) string {
	return "<t:" + strconv.FormatInt(st.At.Unix(), 10) + ":" + dateStyle + ">"
}

// timed escapes s as escape does, each of its times a timestamp shown in
// the reader's zone; its escaped < starts none, so only the card's own
// times are timestamps, and one not where it says in s stays text.
func timed(s string, at []templates.Stamp) string {
	var b strings.Builder
	lineStart := true
	for text, t := range templates.Spans(s, at) {
		b.WriteString(escapeWith(text, angleLink, lineStart))
		if t != nil {
			b.WriteString(timestamp(*t))
			// What follows a timestamp goes on its line: escaped as the
			// line's own text, never as a line's start.
			lineStart = false
		}
	}
	return b.String()
}

// snowflake is a Discord id: a user or a role a reply may ping.
var snowflake = regexp.MustCompile(`^[0-9]{1,20}$`)

// RenderThread renders a thread reply as Discord content. It pings
// exactly the users and roles it mentions, and nobody else; a mention of
// another surface, or a malformed one, shows as @name.
func RenderThread(m templates.ThreadMessage) *Message {
	l := m.Lines()
	var mentions, users, roles []string
	for _, mn := range l.Mentions {
		if id, ok := strings.CutPrefix(mn.Target, "discord:user:"); ok && snowflake.MatchString(id) {
			mentions, users = append(mentions, "<@"+id+">"), append(users, id)
		} else if id, ok := strings.CutPrefix(mn.Target, "discord:role:"); ok && snowflake.MatchString(id) {
			mentions, roles = append(mentions, "<@&"+id+">"), append(roles, id)
		} else {
			mentions = append(mentions, "@"+escape(mn.Name))
		}
	}
	if l.More != "" {
		mentions = append(mentions, l.More)
	}
	var s string
	switch l.Kind {
	case templates.ThreadEscalation:
		s = strings.Join(mentions, " ") + ": waiting " + l.Waited
		if l.By != "" {
			s += ", escalated now by " + escape(l.By)
		}
	case templates.ThreadRecheckRefused:
		if len(mentions) > 0 {
			s = strings.Join(mentions, " ") + " "
		}
		s += "**" + escape(l.Lead) + "**"
		if l.Text != "" {
			s += ": " + escape(l.Text)
		} else {
			s += "."
		}
	case templates.ThreadCancelled:
		s = "**Cancelled**"
		if l.Text != "" {
			s += ": " + escape(l.Text)
		}
	default:
		s = escape(l.Text)
	}
	return &Message{
		Content:         utf16text.Fit(trimLines(s), contentMax, cutMarker, trimCut),
		AllowedMentions: &AllowedMentions{Parse: []string{}, Users: users, Roles: roles},
	}
}
