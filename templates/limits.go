package templates

// Platform limits. Slack rejects (or silently cuts) a message that breaks
// one, and slack-go checks none of them, so the renderer does (Discord's
// are its adapter's). Lengths are counted as the platforms count them: in
// characters of a JavaScript string (UTF-16 code units), see charLen.

// Slack Block Kit.
const (
	// slackMaxBlocks: https://api.slack.com/reference/block-kit/blocks
	slackMaxBlocks = 50
	// slackSectionTextMax: https://api.slack.com/reference/block-kit/blocks#section
	slackSectionTextMax = 3000
	// slackHeaderTextMax: https://api.slack.com/reference/block-kit/blocks#header
	slackHeaderTextMax = 150
	// slackContextElementsMax: https://api.slack.com/reference/block-kit/blocks#context
	slackContextElementsMax = 10
	// slackRichTextMax bounds the text of one rich_text block. Slack
	// documents no limit of its own for rich_text
	// (https://api.slack.com/reference/block-kit/blocks#rich_text); a
	// section's 3,000 keeps one part from crowding the message.
	slackRichTextMax = 3000
	// slackBlocksTextMax bounds the text of all of a message's blocks
	// together. Slack refuses more with msg_blocks_too_long; the limit is
	// not documented, and Slack's SDK maintainers name 12,000 characters
	// with room left for the blocks' own fields:
	// https://github.com/slackapi/bolt-js/issues/2509
	slackBlocksTextMax = 12000
	// slackTextObjectMax bounds any text object, context elements included:
	// https://api.slack.com/reference/block-kit/composition-objects#text
	slackTextObjectMax = 3000
	// slackButtonTextMax, slackButtonValueMax, slackActionIDMax:
	// https://api.slack.com/reference/block-kit/block-elements#button
	slackButtonTextMax  = 75
	slackButtonValueMax = 2000
	slackActionIDMax    = 255
	// slackActionsElementsMax: https://api.slack.com/reference/block-kit/blocks#actions
	slackActionsElementsMax = 25
	// slackConfirmTitleMax, slackConfirmTextMax, slackConfirmButtonMax:
	// https://api.slack.com/reference/block-kit/composition-objects#confirm
	slackConfirmTitleMax  = 100
	slackConfirmTextMax   = 300
	slackConfirmButtonMax = 30
	// slackMessageTextMax bounds the top-level text of chat.postMessage,
	// which Slack cuts beyond: https://api.slack.com/methods/chat.postMessage#truncating
	slackMessageTextMax = 40000
)

// The card's own bounds, the same on every surface so that every surface
// shows the same facts. The first three are the product's card rules
// (arguments cut at 2 KB, a patch likewise, at most 20 role rows); the
// rest keep one hostile field (a 64 KiB argument name, a thousand taint
// reasons) from crowding out the status, the effect line, the flags and
// the buttons.
const (
	// argumentsPreviewMax is the arguments' "cut at 2 KB", in bytes of the
	// pretty-printed projection.
	argumentsPreviewMax = 2048
	// patchPreviewMax cuts a changeset's patch the same way.
	patchPreviewMax = 2048
	// roleRowsMax is the roles' "at most 20 rows".
	roleRowsMax = 20
	// agentSaysMax bounds the agent's text, in characters.
	agentSaysMax = 1500
	// roleValueMax bounds one shown value of a marked argument.
	roleValueMax = 120
	// lineMax bounds one line of flags, who asks, files and titles.
	lineMax = 200
	// listMax bounds the lines of one list (flags, reasons, waiting calls)
	// before "and N more".
	listMax = 10
	// filesMax bounds the files of a changeset shown.
	filesMax = 20
	// statusMax bounds the status line (a long comment is cut).
	statusMax = 400
	// messageMax bounds a backend message shown on a card or in a thread.
	messageMax = 1500
	// planStepsMax bounds the steps that run the plan line lists before
	// "and N more steps", planSkippedMax the skipped ones; planWhoMax
	// bounds whom one step tells. Together they keep the plan line under
	// about 2,000 characters, whatever the ladder.
	planStepsMax   = 5
	planSkippedMax = 5
	planWhoMax     = 120
)
