package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"approvalsbot/internal/strictjson"
	"approvalsbot/threads"
)

// Grants (docs/protocol.md#grants): the grant an approval carries, and
// the signed call that revokes one.

// GrantBody is a decision's grant as the backend is sent it.
type GrantBody struct {
	ID         string    `json:"id"`
	Scope      string    `json:"scope"` // call or values
	Function   string    `json:"function"`
	ArgsSHA256 string    `json:"args_sha256,omitempty"` // scope call
	Pins       []Pin     `json:"pins,omitempty"`        // scope values
	Free       []string  `json:"free,omitempty"`        // scope values
	ExpiresAt  time.Time `json:"expires_at"`            // sent in UTC
	Uses       int       `json:"uses"`
}

// Pin is one role-marked argument a "values" grant holds to one value.
type Pin struct {
	Argument string `json:"argument"`
	Role     string `json:"role"`
	Value    string `json:"value"`
}

// grantIDPattern is the bot's own grant ids.
var grantIDPattern = regexp.MustCompile(`^g-[0-9a-f]{16}$`)

// MaxPins bounds a grant's pins (docs/protocol.md#grants).
const MaxPins = 20

func (g *GrantBody) validate(decision string) []error {
	var errs []error
	if decision != Approve {
		errs = append(errs, errors.New("grant: only an approval carries one"))
	}
	if !grantIDPattern.MatchString(g.ID) {
		errs = append(errs, errors.New("grant.id: want g- and 16 lowercase hex"))
	}
	if g.Function == "" {
		errs = append(errs, errors.New("grant.function: required"))
	}
	switch g.Scope {
	case "call":
		if !digestPattern.MatchString(g.ArgsSHA256) || len(g.Pins) > 0 || len(g.Free) > 0 {
			errs = append(errs, errors.New("grant: scope call takes args_sha256 only"))
		}
	case "values":
		if g.ArgsSHA256 != "" || len(g.Pins) == 0 || len(g.Pins) > MaxPins {
			errs = append(errs, fmt.Errorf("grant: scope values takes 1 to %d pins and no args_sha256", MaxPins))
		}
		for i, p := range g.Pins {
			if p.Argument == "" || p.Role == "" || p.Value == "" {
				errs = append(errs, fmt.Errorf("grant.pins[%d]: argument, role and value are required", i))
			}
		}
	default:
		errs = append(errs, errors.New("grant.scope: want call or values"))
	}
	if g.ExpiresAt.IsZero() {
		errs = append(errs, errors.New("grant.expires_at: required"))
	}
	if g.Uses < 1 {
		errs = append(errs, errors.New("grant.uses: want ≥ 1"))
	}
	return errs
}

// Revoke is the body of POST /v1/grants/{id}/revoke.
type Revoke struct {
	GrantID string `json:"grant_id"`
	Actor   string `json:"actor"` // the tenant user who revoked it
	Via     Via    `json:"via"`
}

// Revoke outcomes.
const (
	// OutcomeRevoked: 200 {"status":"revoked"}: the grant lets nothing
	// through any more.
	OutcomeRevoked Outcome = "revoked"
	// OutcomeAlreadyEnded: 409 already_ended: it had expired, been used
	// up or revoked before.
	OutcomeAlreadyEnded Outcome = "already_ended"
)

var revokeOutcomes = map[statusCode]Outcome{
	{http.StatusConflict, "already_ended"}: OutcomeAlreadyEnded,
	{http.StatusNotFound, "not_found"}:     OutcomeNotFound,
}

// RevokeResult is the backend's answer to a revocation.
type RevokeResult struct {
	Outcome Outcome // OutcomeRevoked, OutcomeAlreadyEnded or OutcomeNotFound
	Message string
}

type revokeAnswer struct {
	Status string `json:"status"`
}

var revokeAnswerKeys = strictjson.For[revokeAnswer]()

// RevokeGrant asks the backend to end a grant; idempotencyKey names the
// person's one click. It is refused before anything is sent to a backend
// without FeatureGrants. The error is nil for every listed answer.
func (c *Client) RevokeGrant(ctx context.Context, r Revoke, idempotencyKey string) (RevokeResult, error) {
	op := "revoke grant " + r.GrantID
	switch {
	case !c.grants:
		return RevokeResult{}, fmt.Errorf("%s: the backend does not list the %s feature", op, FeatureGrants)
	case !grantIDPattern.MatchString(r.GrantID):
		return RevokeResult{}, fmt.Errorf("%s: grant_id: want g- and 16 lowercase hex", op)
	case r.Actor == "" || r.Via.Surface == "":
		return RevokeResult{}, fmt.Errorf("%s: actor and via.surface are required", op)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return RevokeResult{}, fmt.Errorf("%s: encode: %w", op, err)
	}
	ans, err := c.postTo(ctx, op, r.GrantID, "revoke", c.base+"/v1/grants/"+url.PathEscape(r.GrantID)+"/revoke", body, idempotencyKey)
	if err != nil {
		return RevokeResult{}, err
	}
	if ans.status/100 == 2 {
		var ok revokeAnswer
		if err := decodeAnswer(ans.body, revokeAnswerKeys, &ok); err != nil || ok.Status != "revoked" {
			return RevokeResult{}, fmt.Errorf("%s: answer %d: want {\"status\":\"revoked\"}", op, ans.status)
		}
		return RevokeResult{Outcome: OutcomeRevoked}, nil
	}
	e := ans.errorBody()
	out, ok := revokeOutcomes[statusCode{ans.status, e.Code}]
	if !ok {
		return RevokeResult{}, fmt.Errorf("%s: %w", op, e.protocolError(ans.status))
	}
	return RevokeResult{Outcome: out, Message: e.Message}, nil
}

// grantBody is threads' grant as the protocol sends it; nil for none.
func grantBody(g *threads.Grant) *GrantBody {
	if g == nil {
		return nil
	}
	b := &GrantBody{ID: g.ID, Scope: string(g.Scope), Function: g.Function, ArgsSHA256: g.ArgsSHA256,
		Free: g.Free, ExpiresAt: g.ExpiresAt, Uses: g.Uses}
	for _, p := range g.Pins {
		b.Pins = append(b.Pins, Pin{Argument: p.Argument, Role: string(p.Role), Value: p.Value})
	}
	return b
}

var _ threads.GrantRevoker = threadsBackend{}

func (b threadsBackend) RevokeGrant(ctx context.Context, r threads.RevokeCall) (threads.RevokeAnswer, error) {
	res, err := b.c.RevokeGrant(ctx, Revoke{GrantID: r.GrantID, Actor: r.Actor, Via: Via{Surface: r.Surface, User: r.User}},
		r.IdempotencyKey)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return threads.RevokeAnswer{}, fmt.Errorf("%w: %w", threads.ErrBackendUnavailable, err)
		}
		return threads.RevokeAnswer{}, err
	}
	switch res.Outcome {
	case OutcomeRevoked:
		return threads.RevokeAnswer{Outcome: threads.RevokeRevoked}, nil
	case OutcomeAlreadyEnded:
		return threads.RevokeAnswer{Outcome: threads.RevokeAlreadyEnded, Message: res.Message}, nil
	case OutcomeNotFound:
		return threads.RevokeAnswer{Outcome: threads.RevokeNotFound, Message: res.Message}, nil
	}
	return threads.RevokeAnswer{}, fmt.Errorf("revoke %s: unexpected outcome %q", r.GrantID, res.Outcome)
}
