package templates

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
// description holds the card's parts in CARD.md's order, and the buttons
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
