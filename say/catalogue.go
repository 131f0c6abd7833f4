package say

import (
	"fmt"
	"strings"
)

// String words the reason for the person who clicked.
func (r Reason) String() string {
	if r.Act == Answering || r.Kind >= AnswerSending {
		if q := r.question(); q != "" {
			return q
		}
	}
	switch r.Kind {
	case UnknownButton:
		return "This button is not one the bot knows; nothing was sent."
	case ApproveFromAnswer:
		// The bot puts that Approve only on the private answer that shows
		// a restricted call, so a press anywhere else is not a look at it.
		return "Approve from the private answer that shows you the call; nothing was sent."
	case UnknownDialog:
		return "This dialog is not one the bot knows; nothing was sent."
	case StoreDown:
		return "The bot cannot read this card right now; try again in a moment. Nothing was sent."
	case NotRecorded:
		if r.Act == Ladder {
			return "The bot could not record your click; try again in a moment. Nothing was recorded."
		}
		return "The bot could not record your decision; try again in a moment. Nothing was sent."
	case NotInTime:
		if r.Act == Ladder {
			return "The bot could not record your click in time (it is very busy); try again in a moment. Nothing was recorded."
		}
		return "The bot could not record your decision in time (it is very busy); try again in a moment. Nothing was sent."
	case LookupFailed:
		return "The arguments could not be looked up right now; try again in a moment."
	case ShuttingDown:
		return "The bot is shutting down; try again in a moment. Nothing was sent."
	case TooLong:
		if r.Approve {
			return "The comment is longer than 1,000 characters; nothing was sent."
		}
		return "The reason is longer than 1,000 characters; nothing was sent."
	case DialogFailed:
		return "The dialog for the reason did not open; click Deny again. Nothing was sent."
	case CannotCheck:
		return "The bot cannot check this request right now; try again in a moment. Nothing was sent."

	case UnknownCard:
		if r.Act == LookUp {
			return "The bot knows no such card."
		}
		return "The bot knows no such card; " + r.nothing() + "."
	case NotServed:
		if r.Act == LookUp {
			return "This bot does not serve tenant " + r.Tenant + "."
		}
		return "This bot does not serve tenant " + r.Tenant + "; " + r.nothing() + "."
	case NotMember:
		if r.Act == LookUp {
			return fmt.Sprintf("You are not a member of tenant %s in this bot's configuration, so the arguments are not shown.", r.Tenant)
		}
		return fmt.Sprintf("You are not a member of tenant %s in this bot's configuration, so %s. An admin can add your %s id %s.",
			r.Tenant, r.nothing(), r.Surface, r.User)
	case CannotDecide:
		if r.Act == Ladder {
			return fmt.Sprintf("Your role in tenant %s is %s, which cannot decide approvals, so the ladder is not yours to hold or hurry; nothing was recorded.",
				r.Tenant, r.Role)
		}
		return fmt.Sprintf("Your role in tenant %s is %s, which cannot decide approvals; nothing was sent.", r.Tenant, r.Role)
	case NoContent:
		return fmt.Sprintf("The arguments are shown only to members of tenant %s with the content permission, which you do not hold.", r.Tenant)
	case NoBackend:
		return "This bot has no job backend to look the arguments up at."
	case PrivateChat:
		return fmt.Sprintf("This call comes from someone's private chat: only members of tenant %s with the content permission, which you do not hold, decide it; nothing was sent.", r.Tenant)
	case OwnJob:
		if r.Act == Ladder {
			return fmt.Sprintf("You started job %s, and tenant %s forbids deciding your own job's calls, so the ladder does not wait for you; nothing was recorded.",
				r.Job, r.Tenant)
		}
		return fmt.Sprintf("You started job %s, and tenant %s forbids deciding your own job's calls; nothing was sent.", r.Job, r.Tenant)
	case TypedConfirm:
		return fmt.Sprintf("This call needs a typed confirmation of %s: approve it in the console", r.Argument) + r.inConsole() + ". Nothing was sent."
	case ProtectedPaths:
		return "A change to protected paths is approved only in the console, by another person signed in with governance.write who neither started the job nor approved its changes" +
			r.inConsole() + ". Nothing was sent."
	case NotShownThis:
		return "The arguments you were shown are not this call's; nothing was sent. Look at the call again."
	case RevealFirst:
		return "You have not been shown this call's content: here it is, to you alone. Approve below decides it; nothing was sent yet."
	case Closed:
		by := ""
		if r.Actor != "" {
			by = " by " + r.Actor
		}
		return fmt.Sprintf("This call was already %s%s; %s.", stateWord(r.State), by, r.nothing())
	case Superseded:
		return "This card is superseded: the call changed. Look at the new card in the thread; " + r.nothing() + "."
	case DeadlinePassed:
		if r.Act == Ladder {
			return "The deadline has passed: no answer by then counts as a no, and the denial is on its way; nothing was recorded."
		}
		return "The deadline has passed: no answer by then counts as a no, so your approval was not sent."
	case DeadlineDenying:
		return "Nobody answered by the deadline, and the denial is on its way; nothing was recorded."
	case Deciding:
		if r.Act == Ladder {
			return fmt.Sprintf("%s is deciding this call already; nothing was recorded. Wait for the card to change.", r.Actor)
		}
		return fmt.Sprintf("%s is deciding this call already; wait for the card to change.", r.Actor)
	case FormTooLong:
		return fmt.Sprintf("The reason is longer than %d characters; nothing was sent.", r.Count)
	case FormNotOwn:
		return "This decision did not come from the page's own form; nothing was sent. Open the link from the mail again."
	case FormNotRecorded:
		return "The bot could not record your decision just now; nothing was sent. Try again in a moment."
	case FormNotLooking:
		return "The bot could not record that you are looking just now; nothing was recorded. Try again in a moment."
	case FormLookupFailed:
		return "The arguments cannot be shown just now; try again in a moment."
	case FormNoContent:
		return fmt.Sprintf("The arguments are shown only to members of tenant %s with the content permission, which %s does not hold.", r.Tenant, r.User)
	case FormPrivateChat:
		return fmt.Sprintf("This call comes from someone's private chat: only members of tenant %s with the content permission, which %s does not hold, decide it.", r.Tenant, r.User)
	case FormLookupLimit:
		return fmt.Sprintf("The job backend has been asked for call arguments as you as often as this page allows (%d a minute); try again in %d s.", r.Count, r.Seconds)
	case FormNotShown:
		return "The call's content could not be shown to you, so it cannot be approved here: " + r.Message

	case PageNotFound:
		return "Decision links look like /decide/… and come from the bot's escalation mail."
	case PageMethod:
		return "This page is read with GET and decided with its own form."
	case PageStoreDown:
		return "The bot cannot read its store just now; nothing was decided."
	case PageBroken:
		return "The page could not be shown; nothing was decided."
	case LinkBroken:
		return "The link is not one this bot made, or it was altered on its way (a mail client or scanner may have cut it). Open it from the mail again; nothing was decided."
	case LinkNotServed:
		return "This bot no longer serves the tenant this link is for."
	case LinkNotMember:
		return fmt.Sprintf("%s may no longer decide approvals in tenant %s, so this link decides nothing.", r.User, r.Tenant)
	case LinkUnknown:
		return "The bot no longer holds this approval; nothing can be decided here."
	case FormNotForm:
		return "The decision comes from the page's own form."
	case FormTooLarge:
		return fmt.Sprintf("The form was too large; a reason is at most %d characters.", r.Count)
	case FormUnreadable:
		return "The form could not be read; open the link again."
	case MailOff:
		return "Tenant " + r.Tenant + " no longer takes decisions on this page; decide in the console or in the chat thread."
	case MailDenyOnly:
		return "Tenant " + r.Tenant + " takes only denials on this page; approve in the console or in the chat thread."
	case PageWaiting:
		return "Waiting for a decision. Opening this page decided nothing: an answer is sent only when you press its button below."
	case PageWaitingShown:
		return "Waiting for a decision. Opening this page decided nothing: the call's content is below, shown to you alone; an answer is sent only when you press its button."
	case PasskeyNeeded:
		if r.Message != "" {
			return "Tenant " + r.Tenant + " approves this call only with your passkey, which chat cannot ask for: approve it on your decision page, " + r.Message + " (the link is yours alone). Nothing was sent."
		}
		return "Tenant " + r.Tenant + " approves this call only with a passkey, which chat cannot ask for: approve it in the console" + r.inConsole() + ". Nothing was sent."
	case PasskeyNoPage:
		return "Tenant " + r.Tenant + " approves this call only with a passkey, which this bot cannot ask for (its public_url is not a host name): approve it in the console" + r.inConsole() + "."
	case PasskeyRefused:
		return sentence(r.Message) + " Nothing was sent; press Approve to try again with your passkey."
	case PageTypedNoContent:
		return fmt.Sprintf("This call needs a typed confirmation of %s, which only members of tenant %s with the content permission can type (%s holds none): approve it in the console", r.Argument, r.Tenant, r.User) + r.inConsole() + "."
	case TypedWrong:
		return fmt.Sprintf("What you typed is not the value of %s, so nothing was sent: type it as the arguments above show it (a text as it is; a number, list or object as compact JSON with its keys sorted).", r.Argument)
	case PageTyped:
		return fmt.Sprintf("This call needs a typed confirmation of %s: approve it in the console", r.Argument) + r.inConsole() + "."
	case PageProtected:
		return "A change to protected paths is approved only in the console, by another person signed in with governance.write who neither started the job nor approved its changes" +
			r.inConsole() + "."
	case PageAskAgain:
		return sentence(r.Message) + " Nothing is sent until you press Approve again; Cancel keeps the page as it was."
	case PageInFlight:
		return sentence(r.Message)
	case LinkClosed:
		return sentence("This call is closed: " + r.Message)
	case LinkChanged:
		return fmt.Sprintf("The call changed since this link was sent: it is now revision %d, which was mailed to you with links of its own. This link no longer decides.", r.Count)
	case LinkExpired:
		return "This link expired at the deadline (" + r.At + " UTC); nothing can be decided with it."
	case PageQuestionWaiting:
		return "Waiting for an answer. Opening this page answered nothing: an answer is sent only when you press one of its buttons below."
	case PageQuestionShown:
		return "Waiting for an answer. The question is below, shown to you alone; an answer is sent only when you press one of its buttons."
	case PageNoAnswers:
		return "Tenant " + r.Tenant + " takes no answers to questions on this page; answer in the chat or in the console."
	case FormQuestionPrivate:
		return fmt.Sprintf("This question is restricted: only members of tenant %s with the content permission, which %s does not hold, see it and answer it.", r.Tenant, r.User)
	case QuestionClosed:
		return sentence("This question is closed: " + r.Message)
	case FormAnswerNotSaved:
		return "The bot could not record your answer just now; nothing was sent. Try again in a moment."
	case QuestionChanged:
		return fmt.Sprintf("The question changed since this link was sent: it is now revision %d, which was mailed to you with links of its own. This link no longer answers.", r.Count)

	case NotEligible:
		return fmt.Sprintf("This call needs %d approvals from %s, and yours is not counted: you are not among them. Nothing was recorded; Deny is still yours to give.", r.Need, r.Who)
	case StarterNoCount:
		return fmt.Sprintf("You started job %s, and a call that needs %d approvals never counts its starter's; nothing was recorded.", r.Job, r.Need)
	case VotedAlready:
		return fmt.Sprintf("You approved this call already, at %s; each person counts once, on whichever surface. %s", r.At, r.standing())
	case Voted:
		return fmt.Sprintf("Recorded: your approval of %s. %s Nothing is sent to the job backend until then.", r.Function, r.standing())
	case VotedAtDeadline:
		return fmt.Sprintf("Recorded: your approval came before the deadline, but the call had %d of the %d approvals it needs from %s when the deadline came. No answer by then counts as a no: the denial is on its way.", r.Count, r.Need, r.Who)
	case QuorumShort:
		return fmt.Sprintf("Your approval was not sent: this call needs %d approvals from %s, and only %d of those given with it count (an approver was removed or may no longer decide since, or a bot of an earlier release took yours alone). Nothing reached the job backend; approve again if you still mean it.", r.Need, r.Who, r.Count)
	case QuorumRefused:
		why := "it gave no reason"
		if r.Message != "" {
			why = r.Message
		}
		if r.Actor != "" {
			return fmt.Sprintf("Your approval was not recorded: the platform refused the approval of %s, one of the %d that made this call's quorum: %s. That one no longer counts; yours still does, and the call waits for another.", r.Actor, r.Count, why)
		}
		return fmt.Sprintf("Your approval was not recorded: the platform refused the %d approvals that made this call's quorum: %s. None of them counts any more; each approver must approve again.", r.Count, why)
	case Sending:
		return fmt.Sprintf("Sending your %s of %s to the job backend…", verb(r.Approve), r.Function)
	case Recorded:
		return "Recorded: your " + verb(r.Approve) + " reached the job backend."
	case GrantsOff:
		return "Approve and allow… is not offered for tenant " + r.Tenant + "; nothing was sent."
	case GrantBarred:
		return "This call cannot be allowed ahead: " + r.Message + ". Approve it alone, or not; nothing was sent."
	case GrantBadChoice:
		return "That scope, time or number of uses is not one offered for this call; nothing was sent."
	case GrantSending:
		return fmt.Sprintf("Sending your approval of %s to the job backend, and allowing %s…", r.Function, r.Message)
	case GrantUnknown:
		return "The bot knows no live grant " + r.Message + " of this tenant; nothing was sent."
	case GrantRevoking:
		return "Revoking grant " + r.Message + "; the job backend is being told."
	case GrantEnded:
		return "Grant " + r.Message + " has ended already (" + r.State + "); nothing was sent."
	case GrantInFlight:
		return "Grant " + r.Message + " is still on its way to the job backend with its approval; revoke it once that is recorded. Nothing was sent."
	case AlreadyDecided:
		return fmt.Sprintf("Already decided: %s %s it first; your %s was not recorded.", r.Actor, r.State, verb(r.Approve))
	case StaleRevision:
		return "The call changed while you decided, so your " + verb(r.Approve) + " was not recorded. Look at the new card in the thread."
	case BackendSays:
		if r.Message == "" {
			return "the backend says the arguments differ from those the card showed: look at the call again"
		}
		return r.Message
	case Forbidden:
		if r.Message == "" {
			return "The platform refused your decision: you may not decide this call."
		}
		return "The platform refused your decision: " + r.Message
	case Gone:
		return "This approval is gone: the job backend no longer waits for it."
	case UnknownAnswer:
		return "The job backend gave an answer the bot does not know; your decision may not be recorded."
	case NotAnswered:
		why := "the job backend did not answer"
		if r.Refused {
			why = "the job backend refused the bot's request (an operator can see why in the bot's log)"
		}
		return "Your " + verb(r.Approve) + " was not recorded: " + why + ". Try again in a moment."

	case Looking:
		return fmt.Sprintf("You are looking at %s: the ladder's next steps wait %s. The deadline stays.", r.Function, r.until())
	case StillLooking:
		return fmt.Sprintf("You are still looking at %s: the ladder's next steps wait %s. The deadline stays.", r.Function, r.until())
	case TookOver:
		return fmt.Sprintf("You took over from %s: the ladder's next steps wait for you %s. The deadline stays.", r.Actor, r.until())
	case EscalateStale:
		return "This card's Escalate now no longer matches the call; nothing was sent. Look at the card again."
	case EscalatedBefore:
		return fmt.Sprintf("%s escalated this call at %s, after the card you pressed was shown: %s went out then. Nothing more was sent; press Escalate now on the card as it is now to fire the step after it.",
			r.Actor, r.At, r.Who)
	case EscalatedMax:
		return fmt.Sprintf("This call's ladder was escalated %d times already; nothing was sent.", r.Count)
	case StepsAllGone:
		if r.At == "" {
			return "Every step of this call's ladder has gone out already; nothing was sent. Nobody's answer by the deadline counts as a no."
		}
		return fmt.Sprintf("Every step of this call's ladder has gone out already; nothing was sent. Nobody's answer by the deadline (%s) counts as a no.", r.At)
	case Escalated:
		return fmt.Sprintf("Escalated now: %s went out (planned for %s).", r.Who, r.Planned)

	case BackendDown:
		return "The job backend did not answer, so the arguments cannot be shown now. Try again in a moment."
	case TooLargeToShow:
		return "This call is too large to show here: look at it and decide it in " + where(r.Console) + "."
	case AnswerUnreadable:
		return "The job backend's answer could not be read, so the arguments are not shown."
	case LookupForbidden:
		return "The platform refused to show you these arguments: you may not see this call's content."
	case LookupGone:
		return "This approval is gone: the job backend no longer has it."
	case DigestMismatch:
		return fmt.Sprintf("The arguments the job backend returned do not match the digest on the card (%s), so none of them is shown. Decide from the card, or look at the call in the console.", r.Digest)
	case ChangesMismatch:
		return "The changeset the job backend returned does not match the patch digest or the files this approval names, so nothing of it, and none of the arguments, is shown. Decide from the card, or look at the call in the console."
	case ArgumentsUnreadable:
		return "The arguments could not be read, so none of them is shown."
	case RevealTooLarge:
		// They were not shown it, so they cannot approve it here: say where.
		w := where(r.Console)
		if r.Mail {
			w += ", or on the decision page from an escalation mail's Approve link"
		}
		return "This call's content is too large to show in chat, so it cannot be approved here: decide it in " + w + ". Nothing was sent."
	case TurnChanged, TurnNotAll, TurnIncomplete, TurnNothing, TurnSending, TurnUnknown:
		return r.turn()
	}
	return ""
}

// Title heads a decision page that shows no call: a wrong address,
// link or form, or a store that cannot be read; "" for other reasons.
func (r Reason) Title() string {
	switch r.Kind {
	case PageNotFound, PageMethod:
		return "No such page"
	case LinkBroken, LinkNotServed, LinkNotMember:
		return "This link does not work"
	case LinkUnknown:
		return "Approval not found"
	case PageStoreDown:
		return "Try again in a moment"
	case FormNotForm, FormTooLarge, FormUnreadable, FormNotOwn:
		return "Nothing was sent"
	}
	return ""
}

// sentence ends s with a full stop, unless a stop, a question or
// exclamation mark, or an ellipsis ends it already (a comment often does).
func sentence(s string) string {
	s = strings.TrimRight(s, " ")
	for _, end := range []string{".", "!", "?", "…"} {
		if strings.HasSuffix(s, end) {
			return s
		}
	}
	return s + "."
}

// nothing is what became of a refused click.
// standing says how far a quorum has come: "1 of 2 approvals given; it
// needs 1 more from rotation finance."
func (r Reason) standing() string {
	return fmt.Sprintf("%d of %d approvals given; it needs %d more from %s.", r.Count, r.Need, r.Need-r.Count, r.Who)
}

func (r Reason) nothing() string {
	if r.Act == Ladder {
		return "nothing was recorded"
	}
	return "nothing was sent"
}

func (r Reason) inConsole() string {
	if r.Console == "" {
		return ""
	}
	return " (" + r.Console + ")"
}

func (r Reason) until() string {
	if r.UntilDeadline {
		return "until the deadline (" + r.Until + ")"
	}
	return "until " + r.Until
}

func where(console string) string {
	w := "the console"
	if console != "" {
		w += " (" + console + ")"
	}
	return w
}

func verb(approve bool) string {
	if approve {
		return "approval"
	}
	return "denial"
}

func stateWord(state string) string {
	switch state {
	case "expired":
		return "denied (nobody answered by the deadline)"
	case "refused":
		return "refused by the platform's re-check"
	}
	return state
}

// The reason dialog a click on Deny opens. A surface cuts what it shows
// to its own limits.
const (
	// ReasonLabel names the reason's field, which may stay empty (Slack
	// marks an optional field, Discord a required one).
	ReasonLabel = "Why not?"
	// ReasonGoes says where the reason goes; ReasonWithheld says it for a
	// restricted call, whose card and thread leave it out (ReasonHint).
	ReasonGoes     = "Your reason goes to the job backend and into the card's thread."
	ReasonWithheld = "Sent with your denial; its card and thread will not show it (this call's content is restricted)."
	// DenySubmit and DenyClose label the dialog's buttons, where it has them.
	DenySubmit = "Deny"
	DenyClose  = "Cancel"
)

// The dialog Approve with comment… opens (on Discord, whose buttons cannot
// ask again, a destructive call's Approve too); the comment may stay empty.
const (
	CommentLabel = "Comment"
	// CommentGoes and CommentWithheld say where the comment goes (ReasonHint).
	CommentGoes     = "Optional. It goes to the job backend with your approval, and onto the card."
	CommentWithheld = "Optional. Sent with your approval; the card will not show it (this call's content is restricted)."
	ApproveSubmit   = "Approve"
	// ConfirmTitle heads the confirmation of a destructive call.
	ConfirmTitle = "Approve a destructive call?"
)

// ReasonHint says where a denial's reason goes: a restricted call's card
// and thread leave it out, so the dialog must not promise the thread.
func ReasonHint(restricted bool) string {
	if restricted {
		return ReasonWithheld
	}
	return ReasonGoes
}

// CommentHint says where an approval's comment goes, as ReasonHint.
func CommentHint(restricted bool) string {
	if restricted {
		return CommentWithheld
	}
	return CommentGoes
}

// ApproveTitle is the comment dialog's title: which call is approved.
func ApproveTitle(function string) string { return "Approve " + function }

// ApproveQuestion asks, above the comment's field, whether to approve the
// call, with what it does when effect says anything.
func ApproveQuestion(function, approvalID string, revision int, effect string) string {
	if effect != "" {
		return fmt.Sprintf("%s is %s. Approve it (approval %s, revision %d)?", function, effect, approvalID, revision)
	}
	return fmt.Sprintf("Approve %s (approval %s, revision %d)?", function, approvalID, revision)
}

// DenyTitle is the reason dialog's title: which call is denied.
func DenyTitle(function string) string { return "Deny " + function }

// DenyQuestion asks, above the reason's field, whether to deny the call,
// and says where the reason goes (ReasonHint).
func DenyQuestion(function, approvalID string, revision int, restricted bool) string {
	return fmt.Sprintf("Deny %s (approval %s, revision %d)? %s", function, approvalID, revision, ReasonHint(restricted))
}

// What Show all arguments and Show details show, to the person who
// clicked alone; their values arrive as the surface shows them.
const (
	// Details heads the card shown with its restricted parts.
	Details = "Details, only you see this."
	// NoArguments stands in for a call without arguments.
	NoArguments = "(no arguments)"
	// ApproveShown and ApproveNoteShown label the buttons a Reveal's answer
	// ends with; ApproveShownLine stands above them.
	ApproveShown     = "Approve"
	ApproveNoteShown = "Approve with comment…"
	ApproveShownLine = "Approve below decides the revision shown above, with its digest; nothing was sent yet."
)

// ArgumentsHeading is the first line above a call's whole arguments.
func ArgumentsHeading(function, approvalID string, revision int) string {
	return fmt.Sprintf("Arguments of %s · approval %s, revision %d · only you see this", function, approvalID, revision)
}

// ArgumentsDigest names the digest the arguments match, and any redaction.
func ArgumentsDigest(digest string, redacted bool) string {
	if redacted {
		return "digest " + digest + " · secrets are redacted"
	}
	return "digest " + digest
}

// ArgumentsNote heads the call's full arguments on the decision page:
// the digest they match, and whether secrets were hidden from them.
func ArgumentsNote(digest string, redacted bool) string {
	note := "The call's full arguments, as the job backend holds them; they match the card's digest " + digest + "."
	if redacted {
		note += " Values that look like secrets are hidden."
	}
	return note
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

// MembersOnly is what /approvals says to a non-member of a tenant, named
// in the surface's bold: only members can decide what it lists.
func MembersOnly(boldTenant string) string {
	return boldTenant + ": only the tenant's members see its approvals and ladders."
}

// What /approvals passkey says, on every chat surface (whose markup
// both read `code` as code).
const (
	// PasskeysOff: the bot makes no enrolment links (no decision page
	// on a host name).
	PasskeysOff = "This bot takes no passkeys: it needs `public_url` (a host name) and `link_secrets`. " +
		"An admin can set them (`docs/configuration.md#passkeys`)."
	// PasskeyNoMember: the person is a member of no tenant here.
	PasskeyNoMember = "You are not a member of any tenant in this bot's configuration, so you have no passkeys to enrol."
	// PasskeyPrivate follows the links: why they are the person's alone.
	PasskeyPrivate = "Only you see these links: whoever opens one enrols passkeys as you, so never share one. " +
		"The page lists your passkeys, adds one (your device asks for its lock) and removes any."
)

// PasskeyLinkLine is one tenant's enrolment link as /approvals passkey
// words it, the tenant named in the surface's bold and the link in its
// markup.
func PasskeyLinkLine(boldTenant, user, until, link string) string {
	return boldTenant + " (as " + user + "): " + link + " (valid until " + until + ")"
}
