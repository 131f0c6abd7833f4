package standin

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
)

// Grants (docs/protocol.md#grants), as a job backend keeps them: a grant
// a decision carried, checked against the call it came with, applied to
// later calls (Covers), revoked by the bot's signed call, and ended by
// its time or its uses.

// grant is one grant the stand-in keeps.
type grant struct {
	body       backend.GrantBody
	approvalID string
	actor      string
	args       map[string]json.RawMessage // the granting call's arguments
	used       int
	revoked    bool
}

// Grant is a grant as the stand-in holds it, for tests and the quick start.
type Grant struct {
	backend.GrantBody
	ApprovalID, Actor string
	Used              int
	Revoked           bool
}

// ReceivedRevoke is one revocation call and the answer to it.
type ReceivedRevoke struct {
	GrantID        string // from the path
	IdempotencyKey string
	SignatureOK    bool
	Request        backend.Revoke
	Status         int
	Code           string
	Replay         bool
}

// maxGrantTTL is the longest a grant may live (docs/protocol.md#grants).
const maxGrantTTL = 24 * time.Hour

// checkGrant checks the grant req carries against the call it came with,
// as a real backend must: never broader than that call. It returns why
// not, or "". b.mu is held.
func (b *Backend) checkGrant(id string, a *truth, req *DecisionRequest) string {
	g := req.Grant
	now := b.now()
	switch {
	case req.Decision != backend.Approve:
		return "only an approval carries a grant"
	case !approval.GrantIDPattern.MatchString(g.ID):
		return "id: want g- and 16 lowercase hex"
	case b.grants[g.ID] != nil && b.grants[g.ID].approvalID != id:
		return "id " + g.ID + " names another approval's grant"
	case a.function != "" && g.Function != a.function:
		return fmt.Sprintf("function %q is not the call's %q", g.Function, a.function)
	case !g.ExpiresAt.After(now) || g.ExpiresAt.After(now.Add(maxGrantTTL+time.Minute)):
		return "expires_at must lie within the next 24 h"
	case g.Uses < 1 || g.Uses > 100:
		return "uses: want 1 to 100"
	}
	args, err := objectOf(a.args)
	if err != nil {
		return "the call's arguments are not known here"
	}
	switch g.Scope {
	case "call":
		if g.ArgsSHA256 == "" || g.ArgsSHA256 != a.digest {
			return "args_sha256 is not the call's"
		}
	case "values":
		if len(g.Pins) == 0 || len(g.Pins) > backend.MaxPins {
			return fmt.Sprintf("want 1 to %d pins", backend.MaxPins)
		}
		for _, arg := range pinnedArguments(g.Pins) {
			if !pinsHold(args[arg], pinValues(g.Pins, arg)) {
				return "the pins of " + arg + " are not the call's value"
			}
		}
	default:
		return "scope: want call or values"
	}
	return ""
}

// keepGrant keeps the grant of a recorded approval. b.mu is held.
func (b *Backend) keepGrant(id string, a *truth, req *DecisionRequest) {
	if _, ok := b.grants[req.Grant.ID]; ok {
		return // a retry of the same decision
	}
	args, _ := objectOf(a.args) // checked by checkGrant
	b.grants[req.Grant.ID] = &grant{body: *req.Grant, approvalID: id, actor: req.Actor, args: args}
}

// Covers reports which live grant, if any, lets a call of function with
// args through, and takes one of its uses: a "call" grant by the
// arguments' digest, a "values" grant when each pinned argument holds
// exactly its pinned values and every other argument equals the granting
// call's, unless the grant leaves it free. "" when none does.
func (b *Backend) Covers(function string, args json.RawMessage) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	digest, _ := digestOf(args)
	obj, err := objectOf(args)
	if err != nil {
		return ""
	}
	ids := make([]string, 0, len(b.grants))
	for id := range b.grants {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		g := b.grants[id]
		if g.revoked || g.used >= g.body.Uses || !now.Before(g.body.ExpiresAt) || g.body.Function != function {
			continue
		}
		if g.covers(digest, obj) {
			g.used++
			fmt.Fprintf(b.out, "grant %s let %s through: use %d of %d\n", id, function, g.used, g.body.Uses)
			return id
		}
	}
	return ""
}

func (g *grant) covers(digest string, args map[string]json.RawMessage) bool {
	if g.body.Scope == "call" {
		return digest != "" && digest == g.body.ArgsSHA256
	}
	pinned := pinnedArguments(g.body.Pins)
	for _, arg := range pinned {
		if !pinsHold(args[arg], pinValues(g.body.Pins, arg)) {
			return false
		}
	}
	names := map[string]bool{}
	for k := range args {
		names[k] = true
	}
	for k := range g.args {
		names[k] = true
	}
	for k := range names {
		if slices.Contains(pinned, k) || slices.Contains(g.body.Free, k) {
			continue
		}
		if !sameJSON(args[k], g.args[k]) {
			return false
		}
	}
	return true
}

// Grants lists the grants kept, by id.
func (b *Backend) Grants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Grant
	for _, g := range b.grants {
		out = append(out, Grant{GrantBody: g.body, ApprovalID: g.approvalID, Actor: g.actor, Used: g.used, Revoked: g.revoked})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Revokes lists the revocation calls received, in order.
func (b *Backend) Revokes() []ReceivedRevoke {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.revokes)
}

var revokeSchema = strictjson.For[backend.Revoke]()

func (b *Backend) serveRevoke(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	writeAnswer(w, b.onRevoke(r, c, err))
}

func (b *Backend) onRevoke(r *http.Request, c call, err error) *answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	ans := b.receive(r, &c, err)
	rec := ReceivedRevoke{GrantID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigErr == nil}
	if ans == nil {
		ans = b.revoke(c, &rec.Request)
	}
	rec.Status, rec.Code, rec.Replay = ans.status, ans.code, ans.replay
	b.revokes = append(b.revokes, rec)
	b.record()
	return ans
}

// revoke answers a revocation that passed receive. b.mu is held.
func (b *Backend) revoke(c call, req *backend.Revoke) *answer {
	bad := decode(c.body, req, revokeSchema)
	replayKey := "revoke\x00" + c.id + "\x00" + c.key
	if ans := b.replay(replayKey, c.body, "call"); ans != nil {
		return ans
	}
	switch {
	case bad != nil:
		return bad
	case req.GrantID != c.id:
		return invalid("grant_id: %q differs from the path's %q", req.GrantID, c.id)
	case req.Actor == "" || req.Via.Surface == "":
		return invalid("actor and via.surface are required")
	}
	g := b.grants[c.id]
	if g == nil {
		return &answer{status: http.StatusNotFound, code: "not_found", message: "grant " + c.id + " is not known here"}
	}
	if g.revoked || g.used >= g.body.Uses || !b.now().Before(g.body.ExpiresAt) {
		return &answer{status: http.StatusConflict, code: "already_ended", message: "grant " + c.id + " has ended already"}
	}
	g.revoked = true
	fmt.Fprintf(b.out, "grant %s revoked by %s via %s\n", c.id, req.Actor, req.Via.Surface)
	body := []byte(`{"status":"revoked"}`)
	b.replies[replayKey] = reply{request: bytes.Clone(c.body), answer: body}
	return &answer{status: http.StatusOK, body: body}
}

// objectOf reads a call's arguments as an object.
func objectOf(args json.RawMessage) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(args, &m); err != nil || m == nil {
		return nil, fmt.Errorf("arguments are not an object")
	}
	return m, nil
}

// pinnedArguments are the arguments the pins name, each once, in order.
func pinnedArguments(pins []backend.Pin) []string {
	var out []string
	for _, p := range pins {
		if !slices.Contains(out, p.Argument) {
			out = append(out, p.Argument)
		}
	}
	return out
}

func pinValues(pins []backend.Pin, arg string) []string {
	var out []string
	for _, p := range pins {
		if p.Argument == arg {
			out = append(out, p.Value)
		}
	}
	return out
}

// pinsHold reports whether an argument's value is exactly the pinned
// values: one string (or number, as written) for one pin, a list of
// exactly those values, in any order, for several.
func pinsHold(raw json.RawMessage, want []string) bool {
	if len(raw) == 0 {
		return false
	}
	scalar := func(r json.RawMessage) (string, bool) {
		var s string
		if json.Unmarshal(r, &s) == nil {
			return s, true
		}
		var n json.Number
		d := json.NewDecoder(bytes.NewReader(r))
		d.UseNumber()
		if d.Decode(&n) == nil {
			return n.String(), true
		}
		return "", false
	}
	if v, ok := scalar(raw); ok {
		return len(want) == 1 && v == want[0]
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil || len(list) != len(want) {
		return false
	}
	var got []string
	for _, r := range list {
		v, ok := scalar(r)
		if !ok {
			return false
		}
		got = append(got, v)
	}
	slices.Sort(got)
	w := slices.Clone(want)
	slices.Sort(w)
	return slices.Equal(got, w)
}

// sameJSON compares two values as canonical JSON; both absent is equal.
func sameJSON(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	ca, err1 := approval.Canonicalize(a)
	cb, err2 := approval.Canonicalize(b)
	return err1 == nil && err2 == nil && bytes.Equal(ca, cb)
}

// CoversPath is the stand-in's own endpoint, no part of the protocol,
// that `bot event --grant-check` asks before sending a request: does a
// grant the stand-in keeps let this call through, as a real backend
// would decide before asking anyone? POST {"approval_id","function"}
// answers {"grant_id": "g-…"} (a use taken) or {"grant_id": ""}; the
// call's arguments are the stand-in's own, from its arguments folder.
const CoversPath = "/standin/covers"

// CoversRequest is CoversPath's body.
type CoversRequest struct {
	ApprovalID string `json:"approval_id"`
	Function   string `json:"function"`
}

// CoversAnswer is CoversPath's answer.
type CoversAnswer struct {
	GrantID string `json:"grant_id"`
}

var coversSchema = strictjson.For[CoversRequest]()

func (b *Backend) serveCovers(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	if err != nil || r.Method != http.MethodPost {
		writeAnswer(w, invalid("POST a JSON body"))
		return
	}
	var req CoversRequest
	if bad := decode(c.body, &req, coversSchema); bad != nil {
		writeAnswer(w, bad)
		return
	}
	args, _, _ := b.argumentsOf(req.ApprovalID, 1)
	id := ""
	if args != nil {
		id = b.Covers(req.Function, args)
	}
	body, _ := json.Marshal(CoversAnswer{GrantID: id}) // a string: cannot fail
	writeAnswer(w, &answer{status: http.StatusOK, body: body})
}
