package templates

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"iter"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/approval"
)

// Card is everything any surface shows of one approval, already decided:
// cleaned, redacted again, bounded, every rule applied. Renderers only lay
// it out and escape it (docs/design.md#one-card-every-surface). A field
// left empty (or nil) is not shown.
type Card struct {
	ApprovalID string
	Revision   int
	Tenant     string
	Kind       approval.Kind
	State      approval.State
	Superseded bool
	// Deciding marks a pending card whose decision is being sent to the
	// backend: no Approve or Deny, and the status says who decided what.
	Deciding bool
	Tone     Tone

	// Status is the line on top of every card: "Approved by user:kevin …".
	Status string
	// StatusDetail says how or when, below the status ("via console").
	StatusDetail string
	// Message is the backend's sentence on a refused card.
	Message string
	// StatusNote says what a restricted card's status leaves out (a comment,
	// a reason, the backend's message: each may quote what the card hides).
	StatusNote string
	// Headline is one line for notifications, fallback text and subjects.
	Headline string
	// Looking says who is looking at the call, since when, and until when
	// the ladder holds its steps; state, like the status. Empty: nobody.
	Looking string
	// Escalated says, oldest first, the steps members fired with Escalate
	// now. State too.
	Escalated []string

	// 1. Title.
	Function   string
	Job        Job
	ConsoleURL string
	ThreadURL  string

	// Quorum is the quorum line, under the title and the job's line, of
	// a call that needs several people's approvals: how many it has,
	// whose and when, and while it waits how many more from whom
	// (docs/cards.md#quorum). State, like the status, and never cut;
	// empty when one approval decides the call, and on a superseded card.
	Quorum string

	// 2. Effect line (approval.EffectLine); empty for a contained write.
	Effect string
	// 3. Flags, from FlagLines: by name and class only.
	Flags []string
	// 4. Who asks (AskedBy) and each reason (Reasons), from AskedByLines.
	AskedBy string
	Reasons []string
	// 5. Warnings, one line each, each putting Deny first
	// (approval.Approval.WarningLines).
	Warnings []string

	// Reask says why and what changed since the last revision; nil on a first.
	Reask *Reask

	// Restricted cards hide the call's content and say RestrictedNote.
	Restricted     bool
	RestrictedNote string

	// 6. Arguments, their digest, and the snapshot's digest or notGiven.
	Arguments *Arguments
	Digest    string
	Snapshot  string
	// 7. Argument roles.
	Roles *Roles
	// 8. Changes of a changeset.
	Changes *Changes
	// 9. What the agent wrote before the call: its words, not the platform's.
	AgentSays string
	// 10. The turn's other calls that wait with this one.
	Turn string
	// 11. The plan line: the frozen ladder and deadline; none once closed.
	Ladder string
	// LadderNote says the request named a ladder the tenant lacks.
	LadderNote string
	// ConfirmLine says the call needs a typed confirmation, and where to
	// give it: the console, or the decision page where it takes one.
	ConfirmLine string
	// 12. Buttons, in order; none on a closed card.
	Buttons []Button

	// Question is an agent's question (approval.KindQuestion): the card
	// shows it instead of a call, and its Buttons are Answer… and the
	// ladder's; nil for a call (question.go).
	Question *QuestionCard

	// Times says where the lines above print a time, for Slack and Discord
	// to show in each reader's zone (docs/cards.md#times-on-a-card).
	Times Times
}

// Times are the times each line of a card prints, in order.
type Times struct {
	Status, StatusDetail, Looking, Quorum, Ladder []Stamp
	// Escalated holds the times of each line of Card.Escalated.
	Escalated [][]Stamp
}

// EscalatedLine is the times line i of Card.Escalated prints, or nil.
func (t Times) EscalatedLine(i int) []Stamp {
	if i < 0 || i >= len(t.Escalated) {
		return nil
	}
	return t.Escalated[i]
}

// Stamp is one time a line of a card prints.
type Stamp struct {
	// Off is where in the line the time's text starts, in bytes.
	Off int
	// Text is the time as the line prints it, in the tenant's zone.
	Text string
	At   time.Time
}

// Spans walks line s by its times: each text between them with the time
// that ends it, then the text after the last with nil. A time not where
// it says in s (or out of order) is no time, and stays text.
func Spans(s string, at []Stamp) iter.Seq2[string, *Stamp] {
	return func(yield func(string, *Stamp) bool) {
		pos := 0
		for i := range at {
			t := &at[i]
			end := t.Off + len(t.Text)
			if t.Text == "" || t.Off < pos || end > len(s) || s[t.Off:end] != t.Text {
				continue
			}
			if !yield(s[pos:t.Off], t) {
				return
			}
			pos = end
		}
		yield(s[pos:], nil)
	}
}

// Tone is the colour a surface gives the card.
type Tone string

// Tones.
const (
	TonePending  Tone = "pending"
	ToneApproved Tone = "approved"
	ToneDenied   Tone = "denied"
	ToneClosed   Tone = "closed" // cancelled, superseded: nothing happened
)

// Reask is what a card of a call asked again says of the change: why,
// then what changed, path by path; a restricted card says only why.
type Reask struct {
	// Line: "Asked again: the arguments changed since revision 1".
	Line string
	// Changes, one line each: `method: "squash" → "rebase"`.
	Changes []string
	// Note says what Changes leave out, or that they are in unshown values.
	Note string
}

// Job is the title's second line: which job, who started it, which agent
// at which autonomy level (levelNotGiven when the request named none).
type Job struct {
	ID, URL, StartedBy, Agent, Level string
}

// Arguments is the display projection of the call's arguments.
type Arguments struct {
	// JSON is the projection pretty-printed, at most 2 KB.
	JSON string
	// Marks says what the projection hides: "redacted", "truncated", both.
	Marks string
	// CutNote says when JSON is not all of the arguments.
	CutNote string
}

// Roles are the rows of marked arguments and what the rows leave out.
type Roles struct {
	Rows []RoleRow
	// Table is Rows as surfaces show them in a monospaced block: a line
	// labelling the columns, then one line per row, aligned, an
	// out-of-scope value marked "⚠".
	Table string
	// Notes say what the rows leave out, out-of-scope counts first.
	Notes []string
}

// RoleRow is one row: argument · role · value · where the value came
// from (Origin, in words: approval.OriginPhrase).
type RoleRow struct {
	Argument, Role, Value, Origin string
	OutOfScope                    bool // approval.RoleValue.IsOutOfScope: the card warns about the value
}

// Changes is a changeset: its files (protected first), and its patch.
type Changes struct {
	// Summary counts the files: "3 files, 2 of them protected".
	Summary string
	// ProtectedNote is "this change touches the plugin's tests or its rules".
	ProtectedNote string
	// GovernanceNote says who alone may approve a protected_paths approval.
	GovernanceNote string
	Files          []ChangedFile
	FilesNote      string // "and 4 more files"
	Patch          string
	PatchCutNote   string
	PatchDigest    string
}

// ChangedFile is one file of a changeset.
type ChangedFile struct {
	Path      string
	Protected bool
}

// ButtonStyle is how prominent a button is.
type ButtonStyle string

// Button styles. Approve and Deny are equally prominent: each has its own
// colour (Slack primary/danger, Discord Success/Danger).
const (
	StylePrimary ButtonStyle = "primary"
	StyleDanger  ButtonStyle = "danger"
	StyleDefault ButtonStyle = ""
)

// Button is one control of a waiting card.
type Button struct {
	Label   string
	Action  Action
	Payload string // EncodeAction(Action)
	Style   ButtonStyle
	// Default marks the button the focus starts on (Deny, where
	// approval.DenyFirst); surfaces without focus show it first.
	Default bool
	// Confirm asks again before the click counts; nil for none.
	Confirm *Confirmation
}

// Confirmation is a dialog that asks again.
type Confirmation struct {
	Title, Text, Confirm, Cancel string
}

// LadderPlan is the escalation ladder frozen at request. It does not
// change as steps fire, so firing a step edits no card (docs/cards.md).
type LadderPlan struct {
	// Steps in time order, skipped ones included.
	Steps []PlanStep
	// Deadline is when no answer counts as a no; zero: the approval's own.
	Deadline time.Time
	// Name is the ladder the plan was made from.
	Name string
	// Unknown is the ladder the request named that the tenant lacks, or "".
	Unknown string
}

// PlanStep is one step of a LadderPlan.
type PlanStep struct {
	// At is when the step fires (ladder.PlannedStep.At).
	At time.Time
	// Who is whom the step tells, as ladder.Plan.Say words it.
	Who string
	// Skipped: the step will not run, for Skip's reason.
	Skipped bool
	// Skip is why (ladder.Plan.SkipReason); empty, the card tells from At
	// whether the step falls before the request or after the deadline.
	Skip SkipReason
	// HeldFrom is when a step its window held was due; zero when the
	// window did not move it (ladder.PlannedStep.HeldFrom).
	HeldFrom time.Time
	// Index is the step's place in its ladder, Repeat which firing of it
	// this is (0 the first), and Every how long after the one before a
	// repetition is due (zero: the step does not repeat). The plan line
	// says a repeating step once, with its repetitions.
	Index, Repeat int
	Every         time.Duration
}

// SkipReason is why a planned step will not run, as the card says it.
type SkipReason string

// Why a step is skipped (ladder's Skip reasons).
const (
	SkipAfterDeadline SkipReason = "after the deadline"
	SkipBeforeRequest SkipReason = "before the request"
	SkipWindowShut    SkipReason = "its window does not open before the deadline"
)

// shownAt is when the plan line shows the step: when it fires, or when it
// was due if its window stays shut until the deadline.
func (s PlanStep) shownAt() time.Time {
	if s.Skipped && s.Skip == SkipWindowShut && !s.HeldFrom.IsZero() {
		return s.HeldFrom
	}
	return s.At
}

// Looking is a member's acknowledgement ("I'm looking"): they read the
// call, and the ladder holds its steps still to come until Until.
type Looking struct {
	Actor string
	Since time.Time
	// Until is when the ladder's steps go on; it never moves the deadline.
	Until time.Time
	// From is the member whose unexpired hold Actor took over; "" for none.
	From string
}

// EscalatedStep is one step a member fired at once with Escalate now.
type EscalatedStep struct {
	Actor string
	At    time.Time
	// Who is whom the step told, as ladder.Plan.Say words it.
	Who string
	// Planned is when the plan had the step fire.
	Planned time.Time
}

// Deciding is a recorded decision being sent to the job backend: the
// approval is pending, but no card can decide it any more.
type Deciding struct {
	Actor   string
	Approve bool
	// Comment is the person's reason; a restricted card never shows it.
	Comment string
	At      time.Time
	// Deadline: the deadline's own deny (nobody answered), not a person's.
	Deadline bool
}

// Input is what Build needs to decide a card.
type Input struct {
	Approval *approval.Approval // required
	// State is the approval's state; empty counts as pending.
	State approval.State
	// Decision says who closed the approval and how; nil while pending.
	Decision *approval.Decision
	// HeldRevision is the approval's newest revision the bot holds, which
	// a decision or answer from elsewhere raises to its own revision even
	// where the bot never saw that revision asked; 0 means Approval's.
	HeldRevision int
	// Superseded marks a card a newer revision replaced.
	Superseded bool
	// Deciding is a decision on its way to the backend. It applies only to
	// a pending card that was not superseded: a final state wins over it.
	Deciding *Deciding
	// Ladder is the plan frozen at request. Nothing in Input says which
	// steps have fired: a pending card is the same before and after each.
	Ladder LadderPlan
	// Looking is who acknowledged the call; nil when nobody has. Like
	// Escalations it applies only to a card that waits for a decision.
	Looking *Looking
	// Escalations are the steps members fired at once, oldest first.
	Escalations []EscalatedStep
	// Reask is what changed since the revision before; nil for a first.
	Reask *approval.Reask
	// SupersededBy is the reask that replaced this revision; nil if unknown.
	SupersededBy *approval.Reask
	// Now is when the card is shown: a time on another day than Now (in
	// Zone) carries its date. Zero means the request's time.
	Now time.Time
	// Zone is the tenant's time zone for a card's times; nil means UTC.
	Zone *time.Location
	// Restricted renders without details (a walled job in a shared place);
	// a content-restricted approval always is, unless RevealContent.
	Restricted bool
	// RevealContent shows a content-restricted approval's details: only for
	// the private answer to Show details, once the person is known to hold
	// the content permission. It never overrides Restricted.
	RevealContent bool
	// ContentHolder: the reader is known to hold the content permission.
	// Only then does the card show the digest, against which a guess at a
	// redacted or small value can be checked offline.
	ContentHolder bool
	// Tenant names the tenant in subjects; empty means Approval.Tenant.
	Tenant string
	// ThreadURL links email readers to the chat thread; optional.
	ThreadURL string
	// Quorum is where a call that needs several people's approvals
	// stands; nil when one approval decides it.
	Quorum *Quorum
	// TypedOnPage: the decision page takes a typed confirmation, so a
	// call that needs one says to approve it there (or in the console).
	TypedOnPage bool
	// Grants: the card offers "Approve and allow…" (a grant) beside
	// Approve; the core decides (threads), and refuses a forged one.
	Grants bool
	// TurnTooMany is how many calls the call's turn has when they are too
	// many for one turn card (templates.MaxTurnRows): the card says each
	// call is shown on its own. 0 for none.
	TurnTooMany int
}

// Quorum is how far a call that needs Need distinct people's approvals
// has come: the card's quorum line (docs/cards.md#quorum).
type Quorum struct {
	// Need is how many distinct people must approve.
	Need int
	// From says who is eligible, in words ("rotation finance or user:kevin").
	From string
	// Approvals are those given to the card's revision, oldest first.
	Approvals []QuorumApproval
	// Voided is how many approvals given to the revision before a reask
	// voided (shown on the card of the revision that voided them).
	Voided int
	// Dropped is how many approvals of the card's revision no longer
	// count: their givers were removed since, or may no longer decide.
	Dropped int
}

// QuorumApproval is one person's approval towards a quorum.
type QuorumApproval struct {
	Actor string // the tenant user ("user:kevin")
	At    time.Time
}

// The card's fixed sentences.
const (
	statusPending     = "Waiting for a decision"
	statusSuperseded  = "Superseded: %s; see the new card"
	statusExpired     = "Denied: nobody answered by the deadline"
	statusDecidingFmt = "Recorded: %s is being sent to the job backend…"
	statusDeadlineDue = "Nobody answered by the deadline: the denial is being sent to the job backend…"
	restrictedNote    = "details are shown only to operators with the content permission"
	// restrictedRoleNote ends each role line of a restricted card.
	restrictedRoleNote = "values are shown only to operators with the content permission"
	// restrictedArgMax bounds the argument's name on such a line.
	restrictedArgMax = 32
	// What a restricted card says in place of a comment, reason or message.
	withheldComment   = "the comment is shown only in the console (this call's content is restricted)"
	withheldReason    = "the reason is shown only in the console (this call's content is restricted)"
	withheldRecheck   = "the console shows why (this call's content is restricted)"
	argsCutNote       = "[cut; Show all arguments shows all]"
	argsUnreadable    = "the arguments could not be shown; Show all arguments shows them"
	patchCutNote      = "[cut; the console shows the whole patch]"
	protectedNote     = "this change touches the plugin's tests or its rules"
	deadlineMeansNo   = "(no answer counts as a no)"
	planPrefix        = "ladder: "
	noTargets         = "no targets"
	timeOfDay         = "15:04 MST"
	dateAndTime       = "2006-01-02 15:04 MST"
	labelApprove      = "Approve"
	labelApproveNote  = "Approve with comment…"
	labelApproveGrant = "Approve and allow…"
	labelDeny         = "Deny"
	labelShowArgs     = "Show all arguments"
	labelShowDetails  = "Show details"
	labelLook         = "I'm looking"
	labelEscalate     = "Escalate now"
	escalatedMax      = 3
	confirmTitle      = "Approve a destructive call?"
	confirmCancel     = "Cancel"
	agentSaysCutNote  = " …[cut]"
	unknownApproval   = "This approval could not be shown"
	levelWord         = "autonomy level "
	levelNotGiven     = levelWord + "not given"
	notGiven          = "not given"
	governanceNoteFmt = "Only another person with governance.write, who neither started the job%s nor approved its changes, may approve this, in the console: a chat offers only Deny."
)

// Build decides the card for in. It never fails: what cannot be shown is
// said on the card (a nil Approval gives a card that says so).
func Build(in Input) Card {
	a := in.Approval
	if a == nil {
		return Card{State: approval.StatePending, Tone: ToneClosed, Status: unknownApproval, Headline: unknownApproval}
	}
	c := Card{
		ApprovalID: a.ID,
		Revision:   a.Revision,
		Tenant:     oneLine(cmp.Or(in.Tenant, a.Tenant)),
		Kind:       a.Kind,
		State:      cmp.Or(in.State, approval.StatePending),
		Superseded: in.Superseded,
		// The function name, who started the job and the agent come from
		// the request: redacted as free text is, before any cut.
		Function: cutLine(oneLine(approval.RedactText(a.Call.Function)), lineMax),
		Job: Job{
			ID:        cutLine(oneLine(approval.RedactText(a.Job.ID)), lineMax),
			URL:       linkable(a.Job.URL),
			StartedBy: cutLine(oneLine(approval.RedactText(a.Job.StartedBy)), lineMax),
			Agent:     cutLine(oneLine(approval.RedactText(a.Job.Agent)), lineMax),
			Level:     level(a.Level),
		},
		ConsoleURL: linkable(a.ConsoleURL),
		ThreadURL:  linkable(in.ThreadURL),
		Effect:     approval.EffectLine(a.Call.Annotations),
		Flags:      limitFlags(a.FlagLines()),
		Restricted: in.Restricted || (a.ContentRestricted() && !in.RevealContent),
	}
	// pending: nothing is final, so the plan still applies; waiting: a
	// person can still decide it from the card.
	pending := c.State == approval.StatePending && !c.Superseded
	c.Deciding = pending && in.Deciding != nil
	waiting := pending && !c.Deciding
	k := newClock(in, a)
	st := status(c.State, in.Superseded, in.SupersededBy, in.Decision, deadline(in, a), c.Restricted, k)
	if c.Deciding {
		st = decidingStatus(in.Deciding, c.Restricted, k)
	}
	c.Status, c.Times.Status = st.line.done(statusMax)
	c.StatusDetail, c.Times.StatusDetail = st.detail.done(statusMax)
	c.Message, c.StatusNote, c.Tone = st.message, st.note, st.tone
	c.Headline = headline(&c)

	if lines := a.AskedByLines(); len(lines) > 0 {
		c.AskedBy = cutLine(oneLine(lines[0]), lineMax)
		c.Reasons = limitList(lines[1:], listMax, func(n int) string { return fmt.Sprintf("and %d more %s", n, plural(n, "reason", "reasons")) })
	}
	c.Warnings = a.WarningLines()
	if in.Reask != nil {
		c.Reask = reask(*in.Reask, c.Restricted)
	}
	c.Snapshot = notGiven
	if approval.ValidDigest(a.Call.Snapshot) {
		c.Snapshot = a.Call.Snapshot
	}
	if c.Restricted {
		c.RestrictedNote = restrictedNote
		c.Roles = restrictedRoles(a)
	} else {
		c.Arguments = arguments(a)
		if in.ContentHolder && approval.ValidDigest(a.Call.ArgsSHA256) {
			c.Digest = a.Call.ArgsSHA256
		}
		c.Roles = roles(a)
		c.AgentSays = agentSays(a.AgentSays)
		// The turn's other calls name what the private turn did: not in
		// a shared place (docs/cards.md lists what a restricted card shows).
		c.Turn = turn(a.Turn.Waiting)
	}
	if in.TurnTooMany > 0 {
		c.Turn = strings.TrimSpace(c.Turn + "\n" + turnTooMany(in.TurnTooMany)) // turn.go
	}
	c.Changes = changes(a, c.Restricted)
	if a.Confirm != nil && waiting {
		where := "in the console"
		if in.TypedOnPage && a.Kind != approval.KindProtectedPaths {
			where = "on the decision page your escalation mail links to (members with the content permission), or in the console"
		}
		c.ConfirmLine = fmt.Sprintf("This call needs a typed confirmation of %s: approve it %s",
			cutLine(oneLine(approval.RedactText(a.Confirm.Argument)), lineMax), where)
	}
	if waiting {
		c.Looking, c.Times.Looking = lookingLine(in.Looking, deadline(in, a), k)
		c.Escalated, c.Times.Escalated = escalatedLines(in.Escalations, k)
	}
	if !c.Superseded {
		c.Quorum, c.Times.Quorum = quorumLine(in.Quorum, c.State, waiting, k)
	}
	if pending {
		c.Ladder, c.Times.Ladder = planLine(in.Ladder, deadline(in, a), a.RequestedAt, k).done(0)
		c.LadderNote = ladderNote(in.Ladder, c.Tenant)
		lc := ladderControls(in)
		lc.grants = in.Grants
		c.Buttons = buttons(a, &c, waiting, lc)
	}
	if a.IsQuestion() {
		questionCard(in, &c, a, k)
	}
	return c
}

// level is the agent's autonomy level as the title's line says it.
func level(l string) string {
	if l = cutLine(oneLine(l), 16); l == "" {
		return levelNotGiven
	}
	return levelWord + l
}

// lookingLine words an acknowledgement: who, since when, whom they took
// over from, and until when the ladder's next steps wait.
func lookingLine(l *Looking, dl time.Time, k clock) (string, []Stamp) {
	if l == nil {
		return "", nil
	}
	var ln line
	ln.say(cmp.Or(cutLine(oneLine(l.Actor), lineMax), "someone") + " is looking since ")
	ln.time(k.at(l.Since))
	if from := cutLine(oneLine(l.From), lineMax); from != "" && from != l.Actor {
		ln.say(", taking over from " + from)
	}
	switch {
	case !l.Until.After(l.Since):
	case !dl.IsZero() && !l.Until.Before(dl):
		ln.say("; the ladder's next steps wait until the deadline")
	default:
		ln.say("; the ladder's next steps wait until ")
		ln.time(k.at(l.Until))
	}
	return ln.done(statusMax)
}

// quorumLine words where a call that needs q.Need people's approvals
// stands (docs/cards.md#quorum): the approvals given, oldest first, each
// with when; while a person can still decide, how many more it needs and
// from whom; once it is closed short of them, that they had been given.
// Nothing for no quorum (nil, or a Need one approval meets). Each name is
// cut, and at most listMax are named, so the line stays bounded and is
// never cut.
func quorumLine(q *Quorum, s approval.State, waiting bool, k clock) (string, []Stamp) {
	if q == nil || q.Need < 2 {
		return "", nil
	}
	given := len(q.Approvals)
	var ln line
	ln.say(fmt.Sprintf("%d of %d approvals", given, q.Need))
	switch s {
	case approval.StateDenied, approval.StateExpired, approval.StateCancelled:
		if given < q.Need {
			ln.say(" had been given")
		}
	}
	if q.Voided > 0 {
		ln.say(fmt.Sprintf(" (the change voided %d given before)", q.Voided))
	}
	if q.Dropped > 0 {
		ln.say(fmt.Sprintf(" (%d no longer %s: removed, or may no longer decide)", q.Dropped, plural(q.Dropped, "counts", "count")))
	}
	for i, a := range q.Approvals {
		if i == listMax {
			ln.say(fmt.Sprintf(", and %d more", given-listMax))
			break
		}
		if i == 0 {
			ln.say(": ")
		} else {
			ln.say(", ")
		}
		// The actor is a tenant user id the backend or config gave: shown
		// as every decision's actor is.
		ln.say(cmp.Or(cutLine(oneLine(approval.RedactText(a.Actor)), quorumActorMax), "someone"))
		if !a.At.IsZero() {
			ln.say(" at ")
			ln.time(k.at(a.At))
		}
	}
	if waiting && given < q.Need {
		ln.say("; needs " + strconv.Itoa(q.Need-given))
		if given > 0 {
			ln.say(" more")
		}
		if from := cutLine(oneLine(approval.RedactText(q.From)), lineMax); from != "" {
			ln.say(" from " + from)
		}
	}
	return ln.done(0)
}

// escalatedLines words the last escalatedMax steps fired at once, oldest
// first, and how many came before; and where each line prints a time.
func escalatedLines(es []EscalatedStep, k clock) ([]string, [][]Stamp) {
	if len(es) == 0 {
		return nil, nil
	}
	var out []string
	var times [][]Stamp
	earlier := max(len(es)-escalatedMax, 0)
	for _, e := range es[earlier:] {
		var ln line
		ln.say("Escalated now by " + cmp.Or(cutLine(oneLine(e.Actor), lineMax), "someone") + " at ")
		ln.time(k.at(e.At))
		ln.say(": " + cmp.Or(cutLine(oneLine(e.Who), planWhoMax), noTargets))
		if !e.Planned.IsZero() {
			ln.say(" (planned for ")
			ln.time(k.at(e.Planned))
			ln.say(")")
		}
		text, at := ln.done(statusMax)
		out, times = append(out, text), append(times, at)
	}
	if earlier > 0 {
		out = append(out, fmt.Sprintf("and %d earlier %s escalated now", earlier, plural(earlier, "step", "steps")))
		times = append(times, nil)
	}
	return out, times
}

// controls are the ladder's buttons a waiting card offers: I'm looking,
// and Escalate now while the plan has a step that can fire.
type controls struct {
	escalate    bool
	escalations int
	grants      bool // offer Approve and allow… (Input.Grants)
}

func ladderControls(in Input) controls {
	c := controls{escalations: len(in.Escalations)}
	for _, s := range in.Ladder.Steps {
		if !s.Skipped {
			c.escalate = c.escalations < MaxEscalations
			break
		}
	}
	return c
}

// linkable keeps only absolute http(s) links without user-info, escaped
// (escapedLink): a card is also built from approvals never parsed
// (tests, previews), and a link is one click from a person.
func linkable(s string) string {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		return ""
	}
	return escapedLink(s)
}

// escapedLink percent-encodes every byte a URL may not hold raw (RFC
// 3986), each non-ASCII byte included, so an invisible character shows as
// its escape, which a browser follows to the same place.
func escapedLink(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b.WriteByte(c)
		case c != '%' && urlRaw(c):
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// urlRaw reports whether c is an unreserved or reserved RFC 3986 character.
func urlRaw(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~:/?#[]@!$&'()*+,;=", c) >= 0
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// deadline is the ladder's deadline, else the approval's own; zero if none.
func deadline(in Input, a *approval.Approval) time.Time {
	if !in.Ladder.Deadline.IsZero() {
		return in.Ladder.Deadline.UTC()
	}
	if a.Deadline != nil {
		return a.Deadline.UTC()
	}
	return time.Time{}
}

// statusLines are the status lines with their times, message, note and tone.
type statusLines struct {
	line, detail  line
	message, note string
	tone          Tone
}

// status words the line on top, what follows it, and the tone. On a
// restricted card the comment, the reason and the backend's message are
// left out (each may quote what the card hides), and note says so.
func status(s approval.State, superseded bool, by *approval.Reask, d *approval.Decision, dl time.Time, restricted bool, k clock) statusLines {
	if d == nil {
		d = &approval.Decision{}
	}
	actor := cutLine(oneLine(approval.RedactText(d.Actor)), lineMax)
	comment := oneLine(approval.RedactText(d.Comment))
	via := ""
	if v := oneLine(approval.RedactText(d.Via)); v != "" {
		via = "via " + cutLine(v, 32)
	}
	var out statusLines
	// at says when it was decided, where the status says it below.
	at := func() {
		if !d.At.IsZero() {
			out.detail.say("at ")
			out.detail.time(k.at(d.At))
		}
	}
	// withhold keeps the comment off a restricted card, noting what.
	withhold := func(what string) {
		if restricted && comment != "" {
			comment, out.note = "", what
		}
	}
	switch {
	case superseded:
		why := "the call changed"
		if by != nil {
			why = whyPhrase(by.Why)
		}
		out.line.say(fmt.Sprintf(statusSuperseded, why))
		out.tone = ToneClosed
	case s == approval.StatePending:
		out.line.say(statusPending)
		out.tone = TonePending
	case s == approval.StateApproved:
		withhold(withheldComment)
		out.line.say("Approved")
		if actor != "" {
			out.line.say(" by " + actor)
		}
		if !d.At.IsZero() {
			out.line.say(" at ")
			out.line.time(k.at(d.At))
		}
		if comment != "" {
			out.line.say(": " + comment)
		}
		out.detail.say(via)
		out.tone = ToneApproved
	case s == approval.StateDenied:
		withhold(withheldReason)
		out.line.say("Denied")
		if actor != "" {
			out.line.say(" by " + actor)
		}
		if comment != "" {
			out.line.say(": " + comment)
		}
		at()
		if via != "" && !out.detail.empty() {
			out.detail.say(" · ")
		}
		out.detail.say(via)
		out.tone = ToneDenied
	case s == approval.StateExpired:
		// The deadline's comment is its own fixed word: never shown.
		out.line.say(statusExpired)
		if !dl.IsZero() {
			out.detail.say("deadline ")
			out.detail.time(k.dated(dl))
		}
		out.tone = ToneDenied
	case s == approval.StateCancelled:
		withhold(withheldReason)
		out.line.say("Cancelled")
		if comment != "" {
			out.line.say(": " + comment)
		}
		at()
		out.tone = ToneClosed
	case s == approval.StateRefused:
		// Said once: the status says the platform refused the approved
		// call, the line below why, without the backend's clauses around it.
		if actor != "" {
			out.line.say("The platform refused the call after " + actor + " approved it")
		} else {
			out.line.say("The platform refused the call after approval")
		}
		reason, longWait := RecheckReason(d.Message)
		out.message = cutLine(cleanText(approval.RedactText(recheckLine(reason, longWait))), messageMax)
		if restricted && strings.TrimSpace(out.message) != "" {
			out.message, out.note = "", withheldRecheck
		}
		at()
		out.tone = ToneDenied
	default:
		out.line.say("State: " + oneLine(string(s)))
		out.tone = ToneClosed
	}
	return out
}

// whyPhrase says why a call was asked again, as a clause of the bot's.
func whyPhrase(w approval.Why) string {
	switch w {
	case approval.WhyArgumentsChanged:
		return "the arguments changed"
	case approval.WhySnapshotChanged:
		return "the function's snapshot changed"
	case approval.WhyPolicyChanged:
		return "the tenant's tool policy changed"
	case approval.WhyHookChanged:
		return "a hook that checks calls before they run changed the call"
	}
	return "the call changed"
}

// reask words what a reask changed. A restricted card says only why (and
// that the arguments changed, where they did): a path or a value could
// be the content it hides.
func reask(r approval.Reask, restricted bool) *Reask {
	out := &Reask{Line: "Asked again: " + whyPhrase(r.Why)}
	if r.From > 0 {
		out.Line += " since revision " + strconv.Itoa(r.From)
	}
	if r.Why != approval.WhyArgumentsChanged && r.ArgumentsChanged() {
		out.Line += "; the arguments changed too"
	}
	if r.SnapshotFrom != "" && r.SnapshotTo != "" {
		out.Changes = append(out.Changes, "snapshot "+shortDigest(r.SnapshotFrom)+" → "+shortDigest(r.SnapshotTo))
	}
	if restricted || r.Withheld {
		return out
	}
	shown := 0
	for _, ch := range r.Arguments {
		if shown == listMax {
			break
		}
		path := cutLine(oneLine(approval.RedactText(ch.Path)), lineMax/2)
		old := cutLine(oneLine(approval.RedactText(ch.Old)), approval.ChangeValueMax)
		now := cutLine(oneLine(approval.RedactText(ch.New)), approval.ChangeValueMax)
		switch {
		case ch.Kind == approval.ChangeAdded:
			out.Changes = append(out.Changes, path+" added: "+now)
		case ch.Kind == approval.ChangeRemoved:
			out.Changes = append(out.Changes, path+" removed (was "+old+")")
		case ch.Hidden && old == now:
			// A secret or a cut value changed where the card does not
			// show it: said, never shown.
			out.Changes = append(out.Changes, path+": "+now+", changed (not shown)")
		case ch.Hidden:
			out.Changes = append(out.Changes, path+": "+old+" → "+now+" (more changed than shown)")
		default:
			out.Changes = append(out.Changes, path+": "+old+" → "+now)
		}
		shown++
	}
	if n := len(r.Arguments) - shown + r.More; n > 0 {
		out.Note = fmt.Sprintf("and %d more %s", n, plural(n, "change", "changes"))
	} else if r.Unshown {
		out.Note = "the change is in values this card does not show (redacted or cut): Show all arguments shows them"
	}
	return out
}

// shortDigest is "sha256:" and 12 hex digits: enough to tell two apart.
func shortDigest(d string) string {
	if len(d) > len("sha256:")+12 {
		return d[:len("sha256:")+12] + "…"
	}
	return d
}

// The backend's re-check message (docs/protocol.md): "The call to F was not
// made: the platform refused it: the re-check after a long wait refused
// it: <why>". These clauses say what the card's status already says.
var (
	recheckNotMade  = regexp.MustCompile(`(?i)^the call to \S+ was not made:\s*`)
	recheckPlatform = regexp.MustCompile(`(?i)^the platform refused it(?::\s*|\.?\s*$)`)
	recheckLongWait = regexp.MustCompile(`(?i)^the re-check after a long wait refused it(?::\s*|\.?\s*$)`)
	recheckAny      = regexp.MustCompile(`(?i)^the re-check refused it(?::\s*|\.?\s*$)`)
)

// RecheckReason peels the clauses that repeat the refusal off the
// backend's re-check message, and says whether it was after a long wait.
func RecheckReason(message string) (reason string, longWait bool) {
	r := strings.TrimSpace(message)
	r = recheckNotMade.ReplaceAllString(r, "")
	r = recheckPlatform.ReplaceAllString(r, "")
	if loc := recheckLongWait.FindStringIndex(r); loc != nil {
		r, longWait = r[loc[1]:], true
	} else {
		r = recheckAny.ReplaceAllString(r, "")
	}
	return strings.TrimSpace(r), longWait
}

// recheckLine is the card's line below a refusal's status.
func recheckLine(reason string, longWait bool) string {
	switch {
	case longWait && reason != "":
		return "Re-checked after a long wait: " + reason
	case longWait:
		return "Re-checked after a long wait."
	}
	// The backend's words as written: they are not the bot's to reword.
	return reason
}

// clock words the times a card prints: in the tenant's zone, with the
// date when a time is not on the day the card is shown.
type clock struct {
	zone  *time.Location
	today time.Time
}

func newClock(in Input, a *approval.Approval) clock {
	k := clock{zone: in.Zone, today: in.Now}
	if k.zone == nil {
		k.zone = time.UTC
	}
	if k.today.IsZero() {
		k.today = a.RequestedAt
	}
	return k
}

// at is t as "14:03 UTC" on the card's day, else with its date.
func (k clock) at(t time.Time) Stamp {
	in := t.In(k.zone)
	if k.today.IsZero() || !sameDay(in, k.today.In(k.zone)) {
		return k.dated(t)
	}
	return Stamp{Text: in.Format(timeOfDay), At: t}
}

// dated is t always with its date: "2026-11-30 18:00 UTC".
func (k clock) dated(t time.Time) Stamp {
	return Stamp{Text: t.In(k.zone).Format(dateAndTime), At: t}
}

// line is a line of a card being written, and where it prints each time.
type line struct {
	text   string
	stamps []Stamp
}

func (l *line) say(s string) { l.text += s }

// time prints s where the line has got to.
func (l *line) time(s Stamp) {
	s.Off = len(l.text)
	l.text += s.Text
	l.stamps = append(l.stamps, s)
}

func (l *line) empty() bool { return l.text == "" }

// done is the line, cut to max characters unless max is 0, and the times
// the cut left whole.
func (l *line) done(max int) (string, []Stamp) {
	s := l.text
	if max > 0 {
		s = cutLine(s, max)
	}
	var kept []Stamp
	for _, st := range l.stamps {
		if end := st.Off + len(st.Text); end <= len(s) && s[st.Off:end] == st.Text {
			kept = append(kept, st)
		}
	}
	return s, kept
}

// decidingStatus words a decision on its way to the backend, when, and
// the person's comment, which a restricted card leaves out and notes.
func decidingStatus(d *Deciding, restricted bool, k clock) statusLines {
	out := statusLines{tone: TonePending}
	noun, what := "denial", "a denial"
	if d.Approve {
		noun, what = "approval", "an approval"
	}
	if actor := cutLine(oneLine(approval.RedactText(d.Actor)), lineMax); actor != "" {
		what = actor + "'s " + noun
	}
	if !d.At.IsZero() {
		out.detail.say("at ")
		out.detail.time(k.at(d.At))
	}
	if d.Deadline {
		out.line.say(statusDeadlineDue)
		return out
	}
	out.line.say(fmt.Sprintf(statusDecidingFmt, what))
	comment := oneLine(approval.RedactText(d.Comment))
	switch {
	case comment == "":
	case restricted && d.Approve:
		out.note = withheldComment
	case restricted:
		out.note = withheldReason
	default:
		label := "reason: "
		if d.Approve {
			label = "comment: "
		}
		if !out.detail.empty() {
			out.detail.say(" · ")
		}
		out.detail.say(label + comment)
	}
	return out
}

// headline is one line for notifications and subjects: what happened.
func headline(c *Card) string {
	f := cutLine(c.Function, 120)
	var h string
	switch {
	case c.Superseded:
		h = f + " changed: see the new card"
	case c.Deciding:
		h = f + ": a decision is being sent"
	case c.State == approval.StatePending:
		h = f + " waits for a decision"
		if first, _, _ := strings.Cut(c.Effect, " · "); first != "" {
			h += " (" + first + ")"
		}
	case c.State == approval.StateApproved:
		h = f + " was approved"
	case c.State == approval.StateDenied:
		h = f + " was denied"
	case c.State == approval.StateExpired:
		h = f + " was denied: nobody answered by the deadline"
	case c.State == approval.StateCancelled:
		h = f + " was cancelled"
	case c.State == approval.StateRefused:
		h = f + " was refused by the platform after approval"
	default:
		h = f + ": " + string(c.State)
	}
	return h
}

// arguments projects the call's arguments again and cuts them at 2 KB.
func arguments(a *approval.Approval) *Arguments {
	raw := bytes.TrimSpace(a.Call.Arguments)
	if len(raw) == 0 {
		raw = []byte("{}")
	}
	out := &Arguments{}
	var marks []string
	p, err := approval.Project(raw)
	if err != nil {
		out.CutNote = argsUnreadable
		return out
	}
	var buf bytes.Buffer
	buf.Grow(len(p.JSON) * 2)
	if err := json.Indent(&buf, p.JSON, "", "  "); err != nil {
		buf.Reset()
		buf.Write(p.JSON)
	}
	text, cut := cutAtLine(visibleJSON(buf.String()), argumentsPreviewMax)
	out.JSON = text
	// Whatever cut the arguments (ours, the backend's, either projection),
	// the reader learns how to see all of them.
	if cut || a.Call.ArgumentsCut || p.Truncated || a.Call.Redaction.Truncated {
		out.CutNote = argsCutNote
	}
	if p.Redacted || a.Call.Redaction.Redacted {
		marks = append(marks, "redacted")
	}
	if p.Truncated || a.Call.Redaction.Truncated {
		marks = append(marks, "truncated")
	}
	out.Marks = strings.Join(marks, " · ")
	return out
}

// showAll reports whether the projection was cut, redacted or truncated.
func (x *Arguments) showAll() bool {
	return x != nil && (x.CutNote != "" || x.Marks != "")
}

// roles words the rows of marked arguments and their notes, in the order
// docs/cards.md#argument-roles-which-values-in-which-order gives, so a cut
// never hides the values that matter.
func roles(a *approval.Approval) *Roles {
	if len(a.Roles) == 0 {
		return nil
	}
	type cand struct {
		role, value int
		rank        int // 0 out of scope, 1 new to the job, 2 the rest
	}
	var all []cand
	args := make([]string, len(a.Roles))  // each role's argument as rows and notes name it
	outOf := make([]int, len(a.Roles))    // each role's values out of scope
	shown := make([]int, len(a.Roles))    // each role's values in a row
	shownOut := make([]int, len(a.Roles)) // and those of them out of scope
	for i, role := range a.Roles {
		args[i] = roleArgument(role)
		newToJob := a.NewToJob(role.Argument)
		for j, v := range role.Values {
			c := cand{role: i, value: j, rank: 2}
			switch {
			case v.IsOutOfScope():
				c.rank = 0
				outOf[i]++
			case newToJob:
				c.rank = 1
			}
			all = append(all, c)
		}
	}
	slices.SortStableFunc(all, func(x, y cand) int { return x.rank - y.rank })
	if len(all) > roleRowsMax {
		all = all[:roleRowsMax]
	}
	r := &Roles{}
	for _, c := range all {
		role := a.Roles[c.role]
		v := role.Values[c.value]
		out := c.rank == 0
		r.Rows = append(r.Rows, RoleRow{
			Argument:   args[c.role],
			Role:       oneLine(string(role.Role)),
			Value:      cutLine(oneLine(role.RoleValueShown(v)), roleValueMax),
			Origin:     cutLine(oneLine(approval.OriginPhrase(v.Origin)), lineMax),
			OutOfScope: out,
		})
		shown[c.role]++
		if out {
			shownOut[c.role]++
		}
	}
	// Notes that count out-of-scope values or values not compared come
	// first, then what the backend left out (unknown scope), then the rest.
	var counted, unknown, notes []roleNote
	for i, role := range a.Roles {
		arg, outLeft := args[i], outOf[i]-shownOut[i]
		if left := len(role.Values) - shown[i]; left > 0 {
			n := roleNote{text: fmt.Sprintf("%d more %s of %s left out", left, plural(left, "value", "values"), arg), out: outLeft}
			if outLeft > 0 {
				n.text += fmt.Sprintf(" (%d of them out of scope)", outLeft)
				counted = append(counted, n)
			} else {
				notes = append(notes, n)
			}
		}
		if role.LeftOut > 0 {
			unknown = append(unknown, roleNote{text: backendLeftOut(role.LeftOut, arg), unknown: true})
		}
		if role.NotCompared {
			counted = append(counted, roleNote{text: arg + ": not compared past 200 values (counts as out of scope and new to the job)", unknown: true})
		}
	}
	r.Table = roleTable(r.Rows)
	r.Notes = limitRoleNotes(slices.Concat(counted, unknown, notes))
	return r
}

// roleColumns label the role table's columns; roleColumnMax bounds the
// width a column is padded to, so one long cell only widens its own row.
var (
	roleColumns   = [4]string{"argument", "role", "value", "came from"}
	roleColumnMax = [3]int{24, 16, 40}
)

// roleTable lays the rows out under their columns' labels, aligned for a
// monospaced block, an out-of-scope row marked "⚠" and said so.
func roleTable(rows []RoleRow) string {
	if len(rows) == 0 {
		return ""
	}
	cells := make([][4]string, 0, len(rows)+1)
	cells = append(cells, roleColumns)
	for _, row := range rows {
		from := row.Origin
		if row.OutOfScope {
			from += ", out of scope"
		}
		cells = append(cells, [4]string{row.Argument, row.Role, row.Value, from})
	}
	var width [3]int
	for _, c := range cells {
		for i := range width {
			width[i] = max(width[i], min(utf8.RuneCountInString(c[i]), roleColumnMax[i]))
		}
	}
	var t strings.Builder
	for i, c := range cells {
		if i > 0 {
			t.WriteByte('\n')
		}
		if i > 0 && rows[i-1].OutOfScope {
			t.WriteString("⚠ ")
		} else {
			t.WriteString("  ")
		}
		for j := range width {
			t.WriteString(c[j])
			t.WriteString(strings.Repeat(" ", max(width[j]-utf8.RuneCountInString(c[j]), 0)+2))
		}
		t.WriteString(c[3])
	}
	return t.String()
}

// roleNote is one note under the role rows: its line, the out-of-scope
// values it counts, and whether it counts values of unknown scope.
type roleNote struct {
	text    string
	out     int
	unknown bool
}

// roleArgument is a role's argument as its row and notes name it: from
// the request, so redacted as free text is.
func roleArgument(role approval.Role) string {
	return cutLine(oneLine(approval.RedactText(role.Argument)), lineMax)
}

// backendLeftOut words the values the job backend left out of a role,
// whose scope the card cannot know.
func backendLeftOut(n int, arg string) string {
	return fmt.Sprintf("%d more %s of %s left out by the job backend (not known whether any is out of scope)",
		n, plural(n, "value", "values"), arg)
}

// limitRoleNotes keeps the first listMax notes; the line for the rest
// counts their out-of-scope values and unknown scopes, so every
// out-of-scope value is in a row or counted.
func limitRoleNotes(ns []roleNote) []string {
	out := make([]string, 0, min(len(ns), listMax+1))
	for i, n := range ns {
		if i < listMax {
			out = append(out, cutLine(oneLine(n.text), lineMax))
			continue
		}
		rest, outOf, unknown := len(ns)-listMax, 0, 0
		for _, m := range ns[listMax:] {
			outOf += m.out
			if m.unknown {
				unknown++
			}
		}
		line := fmt.Sprintf("and %d more %s", rest, plural(rest, "note", "notes"))
		var among []string
		if outOf > 0 {
			among = append(among, fmt.Sprintf("%d %s out of scope among them", outOf, plural(outOf, "value", "values")))
		}
		if unknown > 0 {
			among = append(among, fmt.Sprintf("%d of them on values whose scope is not known", unknown))
		}
		if len(among) > 0 {
			line += " (" + strings.Join(among, "; ") + ")"
		}
		out = append(out, line)
		break
	}
	return out
}

// restrictedRoleLine is "ARG (ROLE): WHAT (NOTE)" within lineMax, cut so
// that the note stays whole.
func restrictedRoleLine(role approval.Role, says []string) string {
	head := cutLine(roleArgument(role), restrictedArgMax) + " (" + cutLine(oneLine(string(role.Role)), restrictedArgMax/2) + "): "
	tail := " (" + restrictedRoleNote + ")"
	return head + cutLine(strings.Join(says, "; "), lineMax-charLen(head)-charLen(tail)) + tail
}

// restrictedRoles is what a restricted card says of the role values it
// hides: per argument, its counts and flags, never a value; nil when no
// argument has anything to say. A stored restricted revision keeps the
// scopes without the values, so the counts survive storing.
func restrictedRoles(a *approval.Approval) *Roles {
	var ns []roleNote
	for _, role := range a.Roles {
		out := 0
		for _, v := range role.Values {
			if v.IsOutOfScope() {
				out++
			}
		}
		var says []string
		if out > 0 {
			says = append(says, fmt.Sprintf("%d %s out of scope", out, plural(out, "value", "values")))
		}
		if a.NewToJob(role.Argument) {
			says = append(says, "new to this job")
		}
		if role.LeftOut > 0 {
			says = append(says, fmt.Sprintf("%d more left out by the job backend, scope not known", role.LeftOut))
		}
		if role.NotCompared {
			says = append(says, "not compared past 200 values")
		}
		if len(says) == 0 {
			continue
		}
		ns = append(ns, roleNote{
			text:    restrictedRoleLine(role, says),
			out:     out,
			unknown: role.LeftOut > 0 || role.NotCompared,
		})
	}
	if len(ns) == 0 {
		return nil
	}
	return &Roles{Notes: limitRoleNotes(ns)}
}

func changes(a *approval.Approval, restricted bool) *Changes {
	ch := a.Changes
	if ch == nil {
		return nil
	}
	files := append([]approval.ChangedFile(nil), ch.Files...)
	sort.SliceStable(files, func(i, j int) bool { return files[i].Protected && !files[j].Protected })
	protected := 0
	for _, f := range files {
		if f.Protected {
			protected++
		}
	}
	c := &Changes{Summary: fmt.Sprintf("%d %s", len(files), plural(len(files), "file", "files"))}
	if protected > 0 {
		c.Summary += fmt.Sprintf(", %d of them protected", protected)
	}
	if protected > 0 || a.Kind == approval.KindProtectedPaths {
		c.ProtectedNote = protectedNote
	}
	if a.Kind == approval.KindProtectedPaths {
		starter := ""
		if s := cutLine(oneLine(approval.RedactText(a.Job.StartedBy)), lineMax); s != "" {
			starter = " (" + s + ")"
		}
		c.GovernanceNote = fmt.Sprintf(governanceNoteFmt, starter)
	}
	if restricted {
		return c
	}
	for i, f := range files {
		if i == filesMax {
			n := len(files) - filesMax
			c.FilesNote = fmt.Sprintf("and %d more %s", n, plural(n, "file", "files"))
			break
		}
		c.Files = append(c.Files, ChangedFile{Path: cutLine(oneLine(approval.RedactText(f.Path)), lineMax), Protected: f.Protected})
	}
	if ch.Patch != "" {
		patch, cut := cutAtLine(strings.TrimRight(approval.RedactText(cleanText(ch.Patch)), "\n"), patchPreviewMax)
		c.Patch = patch
		if cut || ch.PatchCut {
			c.PatchCutNote = patchCutNote
		}
	}
	if approval.ValidDigest(ch.PatchSHA256) {
		c.PatchDigest = ch.PatchSHA256
	}
	return c
}

// agentWords are the agent's words redacted of secret shapes and cleaned
// of what would hide or reorder them, whole: what agentSays bounds.
func agentWords(s string) string {
	return strings.TrimSpace(approval.RedactText(cleanText(s)))
}

// agentSays is agentWords cut at agentSaysMax, the bound every surface's
// card keeps.
func agentSays(s string) string { return cutAgentWords(agentWords(s)) }

// cutAgentWords cuts words agentWords gave at agentSaysMax, saying so.
func cutAgentWords(s string) string {
	if charLen(s) > agentSaysMax {
		s = prefixChars(s, agentSaysMax-charLen(agentSaysCutNote)) + agentSaysCutNote
	}
	return s
}

func turn(waiting []string) string {
	n := len(waiting)
	if n == 0 {
		return ""
	}
	// The names come from the request: redacted as free text is.
	redacted := make([]string, n)
	for i, w := range waiting {
		redacted[i] = approval.RedactText(w)
	}
	names := limitList(redacted, listMax, func(k int) string { return fmt.Sprintf("and %d more", k) })
	return fmt.Sprintf("%d other %s of this turn %s with it: %s",
		n, plural(n, "call", "calls"), plural(n, "waits", "wait"), strings.Join(names, ", "))
}

// planLine words the frozen plan on one line, as
// docs/cards.md#plan-the-escalation-ladder-shown-once shows it. Nothing in
// it depends on which steps have fired, so firing one edits no card.
func planLine(l LadderPlan, dl, requested time.Time, k clock) *line {
	steps := slices.Clone(l.Steps)
	slices.SortStableFunc(steps, func(a, b PlanStep) int { return a.shownAt().Compare(b.shownAt()) })
	var ln line
	sep := func() {
		if ln.empty() {
			ln.say(planPrefix)
		} else {
			ln.say(" · ")
		}
	}
	runs, skipped, hidden := 0, 0, 0
	more := func() {
		if hidden > 0 {
			sep()
			ln.say(fmt.Sprintf("and %d more %s", hidden, plural(hidden, "step", "steps")))
			hidden = 0
		}
	}
	for _, e := range repeats(steps) {
		s := e.first
		if (s.Skipped && skipped == planSkippedMax) || (!s.Skipped && runs == planStepsMax) {
			hidden++
			continue
		}
		more()
		sep()
		ln.time(k.at(s.shownAt()))
		ln.say(" " + cmp.Or(cutLine(oneLine(s.Who), planWhoMax), noTargets))
		if e.more > 0 {
			ln.say(", then " + every(s.Every) + ", " + strconv.Itoa(e.more) + " more " + plural(e.more, "time", "times"))
		}
		if s.Skipped {
			ln.say(" (skipped: " + string(skipReason(s, requested)) + ")")
			skipped++
		} else {
			runs++
		}
	}
	more()
	if !dl.IsZero() {
		if !ln.empty() {
			ln.say(" · ")
		}
		ln.say("deadline ")
		ln.time(k.dated(dl))
		ln.say(" " + deadlineMeansNo)
	}
	return &ln
}

// planEntry is one entry of the plan line: a step and how many of its
// repetitions, each Every after the one before, it stands for.
type planEntry struct {
	first PlanStep
	more  int
}

// repeats says each run of a repeating step once: its first firing, and
// each repetition that fires Every after the one before and tells the
// same people, counted with it. A repetition skipped, or moved by its
// window, stays an entry of its own, as does one a rotation's hand-off
// gives to someone else.
func repeats(steps []PlanStep) []planEntry {
	out := make([]planEntry, 0, len(steps))
	last := map[int]int{} // a step's Index to its open entry in out
	prev := map[int]PlanStep{}
	for _, s := range steps {
		if i, ok := last[s.Index]; ok && !s.Skipped && s.Every > 0 && s.HeldFrom.IsZero() {
			p := prev[s.Index]
			if s.Repeat == p.Repeat+1 && s.At.Equal(p.At.Add(s.Every)) && s.Who == p.Who {
				out[i].more++
				prev[s.Index] = s
				continue
			}
		}
		delete(last, s.Index)
		if !s.Skipped && s.Every > 0 {
			last[s.Index], prev[s.Index] = len(out), s
		}
		out = append(out, planEntry{first: s})
	}
	return out
}

// every words a repetition's interval: "every 30 minutes", "every hour".
func every(d time.Duration) string {
	if d%time.Second != 0 {
		return "every " + d.String()
	}
	var parts []string
	for _, u := range []struct {
		d         time.Duration
		one, many string
	}{{time.Hour, "hour", "hours"}, {time.Minute, "minute", "minutes"}, {time.Second, "second", "seconds"}} {
		if n := int(d / u.d); n > 0 {
			parts = append(parts, strconv.Itoa(n)+" "+plural(n, u.one, u.many))
			d -= time.Duration(n) * u.d
		}
	}
	if len(parts) == 1 && strings.HasPrefix(parts[0], "1 ") {
		return "every " + strings.TrimPrefix(parts[0], "1 ")
	}
	return "every " + strings.Join(parts, " ")
}

// skipReason is why s, skipped, will not run: the plan's reason, or for
// a plan that gave none, whether it falls before the request.
func skipReason(s PlanStep, requested time.Time) SkipReason {
	switch {
	case s.Skip != "":
		return s.Skip
	case !requested.IsZero() && s.At.Before(requested):
		return SkipBeforeRequest
	}
	return SkipAfterDeadline
}

// ladderNote says the request named a ladder the tenant lacks, and which ran.
func ladderNote(l LadderPlan, tenant string) string {
	if l.Unknown == "" {
		return ""
	}
	name := cmp.Or(cutLine(oneLine(l.Name), 64), "default")
	of := "this tenant"
	if tenant != "" {
		of = "tenant " + tenant
	}
	return fmt.Sprintf("The request named ladder %q, which %s does not have, so the %s ladder runs as if it named none.",
		cutLine(oneLine(approval.RedactText(l.Unknown)), 64), of, name)
}

// sameDay reports whether a and b fall on the same date, each in its own
// location (the callers put both in the tenant's zone).
func sameDay(a, b time.Time) bool {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	return ay == by && am == bm && ad == bd
}

// buttons decides a pending card's controls: Deny as prominent as
// Approve, first where approval.DenyFirst, alone where only the console
// may approve; the ladder's; then Show all arguments or Show details,
// which decide nothing and so stay while a decision is being sent.
func buttons(a *approval.Approval, c *Card, waiting bool, lc controls) []Button {
	mk := func(k ActionKind) (Action, string, bool) {
		act := Action{Kind: k, ApprovalID: a.ID, Revision: a.Revision}
		if k == ActionEscalate {
			act.Escalations = lc.escalations
		}
		p := EncodeAction(act)
		_, err := ParseAction(p)
		return act, p, err == nil
	}
	var out []Button
	add := func(b Button, k ActionKind) {
		act, p, ok := mk(k)
		if !ok {
			return // an id or revision no valid event carries: no control can work
		}
		b.Action, b.Payload = act, p
		out = append(out, b)
	}
	denyFirst := a.DenyFirst()
	deny := Button{Label: labelDeny, Style: StyleDanger, Default: denyFirst}
	approve := Button{Label: labelApprove, Style: StylePrimary}
	if a.Destructive() {
		approve.Confirm = &Confirmation{
			Title:   confirmTitle,
			Text:    cutLine(c.Function+" is "+c.Effect+". Approve it?", confirmTextMax),
			Confirm: labelApprove,
			Cancel:  confirmCancel,
		}
	}
	// Approve with comment…'s comment goes to the backend and onto the
	// card, but never onto a restricted card's shared copies.
	note := Button{Label: labelApproveNote}
	switch {
	case !waiting:
	case !a.ChatMayApprove():
		add(deny, ActionDeny)
	case denyFirst:
		add(deny, ActionDeny)
		add(approve, ActionApprove)
		add(note, ActionApproveNote)
	default:
		add(approve, ActionApprove)
		add(deny, ActionDeny)
		add(note, ActionApproveNote)
	}
	if waiting && a.ChatMayApprove() && lc.grants {
		// Opens the grant dialog; nothing is decided by the click.
		add(Button{Label: labelApproveGrant}, ActionGrant)
	}
	// The ladder's controls decide nothing: a call that only the console
	// may approve still has a ladder to hold or to hurry.
	if waiting {
		add(Button{Label: labelLook}, ActionLook)
		if lc.escalate {
			add(Button{Label: labelEscalate}, ActionEscalate)
		}
	}
	if c.Restricted {
		add(Button{Label: labelShowDetails}, ActionShowDetails)
	} else if c.Arguments.showAll() {
		add(Button{Label: labelShowArgs}, ActionShowArgs)
	}
	return out
}

// limitFlags bounds the flag lines without losing a kind (the words
// before a line's first colon): every kind keeps its first line, and what
// is left out of a kind is said after its last line shown.
func limitFlags(lines []string) []string {
	kindOf := func(l string) string {
		k, _, _ := strings.Cut(l, ":")
		return k
	}
	kept := map[string]int{}
	omitted := map[string]int{}
	var out []string
	shown := 0
	flush := func(kind string) {
		if n := omitted[kind]; n > 0 {
			out = append(out, fmt.Sprintf("and %d more: %s", n, cutLine(kind, lineMax)))
			omitted[kind] = 0
		}
	}
	for i, l := range lines {
		k := kindOf(l)
		if shown < listMax || (kept[k] == 0 && shown < 2*listMax) {
			out = append(out, cutLine(oneLine(l), lineMax))
			kept[k]++
			shown++
		} else {
			omitted[k]++
		}
		if i+1 == len(lines) || kindOf(lines[i+1]) != k {
			flush(k)
		}
	}
	return out
}
