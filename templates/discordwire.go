package templates

import "encoding/json"

// Discord's wire format for what the bot sends: message bodies and the
// components of messages and modals, with exactly the fields Discord's
// API documents (checked field by field against discord-api-types 0.38:
// RESTPostAPIChannelMessageJSONBody, RESTPatchAPIChannelMessageJSONBody,
// RESTPostAPIWebhookWithTokenJSONBody, APIInteractionResponseCallbackData,
// APIModalInteractionResponseCallbackData and the component types of
// payloads/v10/message.ts) and no other.
//
// discordgo v0.29 cannot say these bodies: its MessageSend has no
// omitempty on embeds, components and sticker_ids, so every message
// without them carries "embeds": null, "components": null and
// "sticker_ids": null, which the API's types do not take (each is an
// optional array, never null); InteractionResponseData always carries
// "tts", "content", "embeds" and "components", which a modal must not
// carry; WebhookParams carries "components": null; MessageEdit marshals
// its ID and Channel as keys of the body; and it knows no label
// component (type 18), which replaces action rows in modals (action rows
// there are deprecated). So the bot sends these types through
// discordgo's request functions, and reads Discord's answers with
// discordgo's types.

// Discord message flags the bot sets:
// https://discord.com/developers/docs/resources/message#message-object-message-flags
const (
	DiscordFlagSuppressEmbeds = 1 << 2
	DiscordFlagEphemeral      = 1 << 6
)

// DiscordMessage is a new message: a create (POST
// /channels/{id}/messages), an interaction's follow-up (POST
// /webhooks/{app}/{token}) or a message answer to an interaction (type
// 4). A field left empty is not sent.
type DiscordMessage struct {
	Content         string                  `json:"content,omitempty"`
	Embeds          []DiscordEmbed          `json:"embeds,omitempty"`
	Components      []DiscordComponent      `json:"components,omitempty"`
	AllowedMentions *DiscordAllowedMentions `json:"allowed_mentions,omitempty"`
	Flags           int                     `json:"flags,omitempty"`
}

// DiscordEdit replaces a message's content, embeds and components: an
// edit (PATCH /channels/{id}/messages/{id}, PATCH …/messages/@original)
// or the data of an UPDATE_MESSAGE answer (type 7). Embeds and
// components are always sent, as arrays (an empty one removes them all):
// a decided card's buttons go. Build one with DiscordMessage.Edit.
type DiscordEdit struct {
	Content         string                  `json:"content"`
	Embeds          []DiscordEmbed          `json:"embeds"`
	Components      []DiscordComponent      `json:"components"`
	AllowedMentions *DiscordAllowedMentions `json:"allowed_mentions,omitempty"`
}

// Edit is m as the edit of a posted message.
func (m *DiscordMessage) Edit() *DiscordEdit {
	e := &DiscordEdit{Content: m.Content, Embeds: m.Embeds, Components: m.Components, AllowedMentions: m.AllowedMentions}
	if e.Embeds == nil {
		e.Embeds = []DiscordEmbed{}
	}
	if e.Components == nil {
		e.Components = []DiscordComponent{}
	}
	return e
}

// DiscordEmbed is a rich embed: the fields a card uses.
type DiscordEmbed struct {
	Title       string              `json:"title,omitempty"`
	URL         string              `json:"url,omitempty"`
	Description string              `json:"description,omitempty"`
	Color       int                 `json:"color,omitempty"`
	Footer      *DiscordEmbedFooter `json:"footer,omitempty"`
}

// DiscordEmbedFooter is an embed's footer.
type DiscordEmbedFooter struct {
	Text string `json:"text"`
}

// DiscordAllowedMentions says whom a message may ping. Parse is always
// sent: an empty list parses no mention from the content, so only Users
// and Roles ping.
type DiscordAllowedMentions struct {
	Parse []string `json:"parse"`
	Users []string `json:"users,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

// DiscordNoMentions pings nobody.
func DiscordNoMentions() *DiscordAllowedMentions {
	return &DiscordAllowedMentions{Parse: []string{}}
}

// Discord component types:
// https://discord.com/developers/docs/components/reference#component-object-component-types
const (
	DiscordActionRowType   = 1
	DiscordButtonType      = 2
	DiscordTextInputType   = 4
	DiscordTextDisplayType = 10
	DiscordLabelType       = 18
)

// Button styles and text input styles:
// https://discord.com/developers/docs/components/reference#button-button-styles
const (
	DiscordButtonPrimary   = 1
	DiscordButtonSecondary = 2
	DiscordButtonSuccess   = 3
	DiscordButtonDanger    = 4

	DiscordTextInputShort     = 1
	DiscordTextInputParagraph = 2
)

// DiscordComponent is one of the component types below; each writes its
// own "type".
type DiscordComponent interface {
	json.Marshaler
	discordComponent()
}

// DiscordActionRow holds a message's buttons (at most five). It is not
// used in modals, where Discord has deprecated it for DiscordLabel.
type DiscordActionRow struct {
	Components []DiscordComponent
}

// DiscordButton is a button that sends its CustomID back when clicked.
type DiscordButton struct {
	Style    int
	Label    string
	CustomID string
}

// DiscordLabel is a modal's field: its label, an optional description,
// and the input it labels.
type DiscordLabel struct {
	Label       string
	Description string
	Component   DiscordComponent
}

// DiscordTextInput is a text field of a modal, inside a DiscordLabel
// (which carries its label: a text input in a label takes none).
type DiscordTextInput struct {
	CustomID    string
	Style       int
	Placeholder string
	MaxLength   int
	Required    bool
}

// DiscordTextDisplay is markdown text in a modal.
type DiscordTextDisplay struct {
	Content string
}

func (DiscordActionRow) discordComponent()   {}
func (DiscordButton) discordComponent()      {}
func (DiscordLabel) discordComponent()       {}
func (DiscordTextInput) discordComponent()   {}
func (DiscordTextDisplay) discordComponent() {}

// MarshalJSON writes an action row; its components are always an array.
func (r DiscordActionRow) MarshalJSON() ([]byte, error) {
	c := r.Components
	if c == nil {
		c = []DiscordComponent{}
	}
	return json.Marshal(struct {
		Type       int                `json:"type"`
		Components []DiscordComponent `json:"components"`
	}{DiscordActionRowType, c})
}

// MarshalJSON writes a button.
func (b DiscordButton) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type     int    `json:"type"`
		Style    int    `json:"style"`
		Label    string `json:"label,omitempty"`
		CustomID string `json:"custom_id"`
	}{DiscordButtonType, b.Style, b.Label, b.CustomID})
}

// MarshalJSON writes a label.
func (l DiscordLabel) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        int              `json:"type"`
		Label       string           `json:"label"`
		Description string           `json:"description,omitempty"`
		Component   DiscordComponent `json:"component"`
	}{DiscordLabelType, l.Label, l.Description, l.Component})
}

// MarshalJSON writes a text input; required is always said, since
// Discord's default is true.
func (t DiscordTextInput) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        int    `json:"type"`
		CustomID    string `json:"custom_id"`
		Style       int    `json:"style"`
		Placeholder string `json:"placeholder,omitempty"`
		MaxLength   int    `json:"max_length,omitempty"`
		Required    bool   `json:"required"`
	}{DiscordTextInputType, t.CustomID, t.Style, t.Placeholder, t.MaxLength, t.Required})
}

// MarshalJSON writes a text display.
func (t DiscordTextDisplay) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type    int    `json:"type"`
		Content string `json:"content"`
	}{DiscordTextDisplayType, t.Content})
}
