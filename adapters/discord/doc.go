// Package discord is the bot's Discord surface, on discordgo: it posts each
// card (an embed with its buttons) to the tenant's channels
// (discord:channel:ID) and starts a thread from the card's message for
// everything that follows (the backend's messages, outcomes, escalations
// that mention users and roles, a reasked card); for discord:user:ID it
// sends the card into a DM, with working buttons; discord:role:ID is only
// ever mentioned. It edits every copy when the approval moves, posts
// audit notices and digests, and answers one person privately
// (ephemeral follow-ups, or a DM once the interaction's token has lapsed).
//
// Interactions arrive over one of two transports, never both (Discord
// stops sending them over the gateway once an Interactions Endpoint URL is
// set): the signed HTTP endpoint POST /discord/interactions when a public
// key is configured (Ed25519 over the timestamp and the raw body, the
// timestamp no older than five minutes, PING answered with PONG), or the
// gateway otherwise, where exactly one replica holds the connection
// (GatewayLocker). Both feed one handler, which answers within Discord's
// 3 s with no I/O but local store reads and the record of a decision (a
// deferred update, an ephemeral sentence, the card updated in place, or
// a modal: Deny's reason, Approve with comment…, and the confirmation a
// destructive call's Approve asks first, since a Discord button cannot
// ask again as Slack's confirm dialog does) and does the work afterwards,
// following up through the interaction's webhook within its 15 minutes.
// /approvals list and /approvals ladder (a command with subcommands,
// registered at start by Run and by RegisterCommands) answer the
// tenant's members alone, as Slack's /approvals does.
//
// Every body the adapter sends is one of its own wire types (wire.go),
// with exactly the fields Discord's API documents: discordgo v0.29's own
// bodies carry nulls and fields the API does not take, and it knows no
// label component, so its request functions carry the bot's bodies and
// its types read Discord's answers. The card and the thread replies are
// laid out here (RenderCard, RenderThread) from package templates'
// platform-neutral card and thread lines.
//
// The adapter decides nothing about approvals: threads.Service does (who
// may decide, self-approval, typed confirmations, superseded cards,
// digests, one decision at a time); the adapter shows its sentences. The
// tenant of a click is read from the store's approval, which came from the
// backend's signed event, never from the click. Like alertmanager's
// integrations it classifies its own failures for the outbox: a 429 is
// threads.RetryAfter with Discord's retry_after, a 4xx no retry can fix
// (Unknown Channel, Missing Access, Missing Permissions, …)
// threads.Permanent, and 5xx and network errors stay plain (retried).
// Calls are paced per channel with golang.org/x/time/rate, so a burst of
// cards drains at Discord's pace instead of in a storm of 429s.
//
// Package discordtest holds a fake Discord (REST, gateway, signed
// interactions) for tests.
package discord
