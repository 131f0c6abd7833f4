package click

import (
	"fmt"

	"approvalsbot/threads"
)

// Sentences a person reads when the bot cannot take what they clicked.
// Threads words what it decides (a refusal, "Recorded: …"); these are
// what a surface says when threads never got the click.
const (
	SayUnknownButton = "This button is not one the bot knows; nothing was sent."
	// SayApproveFromAnswer answers the Approve of the private answer that
	// shows a restricted call (templates.ActionApproveSeen and its
	// comment's), pressed anywhere but on that answer: the bot only ever
	// puts it there, so the click is not a person's look at the call.
	SayApproveFromAnswer = "Approve from the private answer that shows you the call; nothing was sent."
	SayUnknownDialog     = "This dialog is not one the bot knows; nothing was sent."
	SayUnknownCard       = "The bot knows no such card; nothing was sent."
	SayStoreDown         = "The bot cannot read this card right now; try again in a moment. Nothing was sent."
	SayNotRecorded       = "The bot could not record your decision; try again in a moment. Nothing was sent."
	SayNotInTime         = "The bot could not record your decision in time (it is very busy); try again in a moment. Nothing was sent."
	// SayLadderNotRecorded is said when I'm looking or Escalate now could
	// not be recorded.
	SayLadderNotRecorded = "The bot could not record your click; try again in a moment. Nothing was recorded."
	SayLadderNotInTime   = "The bot could not record your click in time (it is very busy); try again in a moment. Nothing was recorded."
	SayLookupFailed      = "The arguments could not be looked up right now; try again in a moment."
	SayShuttingDown      = "The bot is shutting down; try again in a moment. Nothing was sent."
	SayReasonTooLong     = "The reason is longer than 1,000 characters; nothing was sent."
	// SayCommentTooLong is the same for an approval's comment.
	SayCommentTooLong = "The comment is longer than 1,000 characters; nothing was sent."
	SayDialogFailed   = "The dialog for the reason did not open; click Deny again. Nothing was sent."
	SayCannotCheck    = "The bot cannot check this request right now; try again in a moment. Nothing was sent."
)

// The reason dialog a click on Deny opens. A surface cuts what it shows
// to its own limits.
const (
	// SayReasonLabel names the reason's text field, which may stay
	// empty: Slack marks an optional field, Discord a required one, so the
	// label need not say it.
	SayReasonLabel = "Why not?"
	// SayReasonGoes says where the reason goes (beside the field, or as
	// its placeholder); SayReasonWithheld says it on a call whose content
	// is restricted, whose card and thread show no reason (ReasonHint).
	SayReasonGoes     = "Your reason goes to the job backend and into the card's thread."
	SayReasonWithheld = "Sent with your denial; its card and thread will not show it (this call's content is restricted)."
	// SayDenySubmit and SayDenyClose label the dialog's own buttons, on a
	// surface whose dialogs have them.
	SayDenySubmit = "Deny"
	SayDenyClose  = "Cancel"
)

// The dialog Approve with comment… opens, and on a surface whose buttons
// cannot ask again (Discord), the one a destructive call's Approve opens
// to confirm it. The comment may stay empty.
const (
	// SayCommentLabel names the comment's field.
	SayCommentLabel = "Comment"
	// SayCommentGoes says where the comment goes; SayCommentWithheld
	// says it on a call whose content is restricted, which keeps every
	// comment off shared places.
	SayCommentGoes     = "Optional. It goes to the job backend with your approval, and onto the card."
	SayCommentWithheld = "Optional. Sent with your approval; the card will not show it (this call's content is restricted)."
	// SayApproveSubmit labels the dialog's own button, on a surface
	// whose dialogs have them.
	SayApproveSubmit = "Approve"
	// SayConfirmTitle heads the confirmation of a destructive call.
	SayConfirmTitle = "Approve a destructive call?"
)

// ReasonHint says where a denial's reason goes: on a restricted call
// the card and its thread leave it out, so the dialog must not promise
// the thread.
func ReasonHint(restricted bool) string {
	if restricted {
		return SayReasonWithheld
	}
	return SayReasonGoes
}

// CommentHint says where an approval's comment goes, as ReasonHint.
func CommentHint(restricted bool) string {
	if restricted {
		return SayCommentWithheld
	}
	return SayCommentGoes
}

// ApproveTitle is the comment dialog's title: which call is approved.
func ApproveTitle(function string) string { return "Approve " + function }

// ApproveQuestion asks, above the comment's field, whether to approve the
// call, saying what it does when the effect line says anything; function
// and approvalID arrive as the surface shows them.
func ApproveQuestion(function, approvalID string, revision int, effect string) string {
	q := fmt.Sprintf("Approve %s (approval %s, revision %d)?", function, approvalID, revision)
	if effect != "" {
		q = fmt.Sprintf("%s is %s. Approve it (approval %s, revision %d)?", function, effect, approvalID, revision)
	}
	return q
}

// DenyTitle is the reason dialog's title: which call is denied.
func DenyTitle(function string) string { return "Deny " + function }

// DenyQuestion asks, above the reason's field, whether to deny the call,
// and says where the reason goes (ReasonHint); function and approvalID
// arrive as the surface shows them (escaped, the function in bold).
func DenyQuestion(function, approvalID string, revision int, restricted bool) string {
	return fmt.Sprintf("Deny %s (approval %s, revision %d)? %s", function, approvalID, revision, ReasonHint(restricted))
}

// What Show all arguments and Show details show, to the person who
// clicked alone. Their arguments arrive as the surface shows them
// (escaped, the function in bold).
const (
	// SayDetails heads the card shown with its restricted parts.
	SayDetails = "Details, only you see this."
	// SayNoArguments stands in for a call without arguments.
	SayNoArguments = "(no arguments)"
)

// ArgumentsHeading is the first line above a call's whole arguments.
func ArgumentsHeading(function, approvalID string, revision int) string {
	return fmt.Sprintf("Arguments of %s · approval %s, revision %d · only you see this", function, approvalID, revision)
}

// ArgumentsDigest names the digest the arguments shown match, and
// whether secrets were redacted from them.
func ArgumentsDigest(digest string, redacted bool) string {
	if redacted {
		return "digest " + digest + " · secrets are redacted"
	}
	return "digest " + digest
}

// ArgumentsPart heads each later part of arguments split over messages.
func ArgumentsPart(function string, part, of int) string {
	return fmt.Sprintf("Arguments of %s, part %d of %d", function, part, of)
}

// ArgumentsLeftOut closes the last part when the arguments do not all fit.
func ArgumentsLeftOut(characters int) string {
	return fmt.Sprintf("%d more characters are not shown: no more fit in one answer. Look at the call in the console for the rest.",
		characters)
}

// What a changeset's look-up shows below its arguments, and the Approve
// of a Reveal's answer.
const (
	// SayApproveShown labels the Approve a Reveal's answer ends with.
	SayApproveShown = "Approve"
	// SayApproveNoteShown labels its Approve with comment….
	SayApproveNoteShown = "Approve with comment…"
	// SayApproveShownLine stands above it.
	SayApproveShownLine = "Approve below decides the revision shown above, with its digest; nothing was sent yet."
)

// SayRevealTooLarge is a Reveal's whole answer when the call's content
// does not all fit in a chat answer: the person would approve what they
// were not shown, so none of it is shown and no Approve offered, and
// they are told where to decide it: the console (console is the
// approval's console_url, "" for none given), and the decision page when
// the tenant's escalation mail carries Approve links to it (mail).
func SayRevealTooLarge(console string, mail bool) string {
	where := "the console"
	if console != "" {
		where += " (" + console + ")"
	}
	if mail {
		where += ", or on the decision page from an escalation mail's Approve link"
	}
	return "This call's content is too large to show in chat, so it cannot be approved here: decide it in " + where + ". Nothing was sent."
}

// ShownText is what a look-up shows, as one literal text
// (threads.ShowResult.Text): the surface splits it over preformatted
// boxes as its limits need.
func ShownText(res threads.ShowResult) string { return res.Text() }
