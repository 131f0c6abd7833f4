package templates_test

import (
	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/slack"
	"approvalsbot/templates"
)

// chats are the chat adapters' renderings, so that this package's tests
// across every surface (hidden characters, secrets, restricted content,
// hostile cards, a fired step editing no card) hold for Slack and Discord
// too; what only one chat shows is tested in its adapter. Slack's card and
// thread reply are the message's JSON (MarshalPreview) and its
// notification text, Discord's card its message and that message's edit.
var chats = struct {
	SlackCard     func(templates.Card) (json, text string)
	SlackThread   func(templates.ThreadMessage) (json, text string)
	DiscordCard   func(templates.Card) (msg, edit any)
	DiscordThread func(templates.ThreadMessage) any
}{
	SlackCard: func(c templates.Card) (string, string) {
		m := slack.CardMessage(c)
		return marshal(m), m.Text
	},
	SlackThread: func(msg templates.ThreadMessage) (string, string) {
		m := slack.ThreadReply(msg)
		return marshal(m), m.Text
	},
	DiscordCard: func(c templates.Card) (any, any) {
		m := discord.RenderCard(c)
		return m, m.Edit()
	},
	DiscordThread: func(m templates.ThreadMessage) any { return discord.RenderThread(m) },
}

// discordCard is c as Discord posts it.
func discordCard(c templates.Card) any { return discord.RenderCard(c) }

func marshal(v any) string {
	b, err := templates.MarshalPreview(v)
	if err != nil {
		panic(err) // slack-go's blocks always marshal
	}
	return string(b)
}
