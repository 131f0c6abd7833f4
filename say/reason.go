// Package say owns every sentence a person reads about what they clicked,
// in chat or on the decision page: the core's reasons (Reason, its Kind and
// the values a sentence needs) and the one catalogue that words them. It
// imports nothing of the bot's, so every caller words a reason alike.
package say

// Act is what a click asked for; it picks a refusal's ending: "nothing was
// sent" for a decision, "nothing was recorded" for a ladder click.
type Act uint8

// The acts.
const (
	Decision Act = iota // Approve, Deny, Approve with comment…
	Ladder              // I'm looking, Escalate now
	LookUp              // Show all arguments, Show details
	// Answering is an answer to an agent's question: a choice, Answer…
	// (say/question.go words its sentences).
	Answering
)

// Kind is why a click went as it did.
type Kind uint8

// The kinds. Each names the values of Reason its sentence reads.
const (
	None Kind = iota

	// What a surface says when the click never reached a decision.
	UnknownButton     // the button is not one the bot knows
	ApproveFromAnswer // a private answer's Approve pressed elsewhere
	UnknownDialog     // the dialog is not one the bot knows
	StoreDown         // the approval could not be read
	NotRecorded       // the record failed (Act)
	NotInTime         // the record outlasted its bound (Act)
	LookupFailed      // the look-up failed outright
	ShuttingDown      // the bot stops taking clicks
	TooLong           // a dialog's reason or comment (Approve) is over 1,000 characters
	DialogFailed      // the reason dialog did not open
	CannotCheck       // the replay check failed

	// Why a click is refused (Act picks the ending).
	UnknownCard      // the bot holds no such card
	NotServed        // Tenant is not served
	NotMember        // Surface User is no member of Tenant
	CannotDecide     // Role in Tenant cannot decide
	NoContent        // a look-up by a member without the content permission
	NoBackend        // no backend to look arguments up at
	PrivateChat      // only Tenant's content holders decide it
	OwnJob           // Job was started by the clicker, and Tenant forbids it
	TypedConfirm     // the call needs Argument typed in the Console
	ProtectedPaths   // a change to protected paths, decided in the Console
	NotShownThis     // the page showed another call's arguments
	RevealFirst      // a content holder is shown the call before approving it
	Closed           // the call was already State (by Actor)
	Superseded       // a newer revision replaced the card
	DeadlinePassed   // no answer by the deadline counts as a no
	DeadlineDenying  // the deadline's denial is on its way
	Deciding         // Actor is deciding it already
	FormTooLong      // the page's reason is over Count characters
	FormNotOwn       // the page's POST did not come from its form
	FormNotRecorded  // the page could not record the decision
	FormNotLooking   // the page could not record I'm looking
	FormLookupFailed // the page could not look the arguments up
	FormNoContent    // the page's member User holds no content permission in Tenant
	FormPrivateChat  // only Tenant's content holders decide it, and User holds none
	FormLookupLimit  // the member's look-ups are over Count a minute; Seconds to wait
	FormNotShown     // the content could not be shown (Message), so no Approve
	NotEligible      // the call's quorum (Need, from Who) does not count the clicker
	StarterNoCount   // the clicker started Job, and a quorum never counts the starter
	VotedAlready     // the clicker's approval counts already (At); Count of Need given, from Who

	// The decision page's own: its address, its link, its form, and what
	// it says of the call (Title heads the pages that show no call).
	PageNotFound       // the address is no decision link
	PageMethod         // a method the page does not take
	PageStoreDown      // the store cannot be read
	PageBroken         // the page could not be rendered
	LinkBroken         // the link is not one the bot made, or was altered
	LinkNotServed      // the bot no longer serves the link's tenant
	LinkNotMember      // User may no longer decide in Tenant
	LinkUnknown        // the bot no longer holds the approval
	FormNotForm        // a POST that is no form
	FormTooLarge       // the form is too large; a reason is at most Count characters
	FormUnreadable     // the form could not be read
	MailOff            // Tenant takes no decisions by mail
	MailDenyOnly       // Tenant takes only denials by mail
	PageWaiting        // the call waits; Approve names the link's button
	PageWaitingShown   // the call waits, its content shown below
	PasskeyNeeded      // the tenant wants a passkey for this Approve: Message is the member's page link, or "" (Console)
	PasskeyNoPage      // the tenant wants a passkey, and this bot cannot take one (Tenant)
	PasskeyRefused     // the page's Approve came without a good passkey: Message says why
	PageTypedNoContent // Approve needs a typed confirmation of Argument, and User holds no content permission in Tenant
	TypedWrong         // the value typed is not Argument's: nothing was sent
	PageTyped          // Approve needs a typed confirmation of Argument, which the page does not take
	PageProtected      // a change to protected paths: approved only in the console
	PageAskAgain       // Approve of a destructive call asks again: Message is the question
	PageInFlight       // a decision is on its way (Message: the card's status)
	LinkClosed         // the call is closed (Message: the card's status)
	LinkChanged        // the call is now revision Count
	LinkExpired        // the link expired at the deadline At (UTC)
	// The decision page of an agent's question.
	PageQuestionWaiting // the question waits for an answer
	PageQuestionShown   // the question waits, shown below to this member alone
	PageNoAnswers       // Tenant takes no answers to questions on the page
	FormQuestionPrivate // only Tenant's content holders answer the restricted question, and User holds none
	QuestionClosed      // the question is closed (Message: the card's status)
	QuestionChanged     // the question is now revision Count
	FormAnswerNotSaved  // the page could not record the answer

	// A decision recorded, and what the backend answered.
	Voted           // an approval of Function recorded: Count of Need, the rest from Who
	VotedAtDeadline // an approval received in time recorded: Count of Need, from Who, short at the deadline
	QuorumShort     // an approve not sent: Count of its Need approvals, from Who, count (approvers removed since, or sent alone by an earlier release)
	QuorumRefused   // the backend refused the Count approvals of a quorum (Message): Actor's leaves it, or, naming none, all do
	Sending         // Approve of Function is on its way
	Recorded        // the backend recorded it
	AlreadyDecided  // Actor State it first
	StaleRevision   // the call changed while the person decided
	BackendSays     // the backend's own Message (a digest mismatch)
	Forbidden       // the platform refused it (Message)
	Gone            // the backend no longer waits for it
	UnknownAnswer   // an answer the bot does not know
	NotAnswered     // the backend did not answer (Refused: it refused the request)

	// The ladder's buttons.
	Looking         // Function; steps wait Until (UntilDeadline)
	StillLooking    // the same member pressed again
	TookOver        // from Actor
	EscalateStale   // the card's Escalate now no longer matches
	EscalatedBefore // Actor escalated at At, Who was told
	EscalatedMax    // Count escalations already
	StepsAllGone    // every step went out (the deadline At, if any)
	Escalated       // Who was told, planned for Planned

	// A look-up's refusals.
	BackendDown         // the backend did not answer
	TooLargeToShow      // over the protocol's cap (Console)
	AnswerUnreadable    // the backend's answer could not be read
	LookupForbidden     // the platform refused to show them
	LookupGone          // the backend no longer has it
	DigestMismatch      // the arguments do not match Digest
	ChangesMismatch     // the changeset does not match its patch digest or the card's files
	ArgumentsUnreadable // the arguments could not be read
	RevealTooLarge      // too large for chat (Console, Mail)

	// Grants ("Approve and allow…", docs/protocol.md#grants).
	GrantsOff      // the tenant or its backend offers no grants
	GrantBarred    // this call admits no grant: Message says why
	GrantBadChoice // the dialog's scope, time or uses is not one offered
	GrantSending   // Approve of Function with the grant Message is on its way
	GrantUnknown   // no live grant of the tenant has that id
	GrantRevoking  // the revocation of grant Message is on its way
	GrantEnded     // the grant Message ended already (State)
	GrantInFlight  // the grant Message is still on its way with its approval
	// A whole turn's buttons (Deny all, Approve all N): say/turn.go.
	TurnChanged    // a call of the turn (Function, or several: "") changed since the card was shown
	TurnNotAll     // Approve all cannot take Function: Message says why
	TurnIncomplete // Approve all before every call of the turn (Count of Need) waits on the card
	TurnNothing    // Deny all with no call of the turn still waiting
	TurnSending    // the turn's Count decisions are on their way (Approve)
	TurnUnknown    // the button names no turn the bot shows
	// An agent's question (docs/protocol.md#questions): say/question.go.
	AnswerSending   // the answer is on its way to the job
	AlreadyAnswered // Actor answered first
	NotAChoice      // the choice is not one of the question's
	AnswerEmpty     // the answer's words are blank
	AnswerTooLong   // the answer is over Count characters
	AnswerWordsOff  // the question takes one of its choices only
	NotAQuestion    // an answer to a card that asks no question
	QuestionsOff    // the bot's backend takes no answers
	QuestionHidden  // a restricted question is shown and answered only by Tenant's content holders
)

// Reason is why a click went as it did, with the values its sentence
// reads; String words it (catalogue.go).
type Reason struct {
	Kind Kind
	Act  Act
	// Tenant is the approval's tenant; Surface and User name the clicker
	// as their surface does, Role their role there.
	Tenant, Surface, User, Role string
	// Actor is the member who decided, is deciding, looks or escalated.
	Actor string
	// Function, Job, Argument, Console and Digest are the call's.
	Function, Job, Argument, Console, Digest string
	// State is the approval's state (approval.State).
	State string
	// Approve: the click approves (else it denies).
	Approve bool
	// Refused: the backend refused the bot's request (NotAnswered).
	Refused bool
	// Mail: the tenant's escalation mail carries Approve links.
	Mail bool
	// Count and Seconds are numbers the sentence names; Need is how many
	// approvals a quorum needs.
	Count, Seconds, Need int
	// At, Until and Planned are times as the tenant reads them;
	// UntilDeadline says Until is the deadline.
	At, Until, Planned string
	UntilDeadline      bool
	// Who is whom a ladder step told.
	Who string
	// Message is the backend's own sentence.
	Message string
}

// IsZero reports whether r gives no reason.
func (r Reason) IsZero() bool { return r.Kind == None }

// Text words a reason of kind k that reads no values.
func (k Kind) Text() string { return Reason{Kind: k}.String() }
