package slack

import (
	"time"

	"golang.org/x/time/rate"
)

// Slack's limits and deadlines the adapter keeps to. Slack rejects (or
// silently cuts) a message that breaks one, and slack-go checks none of
// them. Lengths are counted as Slack counts them: in characters of a
// JavaScript string (UTF-16 code units, chunk.Len).
const (
	// maxRequestBody bounds an interaction or command body, read once
	// before its signature is checked. Slack's are a few KB.
	maxRequestBody = 1 << 20
	// signatureWindow is how old a signed request may be; slack-go's
	// verifier checks it:
	// https://api.slack.com/authentication/verifying-requests-from-slack
	signatureWindow = 5 * time.Minute
	// ackWithin is how soon Slack wants an interaction acknowledged:
	// https://api.slack.com/interactivity/handling#acknowledgment_response
	ackWithin = 3 * time.Second
	// replayCheckBound is what the replay check (one store write) may
	// take of the 3 s; a store slower than that is refused with 503,
	// nothing done. With the record's own bound (threads.RecordBound,
	// 1 s) it leaves a second for the network.
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
	// richTextMax bounds the text of one rich_text block. Slack documents
	// no limit of its own for rich_text
	// (https://api.slack.com/reference/block-kit/blocks#rich_text); a
	// section's 3,000 keeps one part from crowding the message.
	richTextMax = 3000
	// blocksTextMax bounds the text of all of a message's blocks
	// together. Slack refuses more with msg_blocks_too_long; the limit is
	// not documented, and Slack's SDK maintainers name 12,000 characters
	// with room left for the blocks' own fields:
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
	// decideTimeout bounds recording a click (threads.Click only
	// records and enqueues) and answering it.
	decideTimeout = 20 * time.Second
	// modalTimeout bounds views.open: the trigger_id expires 3 s after the
	// click.
	modalTimeout = ackWithin
	// showTimeout bounds an argument look-up and its answer; threads
	// bounds the look-up itself at 70 s.
	showTimeout = 90 * time.Second
	// commandTimeout bounds a slash command's answer.
	commandTimeout = 30 * time.Second
)
