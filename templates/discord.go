package templates

import (
	"strconv"
	"strings"
)

// Colours of a Discord embed's edge, by tone.
var discordColors = map[Tone]int{
	TonePending:  0xE8A33D,
	ToneApproved: 0x2EB67D,
	ToneDenied:   0xE01E5A,
	ToneClosed:   0x8D8D8D,
}

const (
	discordPartSep = "\n\n"
	discordLeftOut = "*[%s left out to fit Discord; the console shows all]*"
)

// Discord renders c as a message: the status line as the content (on top,
// pinging nobody), one embed whose title is the function and whose
// description holds the card's parts in docs/cards.md's order, and the buttons
// in action rows. The description is fitted to Discord's limits by
// cutting the bulkiest parts first; the status, the effect line, the flags
// and the buttons always survive. Post it as it is; edit a posted card
// with its Edit, which removes buttons that are gone.
func (r *Renderer) Discord(c Card) *DiscordMessage {
	content := cutText(part(r.discord, "card.content", &c), discordContentMax, discordCutMarker, trimDiscord)
	parts := make([]textPart, 0, len(cardParts))
	for _, name := range cardParts {
		parts = append(parts, textPart{name, part(r.discord, name, &c)})
	}
	title := cutLine(c.Function, discordEmbedTitleMax)
	footer := cutLine(part(r.discord, "card.footer", &c), discordEmbedFooterMax)
	budget := min(discordEmbedDescriptionMax, discordEmbedTotalMax-charLen(title)-charLen(footer))
	parts = fitParts(parts, discordPartSep, budget, discordCutMarker, discordLeftOut, trimDiscord)
	// fitParts always fits today (every part can shrink far below the
	// budget); this cut keeps the limit whatever the parts become.
	desc := cutText(joinParts(parts, discordPartSep), budget, discordCutMarker, trimDiscord)

	embed := DiscordEmbed{
		Title:       title,
		URL:         c.ConsoleURL,
		Description: desc,
		Color:       discordColors[c.Tone],
	}
	if footer != "" {
		embed.Footer = &DiscordEmbedFooter{Text: footer}
	}
	return &DiscordMessage{
		Content:    content,
		Embeds:     []DiscordEmbed{embed},
		Components: discordButtons(c.Buttons),
		// A card pings nobody: its text comes from the backend and the agent.
		AllowedMentions: DiscordNoMentions(),
	}
}

// discordButtons lays the buttons out in rows of at most five.
func discordButtons(buttons []Button) []DiscordComponent {
	var rows []DiscordComponent
	var row DiscordActionRow
	for _, b := range buttons {
		if len(b.Payload) > discordCustomIDMax {
			continue // unreachable for a valid action: EncodeAction stays within 100
		}
		style := DiscordButtonSecondary
		switch b.Style {
		case StylePrimary:
			style = DiscordButtonSuccess
		case StyleDanger:
			style = DiscordButtonDanger
		}
		row.Components = append(row.Components, DiscordButton{
			Label:    cutLine(b.Label, discordButtonLabelMax),
			Style:    style,
			CustomID: b.Payload,
		})
		if len(row.Components) == discordButtonsPerRow {
			rows = append(rows, row)
			row = DiscordActionRow{}
		}
	}
	if len(row.Components) > 0 {
		rows = append(rows, row)
	}
	if len(rows) > discordRowsMax {
		rows = rows[:discordRowsMax]
	}
	return rows
}

// Discord's timestamp styles
// (https://discord.com/developers/docs/reference#message-formatting-timestamp-styles):
// the date and the short time ("20 April 2021 16:20"), in each reader's
// own zone and locale. The date is always there: whether a time is today
// depends on the reader's zone, not the tenant's, so the card's own text
// (dated only off the tenant's day) cannot decide it for them, and
// Discord has no style that says "today".
const discordDateStyle = "f"

// discordTimestamp is a time a card prints as Discord's <t:UNIX:STYLE>.
func discordTimestamp(st Stamp) string {
	return "<t:" + strconv.FormatInt(st.At.Unix(), 10) + ":" + discordDateStyle + ">"
}

// discordTimed escapes s as esc does, each of its times (at, as
// Card.Times has them) a timestamp, which Discord shows in each reader's
// own zone; its escaped < cannot start one, so only the card's own times
// are timestamps. A time that is not where it says in s stays text.
func discordTimed(s string, at []Stamp) string {
	var b strings.Builder
	pos := 0
	for _, t := range at {
		end := t.Off + len(t.Text)
		if t.Text == "" || t.Off < pos || end > len(s) || s[t.Off:end] != t.Text {
			continue
		}
		// What follows a timestamp goes on its line: escaped as the
		// line's own text, never as a line's start.
		b.WriteString(discordEscapeFrom(s[pos:t.Off], angleLink, pos == 0))
		b.WriteString(discordTimestamp(t))
		pos = end
	}
	b.WriteString(discordEscapeFrom(s[pos:], angleLink, pos == 0))
	return b.String()
}
