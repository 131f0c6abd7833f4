package templates

// The Discord adapter lays out the card and the thread replies itself,
// and imports this package. chat_ext_test.go (package templates_test)
// registers its renderings here, so that this package's tests across
// every surface (hidden characters, secrets, restricted content, hostile
// cards, a fired step editing no card) hold for Discord too; what only
// Discord shows is tested in its adapter.
var discordSurface struct {
	card   func(Card) (msg, edit any)
	thread func(ThreadMessage) any
}

// UseDiscord registers Discord's renderings: a card as its message and
// that message's edit, a thread reply as its message.
func UseDiscord(card func(Card) (msg, edit any), thread func(ThreadMessage) any) {
	discordSurface.card, discordSurface.thread = card, thread
}

// discordCard is c as Discord posts it.
func discordCard(c Card) any {
	m, _ := discordSurface.card(c)
	return m
}
