package discord

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"golang.org/x/time/rate"
)

// Discord's limits and deadlines the adapter keeps to; discordgo checks
// none of them. Lengths are counted as Discord counts them: in UTF-16
// code units (package utf16text).
const (
	// maxRequestBody bounds an interaction body, read once before its
	// signature is checked. Discord's are a few KB.
	maxRequestBody = 1 << 20
	// signatureWindow is how old a signed interaction may be; Discord
	// signs the timestamp but discordgo does not check its age:
	// https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers
	signatureWindow = 5 * time.Minute
	// answerWithin is how soon Discord wants the first answer:
	// https://discord.com/developers/docs/interactions/receiving-and-responding#responding-to-an-interaction
	answerWithin = discordgo.InteractionDeadline
	// answerBudget bounds what the handler may do before answering (one
	// store read, for the deny modal), leaving the rest of the 3 s for
	// the network.
	answerBudget = 1500 * time.Millisecond
	// replayCheckBound is the part of answerBudget the replay check
	// (one store write) may take; a store slower than that is answered
	// "try again", nothing done.
	replayCheckBound = 400 * time.Millisecond
	// followupSettle is how long a follow-up is retried while Discord has
	// not yet recorded the HTTP answer it follows (Unknown Webhook).
	followupSettle = 5 * time.Second
	// contentMax: https://discord.com/developers/docs/resources/message#create-message-jsonform-params
	contentMax = 2000
	// Embed limits: https://discord.com/developers/docs/resources/message#embed-object-embed-limits
	embedTitleMax       = 256
	embedDescriptionMax = 4096
	embedFooterMax      = 2048
	// embedTotalMax bounds title, description, field names and values,
	// footer and author of all embeds of one message together (a card's
	// embed has a title, a description and a footer).
	embedTotalMax = 6000
	// Component limits: https://discord.com/developers/docs/components/reference#button
	// and https://discord.com/developers/docs/components/reference#action-row
	customIDMax    = 100
	buttonLabelMax = 80
	buttonsPerRow  = 5
	rowsMax        = 5
	// labelDescriptionMax: https://discord.com/developers/docs/components/reference#label
	labelDescriptionMax = 100
	// textDisplayMax bounds a modal's text display, kept far below
	// Discord's 4,000 characters.
	textDisplayMax = 1000
	// modalTitleMax, textInputLabelMax and textInputPlaceholderMax:
	// https://discord.com/developers/docs/interactions/receiving-and-responding#interaction-response-object-modal
	// and https://discord.com/developers/docs/components/reference#text-input
	modalTitleMax           = 45
	textInputLabelMax       = 45
	textInputPlaceholderMax = 100
	// threadNameMax: https://discord.com/developers/docs/resources/message#start-thread-from-message
	threadNameMax = 100
	// threadArchiveMinutes is the longest auto-archive Discord offers (a
	// week); a message into an archived thread reopens it anyway.
	threadArchiveMinutes = 10080
	// maxShowMessages bounds the follow-ups of one Show all arguments.
	maxShowMessages = 10
	// registerTimeout bounds the registration of /approvals at start.
	registerTimeout = 10 * time.Second
)

// How long the work after an answer may take.
const (
	// showTimeout bounds an argument look-up and its answer; threads
	// bounds the look-up itself at 70 s.
	showTimeout = 90 * time.Second
)

// Pace defaults. Discord publishes no fixed numbers, but message creates
// are limited per channel to about five every five seconds
// (https://discord.com/developers/docs/topics/rate-limits): one every
// 1.25 s with a burst of one never puts more than five in any five
// seconds.
const (
	DefaultPerChannelRate rate.Limit = 0.8 // one every 1.25 s
	DefaultBurst          int        = 1
	// defaultRetryAfter is the wait for a 429 that names none.
	defaultRetryAfter = 5 * time.Second
)

// Permissions are the bot permissions of exactly the calls the adapter
// makes, and no other:
//   - View Channel: every call on a channel (GET /channels/{id} in Doctor).
//   - Send Messages: cards, notices and digests (POST /channels/{id}/messages).
//   - Embed Links: a card is an embed; without it Discord drops the embed.
//   - Create Public Threads: the thread started from each card
//     (POST /channels/{id}/messages/{id}/threads).
//   - Send Messages in Threads: replies, escalations and reasked cards.
//
// Editing the bot's own messages, DMs, interaction answers and follow-ups
// need none. Read Message History is not asked for: no call reads a
// message the bot did not just send. Mentioning a role notifies only when
// the role is mentionable ("Allow anyone to @mention this role"); the bot
// does not ask for Mention Everyone to get around that.
const Permissions = int64(discordgo.PermissionViewChannel | discordgo.PermissionSendMessages |
	discordgo.PermissionEmbedLinks | discordgo.PermissionCreatePublicThreads |
	discordgo.PermissionSendMessagesInThreads)

// permissionNames names Permissions' bits, in the order the developer
// portal lists them.
var permissionNames = []struct {
	bit  int64
	name string
}{
	{discordgo.PermissionViewChannel, "View Channel"},
	{discordgo.PermissionSendMessages, "Send Messages"},
	{discordgo.PermissionSendMessagesInThreads, "Send Messages in Threads"},
	{discordgo.PermissionCreatePublicThreads, "Create Public Threads"},
	{discordgo.PermissionEmbedLinks, "Embed Links"},
}

// GatewayIntents are the intents the gateway session identifies with:
// none. INTERACTION_CREATE belongs to no intent and always arrives; the
// bot reads no guild, member or message events.
const GatewayIntents = discordgo.IntentsNone

// InviteURL is the link that adds the bot to a server with exactly
// Permissions.
func InviteURL(applicationID string) string {
	return fmt.Sprintf("https://discord.com/oauth2/authorize?client_id=%s&scope=bot+applications.commands&permissions=%s",
		applicationID, strconv.FormatInt(Permissions, 10))
}
