package discord

import (
	"encoding/json"
	"errors"

	"approvalsbot/templates"
)

// The adapter's own wire types for what it sends and reads of an
// interaction, beside the message bodies of package templates. Like
// those, they carry exactly the fields Discord's API documents (checked
// against discord-api-types 0.38: APIInteractionResponse and its
// callback data, APIModalInteractionResponseCallbackData,
// APIInteraction, APIModalSubmission, RESTPutAPIApplicationCommandsJSONBody),
// because discordgo v0.29 cannot: its InteractionResponseData sends
// "tts", "content", "embeds" and "components" in a modal, nulls where
// the API wants a field absent, and knows no label component, so its
// Interaction cannot even decode a submitted modal that has one (the
// whole interaction fails on "unknown component type: 18").

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

// answer is an interaction's first answer. Data is one of *answerData's
// kinds below, or nil for PONG and a deferred update.
type answer struct {
	Type int `json:"type"`
	Data any `json:"data,omitempty"`
}

// flagsOnly is the data of a deferred message answer: whether the
// message that follows is ephemeral.
type flagsOnly struct {
	Flags int `json:"flags,omitempty"`
}

// modal is a modal's data: at most five labels or text displays (action
// rows in modals are deprecated).
type modal struct {
	CustomID   string                       `json:"custom_id"`
	Title      string                       `json:"title"`
	Components []templates.DiscordComponent `json:"components"`
}

// choices answers autocomplete; the bot offers none.
type choices struct {
	Choices []struct{} `json:"choices"`
}

// inbound is what the bot reads of an interaction, from either
// transport.
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

// messageEphemeral is Discord's EPHEMERAL message flag (1 << 6).
const messageEphemeral = 1 << 6

// fromPrivateAnswer reports whether the component used is on an
// ephemeral message: a private answer of the bot's.
func (in *inbound) fromPrivateAnswer() bool {
	return in.Message != nil && in.Message.Flags&messageEphemeral != 0
}

type inboundMember struct {
	User *inboundUser `json:"user"`
}

type inboundUser struct {
	ID string `json:"id"`
}

// user is who sent the interaction: the member's user in a guild, the
// user in a DM.
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
		case c.Type == templates.DiscordTextInputType && c.CustomID == id:
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

// commandData is a slash command's data: its name and, for a command
// with subcommands, the one chosen.
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
func messageAnswer(m *templates.DiscordMessage) *answer {
	return &answer{Type: answerMessage, Data: m}
}
