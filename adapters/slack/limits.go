package slack

import (
	"time"

	"golang.org/x/time/rate"
)

// Slack's limits and deadlines; slack-go checks none of them. Lengths
// count as Slack does: UTF-16 code units (utf16text.Len).
const (
	// maxRequestBody bounds a body read before its signature is checked.
	maxRequestBody = 1 << 20
	// signatureWindow (slack-go checks it):
	// https://api.slack.com/authentication/verifying-requests-from-slack
	signatureWindow = 5 * time.Minute
	// ackWithin is how soon Slack wants an interaction acknowledged:
	// https://api.slack.com/interactivity/handling#acknowledgment_response
	ackWithin = 3 * time.Second
	// replayCheckBound is the replay check's part of the 3 s: with
	// threads.RecordBound (1 s) it leaves a second for the network.
	replayCheckBound = time.Second
	// socketAckMax bounds a Socket Mode ack's JSON; slack-go refuses
	// larger: https://api.slack.com/apis/socket-mode#acknowledge
	socketAckMax = 20 * 1024
	// modalTitleMax: https://api.slack.com/reference/surfaces/views
	modalTitleMax = 24
	// privateMetadataMax: https://api.slack.com/reference/surfaces/views
	privateMetadataMax = 3000
	// responseURLUses: a response_url takes five posts within 30 minutes:
	// https://api.slack.com/interactivity/handling#message_responses
	responseURLUses = 5
)

// Block Kit.
const (
	// maxBlocks per message: https://api.slack.com/reference/block-kit/blocks
	maxBlocks = 50
	// sectionTextMax: https://api.slack.com/reference/block-kit/blocks#section
	sectionTextMax = 3000
	// headerTextMax: https://api.slack.com/reference/block-kit/blocks#header
	headerTextMax = 150
	// contextElementsMax: https://api.slack.com/reference/block-kit/blocks#context
	contextElementsMax = 10
	// richTextMax: Slack documents none for rich_text; a section's 3,000
	// keeps one part from crowding the message.
	richTextMax = 3000
	// blocksTextMax bounds all of a message's blocks: undocumented (Slack
	// says msg_blocks_too_long); Slack's SDK maintainers name 12,000:
	// https://github.com/slackapi/bolt-js/issues/2509
	blocksTextMax = 12000
	// textObjectMax bounds any text object, context elements included:
	// https://api.slack.com/reference/block-kit/composition-objects#text
	textObjectMax = 3000
	// buttonTextMax, buttonValueMax, actionIDMax:
	// https://api.slack.com/reference/block-kit/block-elements#button
	buttonTextMax  = 75
	buttonValueMax = 2000
	actionIDMax    = 255
	// actionsElementsMax: https://api.slack.com/reference/block-kit/blocks#actions
	actionsElementsMax = 25
	// confirmTitleMax, confirmTextMax, confirmButtonMax:
	// https://api.slack.com/reference/block-kit/composition-objects#confirm
	confirmTitleMax  = 100
	confirmTextMax   = 300
	confirmButtonMax = 30
	// messageTextMax bounds the top-level text of chat.postMessage,
	// which Slack cuts beyond: https://api.slack.com/methods/chat.postMessage#truncating
	messageTextMax = 40000
)

// Pace defaults. Slack allows about one chat.postMessage a second per
// channel, with short bursts
// (https://api.slack.com/methods/chat.postMessage#rate_limiting), and
// chat.update is Tier 3, about 50 a minute per workspace
// (https://api.slack.com/apis/rate-limits#tier_t3).
const (
	DefaultPerChannelRate rate.Limit = 1
	DefaultBurst                     = 3
	DefaultUpdateRate     rate.Limit = 50.0 / 60
	DefaultUpdateBurst               = 10
	// defaultRetryAfter is the wait for a 429 that names none.
	defaultRetryAfter = 30 * time.Second
)

// How long the work after an ack may take.
const (
	// decideTimeout bounds recording a click and answering it.
	decideTimeout = 20 * time.Second
	// modalTimeout bounds views.open: the trigger_id lasts 3 s.
	modalTimeout = ackWithin
	// showTimeout bounds an argument look-up and its answer; threads
	// bounds the look-up itself at 70 s.
	showTimeout = 90 * time.Second
	// commandTimeout bounds a slash command's answer.
	commandTimeout = 30 * time.Second
)
