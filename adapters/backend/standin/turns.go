package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
)

// TurnDecisionRequest is a turn's batch decision as the backend read it
// (docs/protocol.md#turns).
type TurnDecisionRequest struct {
	TurnID    string             `json:"turn_id"`
	Decision  string             `json:"decision"`
	Actor     string             `json:"actor"`
	Via       Via                `json:"via"`
	Comment   string             `json:"comment"`
	Decisions []TurnDecisionItem `json:"decisions"`
}

// TurnDecisionItem is one member of a batch; ArgsSHA256 "" when absent.
type TurnDecisionItem struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	ArgsSHA256 string `json:"args_sha256,omitempty"`
}

// ReceivedTurnDecision is one batch request and the backend's answer.
type ReceivedTurnDecision struct {
	TurnID         string // from the path
	IdempotencyKey string
	SignatureOK    bool
	Body           []byte
	Request        TurnDecisionRequest // zero when the body was not read
	Status         int
	Code           string
	ApprovalID     string // the member a refusal names
	Replay         bool
}

var turnSchema = strictjson.For[TurnDecisionRequest]()

// TurnDecisions lists every batch decision received, in order.
func (b *Backend) TurnDecisions() []ReceivedTurnDecision {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]ReceivedTurnDecision(nil), b.turnDecisions...)
}

func (b *Backend) serveTurnDecision(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	c.id = r.PathValue("turn_id")
	b.mu.Lock()
	defer b.mu.Unlock()
	ans := b.receive(r, &c, err)
	rec := ReceivedTurnDecision{TurnID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigErr == nil, Body: c.body}
	if ans == nil {
		ans = b.decideTurn(c, &rec.Request)
	}
	rec.Status, rec.Code, rec.Replay = ans.status, ans.code, ans.replay
	rec.ApprovalID = ans.extra["approval_id"]
	b.turnDecisions = append(b.turnDecisions, rec)
	b.record()
	writeAnswer(w, ans)
}

// decideTurn applies a batch all or nothing: every member is checked as
// a single decision of it would be, and the first that fails refuses the
// batch, naming it, with nothing applied. b.mu is held.
func (b *Backend) decideTurn(c call, req *TurnDecisionRequest) *answer {
	bad := decode(c.body, req, turnSchema)
	replayKey := "turn\x00" + c.id + "\x00" + c.key
	if ans := b.replay(replayKey, c.body, "decision"); ans != nil {
		return ans
	}
	if bad != nil {
		return bad
	}
	switch {
	case req.TurnID != c.id:
		return invalid("turn_id: %q differs from the path's %q", req.TurnID, c.id)
	case req.Decision != backend.Approve && req.Decision != backend.Deny:
		return invalid("decision: want approve or deny")
	case req.Actor == "" || strings.HasPrefix(req.Actor, "system:"):
		return invalid("actor: want a tenant user")
	case req.Via.Surface == "":
		return invalid("via.surface: required")
	case len(req.Decisions) == 0 || len(req.Decisions) > approval.MaxTurnMembers:
		return invalid("decisions: want 1 to %d", approval.MaxTurnMembers)
	}
	seen := map[string]bool{}
	for i, d := range req.Decisions {
		switch {
		case !approval.ValidID(d.ApprovalID):
			return invalid("decisions[%d].approval_id: want 1–64 of [A-Za-z0-9._:-]", i)
		case seen[d.ApprovalID]:
			return invalid("decisions[%d].approval_id: %s is listed twice", i, d.ApprovalID)
		case d.Revision < 1:
			return invalid("decisions[%d].revision: want ≥ 1", i)
		case d.ArgsSHA256 != "" && !digestPattern.MatchString(d.ArgsSHA256):
			return invalid("decisions[%d].args_sha256: want sha256:<64 hex>", i)
		}
		seen[d.ApprovalID] = true
	}
	for _, d := range req.Decisions {
		if ans := b.checkMember(req, d); ans != nil {
			if ans.extra == nil {
				ans.extra = map[string]string{}
			}
			ans.extra["approval_id"] = d.ApprovalID
			fmt.Fprintf(b.out, "%s turn %s by %s: refused whole, %s: %s\n", req.Decision, req.TurnID, req.Actor, d.ApprovalID, ans.code)
			return ans
		}
	}
	status := "denied"
	if req.Decision == backend.Approve {
		status = "approved"
	}
	lines := make([]string, len(req.Decisions))
	for i, d := range req.Decisions {
		a := b.approvals[d.ApprovalID]
		a.status, a.actor = status, req.Actor
		lines[i] = fmt.Sprintf("%s revision %d", d.ApprovalID, d.Revision)
		if d.ArgsSHA256 != "" {
			lines[i] += " bound to " + d.ArgsSHA256
		}
	}
	line := fmt.Sprintf("%s turn %s (%d calls) by %s via %s", status, req.TurnID, len(req.Decisions), req.Actor, req.Via.Surface)
	if req.Via.User != "" {
		line += " (" + req.Via.User + ")"
	}
	if req.Comment != "" {
		line += fmt.Sprintf(": %q", req.Comment)
	}
	fmt.Fprintln(b.out, line+" · "+strings.Join(lines, "; "))
	msg := fmt.Sprintf("The %d calls of the turn run.", len(req.Decisions))
	if status == "denied" {
		msg = fmt.Sprintf("The turn ended: %s denied it, so none of its %d calls was made.", req.Actor, len(req.Decisions))
	}
	body, _ := json.Marshal(map[string]string{"status": status, "message": msg}) // strings always encode
	b.replies[replayKey] = reply{request: bytes.Clone(c.body), answer: body}
	return &answer{status: http.StatusOK, body: body}
}

// checkMember answers one member of a batch as a single decision's checks
// would, nil when it may be applied. b.mu is held.
func (b *Backend) checkMember(req *TurnDecisionRequest, d TurnDecisionItem) *answer {
	b.learnFrom(d.ApprovalID, d.Revision)
	a := b.approvals[d.ApprovalID]
	switch {
	case a == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "approval " + d.ApprovalID + " is not known here"}
	case a.status == "cancelled":
		return &answer{status: http.StatusGone, code: "cancelled", message: "approval " + d.ApprovalID + " was cancelled: the call is no longer wanted"}
	case b.forbidden[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " may not decide approval " + d.ApprovalID,
			extra: map[string]string{"actor": req.Actor}}
	case d.Revision < a.revision:
		return &answer{status: http.StatusConflict, code: "stale_revision",
			message: fmt.Sprintf("approval %s changed (revision %d is now %d): look at the new card", d.ApprovalID, d.Revision, a.revision)}
	case d.Revision > a.revision:
		return invalid("revision: approval %s has no revision %d", d.ApprovalID, d.Revision)
	case a.status != "pending":
		return &answer{status: http.StatusConflict, code: "already_decided",
			message: fmt.Sprintf("approval %s was already decided: %s by %s", d.ApprovalID, a.status, a.actor),
			extra:   map[string]string{"status": a.status, "actor": a.actor}}
	case d.ArgsSHA256 != "" && b.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden",
			message: req.Actor + " does not hold the content permission, so a decision from them may not carry a digest"}
	case d.ArgsSHA256 != "" && a.digest != "" && d.ArgsSHA256 != a.digest:
		return &answer{status: http.StatusUnprocessableEntity, code: "digest_mismatch",
			message: "approval " + d.ApprovalID + " is not for the arguments " + d.ArgsSHA256 + " you decided on: look at the call again"}
	}
	return nil
}
