package templates

import (
	"github.com/bwmarrin/discordgo"
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
// description holds the card's parts in CARD.md's order, and the buttons
// in action rows. The description is fitted to Discord's limits by
// cutting the bulkiest parts first; the status, the effect line, the flags
// and the buttons always survive. The result serves ChannelMessageSendComplex
// as is, and an edit through DiscordEdit.
func (r *Renderer) Discord(c Card) *discordgo.MessageSend {
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

	embed := &discordgo.MessageEmbed{
		Title:       title,
		URL:         c.ConsoleURL,
		Description: desc,
		Color:       discordColors[c.Tone],
	}
	if footer != "" {
		embed.Footer = &discordgo.MessageEmbedFooter{Text: footer}
	}
	return &discordgo.MessageSend{
		Content:    content,
		Embeds:     []*discordgo.MessageEmbed{embed},
		Components: discordButtons(c.Buttons),
		// A card pings nobody: its text comes from the backend and the agent.
		AllowedMentions: &discordgo.MessageAllowedMentions{Parse: []discordgo.AllowedMentionType{}},
	}
}

// DiscordEdit turns a rendered message into the edit of a posted one.
// Components are always set, so a decided card's buttons are removed.
func DiscordEdit(m *discordgo.MessageSend, channelID, messageID string) *discordgo.MessageEdit {
	e := discordgo.NewMessageEdit(channelID, messageID)
	content := m.Content
	embeds := m.Embeds
	components := m.Components
	if components == nil {
		components = []discordgo.MessageComponent{}
	}
	e.Content = &content
	e.Embeds = &embeds
	e.Components = &components
	e.AllowedMentions = m.AllowedMentions
	return e
}

// discordButtons lays the buttons out in rows of at most five.
func discordButtons(buttons []Button) []discordgo.MessageComponent {
	var rows []discordgo.MessageComponent
	var row discordgo.ActionsRow
	for _, b := range buttons {
		if len(b.Payload) > discordCustomIDMax {
			continue // unreachable for a valid action: EncodeAction stays within 100
		}
		style := discordgo.SecondaryButton
		switch b.Style {
		case StylePrimary:
			style = discordgo.SuccessButton
		case StyleDanger:
			style = discordgo.DangerButton
		}
		row.Components = append(row.Components, discordgo.Button{
			Label:    cutLine(b.Label, discordButtonLabelMax),
			Style:    style,
			CustomID: b.Payload,
		})
		if len(row.Components) == discordButtonsPerRow {
			rows = append(rows, row)
			row = discordgo.ActionsRow{}
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
