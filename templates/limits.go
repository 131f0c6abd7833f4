package templates

// The card's own bounds, the same on every surface so that every surface
// shows the same facts. The first three are the product's card rules
// (arguments cut at 2 KB, a patch likewise, at most 20 role rows); the
// rest keep one hostile field (a 64 KiB argument name, a thousand taint
// reasons) from crowding out the status, the effect line, the flags and
// the buttons. Lengths in characters are counted as the chats count
// them (charLen).
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
	// confirmTextMax bounds a confirm dialog's text: the strictest
	// chat's, Slack's 300 characters.
	confirmTextMax = 300
)
