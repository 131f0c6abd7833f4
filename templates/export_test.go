package templates

// Limits, words and functions the tests in package templates_test check
// the card against.
const (
	ListMax         = listMax
	LineMax         = lineMax
	RoleRowsMax     = roleRowsMax
	EmailSubjectMax = emailSubjectMax
	MailArgsCutNote = mailArgsCutNote
	RestrictedNote  = restrictedNote
	WithheldComment = withheldComment
	WithheldReason  = withheldReason
	WithheldRecheck = withheldRecheck
	LabelApprove    = labelApprove
	LabelDeny       = labelDeny
)

var Turn = turn
