package slack

import (
	"time"

	"golang.org/x/time/rate"
)

// Slack's limits and deadlines the adapter keeps to. slack-go checks none
// of them; the card's own limits live in package templates.
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
	// sectionTextMax: https://api.slack.com/reference/block-kit/blocks#section
	sectionTextMax = 3000
	// maxBlocks per message: https://api.slack.com/reference/block-kit/blocks
	maxBlocks = 50
	// modalTitleMax: https://api.slack.com/reference/surfaces/views
	modalTitleMax = 24
	// privateMetadataMax: https://api.slack.com/reference/surfaces/views
	privateMetadataMax = 3000
	// responseURLUses: a response_url takes five posts within 30 minutes:
	// https://api.slack.com/interactivity/handling#message_responses
	responseURLUses = 5
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
