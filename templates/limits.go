package templates

// The card's own bounds, the same on every surface. The first three are
// the product's card rules; the rest keep one hostile field (a 64 KiB
// argument name) from crowding out the status, effect line, flags and
// buttons. Characters are counted as the chats count them (charLen).
const (
	// argumentsPreviewMax is the arguments' "cut at 2 KB", pretty-printed.
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
	// listMax bounds the lines of one list before "and N more".
	listMax = 10
	// filesMax bounds the files of a changeset shown.
	filesMax = 20
	// quorumActorMax bounds one approver's name on the quorum line, whose
	// listMax names then stay far below a Slack rich text block's 3,000
	// characters and Discord's 4,096 of an embed.
	quorumActorMax = 64
	// statusMax bounds the status line (a long comment is cut).
	statusMax = 400
	// messageMax bounds a backend message shown on a card or in a thread.
	messageMax = 1500
	// planStepsMax, planSkippedMax (steps listed) and planWhoMax keep the
	// plan line under about 2,000 characters, whatever the ladder.
	planStepsMax   = 5
	planSkippedMax = 5
	planWhoMax     = 120
	// confirmTextMax is the strictest chat's confirm text: Slack's 300.
	confirmTextMax = 300
)
