package discord

import (
	"fmt"
	"strconv"
	"time"

	"github.com/bwmarrin/discordgo"
	"golang.org/x/time/rate"
)

// Discord's limits and deadlines; discordgo checks none of them. Lengths
// count as Discord does: UTF-16 code units (package utf16text).
const (
	// maxRequestBody bounds a body read before its signature is checked.
	maxRequestBody = 1 << 20
	// signatureWindow: Discord signs the timestamp; discordgo ignores its age:
	// https://discord.com/developers/docs/interactions/overview#setting-up-an-endpoint-validating-security-request-headers
	signatureWindow = 5 * time.Minute
	// answerWithin is how soon Discord wants the first answer:
	// https://discord.com/developers/docs/interactions/receiving-and-responding#responding-to-an-interaction
	answerWithin = discordgo.InteractionDeadline
	// answerBudget bounds the handler's work before its answer, leaving
	// the rest of the 3 s for the network.
	answerBudget = 1500 * time.Millisecond
	// replayCheckBound is the replay check's part of answerBudget.
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
	// embedTotalMax bounds the text of all of a message's embeds together.
	embedTotalMax = 6000
	// Component limits: https://discord.com/developers/docs/components/reference#button
	// and https://discord.com/developers/docs/components/reference#action-row
	customIDMax    = 100
	buttonLabelMax = 80
	buttonsPerRow  = 5
	rowsMax        = 5
	// labelDescriptionMax: https://discord.com/developers/docs/components/reference#label
	labelDescriptionMax = 100
	// textDisplayMax is a modal's text, kept far below Discord's 4,000.
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

// Pace defaults: about five message creates every five seconds per
// channel (https://discord.com/developers/docs/topics/rate-limits), never
// exceeded at one every 1.25 s with a burst of one.
const (
	DefaultPerChannelRate rate.Limit = 0.8 // one every 1.25 s
	DefaultBurst          int        = 1
	// defaultRetryAfter is the wait for a 429 that names none.
	defaultRetryAfter = 5 * time.Second
)

// Permissions are the bot permissions of exactly the calls the adapter
// makes, and no other (docs/design.md#discord-permissions).
const Permissions = int64(discordgo.PermissionViewChannel | discordgo.PermissionSendMessages |
	discordgo.PermissionEmbedLinks | discordgo.PermissionCreatePublicThreads |
	discordgo.PermissionSendMessagesInThreads)

// permissionNames names Permissions' bits, in the developer portal's order.
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

// GatewayIntents are none: INTERACTION_CREATE belongs to no intent, and
// the bot reads no guild, member or message events.
const GatewayIntents = discordgo.IntentsNone

// InviteURL adds the bot to a server with exactly Permissions.
func InviteURL(applicationID string) string {
	return fmt.Sprintf("https://discord.com/oauth2/authorize?client_id=%s&scope=bot+applications.commands&permissions=%s",
		applicationID, strconv.FormatInt(Permissions, 10))
}
