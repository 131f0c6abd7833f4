package ladder

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ChatSurface is a chat platform as the core sees it; a new platform is one
// more entry in chatSurfaces (docs/design.md#chat-surfaces). Values come
// only from ChatSurfaces and ChatSurfaceNamed.
type ChatSurface struct {
	// Name is what Target.Surface says, a member's id key (members[].slack),
	// and what a click made there names.
	Name string
	// Title is the platform's name in a sentence ("Slack").
	Title string
	// UserKind is the kind of target that reaches one of its users.
	UserKind TargetKind
	// UserIDRule says which bare ids are user ids there, for errors.
	UserIDRule string
	// HandleLifetime is how long the handle a click leaves (a response_url,
	// an interaction token) works; retention drops it after.
	HandleLifetime time.Duration

	// validUserID reports whether a bare id is a user id there.
	validUserID func(id string) bool
	// prefixed says how to write an id written as a target (slack:U…), or "".
	prefixed func(written string) string
}

// chatSurfaces is the registry, in the order a member's users are tried.
var chatSurfaces = []ChatSurface{
	{
		Name: SurfaceSlack, Title: "Slack", UserKind: KindSlackUser,
		UserIDRule: "a Slack user id (U… or W…)",
		// A response_url takes posts for 30 minutes:
		// https://api.slack.com/interactivity/handling#message_responses
		HandleLifetime: 30 * time.Minute,
		validUserID:    IsSlackUserID,
		prefixed: func(written string) string {
			if id, ok := strings.CutPrefix(written, "slack:"); ok {
				return "write the bare user id " + id + ", without slack:"
			}
			return ""
		},
	},
	{
		Name: SurfaceDiscord, Title: "Discord", UserKind: KindDiscordUser,
		UserIDRule: "a Discord user id (17 to 20 digits)",
		// An interaction token takes follow-ups for 15 minutes:
		// https://discord.com/developers/docs/interactions/receiving-and-responding#followup-messages
		HandleLifetime: 15 * time.Minute,
		validUserID:    IsSnowflake,
		prefixed: func(written string) string {
			if strings.HasPrefix(written, "discord:") {
				// discord:user:ID, or any discord: form a person may copy.
				return "write the bare user id, without " + written[:strings.LastIndexByte(written, ':')+1]
			}
			return ""
		},
	},
}

// ChatSurfaces lists every chat surface, Slack first, in a new slice.
func ChatSurfaces() []ChatSurface { return slices.Clone(chatSurfaces) }

// ChatSurfaceNamed is the chat surface called name, if any.
func ChatSurfaceNamed(name string) (ChatSurface, bool) {
	for _, c := range chatSurfaces {
		if c.Name == name {
			return c, true
		}
	}
	return ChatSurface{}, false
}

// User is the target that reaches the user with the bare id on this surface.
func (c ChatSurface) User(id string) Target { return Target{Kind: c.UserKind, ID: id} }

// ValidUserID reports whether id is a bare user id on this surface.
func (c ChatSurface) ValidUserID(id string) bool { return c.validUserID != nil && c.validUserID(id) }

// ParseUserID reads a member's user id, written bare as the platform shows
// it; its error says how to write one written as a target (slack:U…).
func (c ChatSurface) ParseUserID(written string) (string, error) {
	if c.prefixed != nil {
		if hint := c.prefixed(written); hint != "" {
			return "", errors.New(hint)
		}
	}
	if !c.ValidUserID(written) {
		return "", fmt.Errorf("%q is not %s", written, c.UserIDRule)
	}
	return written, nil
}

// ChatIDs are a person's bare user ids keyed by surface name
// ({"slack": "U0KEVIN"}); a person on none has a nil map.
type ChatIDs map[string]string

// Users are the targets that reach the person, in ChatSurfaces order.
func (c ChatIDs) Users() []Target {
	var out []Target
	for _, s := range chatSurfaces {
		if id := c[s.Name]; id != "" {
			out = append(out, s.User(id))
		}
	}
	return out
}

// UserOn is the target that reaches the person on surface, if any.
func (c ChatIDs) UserOn(surface string) (Target, bool) {
	s, ok := ChatSurfaceNamed(surface)
	if !ok || c[surface] == "" {
		return Target{}, false
	}
	return s.User(c[surface]), true
}
