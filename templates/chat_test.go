package templates

// The chat adapters lay out the card and the thread replies themselves,
// and import this package. chat_ext_test.go (package templates_test)
// registers their renderings here, so that this package's tests across
// every surface (hidden characters, secrets, restricted content, hostile
// cards, a fired step editing no card) hold for Slack and Discord too;
// what only one chat shows is tested in its adapter.

// Chats are the chat adapters' renderings: Slack's card and thread reply
// as the message's JSON (MarshalPreview) and its notification text,
// Discord's card as its message and that message's edit, and its thread
// reply as its message.
type Chats struct {
	SlackCard     func(Card) (json, text string)
	SlackThread   func(ThreadMessage) (json, text string)
	DiscordCard   func(Card) (msg, edit any)
	DiscordThread func(ThreadMessage) any
}

var chats Chats

// UseChats registers the chat adapters' renderings.
func UseChats(c Chats) { chats = c }

// discordCard is c as Discord posts it.
func discordCard(c Card) any {
	m, _ := chats.DiscordCard(c)
	return m
}
