package discordtest

import (
	"net/http"
	"time"

	"github.com/bwmarrin/discordgo"
)

// How a message was edited (Edit.Via).
const (
	// EditREST: PATCH /channels/{channel}/messages/{message}, with the bot
	// token.
	EditREST = "rest"
	// EditUpdate: an UPDATE_MESSAGE (type 7) answer to an interaction on
	// the message.
	EditUpdate = "update"
	// EditOriginal: PATCH /webhooks/{application}/{token}/messages/@original,
	// through the interaction's webhook.
	EditOriginal = "original"
)

// Edit is one change to a message, in the order the fake took it.
type Edit struct {
	Seq     int    // order among edits and follow-ups (Followup.Seq)
	Via     string // EditREST, EditUpdate or EditOriginal
	Token   string // the interaction's, for EditUpdate and EditOriginal
	At      time.Time
	Message Message // as it stood after the edit
}

// EditsOf lists the edits of a message, oldest first: every REST edit,
// UPDATE_MESSAGE answer and @original edit that changed it.
func (s *Server) EditsOf(messageID string) []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Edit
	for _, e := range s.edits {
		if e.Message.ID == messageID {
			out = append(out, e)
		}
	}
	return out
}

// Answered reports whether the interaction of token has had its first
// answer accepted.
func (s *Server) Answered(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.interactions[token]
	return in != nil && in.answered
}

func (s *Server) recordEdit(m *Message, via, token string) {
	s.editSeq++
	s.edits = append(s.edits, Edit{Seq: s.editSeq, Via: via, Token: token, At: time.Now(), Message: m.copy()})
}

// checkAnswerLocked applies Discord's rules for the first answer to in.
func (s *Server) checkAnswerLocked(in *interaction, raw []byte) string {
	if p := checkResponseBody(raw); p != "" {
		return p
	}
	return checkResponse(in.typ, in.message != "" && s.messageOfLocked(in) != nil, raw)
}

// acceptLocked takes a's first answer to in, checked, as Discord does: an
// UPDATE_MESSAGE edits the message the interaction is on, a MODAL is
// remembered for its submission (which is on the same message), and a
// message answer becomes the interaction's original message.
func (s *Server) acceptLocked(in *interaction, a *Answer, raw []byte) {
	in.answered, in.answer = true, a
	switch a.Type {
	case discordgo.InteractionResponseUpdateMessage:
		var resp struct {
			Data *messageBody `json:"data"`
		}
		m := s.messageOfLocked(in)
		if m != nil && parseJSON(raw, &resp) && resp.Data != nil {
			// An interaction's answer is the application's webhook
			// speaking: the bot's channel permissions do not apply.
			apply(m, resp.Data, discordgo.PermissionAll)
			m.Edits++
			s.recordEdit(m, EditUpdate, in.token)
		}
	case discordgo.InteractionResponseModal:
		if in.message != "" {
			s.modals[modalKey(in.user, a.CustomID)] = in.message
		}
	case discordgo.InteractionResponseChannelMessageWithSource, discordgo.InteractionResponseDeferredChannelMessageWithSource:
		in.original = &Message{ID: s.Snowflake(), ChannelID: in.channel, Content: a.Content, Embeds: a.Embeds,
			Flags: a.Flags, CreatedAt: time.Now()}
	}
	s.answered.Broadcast()
}

// messageOfLocked is the message in is on: a channel's, or the
// ephemeral one of a click on a private answer; nil for none.
func (s *Server) messageOfLocked(in *interaction) *Message {
	if m := s.messages[in.message]; m != nil {
		return m
	}
	return in.ephemeral
}

func modalKey(user, customID string) string { return user + "\x00" + customID }

// checkEditFlags: an edit may set or clear only SUPPRESS_EMBEDS (and the
// components v2 flag, which cannot be cleared); it cannot make a message
// ephemeral or anything else.
// https://discord.com/developers/docs/resources/message#edit-message-jsonform-params
func checkEditFlags(f discordgo.MessageFlags) string {
	if f&^(discordgo.MessageFlagsSuppressEmbeds|discordgo.MessageFlagsIsComponentsV2) != 0 {
		return "flags: an edit sets only SUPPRESS_EMBEDS"
	}
	return ""
}

// checkSendFlags: a new message may carry only SUPPRESS_EMBEDS,
// SUPPRESS_NOTIFICATIONS and the components v2 flag, and an interaction's
// answer or follow-up EPHEMERAL too.
// https://discord.com/developers/docs/resources/message#create-message-jsonform-params
// and https://discord.com/developers/docs/resources/webhook#execute-webhook-jsonform-params
func checkSendFlags(f discordgo.MessageFlags, ephemeral bool) string {
	allowed := discordgo.MessageFlagsSuppressEmbeds | discordgo.MessageFlagsSuppressNotifications | discordgo.MessageFlagsIsComponentsV2
	if ephemeral {
		allowed |= discordgo.MessageFlagsEphemeral
	}
	if f&^allowed != 0 {
		if ephemeral {
			return "flags: only SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS, EPHEMERAL and IS_COMPONENTS_V2"
		}
		return "flags: only SUPPRESS_EMBEDS, SUPPRESS_NOTIFICATIONS and IS_COMPONENTS_V2"
	}
	return ""
}

// suppressed says whether a message with flags f shows its embeds:
// SUPPRESS_EMBEDS hides every one, the sender's own too, not only link
// previews.
func suppressed(f discordgo.MessageFlags) bool { return f&discordgo.MessageFlagsSuppressEmbeds != 0 }

// originalEdit is PATCH /webhooks/{application}/{token}/messages/@original:
// Edit Original Interaction Response. It edits the interaction's original
// message while the token lives (15 minutes): for a component interaction
// answered with an update (deferred or not), the message the component is
// on; for a message answer, that answer. A modal is no message.
// https://discord.com/developers/docs/interactions/receiving-and-responding#edit-original-interaction-response
func (s *Server) originalEdit(w http.ResponseWriter, r *http.Request) {
	b, ok := s.readMessage(w, r)
	if !ok {
		return
	}
	if p := checkEditFlags(b.Flags); p != "" {
		writeInvalid(w, p)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	in, ok := s.webhookOf(w, r)
	if !ok {
		return
	}
	var m *Message
	switch in.answer.Type {
	case discordgo.InteractionResponseDeferredMessageUpdate, discordgo.InteractionResponseUpdateMessage:
		m = s.messageOfLocked(in)
	case discordgo.InteractionResponseChannelMessageWithSource, discordgo.InteractionResponseDeferredChannelMessageWithSource:
		m = in.original
	}
	if m == nil {
		writeError(w, http.StatusNotFound, CodeUnknownMessage, "Unknown Message")
		return
	}
	apply(m, b, discordgo.PermissionAll)
	m.Edits++
	s.recordEdit(m, EditOriginal, in.token)
	writeJSON(w, http.StatusOK, s.messageJSON(m))
}

// componentsJSON is a message's components as Discord sends them: action
// rows of buttons or of a string select.
func componentsJSON(m *Message) []any {
	rows := make([]any, 0, m.Rows)
	for i := range m.Rows {
		var buttons []any
		for _, b := range m.Buttons {
			if b.Row != i {
				continue
			}
			button := map[string]any{"type": discordgo.ButtonComponent, "style": b.Style, "label": b.Label}
			if b.CustomID != "" {
				button["custom_id"] = b.CustomID
			}
			buttons = append(buttons, button)
		}
		for _, menu := range m.Menus {
			if menu.Row != i {
				continue
			}
			opts := make([]any, 0, len(menu.Options))
			for _, o := range menu.Options {
				opts = append(opts, map[string]any{"label": o.Label, "value": o.Value})
			}
			buttons = append(buttons, map[string]any{"type": discordgo.SelectMenuComponent, "custom_id": menu.CustomID,
				"placeholder": menu.Placeholder, "options": opts})
		}
		if len(buttons) > 0 {
			rows = append(rows, map[string]any{"type": discordgo.ActionsRowComponent, "components": buttons})
		}
	}
	return rows
}

// messageOfClick is the message a click in channel on customID is on: the
// newest message there carrying a button with that custom_id; "" for
// none (a forged click).
func (s *Server) messageOfClick(channel, customID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channels[channel]
	if c == nil {
		return ""
	}
	for i := len(c.order) - 1; i >= 0; i-- {
		m := s.messages[c.order[i]]
		for _, b := range m.Buttons {
			if b.CustomID == customID {
				return c.order[i]
			}
		}
		for _, menu := range m.Menus {
			if menu.CustomID == customID {
				return c.order[i]
			}
		}
	}
	return ""
}

// messageOfModal is the message the modal customID was opened from for
// user, taken once: a modal is submitted once.
func (s *Server) messageOfModal(user, customID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := modalKey(user, customID)
	id := s.modals[k]
	delete(s.modals, k)
	return id
}
