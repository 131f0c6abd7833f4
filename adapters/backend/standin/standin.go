// Package standin is the fake job backend: it answers the bot's decisions
// and look-ups as docs/protocol.md says the real one does, signatures,
// replays and digests checked, so the bot meets the protocol's refusals
// and not a mock's. `bot backend` and the tests (through backendtest)
// serve it: docs/design.md#the-stand-in-backend.
package standin

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gowebpki/jcs"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
)

// Options configure New.
type Options struct {
	// Secrets verify the bot's calls (backend.calls_secrets). Required.
	Secrets [][]byte
	// Now is the clock for the signature window; nil uses time.Now.
	Now func() time.Time
	// Learn takes an approval not added as pending at the highest revision
	// a call names, its arguments read from Arguments; else it is not_found.
	Learn bool
	// Arguments is a folder of ID.json and ID.rN.json files, each
	// {"arguments": {…}, "changes": {"files": […], "patch": "…"}} (changes
	// optional), read with Learn, a FreshID's under the id it was made
	// from; "" knows none.
	Arguments string
	// Out gets one line per decision and refusal of note; nil discards.
	Out io.Writer
	// GrantNow is the clock grants are judged by (their expiry); nil
	// uses Now, then time.Now. A test whose bot runs on a fake clock
	// gives that clock here.
	GrantNow func() time.Time
}

// Backend is the fake job backend, an http.Handler. Its methods are safe
// while the bot calls it; the setters panic when misused.
type Backend struct {
	verifier  backend.Verifier
	learn     bool
	arguments string
	out       io.Writer
	mux       *http.ServeMux

	mu        sync.Mutex
	approvals map[string]*truth
	forbidden map[string]bool // actors answered 403 on everything
	noContent map[string]bool // actors without the content permission
	failures  []failure       // injected answers, first is next
	replies   map[string]reply
	decisions []ReceivedDecision
	lookups   []ReceivedLookup
	grants    map[string]*grant // by id (grants.go)
	revokes   []ReceivedRevoke
	now       func() time.Time
	// turnDecisions are the batch decisions received (turns.go).
	turnDecisions []ReceivedTurnDecision
	// questions are the questions known, by id, and the answers and
	// look-ups received (questions.go).
	questions       map[string]*questionTruth
	answers         []ReceivedAnswer
	questionLookups []ReceivedQuestionLookup
	received        chan struct{} // closed and replaced at each call recorded
}

// truth is the backend's truth about one approval.
type truth struct {
	revision    int
	function    string          // "" words answers as the stand-in's
	args        json.RawMessage // full arguments; nil: none known
	digest      string          // "sha256:" + hex SHA-256 of JCS(args); "": none
	served      json.RawMessage // what the look-up answers; nil: args
	restricted  bool
	changes     *backend.ChangesAnswer // nil: no changeset
	servedPatch *string                // the patch the look-up answers; nil: changes.Patch
	status      string                 // pending, approved, denied, expired, cancelled
	actor       string
	learned     bool // from a call (Options.Learn), not AddApproval
}

type failure struct {
	status     int
	retryAfter string
}

// reply is a 200 answer replayed for a retry with the same key and body.
type reply struct {
	request []byte
	answer  []byte
}

// DecisionRequest is a decision body as the backend read it.
type DecisionRequest struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Decision   string `json:"decision"`
	Actor      string `json:"actor"`
	Via        Via    `json:"via"`
	Comment    string `json:"comment"`
	// ArgsSHA256 is "" when the request carried none.
	ArgsSHA256 string `json:"-"`
	// Approvers are a quorum's approvals (docs/protocol.md#approvers);
	// nil when the request carried none.
	Approvers []Approver `json:"-"`
	// Confirmation is a typed confirmation
	// (docs/protocol.md#typed_confirmation); nil when none came.
	Confirmation *Confirmation `json:"confirmation"`
	// Grant is the grant the approval carries (docs/protocol.md#grants);
	// nil when none came.
	Grant *backend.GrantBody `json:"grant"`
}

// Confirmation is a typed confirmation as the backend read it.
type Confirmation struct {
	Argument string `json:"argument"`
	Value    string `json:"value"`
}

// Approver is one approval of a quorum as the backend read it.
type Approver struct {
	Actor string `json:"actor"`
	Via   Via    `json:"via"`
	At    string `json:"at"` // as sent: RFC 3339, checked
	// ArgsSHA256 is "" when the approver carried none.
	ArgsSHA256 string `json:"args_sha256"`
}

// Via is a decision's via as the backend read it.
type Via struct {
	Surface string `json:"surface"`
	User    string `json:"user"`
}

// LookupRequest is an argument look-up body as the backend read it.
type LookupRequest struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Actor      string `json:"actor"`
}

// ReceivedDecision is one decision request and the backend's answer to it.
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

// ReceivedLookup is one argument look-up and the backend's answer to it.
type ReceivedLookup struct {
	ApprovalID     string
	IdempotencyKey string
	SignatureOK    bool
	Body           []byte
	Request        LookupRequest
	Status         int
	Code           string
}

// New checks o and builds the backend.
func New(o Options) (*Backend, error) {
	if len(o.Secrets) == 0 {
		return nil, errors.New("standin: at least one calls secret is required")
	}
	if o.Arguments != "" {
		if !o.Learn {
			return nil, errors.New("standin: an arguments folder is read only with Learn")
		}
		if fi, err := os.Stat(o.Arguments); err != nil || !fi.IsDir() {
			return nil, fmt.Errorf("standin: arguments folder %s: not a folder", o.Arguments)
		}
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	b := &Backend{
		verifier: backend.Verifier{Secrets: o.Secrets, Now: o.Now}, learn: o.Learn, arguments: o.Arguments, out: o.Out,
		approvals: map[string]*truth{}, forbidden: map[string]bool{}, noContent: map[string]bool{},
		replies: map[string]reply{}, received: make(chan struct{}), grants: map[string]*grant{}, now: o.GrantNow,
		questions: map[string]*questionTruth{},
	}
	if b.now == nil {
		b.now = o.Now
	}
	if b.now == nil {
		b.now = time.Now
	}
	b.mux = http.NewServeMux()
	b.mux.HandleFunc("/v1/approvals/{id}/decision", b.serveDecision)
	b.mux.HandleFunc("/v1/approvals/{id}/arguments", b.serveLookup)
	b.mux.HandleFunc("/v1/grants/{id}/revoke", b.serveRevoke)
	b.mux.HandleFunc(CoversPath, b.serveCovers)
	b.mux.HandleFunc("/v1/turns/{turn_id}/decision", b.serveTurnDecision) // turns.go
	b.mux.HandleFunc("/v1/questions/{id}/answer", b.serveAnswer)          // questions.go
	b.mux.HandleFunc("/v1/questions/{id}/question", b.serveQuestionLookup)
	b.mux.HandleFunc(QuestionsPath, b.serveQuestions)
	b.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeAnswer(w, &answer{status: http.StatusNotFound, code: "not_found", message: "no such endpoint: " + r.URL.Path})
	})
	return b, nil
}

// ServeHTTP answers POST /v1/approvals/{id}/decision and /arguments.
func (b *Backend) ServeHTTP(w http.ResponseWriter, r *http.Request) { b.mux.ServeHTTP(w, r) }

// AddApproval makes id pending at revision with args its full arguments.
// Adding it again at a higher revision is a reask: lower ones go stale.
func (b *Backend) AddApproval(id string, revision int, args json.RawMessage, restricted bool) {
	digest, err := digestOf(args)
	if err != nil {
		panic(fmt.Sprintf("standin: AddApproval %s: %v", id, err))
	}
	if revision < 1 {
		panic(fmt.Sprintf("standin: AddApproval %s: revision %d, want ≥ 1", id, revision))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.approvals[id]
	if a == nil {
		a = &truth{status: "pending"}
		b.approvals[id] = a
	} else if revision < a.revision {
		panic(fmt.Sprintf("standin: AddApproval %s: revision %d is below the current %d", id, revision, a.revision))
	}
	a.revision, a.args, a.digest, a.served, a.restricted, a.learned = revision, bytes.Clone(args), digest, nil, restricted, false
}

// SetFunction names id's function, which the 200 messages then quote.
func (b *Backend) SetFunction(id, function string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.get(id).function = function
}

// Digest is the args_sha256 of id's current arguments.
func (b *Backend) Digest(id string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.get(id).digest
}

// Status is id's state and who decided it.
func (b *Backend) Status(id string) (status, actor string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.get(id)
	return a.status, a.actor
}

// SetStatus records id as decided elsewhere: approved, denied or
// expired. Later decisions get 409 already_decided.
func (b *Backend) SetStatus(id, status, actor string) {
	if status != "approved" && status != "denied" && status != "expired" {
		panic(fmt.Sprintf("standin: SetStatus %s: status %q, want approved, denied or expired", id, status))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.get(id)
	a.status, a.actor = status, actor
}

// Cancel cancels id: later calls get 410 cancelled.
func (b *Backend) Cancel(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.get(id).status = "cancelled"
}

// SetForbidden makes every call from actor answer 403 forbidden.
func (b *Backend) SetForbidden(actor string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.forbidden[actor] = true
}

// SetNoContent takes the content permission from actor: their argument
// look-ups get 403, and so do their decisions that carry a digest.
func (b *Backend) SetNoContent(actor string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noContent[actor] = true
}

// SetChanges gives id's look-up a changeset and returns its patch_sha256.
func (b *Backend) SetChanges(id string, files []backend.ChangedFileAnswer, patch string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	a := b.get(id)
	a.changes, a.servedPatch = changesOf(files, patch), nil
	return a.changes.PatchSHA256
}

// TamperPatch makes the look-up for id answer patch under the digest of
// the true one, as a meddler between would. SetChanges undoes it.
func (b *Backend) TamperPatch(id, patch string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.get(id).servedPatch = &patch
}

// TamperArguments makes the look-up for id answer args under the digest
// of the true arguments, as a meddler between would. AddApproval undoes it.
func (b *Backend) TamperArguments(id string, args json.RawMessage) {
	if !json.Valid(args) {
		panic("standin: TamperArguments " + id + ": not JSON")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.get(id).served = bytes.Clone(args)
}

// FailNext makes the next n calls answer status with the protocol's
// error body before anything is checked, as a backend that is down does.
func (b *Backend) FailNext(n, status int) { b.failNext(n, status, "") }

// FailNextRetryAfter is FailNext with a Retry-After of after, in seconds.
func (b *Backend) FailNextRetryAfter(n, status int, after time.Duration) {
	b.failNext(n, status, strconv.Itoa(int(after/time.Second)))
}

func (b *Backend) failNext(n, status int, retryAfter string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for range n {
		b.failures = append(b.failures, failure{status: status, retryAfter: retryAfter})
	}
}

// Decisions lists every decision request received, in order.
func (b *Backend) Decisions() []ReceivedDecision {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.decisions)
}

// Lookups lists every argument look-up received, in order.
func (b *Backend) Lookups() []ReceivedLookup {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.lookups)
}

// WaitDecisions returns the decisions once n arrived, or when ctx ends.
func (b *Backend) WaitDecisions(ctx context.Context, n int) []ReceivedDecision {
	for {
		b.mu.Lock()
		got, wake := slices.Clone(b.decisions), b.received
		b.mu.Unlock()
		if len(got) >= n {
			return got
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return got
		}
	}
}

// get must be called with b.mu held.
func (b *Backend) get(id string) *truth {
	a := b.approvals[id]
	if a == nil {
		panic("standin: no approval " + id + "; AddApproval it first")
	}
	return a
}

// learnFrom takes a call for id at revision as the truth, with Learn, for
// an approval not added: `bot backend` hears no events. b.mu is held.
func (b *Backend) learnFrom(id string, revision int) {
	a := b.approvals[id]
	if !b.learn || (a != nil && (!a.learned || revision <= a.revision)) {
		return
	}
	if a == nil {
		a = &truth{status: "pending", learned: true}
		b.approvals[id] = a
	}
	a.revision = revision
	a.args, a.digest, a.changes = b.argumentsOf(id, revision)
}

// argumentsOf reads ID.rN.json (revision N > 1) or ID.json from the
// folder, for an id FreshID made the file of the id it was made from;
// nothing when there is no such file.
func (b *Backend) argumentsOf(id string, revision int) (json.RawMessage, string, *backend.ChangesAnswer) {
	if b.arguments == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return nil, "", nil
	}
	raw, err := os.ReadFile(filepath.Join(b.arguments, argumentsFile(id, revision)))
	if errors.Is(err, os.ErrNotExist) {
		if base, ok := baseID(id); ok {
			raw, err = os.ReadFile(filepath.Join(b.arguments, argumentsFile(base, revision)))
		}
	}
	if err != nil {
		return nil, "", nil
	}
	var fx struct {
		Arguments json.RawMessage        `json:"arguments"`
		Changes   *backend.ChangesAnswer `json:"changes"`
	}
	if json.Unmarshal(raw, &fx) != nil || len(fx.Arguments) == 0 {
		return nil, "", nil
	}
	digest, err := digestOf(fx.Arguments)
	if err != nil {
		return nil, "", nil
	}
	if fx.Changes != nil {
		fx.Changes = changesOf(fx.Changes.Files, fx.Changes.Patch)
	}
	return fx.Arguments, digest, fx.Changes
}

func argumentsFile(id string, revision int) string {
	if revision > 1 {
		return fmt.Sprintf("%s.r%d.json", id, revision)
	}
	return id + ".json"
}

// freshLayout is the time FreshID appends: the instant to the millisecond.
const freshLayout = "20060102T150405.000Z"

// freshSuffix matches the one suffix FreshID appends, at the end.
var freshSuffix = regexp.MustCompile(`\.[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[0-9a-f]{6}$`)

// FreshID is id with at and six random hex digits appended
// (a-merge1.20261201T092600.123Z-b07e52), as `bot event` sends an
// example again under an id of its own: runs in the same millisecond
// still differ. It is the command line's convention, not the protocol's:
// only the stand-in reads it, for the arguments of the id it was made from.
func FreshID(id string, at time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return id + "." + at.UTC().Format(freshLayout) + "-" + hex.EncodeToString(b[:])
}

// baseID is the id FreshID made id from, once or more.
func baseID(id string) (string, bool) {
	base := id
	for {
		loc := freshSuffix.FindStringIndex(base)
		if loc == nil || loc[0] == 0 {
			return base, base != id
		}
		base = base[:loc[0]]
	}
}

// digestOf is args_sha256, computed with the JCS library directly so that
// a fault in the bot's own canonical form shows.
func digestOf(args json.RawMessage) (string, error) {
	canon, err := jcs.Transform(args)
	if err != nil {
		return "", fmt.Errorf("arguments are not JSON: %w", err)
	}
	sum := sha256.Sum256(canon)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

func changesOf(files []backend.ChangedFileAnswer, patch string) *backend.ChangesAnswer {
	sum := sha256.Sum256([]byte(patch))
	return &backend.ChangesAnswer{Files: slices.Clone(files), Patch: patch, PatchSHA256: "sha256:" + hex.EncodeToString(sum[:])}
}

// answer is what the backend says to one call.
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
	sigErr  error
}

// read reads a request's body, at most backend.MaxBody of it.
func read(w http.ResponseWriter, r *http.Request) (call, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, backend.MaxBody))
	return call{id: r.PathValue("id"), key: r.Header.Get("Idempotency-Key"), body: body}, err
}

// receive checks what every call must have, in a real backend's order
// after injected failures. A non-nil answer ends the call. b.mu is held.
func (b *Backend) receive(r *http.Request, c *call, err error) *answer {
	c.sigErr = errors.New("the body was not read")
	if err == nil {
		c.sigErr = b.verifier.Verify(r.Header.Get(backend.SignatureHeader), c.body)
	}
	if len(b.failures) > 0 {
		fail := b.failures[0]
		b.failures = b.failures[1:]
		return &answer{status: fail.status, code: failureCode(fail.status),
			message: "the backend was told to fail this call; retry later", retryAfter: fail.retryAfter}
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
	if c.sigErr != nil {
		fmt.Fprintf(b.out, "refused a call to %s: %v\n", r.URL.Path, c.sigErr)
		return &answer{status: http.StatusUnauthorized, code: "bad_signature", message: c.sigErr.Error()}
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

// decode reads body as the real backend does: no key twice or in another
// case, no field the protocol does not name.
func decode(body []byte, v any, schema *strictjson.Schema) *answer {
	if err := strictjson.CheckKnown(body, schema); err != nil {
		return invalid("body: %v", err)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return invalid("body: %v", err)
	}
	return nil
}

func invalid(format string, args ...any) *answer {
	return &answer{status: http.StatusUnprocessableEntity, code: "invalid", message: fmt.Sprintf(format, args...)}
}

// record ends a call: it is kept and waiters wake. b.mu is held.
func (b *Backend) record() {
	close(b.received)
	b.received = make(chan struct{})
}

// replay answers a call sent again under a key already answered: the
// first answer again, whatever happened since, as a real idempotent API
// does; a different body under the same key is refused. nil for a key
// not answered yet. what names the call in the refusal. b.mu is held.
func (b *Backend) replay(key string, body []byte, what string) *answer {
	prev, ok := b.replies[key]
	switch {
	case !ok:
		return nil
	case !bytes.Equal(prev.request, body):
		return &answer{status: http.StatusUnprocessableEntity, code: "idempotency_key_reused",
			message: "this Idempotency-Key was used for another " + what + "; use a new key for a new intent"}
	}
	return &answer{status: http.StatusOK, body: prev.answer, replay: true}
}

func (b *Backend) serveDecision(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	writeAnswer(w, b.onDecision(r, c, err))
}

func (b *Backend) onDecision(r *http.Request, c call, err error) *answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	ans := b.receive(r, &c, err)
	rec := ReceivedDecision{ApprovalID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigErr == nil, Body: c.body}
	if ans == nil {
		ans = b.decide(c, &rec.Request)
	}
	rec.Status, rec.Code, rec.Replay = ans.status, ans.code, ans.replay
	b.decisions = append(b.decisions, rec)
	b.record()
	return ans
}

// decisionWire tells an absent digest, or approvers list, from an empty
// one; "approvers": null reads as absent.
type decisionWire struct {
	DecisionRequest
	ArgsSHA256 *string     `json:"args_sha256"`
	Approvers  *[]Approver `json:"approvers"`
}

var (
	decisionSchema = strictjson.For[decisionWire]()
	lookupSchema   = strictjson.For[LookupRequest]()
)

// decide answers a decision that passed receive. b.mu is held.
func (b *Backend) decide(c call, req *DecisionRequest) *answer {
	var wire decisionWire
	bad := decode(c.body, &wire, decisionSchema)
	*req = wire.DecisionRequest
	if wire.ArgsSHA256 != nil {
		req.ArgsSHA256 = *wire.ArgsSHA256
	}
	if wire.Approvers != nil {
		req.Approvers = *wire.Approvers
	}
	replayKey := c.id + "\x00" + c.key
	if ans := b.replay(replayKey, c.body, "decision"); ans != nil {
		return ans
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

	b.learnFrom(c.id, req.Revision)
	a := b.approvals[c.id]
	switch {
	case a == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "approval " + c.id + " is not known here"}
	case a.status == "cancelled":
		return &answer{status: http.StatusGone, code: "cancelled", message: "approval " + c.id + " was cancelled: the call is no longer wanted"}
	case b.forbidden[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " may not decide approval " + c.id,
			extra: map[string]string{"actor": req.Actor}}
	case req.Decision == backend.Approve && (strings.HasPrefix(req.Actor, "system:") || req.Via.Surface == "deadline"):
		return &answer{status: http.StatusForbidden, code: "forbidden", message: "an automatic decision may only deny"}
	case req.Revision < a.revision:
		return &answer{status: http.StatusConflict, code: "stale_revision",
			message: fmt.Sprintf("approval %s changed (revision %d is now %d): look at the new card", c.id, req.Revision, a.revision)}
	case req.Revision > a.revision:
		return invalid("revision: approval %s has no revision %d", c.id, req.Revision)
	case a.status != "pending":
		fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, already %s by %s\n", req.Decision, c.id, req.Revision, req.Actor, a.status, a.actor)
		return &answer{status: http.StatusConflict, code: "already_decided",
			message: fmt.Sprintf("approval %s was already decided: %s by %s", c.id, a.status, a.actor),
			extra:   map[string]string{"status": a.status, "actor": a.actor}}
	case req.ArgsSHA256 != "" && b.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden",
			message: req.Actor + " does not hold the content permission, so a decision from them may not carry a digest"}
	case req.ArgsSHA256 != "" && a.digest != "" && req.ArgsSHA256 != a.digest:
		fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, digest %s is not the arguments' %s\n",
			req.Decision, c.id, req.Revision, req.Actor, req.ArgsSHA256, a.digest)
		return &answer{status: http.StatusUnprocessableEntity, code: "digest_mismatch",
			message: "approval " + c.id + " is not for the arguments " + req.ArgsSHA256 + " you decided on: look at the call again"}
	}
	if conf := req.Confirmation; conf != nil {
		// The job checks the typed value as the edge did: against its
		// own copy of the argument.
		v, ok := approval.ConfirmValue(a.args, conf.Argument)
		if req.Decision != backend.Approve || !ok || !approval.TypedMatches(v, conf.Value) {
			fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, the typed confirmation of %s does not match\n",
				req.Decision, c.id, req.Revision, req.Actor, conf.Argument)
			return &answer{status: http.StatusUnprocessableEntity, code: "confirmation_mismatch",
				message: "the value typed for " + conf.Argument + " is not the call's: look at the call again"}
		}
	}
	if wire.Approvers != nil {
		if why, who := b.checkApprovers(a, req); why != "" {
			fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, approvers: %s\n", req.Decision, c.id, req.Revision, req.Actor, why)
			ans := &answer{status: http.StatusForbidden, code: "forbidden",
				message: "the approvers of approval " + c.id + " do not make a quorum: " + why}
			if who != "" {
				ans.extra = map[string]string{"actor": who}
			}
			return ans
		}
	}

	if g := req.Grant; g != nil {
		if why := b.checkGrant(c.id, a, req); why != "" {
			fmt.Fprintf(b.out, "%s %s revision %d by %s: refused, grant %s: %s\n", req.Decision, c.id, req.Revision, req.Actor, g.ID, why)
			return invalid("grant: %s", why)
		}
	}

	a.status, a.actor = "denied", req.Actor
	if req.Decision == backend.Approve {
		a.status = "approved"
	}
	if req.Grant != nil {
		b.keepGrant(c.id, a, req)
	}
	fmt.Fprintln(b.out, printed(a.status, req))
	body, _ := json.Marshal(map[string]string{"status": a.status, "message": message(a, req)}) // strings always encode
	b.replies[replayKey] = reply{request: bytes.Clone(c.body), answer: body}
	return &answer{status: http.StatusOK, body: body}
}

// approverSurfaces are where a person approves.
var approverSurfaces = []string{"slack", "discord", "email", "page"}

// checkApprovers checks a quorum's approvers as docs/protocol.md#approvers
// says a backend should: distinct people, each allowed to decide by their
// own rule, all for the revision decided, the decision's actor last. It
// returns why they do not hold, or "", and whose approval fails, when
// one person's does. b.mu is held.
func (b *Backend) checkApprovers(a *truth, req *DecisionRequest) (why, who string) {
	list := req.Approvers
	switch {
	case len(list) == 0:
		return "the list is empty", ""
	case req.Decision != backend.Approve:
		return "only a decision to approve carries approvers", ""
	case list[len(list)-1].Actor != req.Actor:
		return fmt.Sprintf("the last is %q, not the decision's actor %q", list[len(list)-1].Actor, req.Actor), ""
	}
	seen := map[string]bool{}
	for i, p := range list {
		switch {
		case p.Actor == "" || strings.HasPrefix(p.Actor, "system:"):
			return fmt.Sprintf("approvers[%d]: actor %q is not a tenant user", i, p.Actor), ""
		case seen[p.Actor]:
			return fmt.Sprintf("approvers[%d]: %s is listed twice", i, p.Actor), ""
		case !slices.Contains(approverSurfaces, p.Via.Surface):
			return fmt.Sprintf("approvers[%d]: via.surface %q is not one of %s", i, p.Via.Surface, strings.Join(approverSurfaces, ", ")), ""
		case b.forbidden[p.Actor]:
			return fmt.Sprintf("approvers[%d]: %s may not decide", i, p.Actor), p.Actor
		case p.ArgsSHA256 != "" && b.noContent[p.Actor]:
			return fmt.Sprintf("approvers[%d]: %s does not hold the content permission, so their approval may not carry a digest", i, p.Actor), p.Actor
		case p.ArgsSHA256 != "" && !digestPattern.MatchString(p.ArgsSHA256):
			return fmt.Sprintf("approvers[%d]: args_sha256 is not sha256:<64 hex>", i), p.Actor
		case p.ArgsSHA256 != "" && a.digest != "" && p.ArgsSHA256 != a.digest:
			return fmt.Sprintf("approvers[%d]: %s approved the arguments %s, not revision %d's", i, p.Actor, p.ArgsSHA256, a.revision), p.Actor
		}
		if _, err := time.Parse(time.RFC3339, p.At); err != nil {
			return fmt.Sprintf("approvers[%d]: at %q is not an RFC 3339 time", i, p.At), p.Actor
		}
		seen[p.Actor] = true
	}
	return "", ""
}

// printed is the line Out gets for a recorded decision.
func printed(status string, req *DecisionRequest) string {
	line := fmt.Sprintf("%s %s revision %d by %s via %s", status, req.ApprovalID, req.Revision, req.Actor, req.Via.Surface)
	if req.Via.User != "" {
		line += " (" + req.Via.User + ")"
	}
	if req.Comment != "" {
		line += fmt.Sprintf(": %q", req.Comment)
	}
	if req.ArgsSHA256 != "" {
		line += " · bound to " + req.ArgsSHA256
	}
	if req.Confirmation != nil {
		line += fmt.Sprintf(" · typed %s = %s", req.Confirmation.Argument, req.Confirmation.Value)
	}
	if g := req.Grant; g != nil {
		line += fmt.Sprintf(" · grant %s (%s, %d uses, until %s)", g.ID, g.Scope, g.Uses, g.ExpiresAt.UTC().Format(time.RFC3339))
	}
	if len(req.Approvers) > 0 {
		each := make([]string, len(req.Approvers))
		for i, p := range req.Approvers {
			each[i] = p.Actor + " via " + p.Via.Surface
			if p.Via.User != "" {
				each[i] += " (" + p.Via.User + ")"
			}
			each[i] += " at " + p.At
			if p.ArgsSHA256 != "" {
				each[i] += " bound to " + p.ArgsSHA256
			}
		}
		line += fmt.Sprintf(" · %d approvers: %s", len(each), strings.Join(each, "; "))
	}
	return line
}

// message is a recorded decision's message, which the bot posts.
func message(a *truth, req *DecisionRequest) string {
	switch {
	case a.function == "":
		return a.status + " by " + req.Actor + " (recorded by the stand-in backend)"
	case a.status == "approved":
		return "The call to " + a.function + " runs."
	}
	msg := "The call to " + a.function + " was not made: " + req.Actor + " denied it"
	if comment := strings.TrimRight(req.Comment, "."); comment != "" {
		msg += ": " + comment
	}
	return msg + "."
}

func (b *Backend) serveLookup(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	writeAnswer(w, b.onLookup(r, c, err))
}

func (b *Backend) onLookup(r *http.Request, c call, err error) *answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	ans := b.receive(r, &c, err)
	rec := ReceivedLookup{ApprovalID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigErr == nil, Body: c.body}
	if ans == nil {
		ans = b.lookUp(c, &rec.Request)
	}
	rec.Status, rec.Code = ans.status, ans.code
	b.lookups = append(b.lookups, rec)
	b.record()
	return ans
}

// lookUp answers an argument look-up that passed receive. A look-up for a
// lower revision gets the current arguments and digest: the bot's check
// against its card's digest is what must catch that. b.mu is held.
func (b *Backend) lookUp(c call, req *LookupRequest) *answer {
	if a := decode(c.body, req, lookupSchema); a != nil {
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
	b.learnFrom(c.id, req.Revision)
	a := b.approvals[c.id]
	switch {
	case a == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "approval " + c.id + " is not known here"}
	case a.status == "cancelled":
		return &answer{status: http.StatusGone, code: "cancelled", message: "approval " + c.id + " was cancelled: the call is no longer wanted"}
	case b.forbidden[req.Actor] || b.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " does not hold the content permission"}
	case req.Revision > a.revision:
		return invalid("revision: approval %s has no revision %d", c.id, req.Revision)
	case a.args == nil:
		fmt.Fprintf(b.out, "arguments of %s revision %d for %s: none in the arguments folder\n", c.id, req.Revision, req.Actor)
		return &answer{status: http.StatusNotFound, code: "not_found", message: "the stand-in backend has no arguments for " + c.id}
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
	fmt.Fprintf(b.out, "arguments of %s revision %d shown to %s\n", c.id, req.Revision, req.Actor)
	return &answer{status: http.StatusOK, body: body}
}

// writeAnswer writes a 200's body, or docs/protocol.md's error shape.
func writeAnswer(w http.ResponseWriter, a *answer) {
	if a.retryAfter != "" {
		w.Header().Set("Retry-After", a.retryAfter)
	}
	body := a.body
	if a.code != "" {
		e := map[string]string{"error": a.code, "message": a.message}
		for k, v := range a.extra {
			e[k] = v
		}
		body, _ = json.Marshal(e) // strings always encode
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(a.status)
	_, _ = w.Write(body)
}
