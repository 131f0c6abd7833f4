package ladder

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ChatSurface is a chat platform the bot posts cards to and takes clicks
// from, as the core sees it: the name its targets, members' ids and clicks
// go by, the kind of target that reaches one of its users, how a user id
// is written, and how long the handle a click leaves works. Package config
// reads members' ids and package threads looks clickers up, answers them
// and drops their handles through these entries, so a new chat surface is
// one more entry in chatSurfaces (with its target kinds and their text
// forms, in ladder.go) and no change to either. The values come only from
// ChatSurfaces and ChatSurfaceNamed.
type ChatSurface struct {
	// Name is the surface's name: what Target.Surface says of its
	// targets, the key of a member's id in the config file (members[].slack)
	// and in a frozen rotation, and the surface a click made on it names.
	Name string
	// Title is the platform's name in a sentence ("Slack").
	Title string
	// UserKind is the kind of target that reaches one of its users, by
	// the bare id a member's entry holds.
	UserKind TargetKind
	// UserIDRule says which bare ids are user ids there, for errors:
	// "a Slack user id (U… or W…)".
	UserIDRule string
	// HandleLifetime is how long the handle a click leaves for answering
	// the person alone later (a Slack response_url, a Discord interaction
	// token) works; retention drops a handle once it has lapsed.
	HandleLifetime time.Duration

	// validUserID reports whether a bare id is a user id there.
	validUserID func(id string) bool
	// prefixed says how to write a member's id that was written as a
	// target (slack:U…), or "" when written has no such prefix.
	prefixed func(written string) string
}

// chatSurfaces is the registry, in the order members' ids are listed and
// a rotation member's chat users are tried.
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

// ChatSurfaces lists every chat surface, Slack first, then Discord. The
// slice is the caller's own.
func ChatSurfaces() []ChatSurface { return slices.Clone(chatSurfaces) }

// ChatSurfaceNamed is the chat surface called name; email, the deadline
// and any other name are none.
func ChatSurfaceNamed(name string) (ChatSurface, bool) {
	for _, c := range chatSurfaces {
		if c.Name == name {
			return c, true
		}
	}
	return ChatSurface{}, false
}

// User is the target that reaches the user with the bare id on this
// surface: slack:U… on Slack, discord:user:… on Discord.
func (c ChatSurface) User(id string) Target { return Target{Kind: c.UserKind, ID: id} }

// ValidUserID reports whether id is a bare user id on this surface.
func (c ChatSurface) ValidUserID(id string) bool { return c.validUserID != nil && c.validUserID(id) }

// ParseUserID reads a member's user id as the config file writes it:
// bare, as the platform shows it. Its error says how to write it when it
// was written as a target (slack:U…, discord:user:…), or that it is no
// user id there (UserIDRule).
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

// ChatIDs are a person's bare user ids on the chat surfaces they are on,
// keyed by the surface's name: {"slack": "U0KEVIN", "discord":
// "223344556677889900"}. A surface they are not on has no key, and a
// person on none has a nil map.
type ChatIDs map[string]string

// Users are the targets that reach the person on each chat surface they
// are on, in ChatSurfaces order.
func (c ChatIDs) Users() []Target {
	var out []Target
	for _, s := range chatSurfaces {
		if id := c[s.Name]; id != "" {
			out = append(out, s.User(id))
		}
	}
	return out
}

// UserOn is the target that reaches the person on the chat surface
// called surface, if they are on it.
func (c ChatIDs) UserOn(surface string) (Target, bool) {
	s, ok := ChatSurfaceNamed(surface)
	if !ok || c[surface] == "" {
		return Target{}, false
	}
	return s.User(c[surface]), true
}
