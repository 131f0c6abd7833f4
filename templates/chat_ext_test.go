package templates_test

import (
	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/slack"
	"approvalsbot/templates"
)

func init() {
	templates.UseChats(templates.Chats{
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
	})
}

func marshal(v any) string {
	b, err := templates.MarshalPreview(v)
	if err != nil {
		panic(err) // slack-go's blocks always marshal
	}
	return string(b)
}
