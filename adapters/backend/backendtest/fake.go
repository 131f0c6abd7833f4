// Package backendtest is a fake job backend for tests: an httptest server
// that speaks docs/protocol.md's calls out (POST /v1/approvals/{id}/decision and
// /arguments) the way the real backend does, with real signature checks,
// Idempotency-Key replays and JCS digest checks, so the bot's tests meet the
// protocol's refusals and not a mock's idea of them.
//
// The fake holds the backend's own truth per approval: the revision, the
// full arguments and their digest, and whether it is decided or cancelled.
// Tests set that truth, drive the bot, then read what the fake received.
package backendtest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gowebpki/jcs"

	"approvalsbot/adapters/backend"
)

// Options configures New.
type Options struct {
	// Secrets are the calls secrets the fake accepts (backend.calls_secrets);
	// at least one is required.
	Secrets [][]byte
	// Now is the fake's clock for the signature window; nil means
	// time.Now. Give it the bot's fake clock when the bot's is not real.
	Now func() time.Time
}

// Fake is a fake job backend. Its methods are safe to call while the bot
// is calling it.
type Fake struct {
	t        testing.TB
	srv      *httptest.Server
	verifier backend.Verifier

	mu        sync.Mutex
	approvals map[string]*approval
	forbidden map[string]bool // actors answered 403 on everything
	noContent map[string]bool // actors without the content permission
	failures  []failure       // injected answers, first is next
	replies   map[string]reply
	decisions []ReceivedDecision
	lookups   []ReceivedLookup
}

// approval is the backend's truth about one approval.
type approval struct {
	revision    int
	function    string
	args        json.RawMessage // full arguments, as added
	digest      string          // "sha256:" + hex SHA-256 of JCS(args)
	served      json.RawMessage // what the look-up answers; nil: args
	restricted  bool
	changes     *backend.ChangesAnswer // a changeset's files and patch; nil: none
	servedPatch *string                // the patch the look-up answers; nil: changes.Patch
	status      string                 // pending, approved, denied, expired, cancelled
	actor       string
}

type failure struct {
	status     int
	retryAfter string
}

// reply is a recorded 200 answer to a decision, replayed for a retry that
// carries the same Idempotency-Key and body.
type reply struct {
	request []byte
	answer  []byte
}

// DecisionRequest is a decision body as the fake read it.
type DecisionRequest struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Decision   string `json:"decision"`
	Actor      string `json:"actor"`
	Via        Via    `json:"via"`
	Comment    string `json:"comment"`
	// ArgsSHA256 is "" when the request carried none.
	ArgsSHA256 string `json:"-"`
}

// Via is a decision's via as the fake read it.
type Via struct {
	Surface string `json:"surface"`
	User    string `json:"user"`
}

// LookupRequest is an argument look-up body as the fake read it.
type LookupRequest struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Actor      string `json:"actor"`
}

// ReceivedDecision is one decision request and the fake's answer to it.
type ReceivedDecision struct {
	ApprovalID     string // from the path
	IdempotencyKey string
	SignatureOK    bool
	Body           []byte          // as received
	Request        DecisionRequest // zero when the body was not read
	Status         int             // HTTP status answered
	Code           string          // the error code answered; "" for 200
	Replay         bool            // answered from an earlier 200 with the same key
}

// ReceivedLookup is one argument look-up and the fake's answer to it.
type ReceivedLookup struct {
	ApprovalID     string
	IdempotencyKey string
	SignatureOK    bool
	Body           []byte
	Request        LookupRequest
	Status         int
	Code           string
}

// New starts a fake backend that is closed when the test ends.
func New(t testing.TB, o Options) *Fake {
	t.Helper()
	if len(o.Secrets) == 0 {
		t.Fatal("backendtest.New: Options.Secrets: at least one calls secret is required")
	}
	f := &Fake{
		t:         t,
		verifier:  backend.Verifier{Secrets: o.Secrets, Now: o.Now},
		approvals: map[string]*approval{},
		forbidden: map[string]bool{},
		noContent: map[string]bool{},
		replies:   map[string]reply{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/approvals/{id}/decision", f.serveDecision)
	mux.HandleFunc("/v1/approvals/{id}/arguments", f.serveLookup)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, answer{status: http.StatusNotFound, code: "not_found", message: "no such endpoint: " + r.URL.Path})
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// URL is the base URL to give the bot as backend.url.
func (f *Fake) URL() string { return f.srv.URL }

// Close stops the server now, so that calls fail as with a backend that is
// down. It is also done when the test ends.
func (f *Fake) Close() { f.srv.Close() }

// AddApproval makes id known at revision, pending, with args its full
// arguments; the digest is computed from them with JCS (RFC 8785). Adding
// an id again with a higher revision is a reask: the new arguments replace
// the old, and decisions for lower revisions become stale. restricted is
// content.restricted.
func (f *Fake) AddApproval(id string, revision int, args json.RawMessage, restricted bool) {
	f.t.Helper()
	canon, err := jcs.Transform(args)
	if err != nil {
		f.t.Fatalf("backendtest: AddApproval %s: arguments are not JSON: %v", id, err)
	}
	if revision < 1 {
		f.t.Fatalf("backendtest: AddApproval %s: revision %d, want ≥ 1", id, revision)
	}
	sum := sha256.Sum256(canon)
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.approvals[id]
	if a == nil {
		a = &approval{function: "the function", status: "pending"}
		f.approvals[id] = a
	} else if revision < a.revision {
		f.t.Fatalf("backendtest: AddApproval %s: revision %d is below the current %d", id, revision, a.revision)
	}
	a.revision = revision
	a.args = bytes.Clone(args)
	a.digest = "sha256:" + hex.EncodeToString(sum[:])
	a.served = nil
	a.restricted = restricted
}

// SetFunction names the approval's function, which the 200 messages quote
// ("The call to acme_github.merge runs."); it is "the function" until set.
func (f *Fake) SetFunction(id, function string) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(id).function = function
}

// Digest is the args_sha256 the fake computed for id's current arguments.
func (f *Fake) Digest(id string) string {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.get(id).digest
}

// Status is id's state (pending, approved, denied, expired, cancelled) and
// who decided it.
func (f *Fake) Status(id string) (status, actor string) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.get(id)
	return a.status, a.actor
}

// SetStatus records that id was decided elsewhere (console, CLI): status is
// approved, denied or expired. Later decisions get 409 already_decided.
func (f *Fake) SetStatus(id, status, actor string) {
	f.t.Helper()
	if status != "approved" && status != "denied" && status != "expired" {
		f.t.Fatalf("backendtest: SetStatus %s: status %q, want approved, denied or expired", id, status)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.get(id)
	a.status, a.actor = status, actor
}

// Cancel cancels id: later calls get 410 cancelled.
func (f *Fake) Cancel(id string) {
	f.t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(id).status = "cancelled"
}

// SetForbidden makes every call from actor answer 403 forbidden, as for a
// person whose role, a wall or self-approval stops them.
func (f *Fake) SetForbidden(actor string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forbidden[actor] = true
}

// SetNoContent takes the content permission from actor: their argument
// look-ups get 403, and so do their decisions that carry a digest (the
// digest is content: it lets a guess at a value be checked).
func (f *Fake) SetNoContent(actor string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.noContent[actor] = true
}

// SetChanges gives id a changeset, which its look-up answers (with
// patch_sha256, the SHA-256 of the patch's bytes) beside the arguments.
// It returns that digest, the approval's patch_sha256.
func (f *Fake) SetChanges(id string, files []backend.ChangedFileAnswer, patch string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	sum := sha256.Sum256([]byte(patch))
	a := f.get(id)
	a.changes = &backend.ChangesAnswer{Files: append([]backend.ChangedFileAnswer(nil), files...), Patch: patch,
		PatchSHA256: "sha256:" + hex.EncodeToString(sum[:])}
	a.servedPatch = nil
	return a.changes.PatchSHA256
}

// TamperPatch makes the look-up for id answer patch while it keeps the
// digest of the true one, as a broken backend or a meddler between would.
// A bot must notice and show nothing. SetChanges undoes it.
func (f *Fake) TamperPatch(id, patch string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(id).servedPatch = &patch
}

// TamperArguments makes the look-up for id answer args while it keeps the
// digest of the true arguments, as a broken backend or a meddler between
// would. A bot must notice and show nothing. AddApproval undoes it.
func (f *Fake) TamperArguments(id string, args json.RawMessage) {
	f.t.Helper()
	if !json.Valid(args) {
		f.t.Fatalf("backendtest: TamperArguments %s: not JSON", id)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.get(id).served = bytes.Clone(args)
}

// FailNext makes the next n calls, of either kind, answer status with the
// protocol's error body before anything else is checked, as a backend or
// its proxy does when it is down or overloaded.
func (f *Fake) FailNext(n, status int) { f.failNext(n, status, "") }

// FailNextRetryAfter is FailNext with a Retry-After header of after, in
// whole seconds.
func (f *Fake) FailNextRetryAfter(n, status int, after time.Duration) {
	f.failNext(n, status, strconv.Itoa(int(after/time.Second)))
}

func (f *Fake) failNext(n, status int, retryAfter string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for range n {
		f.failures = append(f.failures, failure{status: status, retryAfter: retryAfter})
	}
}

// Decisions lists every decision request received, in order, whatever
// was answered.
func (f *Fake) Decisions() []ReceivedDecision {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ReceivedDecision(nil), f.decisions...)
}

// Lookups lists every argument look-up received, in order.
func (f *Fake) Lookups() []ReceivedLookup {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]ReceivedLookup(nil), f.lookups...)
}

// get must be called with f.mu held, from the test's goroutine.
func (f *Fake) get(id string) *approval {
	f.t.Helper()
	a := f.approvals[id]
	if a == nil {
		f.t.Fatalf("backendtest: no approval %s; AddApproval it first", id)
	}
	return a
}

// answer is what the fake says to one call.
type answer struct {
	status     int
	body       []byte // a 200's body
	code       string // the error code of any other answer
	message    string
	extra      map[string]string // more fields of an error body
	retryAfter string
	replay     bool
}

var digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)

// call is what every request shares before its kind is looked at.
type call struct {
	id, key string
	body    []byte
	sigOK   bool
}

// read reads a request's body, at most backend.MaxBody of it.
func read(w http.ResponseWriter, r *http.Request) (call, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, backend.MaxBody))
	return call{id: r.PathValue("id"), key: r.Header.Get("Idempotency-Key"), body: body}, err
}

// receive checks what every call must have, in the order a real backend
// would: injected failures first (they stand for the network), then
// method, size, signature, media type, Idempotency-Key and JSON. A non-nil
// answer ends the call. f.mu is held.
func (f *Fake) receive(r *http.Request, c *call, err error) *answer {
	if err == nil {
		c.sigOK = f.verifier.Verify(r.Header.Get(backend.SignatureHeader), c.body) == nil
	}
	if len(f.failures) > 0 {
		fail := f.failures[0]
		f.failures = f.failures[1:]
		return &answer{status: fail.status, code: failureCode(fail.status),
			message: "the fake backend was told to fail this call; retry later", retryAfter: fail.retryAfter}
	}
	if r.Method != http.MethodPost {
		return &answer{status: http.StatusMethodNotAllowed, code: "method_not_allowed", message: "use POST"}
	}
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return &answer{status: http.StatusRequestEntityTooLarge, code: "too_large", message: "the body is over 1 MiB"}
		}
		return &answer{status: http.StatusBadRequest, code: "bad_json", message: "the body could not be read"}
	}
	if !c.sigOK {
		return &answer{status: http.StatusUnauthorized, code: "bad_signature",
			message: "the Approvals-Signature header is missing, malformed, too old or made with another secret"}
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return &answer{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			message: "send the body as Content-Type: application/json"}
	}
	if c.key == "" {
		return &answer{status: http.StatusBadRequest, code: "missing_idempotency_key",
			message: "send an Idempotency-Key header, the same on every retry of one intent"}
	}
	if t := bytes.TrimLeft(c.body, " \t\r\n"); !json.Valid(c.body) || len(t) == 0 || t[0] != '{' {
		return &answer{status: http.StatusBadRequest, code: "bad_json", message: "the body is not a JSON object"}
	}
	return nil
}

func failureCode(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "rate_limited"
	case http.StatusServiceUnavailable:
		return "unavailable"
	case http.StatusGatewayTimeout:
		return "timeout"
	}
	if status >= 500 {
		return "internal"
	}
	return "injected"
}

// decode reads body strictly into v: a field the protocol does not name is
// a 422, so a bot that misspells one finds out here.
func decode(body []byte, v any) *answer {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &answer{status: http.StatusUnprocessableEntity, code: "invalid", message: "body: " + err.Error()}
	}
	return nil
}

func invalid(format string, args ...any) *answer {
	return &answer{status: http.StatusUnprocessableEntity, code: "invalid", message: fmt.Sprintf(format, args...)}
}

func (f *Fake) serveDecision(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	f.mu.Lock()
	ans := f.receive(r, &c, err)
	rec := ReceivedDecision{ApprovalID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigOK, Body: c.body}
	if ans == nil {
		ans = f.decide(c, &rec.Request)
	}
	rec.Status, rec.Code, rec.Replay = ans.status, ans.code, ans.replay
	f.decisions = append(f.decisions, rec)
	f.mu.Unlock()
	writeAnswer(w, ans)
}

// decide answers a decision that passed receive. f.mu is held.
func (f *Fake) decide(c call, req *DecisionRequest) *answer {
	var wire struct {
		DecisionRequest
		ArgsSHA256 *string `json:"args_sha256"`
	}
	bad := decode(c.body, &wire)
	*req = wire.DecisionRequest
	if wire.ArgsSHA256 != nil {
		req.ArgsSHA256 = *wire.ArgsSHA256
	}
	replayKey := "decision\x00" + c.id + "\x00" + c.key
	if prev, ok := f.replies[replayKey]; ok {
		if !bytes.Equal(prev.request, c.body) {
			return &answer{status: http.StatusUnprocessableEntity, code: "idempotency_key_reused",
				message: "this Idempotency-Key was used for another decision; use a new key for a new intent"}
		}
		// A retry of a recorded decision: the first answer again, whatever
		// happened since, as a real idempotent API does.
		return &answer{status: http.StatusOK, body: prev.answer, replay: true}
	}
	if bad != nil {
		return bad
	}
	switch {
	case req.ApprovalID != c.id:
		return invalid("approval_id: %q differs from the path's %q", req.ApprovalID, c.id)
	case req.Revision < 1:
		return invalid("revision: want ≥ 1")
	case req.Decision != backend.Approve && req.Decision != backend.Deny:
		return invalid("decision: want approve or deny")
	case req.Actor == "":
		return invalid("actor: required")
	case req.Via.Surface == "":
		return invalid("via.surface: required")
	case wire.ArgsSHA256 != nil && !digestPattern.MatchString(*wire.ArgsSHA256):
		return invalid("args_sha256: want sha256:<64 hex>")
	}

	a := f.approvals[c.id]
	switch {
	case a == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "approval " + c.id + " is not known here"}
	case a.status == "cancelled":
		return &answer{status: http.StatusGone, code: "cancelled", message: "approval " + c.id + " was cancelled: the call is no longer wanted"}
	case f.forbidden[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " may not decide approval " + c.id}
	case req.Decision == backend.Approve && (strings.HasPrefix(req.Actor, "system:") || req.Via.Surface == "deadline"):
		return &answer{status: http.StatusForbidden, code: "forbidden", message: "an automatic decision may only deny"}
	case req.Revision < a.revision:
		return &answer{status: http.StatusConflict, code: "stale_revision",
			message: fmt.Sprintf("approval %s changed (revision %d is now %d): look at the new card", c.id, req.Revision, a.revision)}
	case req.Revision > a.revision:
		return invalid("revision: approval %s has no revision %d", c.id, req.Revision)
	case a.status != "pending":
		return &answer{status: http.StatusConflict, code: "already_decided",
			message: fmt.Sprintf("approval %s was already decided: %s by %s", c.id, a.status, a.actor),
			extra:   map[string]string{"status": a.status, "actor": a.actor}}
	case req.ArgsSHA256 != "" && f.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden",
			message: req.Actor + " does not hold the content permission, so a decision from them may not carry a digest"}
	case req.ArgsSHA256 != "" && req.ArgsSHA256 != a.digest:
		return &answer{status: http.StatusUnprocessableEntity, code: "digest_mismatch",
			message: "approval " + c.id + " is not for the arguments " + req.ArgsSHA256 + " you decided on: look at the call again"}
	}

	a.status, a.actor = "denied", req.Actor
	msg := "The call to " + a.function + " was not made: " + req.Actor + " denied it"
	if comment := strings.TrimRight(req.Comment, "."); comment != "" {
		msg += ": " + comment
	}
	msg += "."
	if req.Decision == backend.Approve {
		a.status = "approved"
		msg = "The call to " + a.function + " runs."
	}
	body, _ := json.Marshal(map[string]string{"status": a.status, "message": msg}) // strings always encode
	f.replies[replayKey] = reply{request: bytes.Clone(c.body), answer: body}
	return &answer{status: http.StatusOK, body: body}
}

func (f *Fake) serveLookup(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	f.mu.Lock()
	ans := f.receive(r, &c, err)
	rec := ReceivedLookup{ApprovalID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigOK, Body: c.body}
	if ans == nil {
		ans = f.lookUp(c, &rec.Request)
	}
	rec.Status, rec.Code = ans.status, ans.code
	f.lookups = append(f.lookups, rec)
	f.mu.Unlock()
	writeAnswer(w, ans)
}

// lookUp answers an argument look-up that passed receive. A look-up for a
// lower revision gets the current arguments and digest: the bot's check
// against its card's digest is what must catch that. f.mu is held.
func (f *Fake) lookUp(c call, req *LookupRequest) *answer {
	if a := decode(c.body, req); a != nil {
		return a
	}
	switch {
	case req.ApprovalID != c.id:
		return invalid("approval_id: %q differs from the path's %q", req.ApprovalID, c.id)
	case req.Revision < 1:
		return invalid("revision: want ≥ 1")
	case req.Actor == "":
		return invalid("actor: required")
	}
	a := f.approvals[c.id]
	switch {
	case a == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "approval " + c.id + " is not known here"}
	case a.status == "cancelled":
		return &answer{status: http.StatusGone, code: "cancelled", message: "approval " + c.id + " was cancelled: the call is no longer wanted"}
	case f.forbidden[req.Actor] || f.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " does not hold the content permission"}
	case req.Revision > a.revision:
		return invalid("revision: approval %s has no revision %d", c.id, req.Revision)
	}
	args := a.args
	if a.served != nil {
		args = a.served
	}
	out := map[string]any{"approval_id": c.id, "arguments": args, "args_sha256": a.digest}
	if a.changes != nil {
		ch := *a.changes
		if a.servedPatch != nil {
			ch.Patch = *a.servedPatch
		}
		out["changes"] = ch
	}
	body, err := json.Marshal(out)
	if err != nil { // args were checked as JSON when set
		return &answer{status: http.StatusInternalServerError, code: "internal", message: err.Error()}
	}
	return &answer{status: http.StatusOK, body: body}
}

// writeAnswer writes a 200's recorded body, or docs/protocol.md's error shape
// with any extra fields.
func writeAnswer(w http.ResponseWriter, a *answer) {
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	if a.code == "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(a.status)
		w.Write(a.body)
		return
	}
	writeError(w, *a)
}

func writeError(w http.ResponseWriter, a answer) {
	body := map[string]string{"error": a.code, "message": a.message}
	for k, v := range a.extra {
		body[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	json.NewEncoder(w).Encode(body)
}
