package backend

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"approvalsbot/internal/strictjson"
)

// Defaults for ClientOptions, from docs/protocol.md ("Calls out": 10 s a try) and
// what a person waiting on a click will bear.
const (
	DefaultTryTimeout = 10 * time.Second
	DefaultMaxElapsed = time.Minute
)

// idleConnsPerHost: one kept connection per decision the outbox sends at once.
const idleConnsPerHost = 32

// Backoff between tries without a Retry-After, each wait drawn from
// [d/2, d] so bots that failed together do not retry together.
const (
	backoffFirst = 500 * time.Millisecond
	backoffMax   = 8 * time.Second
)

// The two values of Decision.Decision.
const (
	Approve = "approve"
	Deny    = "deny"
)

// ErrUnavailable means every try until MaxElapsed failed: as far as the
// bot knows nothing was recorded, and the person must be told so.
var ErrUnavailable = errors.New("job backend unavailable")

// ErrTooLarge: the backend's answer is over MaxBody, so it was not read.
var ErrTooLarge = errors.New("answer over the protocol's size cap")

// ProtocolError is an answer the protocol does not list for the call, not
// retried: a bug or a misconfiguration, such as a wrong calls secret.
type ProtocolError struct {
	Status  int    // HTTP status code
	Code    string // the body's "error", "" when the body was not the error shape
	Message string // the body's "message", as the backend wrote it
}

func (e *ProtocolError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("unexpected answer %d", e.Status)
	}
	return fmt.Sprintf("unexpected answer %d %s: %s", e.Status, e.Code, e.Message)
}

// Outcome is what the backend answered to a call, as the bot acts on it.
type Outcome string

// Outcomes the protocol lists. Anything else is an error, not an Outcome.
const (
	// OutcomeRecorded: 200 to a decision; Message is what the model reads.
	OutcomeRecorded Outcome = "recorded"
	// OutcomeOK: 200 to an argument look-up; the arguments are in the result.
	OutcomeOK Outcome = "ok"
	// OutcomeAlreadyDecided: 409; Status and Actor say what and who.
	OutcomeAlreadyDecided Outcome = "already_decided"
	// OutcomeStaleRevision: 409; the call changed since the card.
	OutcomeStaleRevision Outcome = "stale_revision"
	// OutcomeDigestMismatch: 422; Message is shown verbatim.
	OutcomeDigestMismatch Outcome = "digest_mismatch"
	// OutcomeForbidden: 403; the person may not decide or see the content.
	OutcomeForbidden Outcome = "forbidden"
	// OutcomeNotFound: 404 not_found; the approval is gone.
	OutcomeNotFound Outcome = "not_found"
	// OutcomeCancelled: 410 cancelled; the approval is gone.
	OutcomeCancelled Outcome = "cancelled"
)

// Outcomes lists every Outcome, so tests can cover each one.
func Outcomes() []Outcome {
	return []Outcome{
		OutcomeRecorded, OutcomeOK, OutcomeAlreadyDecided, OutcomeStaleRevision,
		OutcomeDigestMismatch, OutcomeForbidden, OutcomeNotFound, OutcomeCancelled,
	}
}

// ClientOptions configures NewClient.
type ClientOptions struct {
	// BaseURL is backend.url: http(s), no user info, query or fragment.
	BaseURL string
	// Secrets are backend.calls_secrets; requests are signed with the first.
	Secrets [][]byte
	// HTTPClient sends the requests (nil: our own); its copy never follows
	// redirects: a signed decision goes to BaseURL or nowhere.
	HTTPClient *http.Client
	// TryTimeout bounds one try, answer body included; 0 means 10 s.
	TryTimeout time.Duration
	// MaxElapsed bounds all tries of one call, waits included; 0: a minute.
	MaxElapsed time.Duration
	// Now is the clock for signatures and MaxElapsed; nil means time.Now.
	Now func() time.Time
	// Sleep waits between tries or returns ctx's error; nil means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Logger gets one line per retry; nil discards.
	Logger *slog.Logger
	// Features are backend.features: the protocol's optional parts the
	// backend supports (docs/protocol.md#optional-features), each one of
	// KnownFeatures, once. The client uses no optional part not listed.
	Features []string
}

// The protocol's optional features (docs/protocol.md#optional-features).
const (
	// FeatureApprovers: a decision that met a quorum carries its approvers.
	FeatureApprovers = "approvers"
	// FeatureTypedConfirmation: an approval of a call that needs a typed
	// confirmation carries the value typed.
	FeatureTypedConfirmation = "typed_confirmation"
	// FeatureGrants: an approval may carry a grant, and grants are
	// revoked with POST /v1/grants/{id}/revoke (docs/protocol.md#grants).
	FeatureGrants = "grants"
	// FeatureTurns: the backend takes a turn's batch decision (turns.go).
	FeatureTurns = "turns"
	// FeatureQuestions: the backend takes answers to its agents'
	// questions (questions.go).
	FeatureQuestions = "questions"
)

// KnownFeatures lists every optional feature the client can use.
func KnownFeatures() []string {
	return []string{FeatureApprovers, FeatureTypedConfirmation, FeatureGrants, FeatureTurns, FeatureQuestions}
}

// String keeps secrets out of %v and %+v.
func (o ClientOptions) String() string {
	return fmt.Sprintf("backend.ClientOptions{BaseURL: %q, Secrets: %s, TryTimeout: %s, MaxElapsed: %s, Features: %q}",
		o.BaseURL, redactedSecrets(o.Secrets), o.TryTimeout, o.MaxElapsed, o.Features)
}

// GoString keeps secrets out of %#v.
func (o ClientOptions) GoString() string { return o.String() }

// LogValue keeps secrets out of slog.
func (o ClientOptions) LogValue() slog.Value { return slog.StringValue(o.String()) }

// Client makes the bot's calls out to the job backend.
type Client struct {
	base       string
	secret     []byte
	http       *http.Client
	tryTimeout time.Duration
	maxElapsed time.Duration
	now        func() time.Time
	sleep      func(context.Context, time.Duration) error
	log        *slog.Logger
	// approvers: the backend takes a quorum's approvers on a decision.
	approvers bool
	typed     bool // FeatureTypedConfirmation
	grants    bool // FeatureGrants
	turns     bool // FeatureTurns
	questions bool // FeatureQuestions
}

// NewClient checks o and returns a Client; the error lists every problem.
func NewClient(o ClientOptions) (*Client, error) {
	var errs []error
	base, err := parseBaseURL(o.BaseURL)
	if err != nil {
		errs = append(errs, err)
	}
	if len(o.Secrets) == 0 {
		errs = append(errs, errors.New("secrets: at least one calls secret is required"))
	}
	for i, s := range o.Secrets {
		if len(s) == 0 {
			errs = append(errs, fmt.Errorf("secrets[%d]: empty", i))
		}
	}
	if o.TryTimeout < 0 {
		errs = append(errs, fmt.Errorf("try timeout: %s is negative", o.TryTimeout))
	}
	if o.MaxElapsed < 0 {
		errs = append(errs, fmt.Errorf("max elapsed: %s is negative", o.MaxElapsed))
	}
	for i, f := range o.Features {
		switch {
		case !slices.Contains(KnownFeatures(), f):
			errs = append(errs, fmt.Errorf("features[%d]: %q is not one of %s", i, f, strings.Join(KnownFeatures(), ", ")))
		case slices.Index(o.Features, f) < i:
			errs = append(errs, fmt.Errorf("features[%d]: %q is listed twice", i, f))
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("backend client: %w", errors.Join(errs...))
	}

	c := &Client{
		base:       base,
		secret:     bytes.Clone(o.Secrets[0]),
		tryTimeout: o.TryTimeout,
		maxElapsed: o.MaxElapsed,
		now:        o.Now,
		sleep:      o.Sleep,
		log:        o.Logger,
		approvers:  slices.Contains(o.Features, FeatureApprovers),
		typed:      slices.Contains(o.Features, FeatureTypedConfirmation),
		grants:     slices.Contains(o.Features, FeatureGrants),
		turns:      slices.Contains(o.Features, FeatureTurns),
		questions:  slices.Contains(o.Features, FeatureQuestions),
	}
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// The default keeps two, and opens and closes the rest each time.
		t.MaxIdleConnsPerHost = idleConnsPerHost
		hc.Transport = t
	}
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	c.http = &hc
	if c.tryTimeout == 0 {
		c.tryTimeout = DefaultTryTimeout
	}
	if c.maxElapsed == 0 {
		c.maxElapsed = DefaultMaxElapsed
	}
	if c.now == nil {
		c.now = time.Now
	}
	if c.sleep == nil {
		c.sleep = sleep
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// String keeps the secret out of %v and %+v.
func (c *Client) String() string {
	return fmt.Sprintf("backend.Client{BaseURL: %q, Secret: <secret>}", c.base)
}

// GoString keeps the secret out of %#v.
func (c *Client) GoString() string { return c.String() }

func parseBaseURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "", errors.New("base url: required")
	case err != nil:
		// url.Error repeats the input, which may hold user info: name only the cause.
		return "", errors.New("base url: not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("base url: scheme must be http or https")
	case u.Host == "":
		return "", errors.New("base url: no host")
	case u.User != nil:
		// Credentials in a URL end up in error strings and logs.
		return "", errors.New("base url: must not carry user info")
	case u.RawQuery != "" || u.Fragment != "" || u.ForceQuery:
		return "", errors.New("base url: must not carry a query or fragment")
	}
	return strings.TrimRight(u.String(), "/"), nil
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Via says where a decision was made.
type Via struct {
	Surface string `json:"surface"`        // slack, discord, deadline, …
	User    string `json:"user,omitempty"` // the surface's user id; none for the deadline
}

// Decision is the body of POST /v1/approvals/{id}/decision.
type Decision struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Decision   string `json:"decision"` // Approve or Deny
	Actor      string `json:"actor"`    // the tenant user, e.g. user:kevin, or system:deadline
	Via        Via    `json:"via"`
	Comment    string `json:"comment,omitempty"`
	// ArgsSHA256 is the digest the clicked card showed, if any.
	ArgsSHA256 string `json:"args_sha256,omitempty"`
	// Approvers, when a quorum decided, is every approval that made it,
	// Actor's last (docs/protocol.md#approvers). Sent only to a backend
	// with FeatureApprovers; to any other the body is as if none.
	Approvers []Approver `json:"approvers,omitempty"`
	// Confirmation is the typed confirmation the person gave on the
	// decision page (docs/protocol.md#typed_confirmation). Sent only to
	// a backend with FeatureTypedConfirmation; to any other, never.
	Confirmation *Confirmation `json:"confirmation,omitempty"`
	// Grant is the grant the person gave with this approval
	// (docs/protocol.md#grants). Only a backend with FeatureGrants is
	// sent one; for any other, a decision carrying one is refused before
	// anything is sent, since the person asked for more than a yes.
	Grant *GrantBody `json:"grant,omitempty"`
}

// Confirmation is a typed confirmation: the argument it names and the
// value as the person typed it.
type Confirmation struct {
	Argument string `json:"argument"`
	Value    string `json:"value"`
}

// Approver is one approval that made a quorum, as the backend is told of it.
type Approver struct {
	Actor string    `json:"actor"` // the tenant user
	Via   Via       `json:"via"`   // where they approved: slack, discord or email
	At    time.Time `json:"at"`    // when the bot recorded it; sent in UTC
	// ArgsSHA256 is the call's digest when they hold the content permission.
	ArgsSHA256 string `json:"args_sha256,omitempty"`
}

// approverSurfaces are where a person approves; never the deadline.
var approverSurfaces = []string{"slack", "discord", "email"}

// DecisionResult is the backend's answer to a decision.
type DecisionResult struct {
	Outcome Outcome
	// Status is "approved" or "denied": this decision or the earlier one.
	Status string
	// Actor decided first (OutcomeAlreadyDecided).
	Actor string
	// Message is the backend's sentence, verbatim.
	Message string
}

// ArgumentsRequest is the body of POST /v1/approvals/{id}/arguments.
type ArgumentsRequest struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Actor      string `json:"actor"`
}

// ArgumentsResult is the backend's answer to an argument look-up.
type ArgumentsResult struct {
	// Outcome is OutcomeOK, Forbidden, NotFound, Cancelled or StaleRevision.
	Outcome Outcome
	// Arguments are the call's full arguments, NOT checked against the card.
	Arguments json.RawMessage
	// ArgsSHA256 is the digest the backend claims for Arguments.
	ArgsSHA256 string
	// Changes is a changeset's files and patch, if any, NOT yet checked
	// against the approval's patch_sha256.
	Changes *ChangesAnswer
	// Message is the backend's sentence when the outcome is not OutcomeOK.
	Message string
}

// ChangesAnswer is the changeset an argument look-up may carry, optional
// so a backend that sends none is answered as before.
type ChangesAnswer struct {
	Files       []ChangedFileAnswer `json:"files"`
	Patch       string              `json:"patch"`
	PatchSHA256 string              `json:"patch_sha256"`
}

// ChangedFileAnswer is one file of a ChangesAnswer.
type ChangedFileAnswer struct {
	Path      string `json:"path"`
	Protected bool   `json:"protected,omitempty"`
}

// Decide sends d; idempotencyKey names the intent (one click, one
// deadline), the same across restarts. The error is nil for every listed
// answer, else ErrUnavailable, ctx's error or a *ProtocolError.
func (c *Client) Decide(ctx context.Context, d Decision, idempotencyKey string) (DecisionResult, error) {
	op := fmt.Sprintf("decide %s revision %d", d.ApprovalID, d.Revision)
	if c.approvers {
		// A copy: the caller's slice keeps its times as given.
		d.Approvers = slices.Clone(d.Approvers)
		for i := range d.Approvers {
			d.Approvers[i].At = d.Approvers[i].At.UTC()
		}
	} else {
		// A backend without the feature gets the decision it always got.
		d.Approvers = nil
	}
	if !c.typed {
		d.Confirmation = nil
	}
	if d.Grant != nil && c.grants {
		g := *d.Grant // a copy: the caller's keeps its time as given
		g.ExpiresAt = g.ExpiresAt.UTC()
		d.Grant = &g
	}
	if d.Grant != nil && !c.grants {
		return DecisionResult{}, fmt.Errorf("%s: a grant for a backend without the %s feature", op, FeatureGrants)
	}
	if err := d.validate(); err != nil {
		return DecisionResult{}, fmt.Errorf("%s: %w", op, err)
	}
	body, err := json.Marshal(d)
	if err != nil {
		return DecisionResult{}, fmt.Errorf("%s: encode: %w", op, err)
	}
	ans, err := c.post(ctx, op, d.ApprovalID, "decision", body, idempotencyKey)
	if err != nil {
		return DecisionResult{}, err
	}
	if ans.status/100 == 2 {
		var ok decisionAnswer
		if err := decodeAnswer(ans.body, decisionAnswerKeys, &ok); err != nil {
			return DecisionResult{}, fmt.Errorf("%s: read answer %d: %w", op, ans.status, err)
		}
		if ok.Status != "approved" && ok.Status != "denied" {
			return DecisionResult{}, fmt.Errorf("%s: answer %d: status %q is neither approved nor denied", op, ans.status, ok.Status)
		}
		return DecisionResult{Outcome: OutcomeRecorded, Status: ok.Status, Message: ok.Message}, nil
	}
	e := ans.errorBody()
	out, ok := decisionOutcomes[statusCode{ans.status, e.Code}]
	if !ok {
		return DecisionResult{}, fmt.Errorf("%s: %w", op, e.protocolError(ans.status))
	}
	res := DecisionResult{Outcome: out, Message: e.Message}
	switch out {
	case OutcomeAlreadyDecided:
		res.Status, res.Actor = e.Status, e.Actor
	case OutcomeForbidden:
		res.Actor = e.Actor // whose approval a quorum's decision was refused for, when named
	}
	return res, nil
}

// Arguments looks up an approval's full arguments for req.Actor;
// idempotencyKey is as for Decide, which the protocol asks of every call.
func (c *Client) Arguments(ctx context.Context, req ArgumentsRequest, idempotencyKey string) (ArgumentsResult, error) {
	op := fmt.Sprintf("look up arguments of %s revision %d", req.ApprovalID, req.Revision)
	if err := req.validate(); err != nil {
		return ArgumentsResult{}, fmt.Errorf("%s: %w", op, err)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return ArgumentsResult{}, fmt.Errorf("%s: encode: %w", op, err)
	}
	ans, err := c.post(ctx, op, req.ApprovalID, "arguments", body, idempotencyKey)
	if err != nil {
		return ArgumentsResult{}, err
	}
	if ans.status/100 == 2 {
		var ok argumentsAnswer
		if err := decodeAnswer(ans.body, argumentsAnswerKeys, &ok); err != nil {
			return ArgumentsResult{}, fmt.Errorf("%s: read answer %d: %w", op, ans.status, err)
		}
		if len(ok.Arguments) == 0 || ok.Arguments[0] != '{' {
			return ArgumentsResult{}, fmt.Errorf("%s: answer %d: arguments are not a JSON object", op, ans.status)
		}
		if !digestPattern.MatchString(ok.ArgsSHA256) {
			return ArgumentsResult{}, fmt.Errorf("%s: answer %d: args_sha256: want sha256:<64 lowercase hex>", op, ans.status)
		}
		if ok.Changes != nil && !digestPattern.MatchString(ok.Changes.PatchSHA256) {
			return ArgumentsResult{}, fmt.Errorf("%s: answer %d: changes.patch_sha256: want sha256:<64 lowercase hex>", op, ans.status)
		}
		return ArgumentsResult{Outcome: OutcomeOK, Arguments: ok.Arguments, ArgsSHA256: ok.ArgsSHA256, Changes: ok.Changes}, nil
	}
	e := ans.errorBody()
	out, ok := argumentsOutcomes[statusCode{ans.status, e.Code}]
	if !ok {
		return ArgumentsResult{}, fmt.Errorf("%s: %w", op, e.protocolError(ans.status))
	}
	return ArgumentsResult{Outcome: out, Message: e.Message}, nil
}

// statusCode keys the listed answers. Both must match: a proxy's bare 404
// must not tell people an approval is gone.
type statusCode struct {
	status int
	code   string
}

var decisionOutcomes = map[statusCode]Outcome{
	{http.StatusConflict, "already_decided"}:            OutcomeAlreadyDecided,
	{http.StatusConflict, "stale_revision"}:             OutcomeStaleRevision,
	{http.StatusUnprocessableEntity, "digest_mismatch"}: OutcomeDigestMismatch,
	{http.StatusForbidden, "forbidden"}:                 OutcomeForbidden,
	{http.StatusNotFound, "not_found"}:                  OutcomeNotFound,
	{http.StatusGone, "cancelled"}:                      OutcomeCancelled,
}

// argumentsOutcomes: docs/protocol.md lists 403 only; a look-up of an approval
// that is gone or changed is answered the way a decision would be.
var argumentsOutcomes = map[statusCode]Outcome{
	{http.StatusConflict, "stale_revision"}: OutcomeStaleRevision,
	{http.StatusForbidden, "forbidden"}:     OutcomeForbidden,
	{http.StatusNotFound, "not_found"}:      OutcomeNotFound,
	{http.StatusGone, "cancelled"}:          OutcomeCancelled,
}

// docs/protocol.md: approval ids are 1–64 of [A-Za-z0-9._:-]; digests are
// sha256:<64 lowercase hex>.
var (
	idPattern     = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)
	digestPattern = regexp.MustCompile(`^sha256:[0-9a-f]{64}$`)
)

func validID(id string) error {
	// "." and ".." match the pattern but would walk up the URL path.
	if !idPattern.MatchString(id) || id == "." || id == ".." {
		return errors.New("approval_id: want 1–64 of [A-Za-z0-9._:-]")
	}
	return nil
}

func (d Decision) validate() error {
	var errs []error
	if err := validID(d.ApprovalID); err != nil {
		errs = append(errs, err)
	}
	if d.Revision < 1 {
		errs = append(errs, errors.New("revision: want ≥ 1"))
	}
	if d.Decision != Approve && d.Decision != Deny {
		errs = append(errs, errors.New("decision: want approve or deny"))
	}
	if d.Actor == "" {
		errs = append(errs, errors.New("actor: required"))
	}
	if d.Via.Surface == "" {
		errs = append(errs, errors.New("via.surface: required"))
	}
	if d.ArgsSHA256 != "" && !digestPattern.MatchString(d.ArgsSHA256) {
		errs = append(errs, errors.New("args_sha256: want sha256:<64 lowercase hex>"))
	}
	// docs/protocol.md: nothing the bot does automatically ever sends approve.
	if d.Decision == Approve && (strings.HasPrefix(d.Actor, "system:") || d.Via.Surface == "deadline") {
		errs = append(errs, errors.New("decision: an automatic decision may only deny"))
	}
	if d.Grant != nil {
		errs = append(errs, d.Grant.validate(d.Decision)...)
	}
	if d.Confirmation != nil && (d.Decision != Approve || d.Confirmation.Argument == "") {
		errs = append(errs, errors.New("confirmation: only an approve carries one, naming its argument"))
	}
	if len(d.Approvers) > 0 {
		errs = append(errs, d.validateApprovers()...)
	}
	return errors.Join(errs...)
}

// validateApprovers holds a quorum's approvers to what
// docs/protocol.md#approvers says a backend checks.
func (d Decision) validateApprovers() []error {
	var errs []error
	if d.Decision != Approve {
		errs = append(errs, errors.New("approvers: only a decision to approve carries them"))
	}
	if last := d.Approvers[len(d.Approvers)-1].Actor; last != d.Actor {
		errs = append(errs, fmt.Errorf("approvers: the last is %q, not the decision's actor %q", last, d.Actor))
	}
	seen := map[string]bool{}
	for i, a := range d.Approvers {
		switch {
		case a.Actor == "" || strings.HasPrefix(a.Actor, "system:"):
			errs = append(errs, fmt.Errorf("approvers[%d].actor: want a tenant user", i))
		case seen[a.Actor]:
			errs = append(errs, fmt.Errorf("approvers[%d].actor: %q approved twice", i, a.Actor))
		}
		seen[a.Actor] = true
		if !slices.Contains(approverSurfaces, a.Via.Surface) {
			errs = append(errs, fmt.Errorf("approvers[%d].via.surface: want %s", i, strings.Join(approverSurfaces, ", ")))
		}
		if a.At.IsZero() {
			errs = append(errs, fmt.Errorf("approvers[%d].at: required", i))
		}
		if a.ArgsSHA256 != "" && !digestPattern.MatchString(a.ArgsSHA256) {
			errs = append(errs, fmt.Errorf("approvers[%d].args_sha256: want sha256:<64 lowercase hex>", i))
		}
	}
	return errs
}

func (r ArgumentsRequest) validate() error {
	var errs []error
	if err := validID(r.ApprovalID); err != nil {
		errs = append(errs, err)
	}
	if r.Revision < 1 {
		errs = append(errs, errors.New("revision: want ≥ 1"))
	}
	if r.Actor == "" {
		errs = append(errs, errors.New("actor: required"))
	}
	return errors.Join(errs...)
}

// validKey keeps keys to what every HTTP stack passes through unchanged.
func validKey(k string) error {
	if k == "" || len(k) > 255 {
		return errors.New("idempotency key: want 1–255 characters")
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x21 || k[i] > 0x7e {
			return errors.New("idempotency key: want printable ASCII without spaces")
		}
	}
	return nil
}

// answer is a final (not retried) HTTP answer.
type answer struct {
	status int
	body   []byte
}

// errorBody is docs/protocol.md's error shape, plus already_decided's fields.
type errorBody struct {
	Code    string `json:"error"`
	Message string `json:"message"`
	Status  string `json:"status"`
	Actor   string `json:"actor"`
}

// errorBody parses a non-2xx body; another shape matches no listed answer.
func (a answer) errorBody() errorBody {
	var e errorBody
	if decodeAnswer(a.body, errorBodyKeys, &e) != nil {
		return errorBody{}
	}
	return e
}

// decisionAnswer is the body of a 200 to a decision.
type decisionAnswer struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// argumentsAnswer is the body of a 200 to an argument look-up.
type argumentsAnswer struct {
	Arguments  json.RawMessage `json:"arguments"`
	ArgsSHA256 string          `json:"args_sha256"`
	Changes    *ChangesAnswer  `json:"changes,omitempty"`
}

// The field names of each answer, for decodeAnswer.
var (
	decisionAnswerKeys  = strictjson.For[decisionAnswer]()
	argumentsAnswerKeys = strictjson.For[argumentsAnswer]()
	errorBodyKeys       = strictjson.For[errorBody]()
)

// decodeAnswer decodes an answer into v, refusing one with two readings
// (docs/design.md#json-with-one-reading). The error names no key.
func decodeAnswer(body []byte, keys *strictjson.Schema, v any) error {
	if err := strictjson.Check(body, keys); err != nil {
		return err
	}
	return json.Unmarshal(body, v)
}

func (e errorBody) protocolError(status int) *ProtocolError {
	return &ProtocolError{Status: status, Code: e.Code, Message: e.Message}
}

// post sends body to {base}/v1/approvals/{id}/{kind} until a final answer.
func (c *Client) post(ctx context.Context, op, id, kind string, body []byte, key string) (answer, error) {
	return c.postTo(ctx, op, id, kind, c.base+"/v1/approvals/"+url.PathEscape(id)+"/"+kind, body, key)
}

// postTo sends body to target until a final answer; id and kind name the
// call in logs.
func (c *Client) postTo(ctx context.Context, op, id, kind, target string, body []byte, key string) (answer, error) {
	if err := validKey(key); err != nil {
		return answer{}, fmt.Errorf("%s: %w", op, err)
	}
	start := c.now()
	for try := 1; ; try++ {
		ans, retryAfter, err := c.try(ctx, target, body, key)
		if err == nil {
			// Even when ctx ended meanwhile: the backend has answered, and
			// the caller should act on what was recorded.
			return ans, nil
		}
		if ctx.Err() != nil {
			return answer{}, fmt.Errorf("%s: stopped at try %d: %w", op, try, ctx.Err())
		}
		var perm permanentError
		if errors.As(err, &perm) {
			return answer{}, fmt.Errorf("%s: %w", op, perm.err)
		}
		wait := retryAfter
		if wait <= 0 {
			wait = backoff(try)
		}
		elapsed := c.now().Sub(start)
		if elapsed+wait > c.maxElapsed {
			return answer{}, fmt.Errorf("%s: %w: gave up after %d tries in %s: %w",
				op, ErrUnavailable, try, elapsed.Round(time.Millisecond), err)
		}
		c.log.LogAttrs(ctx, slog.LevelWarn, "job backend call failed; will retry",
			slog.String("approval_id", id), slog.String("call", kind),
			slog.Int("try", try), slog.Duration("wait", wait), slog.String("error", err.Error()))
		if serr := c.sleep(ctx, wait); serr != nil {
			return answer{}, fmt.Errorf("%s: stopped waiting to retry after try %d (%v): %w", op, try, err, serr)
		}
	}
}

// permanentError marks a try's failure that another try would repeat.
type permanentError struct{ err error }

func (p permanentError) Error() string { return p.err.Error() }

// try makes one request. A nil error means a final answer; any other but
// a permanentError is retried, after retryAfter if the backend said.
func (c *Client) try(ctx context.Context, target string, body []byte, key string) (ans answer, retryAfter time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, c.tryTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return answer{}, 0, permanentError{fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Idempotency-Key", key)
	// Signed per try, not per call: a retry a minute later must still be
	// inside the receiver's MaxSkew window.
	req.Header.Set(SignatureHeader, Sign(c.secret, c.now(), body))

	resp, err := c.http.Do(req)
	if err != nil {
		return answer{}, 0, fmt.Errorf("send: %w", err)
	}
	defer resp.Body.Close()
	data, readErr := io.ReadAll(io.LimitReader(resp.Body, MaxBody+1))

	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		// The status decides, whatever the body held or however it ended.
		code := errorBody{}
		if readErr == nil && len(data) <= MaxBody {
			code = answer{body: data}.errorBody()
		}
		cause := fmt.Errorf("answer %d", resp.StatusCode)
		if code.Code != "" {
			cause = fmt.Errorf("answer %d %s", resp.StatusCode, code.Code)
		}
		return answer{}, c.retryAfter(resp.Header.Get("Retry-After")), cause
	}
	if readErr != nil {
		return answer{}, 0, fmt.Errorf("read answer %d: %w", resp.StatusCode, readErr)
	}
	if len(data) > MaxBody {
		return answer{}, 0, permanentError{fmt.Errorf("answer %d: body over %d bytes refused: %w", resp.StatusCode, MaxBody, ErrTooLarge)}
	}
	return answer{status: resp.StatusCode, body: data}, 0, nil
}

// retryAfter reads Retry-After, seconds or an HTTP date; 0 if unreadable.
func (c *Client) retryAfter(h string) time.Duration {
	if h == "" {
		return 0
	}
	if s, err := strconv.ParseInt(h, 10, 64); err == nil {
		if s <= 0 {
			return 0
		}
		// Past a day it is as good as forever; capping avoids overflow.
		return time.Duration(min(s, 86400)) * time.Second
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(c.now()), 0)
	}
	return 0
}

// backoff is the wait before try+1 when the backend did not say.
func backoff(try int) time.Duration {
	d := backoffMax
	if try < 6 { // 500 ms << 4 = 8 s: past that the cap holds
		d = min(backoffFirst<<(try-1), backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}
