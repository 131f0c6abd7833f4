package templates

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"approvalsbot/approval"
)

// Turn buttons: Deny all and Approve all N of a turn card. Their payload
// names one member of the turn (the card's own) and a check over every
// member the card showed, each with the revision shown, so a batch is
// bound to what the person saw: a reask of any member, or a member that
// arrived since, changes the check and the batch is refused whole.
const (
	ActionTurnApprove ActionKind = "turn_approve"
	ActionTurnDeny    ActionKind = "turn_deny"
)

// TurnAction is the payload of Deny all or Approve all N.
type TurnAction struct {
	Approve    bool
	ApprovalID string // a member of the turn: the card's own
	Check      string // TurnCheck of the members shown, TurnCheckLen hex digits
}

// TurnCheckLen is the length of a turn action's check: 16 hex digits
// keep "ab1|turn_approve|" + a 64-byte id + "|" + the check within
// MaxActionLen.
const TurnCheckLen = 16

// TurnMember is one member of a turn as a card shows it.
type TurnMember struct {
	ApprovalID string
	Revision   int
}

// TurnCheck is the check a turn action carries for members, in the
// turn's order: the first TurnCheckLen hex digits of SHA-256 over each
// id and revision. It is linear in the members.
func TurnCheck(members []TurnMember) string {
	h := sha256.New()
	for _, m := range members {
		h.Write([]byte(m.ApprovalID))
		h.Write([]byte{0})
		h.Write([]byte(strconv.Itoa(m.Revision)))
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))[:TurnCheckLen]
}

// EncodeTurnAction writes a as "ab1|turn_approve|a-7Q2K9|<check>".
func EncodeTurnAction(a TurnAction) string {
	kind := ActionTurnDeny
	if a.Approve {
		kind = ActionTurnApprove
	}
	return actionPrefix + actionSep + string(kind) + actionSep + a.ApprovalID + actionSep + a.Check
}

// IsTurnAction reports whether s claims to be a turn action, so a surface
// knows which parser to give it; ParseTurnAction still decides.
func IsTurnAction(s string) bool {
	return strings.HasPrefix(s, actionPrefix+actionSep+string(ActionTurnApprove)+actionSep) ||
		strings.HasPrefix(s, actionPrefix+actionSep+string(ActionTurnDeny)+actionSep)
}

// ParseTurnAction reads a payload EncodeTurnAction wrote, strictly; any
// other is an error wrapping ErrBadAction.
func ParseTurnAction(s string) (TurnAction, error) {
	if len(s) > MaxActionLen {
		return TurnAction{}, fmt.Errorf("%w: longer than %d bytes", ErrBadAction, MaxActionLen)
	}
	parts := strings.Split(s, actionSep)
	if len(parts) != 4 || parts[0] != actionPrefix {
		return TurnAction{}, fmt.Errorf("%w: want ab1|turn_approve or turn_deny|approval id|check", ErrBadAction)
	}
	var a TurnAction
	switch ActionKind(parts[1]) {
	case ActionTurnApprove:
		a.Approve = true
	case ActionTurnDeny:
	default:
		return TurnAction{}, fmt.Errorf("%w: unknown kind %q", ErrBadAction, cutLine(parts[1], 20))
	}
	if !approval.ValidID(parts[2]) {
		return TurnAction{}, fmt.Errorf("%w: the approval id is not 1–64 of [A-Za-z0-9._:-]", ErrBadAction)
	}
	c := parts[3]
	if len(c) != TurnCheckLen {
		return TurnAction{}, fmt.Errorf("%w: the check is not %d lowercase hex digits", ErrBadAction, TurnCheckLen)
	}
	for i := 0; i < len(c); i++ {
		if !('0' <= c[i] && c[i] <= '9' || 'a' <= c[i] && c[i] <= 'f') {
			return TurnAction{}, fmt.Errorf("%w: the check is not %d lowercase hex digits", ErrBadAction, TurnCheckLen)
		}
	}
	a.ApprovalID, a.Check = parts[2], c
	return a, nil
}
