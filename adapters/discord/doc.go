// Package discord is the bot's Discord surface, on discordgo: it posts
// each card (an embed with its buttons) to channels, with a thread for
// what follows, and to DMs; edits every copy as the approval moves;
// mentions users and roles in the thread; posts notices and digests; and
// answers one person privately. Interactions come over the signed HTTP
// endpoint or the gateway, into one handler that answers within Discord's
// 3 s; it decides nothing about approvals (threads.Service does). Every
// body it sends is one of its own wire types (wire.go). The why:
// docs/design.md#cards-and-the-chat-platforms.
//
// Package discordtest holds a fake Discord (REST, gateway, signed
// interactions) for tests.
package discord
