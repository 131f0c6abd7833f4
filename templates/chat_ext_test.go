package templates_test

import (
	"approvalsbot/adapters/discord"
	"approvalsbot/templates"
)

func init() {
	templates.UseDiscord(func(c templates.Card) (any, any) {
		m := discord.RenderCard(c)
		return m, m.Edit()
	}, func(m templates.ThreadMessage) any { return discord.RenderThread(m) })
}
