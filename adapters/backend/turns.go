package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
	"approvalsbot/threads"
)

// TurnDecision is the body of POST /v1/turns/{turn_id}/decision: one
// person's decision on every waiting call of a turn, each bound to its
// own revision and digest, which the backend applies all or nothing
// (docs/protocol.md#turns).
type TurnDecision struct {
	TurnID    string          `json:"turn_id"`
	Decision  string          `json:"decision"` // Approve or Deny
	Actor     string          `json:"actor"`
	Via       Via             `json:"via"`
	Comment   string          `json:"comment,omitempty"`
	Decisions []TurnDecision1 `json:"decisions"`
}

// TurnDecision1 is one member of a batch, bound as a single decision is.
type TurnDecision1 struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	ArgsSHA256 string `json:"args_sha256,omitempty"`
}

// TurnDecisionResult is the backend's answer to a batch: the Outcome of
// the batch as a whole, and the member a refusal names, when it does.
type TurnDecisionResult struct {
	DecisionResult
	ApprovalID string
}

// turnErrorBody is the error shape of a batch's refusal.
type turnErrorBody struct {
	Code       string `json:"error"`
	Message    string `json:"message"`
	Status     string `json:"status"`
	Actor      string `json:"actor"`
	ApprovalID string `json:"approval_id"`
}

var turnErrorBodyKeys = strictjson.For[turnErrorBody]()

// ErrNoTurns: the backend is not configured with FeatureTurns, so no
// batch is ever sent to it.
var ErrNoTurns = errors.New("the job backend does not take turn decisions (backend.features has no turns)")

func (d TurnDecision) validate() error {
	var errs []error
	if !idPattern.MatchString(d.TurnID) || d.TurnID == "." || d.TurnID == ".." {
		errs = append(errs, errors.New("turn_id: want 1–64 of [A-Za-z0-9._:-]"))
	}
	if d.Decision != Approve && d.Decision != Deny {
		errs = append(errs, errors.New("decision: want approve or deny"))
	}
	// A batch is a person's: nothing automatic sends one.
	if d.Actor == "" || strings.HasPrefix(d.Actor, "system:") {
		errs = append(errs, errors.New("actor: want a tenant user"))
	}
	if d.Via.Surface == "" || d.Via.Surface == "deadline" {
		errs = append(errs, errors.New("via.surface: want the surface a person decided on"))
	}
	if n := len(d.Decisions); n == 0 || n > approval.MaxTurnMembers {
		errs = append(errs, fmt.Errorf("decisions: want 1 to %d", approval.MaxTurnMembers))
	}
	seen := make(map[string]bool, len(d.Decisions))
	for i, m := range d.Decisions {
		if err := validID(m.ApprovalID); err != nil {
			errs = append(errs, fmt.Errorf("decisions[%d].%w", i, err))
		} else if seen[m.ApprovalID] {
			errs = append(errs, fmt.Errorf("decisions[%d].approval_id: %s is listed twice", i, m.ApprovalID))
		}
		seen[m.ApprovalID] = true
		if m.Revision < 1 {
			errs = append(errs, fmt.Errorf("decisions[%d].revision: want ≥ 1", i))
		}
		if m.ArgsSHA256 != "" && !digestPattern.MatchString(m.ArgsSHA256) {
			errs = append(errs, fmt.Errorf("decisions[%d].args_sha256: want sha256:<64 lowercase hex>", i))
		}
	}
	return errors.Join(errs...)
}

// DecideTurn sends a turn's batch; idempotencyKey names the intent (one
// click), the same across restarts. It refuses to send to a backend not
// configured with FeatureTurns. The error is nil for every listed answer.
func (c *Client) DecideTurn(ctx context.Context, d TurnDecision, idempotencyKey string) (TurnDecisionResult, error) {
	op := fmt.Sprintf("decide turn %s (%d calls)", d.TurnID, len(d.Decisions))
	if !c.turns {
		return TurnDecisionResult{}, fmt.Errorf("%s: %w", op, ErrNoTurns)
	}
	if err := d.validate(); err != nil {
		return TurnDecisionResult{}, fmt.Errorf("%s: %w", op, err)
	}
	body, err := json.Marshal(d)
	if err != nil {
		return TurnDecisionResult{}, fmt.Errorf("%s: encode: %w", op, err)
	}
	target := c.base + "/v1/turns/" + url.PathEscape(d.TurnID) + "/decision"
	ans, err := c.postTo(ctx, op, d.Decisions[0].ApprovalID, "turn decision", target, body, idempotencyKey)
	if err != nil {
		return TurnDecisionResult{}, err
	}
	if ans.status/100 == 2 {
		var ok decisionAnswer
		if err := decodeAnswer(ans.body, decisionAnswerKeys, &ok); err != nil {
			return TurnDecisionResult{}, fmt.Errorf("%s: read answer %d: %w", op, ans.status, err)
		}
		if want := map[string]string{Approve: "approved", Deny: "denied"}[d.Decision]; ok.Status != want {
			// All or nothing: a batch is recorded as sent, or not at all.
			return TurnDecisionResult{}, fmt.Errorf("%s: answer %d: status %q, want %q", op, ans.status, ok.Status, want)
		}
		return TurnDecisionResult{DecisionResult: DecisionResult{Outcome: OutcomeRecorded, Status: ok.Status, Message: ok.Message}}, nil
	}
	var e turnErrorBody
	if decodeAnswer(ans.body, turnErrorBodyKeys, &e) != nil {
		e = turnErrorBody{}
	}
	out, ok := decisionOutcomes[statusCode{ans.status, e.Code}]
	if !ok {
		return TurnDecisionResult{}, fmt.Errorf("%s: %w", op, &ProtocolError{Status: ans.status, Code: e.Code, Message: e.Message})
	}
	if e.ApprovalID != "" && !containsMember(d.Decisions, e.ApprovalID) {
		// A refusal naming a call the batch does not hold names nothing.
		e.ApprovalID = ""
	}
	res := TurnDecisionResult{DecisionResult: DecisionResult{Outcome: out, Message: e.Message}, ApprovalID: e.ApprovalID}
	switch out {
	case OutcomeAlreadyDecided:
		res.Status, res.Actor = e.Status, e.Actor
	case OutcomeForbidden:
		res.Actor = e.Actor
	}
	if res.Status != "" && res.Status != "approved" && res.Status != "denied" {
		res.Status = "denied"
	}
	return res, nil
}

func containsMember(ms []TurnDecision1, id string) bool {
	for _, m := range ms {
		if m.ApprovalID == id {
			return true
		}
	}
	return false
}

// DecideTurn is the client as threads.TurnBackend.
func (b threadsBackend) DecideTurn(ctx context.Context, c threads.TurnDecisionCall) (threads.TurnDecisionAnswer, error) {
	decision := Deny
	if c.Approve {
		decision = Approve
	}
	d := TurnDecision{TurnID: c.TurnID, Decision: decision, Actor: c.Actor, Via: Via{Surface: c.Surface, User: c.User},
		Comment: c.Comment, Decisions: make([]TurnDecision1, len(c.Members))}
	for i, m := range c.Members {
		d.Decisions[i] = TurnDecision1{ApprovalID: m.ApprovalID, Revision: m.Revision, ArgsSHA256: m.ArgsSHA256}
	}
	res, err := b.c.DecideTurn(ctx, d, c.IdempotencyKey)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return threads.TurnDecisionAnswer{}, fmt.Errorf("%w: %w", threads.ErrBackendUnavailable, err)
		}
		return threads.TurnDecisionAnswer{}, err
	}
	out := threads.TurnDecisionAnswer{ApprovalID: res.ApprovalID, DecisionAnswer: threads.DecisionAnswer{
		Status: approval.State(res.Status), Actor: res.Actor, Message: res.Message}}
	o, ok := threadsOutcome(res.Outcome)
	if !ok {
		return threads.TurnDecisionAnswer{}, fmt.Errorf("decision on turn %s: unexpected outcome %q", c.TurnID, res.Outcome)
	}
	out.Outcome = o
	return out, nil
}

var _ threads.TurnBackend = threadsBackend{}
