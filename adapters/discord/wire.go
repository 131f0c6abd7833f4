package discord

import (
	"encoding/json"
	"errors"
)

// Discord's wire format for what the bot sends and what it reads of an
// interaction, with exactly the fields Discord's API documents, which
// discordgo v0.29's types cannot say: docs/design.md#discords-wire-types.

// Message flags the bot sets and reads:
// https://discord.com/developers/docs/resources/message#message-object-message-flags
const (
	flagSuppressEmbeds = 1 << 2
	flagEphemeral      = 1 << 6
)

// Message is a new message: a create, an interaction's follow-up, or a
// message answer (type 4). A field left empty is not sent.
type Message struct {
	Content         string           `json:"content,omitempty"`
	Embeds          []Embed          `json:"embeds,omitempty"`
	Components      []Component      `json:"components,omitempty"`
	AllowedMentions *AllowedMentions `json:"allowed_mentions,omitempty"`
	Flags           int              `json:"flags,omitempty"`
}

// MessageEdit replaces a message's content, embeds and components (an
// edit, or an UPDATE_MESSAGE answer); both lists are always sent, so a
// decided card's buttons go. Build one with Message.Edit.
type MessageEdit struct {
	Content         string           `json:"content"`
	Embeds          []Embed          `json:"embeds"`
	Components      []Component      `json:"components"`
	AllowedMentions *AllowedMentions `json:"allowed_mentions,omitempty"`
}

// Edit is m as the edit of a posted message.
func (m *Message) Edit() *MessageEdit {
	e := &MessageEdit{Content: m.Content, Embeds: m.Embeds, Components: m.Components, AllowedMentions: m.AllowedMentions}
	if e.Embeds == nil {
		e.Embeds = []Embed{}
	}
	if e.Components == nil {
		e.Components = []Component{}
	}
	return e
}

// Embed is a rich embed: the fields a card uses.
type Embed struct {
	Title       string       `json:"title,omitempty"`
	URL         string       `json:"url,omitempty"`
	Description string       `json:"description,omitempty"`
	Color       int          `json:"color,omitempty"`
	Footer      *EmbedFooter `json:"footer,omitempty"`
}

// EmbedFooter is an embed's footer.
type EmbedFooter struct {
	Text string `json:"text"`
}

// AllowedMentions says whom a message may ping. Parse is always sent:
// empty, it parses no mention, so only Users and Roles ping.
type AllowedMentions struct {
	Parse []string `json:"parse"`
	Users []string `json:"users,omitempty"`
	Roles []string `json:"roles,omitempty"`
}

// noMentions pings nobody.
func noMentions() *AllowedMentions {
	return &AllowedMentions{Parse: []string{}}
}

// Component types:
// https://discord.com/developers/docs/components/reference#component-object-component-types
const (
	componentActionRow   = 1
	componentButton      = 2
	componentTextInput   = 4
	componentTextDisplay = 10
	componentLabel       = 18
)

// Button styles and text input styles:
// https://discord.com/developers/docs/components/reference#button-button-styles
const (
	buttonSecondary = 2
	buttonSuccess   = 3
	buttonDanger    = 4

	textInputParagraph = 2
)

// Component is one of the component types below; each writes its "type".
type Component interface {
	json.Marshaler
	component()
}

// ActionRow holds a message's buttons (at most five). It is not used in
// modals, where Discord has deprecated it for Label.
type ActionRow struct {
	Components []Component
}

// Button is a button that sends its CustomID back when clicked.
type Button struct {
	Style    int
	Label    string
	CustomID string
}

// Label is a modal's field: label, optional description, and its input.
type Label struct {
	Label       string
	Description string
	Component   Component
}

// TextInput is a text field of a modal, inside a Label (which carries
// its label: a text input in a label takes none).
type TextInput struct {
	CustomID    string
	Style       int
	Placeholder string
	MaxLength   int
	Required    bool
}

// TextDisplay is markdown text in a modal.
type TextDisplay struct {
	Content string
}

func (ActionRow) component()   {}
func (Button) component()      {}
func (Label) component()       {}
func (TextInput) component()   {}
func (TextDisplay) component() {}

// MarshalJSON writes an action row; its components are always an array.
func (r ActionRow) MarshalJSON() ([]byte, error) {
	c := r.Components
	if c == nil {
		c = []Component{}
	}
	return json.Marshal(struct {
		Type       int         `json:"type"`
		Components []Component `json:"components"`
	}{componentActionRow, c})
}

// MarshalJSON writes a button.
func (b Button) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type     int    `json:"type"`
		Style    int    `json:"style"`
		Label    string `json:"label,omitempty"`
		CustomID string `json:"custom_id"`
	}{componentButton, b.Style, b.Label, b.CustomID})
}

// MarshalJSON writes a label.
func (l Label) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        int       `json:"type"`
		Label       string    `json:"label"`
		Description string    `json:"description,omitempty"`
		Component   Component `json:"component"`
	}{componentLabel, l.Label, l.Description, l.Component})
}

// MarshalJSON writes a text input; required is always said, since
// Discord's default is true.
func (t TextInput) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type        int    `json:"type"`
		CustomID    string `json:"custom_id"`
		Style       int    `json:"style"`
		Placeholder string `json:"placeholder,omitempty"`
		MaxLength   int    `json:"max_length,omitempty"`
		Required    bool   `json:"required"`
	}{componentTextInput, t.CustomID, t.Style, t.Placeholder, t.MaxLength, t.Required})
}

// MarshalJSON writes a text display.
func (t TextDisplay) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Type    int    `json:"type"`
		Content string `json:"content"`
	}{componentTextDisplay, t.Content})
}

// Interaction and answer types:
// https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-object-interaction-type
const (
	interactionPing         = 1
	interactionCommand      = 2
	interactionComponent    = 3
	interactionAutocomplete = 4
	interactionModalSubmit  = 5

	answerPong            = 1
	answerMessage         = 4
	answerDeferredMessage = 5
	answerDeferredUpdate  = 6
	answerUpdate          = 7
	answerChoices         = 8
	answerModal           = 9
)

// answer is an interaction's first answer (Data nil: PONG, deferred update).
type answer struct {
	Type int `json:"type"`
	Data any `json:"data,omitempty"`
}

// flagsOnly is a deferred message answer's data (ephemeral or not).
type flagsOnly struct {
	Flags int `json:"flags,omitempty"`
}

// modal is a modal's data: at most five labels or text displays (action
// rows in modals are deprecated).
type modal struct {
	CustomID   string      `json:"custom_id"`
	Title      string      `json:"title"`
	Components []Component `json:"components"`
}

// choices answers autocomplete; the bot offers none.
type choices struct {
	Choices []struct{} `json:"choices"`
}

// inbound is what the bot reads of an interaction, from either transport.
type inbound struct {
	ID            string          `json:"id"`
	ApplicationID string          `json:"application_id"`
	Type          int             `json:"type"`
	Token         string          `json:"token"`
	ChannelID     string          `json:"channel_id"`
	GuildID       string          `json:"guild_id"`
	Member        *inboundMember  `json:"member"`
	User          *inboundUser    `json:"user"`
	Data          json.RawMessage `json:"data"`
	// Message is the message whose component was used; its flags say
	// whether it was ephemeral (the bot's private answer).
	Message *inboundMessage `json:"message"`
}

type inboundMessage struct {
	Flags int `json:"flags"`
}

// fromPrivateAnswer reports whether the component is on an ephemeral message.
func (in *inbound) fromPrivateAnswer() bool {
	return in.Message != nil && in.Message.Flags&flagEphemeral != 0
}

type inboundMember struct {
	User *inboundUser `json:"user"`
}

type inboundUser struct {
	ID string `json:"id"`
}

// user is who sent the interaction: the member's user, or the DM's user.
func (in *inbound) user() string {
	switch {
	case in.Member != nil && in.Member.User != nil:
		return in.Member.User.ID
	case in.User != nil:
		return in.User.ID
	}
	return ""
}

// componentData is a click's data.
type componentData struct {
	CustomID      string `json:"custom_id"`
	ComponentType int    `json:"component_type"`
	// Values are a string select's chosen options' values.
	Values []string `json:"values"`
}

// modalData is a modal's submission: its components as submitted, each
// a label holding its input (or, from a modal of an older release, an
// action row holding it), text displays as they were.
type modalData struct {
	CustomID   string      `json:"custom_id"`
	Components []submitted `json:"components"`
}

type submitted struct {
	Type       int         `json:"type"`
	CustomID   string      `json:"custom_id"`
	Value      string      `json:"value"`
	Component  *submitted  `json:"component"`
	Components []submitted `json:"components"`
}

// value finds a text input's value among a submission's components.
func value(cs []submitted, id string) string {
	for _, c := range cs {
		switch {
		case c.Type == componentTextInput && c.CustomID == id:
			return c.Value
		case c.Component != nil:
			if v := value([]submitted{*c.Component}, id); v != "" {
				return v
			}
		case len(c.Components) > 0:
			if v := value(c.Components, id); v != "" {
				return v
			}
		}
	}
	return ""
}

// commandData is a slash command's data, with the subcommand chosen.
type commandData struct {
	Name    string          `json:"name"`
	Type    int             `json:"type"`
	Options []commandOption `json:"options"`
}

type commandOption struct {
	Name    string          `json:"name"`
	Type    int             `json:"type"`
	Options []commandOption `json:"options"`
}

var errNoData = errors.New("the interaction carries no data")

// data decodes the interaction's data into v.
func (in *inbound) data(v any) error {
	if len(in.Data) == 0 || string(in.Data) == "null" {
		return errNoData
	}
	return json.Unmarshal(in.Data, v)
}

// messageAnswer is an ephemeral or public message as an answer.
func messageAnswer(m *Message) *answer {
	return &answer{Type: answerMessage, Data: m}
}
