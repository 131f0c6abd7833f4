package templates

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"approvalsbot/approval"
)

// ActionKind is what a button asks the bot to do.
type ActionKind string

// The actions a card's buttons carry.
const (
	ActionApprove ActionKind = "approve"
	ActionDeny    ActionKind = "deny"
	// ActionApproveNote opens a dialog that approves with a comment.
	ActionApproveNote ActionKind = "approve_note"
	ActionShowArgs    ActionKind = "show_args"    // answer the clicker alone with the whole arguments
	ActionShowDetails ActionKind = "show_details" // answer the clicker alone with the restricted details
	// ActionLook is "I'm looking": the ladder holds its next steps a while.
	ActionLook ActionKind = "look"
	// ActionEscalate is "Escalate now": the ladder's next step fires at
	// once. Its payload counts the steps the card showed fired already
	// (Action.Escalations), so two presses of one card fire one step.
	ActionEscalate ActionKind = "escalate"
	// ActionApproveSeen is the Approve of the private answer that showed a
	// content holder a restricted call's content (their Approve on the
	// card does not decide blind); it decides the card's revision.
	ActionApproveSeen ActionKind = "approve_seen"
	// ActionApproveNoteSeen is that private answer's Approve with comment….
	ActionApproveNoteSeen ActionKind = "note_seen"
	// ActionGrant is "Approve and allow…": it opens the grant dialog,
	// whose submission approves the revision with a grant
	// (docs/protocol.md#grants).
	ActionGrant ActionKind = "grant"
	// ActionRevokeGrant is /approvals grants' Revoke: its ApprovalID holds
	// the grant's id (g-…) and its Revision is 1.
	ActionRevokeGrant ActionKind = "revoke"
)

// Seen reports whether k is ActionApproveSeen or ActionApproveNoteSeen.
func (k ActionKind) Seen() bool {
	return k == ActionApproveSeen || k == ActionApproveNoteSeen
}

// ActionKinds lists every kind, so tests can cover them all.
func ActionKinds() []ActionKind {
	return []ActionKind{ActionApprove, ActionDeny, ActionApproveNote, ActionShowArgs, ActionShowDetails, ActionLook, ActionEscalate, ActionApproveSeen, ActionApproveNoteSeen, ActionGrant, ActionRevokeGrant,
		ActionAnswer, ActionAnswerText}
}

// Action is the payload of a button: which approval, which revision of it
// (a click on a superseded card must be refused, not applied to the new
// call), and what to do.
type Action struct {
	Kind       ActionKind
	ApprovalID string
	Revision   int
	// Escalations is ActionEscalate's count (0 to MaxEscalations), else 0.
	Escalations int
	// Choice is ActionAnswer's choice, its index in the question's
	// choices (0 to approval.MaxChoices-1), else 0.
	Choice int
}

// MaxEscalations bounds the steps one approval's members may fire at
// once: three digits keep the longest encoding within Discord's custom_id.
const MaxEscalations = 999

// actionPrefix versions the encoding and marks it as ours, so a payload of
// another app or an older format is refused rather than guessed at.
const actionPrefix = "ab1"

// actionSep separates the parts; approval ids cannot hold it.
const actionSep = "|"

// MaxActionLen is Discord's custom_id: the platforms' smallest payload.
const MaxActionLen = 100

// maxRevisionDigits keeps every encoding within Discord's custom_id:
// "ab1|show_details|" + a 64-byte id + "|" leaves 18 of 100, as does
// "ab1|escalate|" + a 64-byte id + "|" with "|999" after the revision.
const maxRevisionDigits = 18

// ErrBadAction is wrapped by every ParseAction error.
var ErrBadAction = errors.New("not a card action")

// EncodeAction writes a as a button payload: "ab1|approve|a-7Q2K9|1", or
// "ab1|escalate|a-7Q2K9|1|0". For every valid action the result fits
// Slack's action_id and value and Discord's custom_id (MaxActionLen), and
// ParseAction returns a again.
func EncodeAction(a Action) string {
	s := actionPrefix + actionSep + string(a.Kind) + actionSep + a.ApprovalID + actionSep + strconv.Itoa(a.Revision)
	switch a.Kind {
	case ActionEscalate:
		s += actionSep + strconv.Itoa(a.Escalations)
	case ActionAnswer:
		s += actionSep + strconv.Itoa(a.Choice)
	}
	return s
}

// ParseAction reads a payload that EncodeAction wrote, strictly: button
// payloads come back from the platform untrusted, so anything else is an
// error wrapping ErrBadAction.
func ParseAction(s string) (Action, error) {
	if len(s) > MaxActionLen {
		return Action{}, fmt.Errorf("%w: longer than %d bytes", ErrBadAction, MaxActionLen)
	}
	parts := strings.Split(s, actionSep)
	if len(parts) < 2 || parts[0] != actionPrefix {
		return Action{}, fmt.Errorf("%w: want ab1|kind|approval id|revision", ErrBadAction)
	}
	kind := ActionKind(parts[1])
	want := 4
	switch kind {
	case ActionApprove, ActionDeny, ActionApproveNote, ActionShowArgs, ActionShowDetails, ActionLook, ActionApproveSeen, ActionApproveNoteSeen, ActionGrant, ActionRevokeGrant,
		ActionAnswerText:
	case ActionEscalate, ActionAnswer:
		want = 5
	default:
		return Action{}, fmt.Errorf("%w: unknown kind %q", ErrBadAction, cutLine(parts[1], 20))
	}
	if len(parts) != want {
		if kind == ActionAnswer {
			return Action{}, fmt.Errorf("%w: want ab1|answer|approval id|revision|choice", ErrBadAction)
		}
		if want == 5 {
			return Action{}, fmt.Errorf("%w: want ab1|escalate|approval id|revision|escalations", ErrBadAction)
		}
		return Action{}, fmt.Errorf("%w: want ab1|kind|approval id|revision", ErrBadAction)
	}
	if !approval.ValidID(parts[2]) {
		return Action{}, fmt.Errorf("%w: the approval id is not 1–64 of [A-Za-z0-9._:-]", ErrBadAction)
	}
	rev := parts[3]
	if rev == "" || len(rev) > maxRevisionDigits || rev[0] < '1' || rev[0] > '9' {
		return Action{}, fmt.Errorf("%w: the revision is not a decimal ≥ 1", ErrBadAction)
	}
	for i := 1; i < len(rev); i++ {
		if rev[i] < '0' || rev[i] > '9' {
			return Action{}, fmt.Errorf("%w: the revision is not a decimal ≥ 1", ErrBadAction)
		}
	}
	n, err := strconv.Atoi(rev)
	if err != nil {
		return Action{}, fmt.Errorf("%w: the revision is out of range", ErrBadAction)
	}
	a := Action{Kind: kind, ApprovalID: parts[2], Revision: n}
	switch kind {
	case ActionEscalate:
		if a.Escalations, err = escalations(parts[4]); err != nil {
			return Action{}, err
		}
	case ActionAnswer:
		if a.Choice, err = choice(parts[4]); err != nil {
			return Action{}, err
		}
	}
	return a, nil
}

// escalations reads Escalate now's count: "0", or a decimal without a
// leading zero, at most MaxEscalations.
func escalations(s string) (int, error) {
	bad := fmt.Errorf("%w: the escalation count is not a decimal from 0 to %d", ErrBadAction, MaxEscalations)
	if s == "" || len(s) > len(strconv.Itoa(MaxEscalations)) || (s[0] == '0' && s != "0") {
		return 0, bad
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || n > MaxEscalations {
		return 0, bad
	}
	return n, nil
}

// choice reads ActionAnswer's choice: "0", or a decimal without a
// leading zero, below approval.MaxChoices.
func choice(s string) (int, error) {
	bad := fmt.Errorf("%w: the choice is not a decimal from 0 to %d", ErrBadAction, approval.MaxChoices-1)
	if s == "" || len(s) > 2 || (s[0] == '0' && s != "0") {
		return 0, bad
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, bad
		}
		n = n*10 + int(s[i]-'0')
	}
	if n >= approval.MaxChoices {
		return 0, bad
	}
	return n, nil
}
