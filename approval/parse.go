package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/internal/strictjson"
)

// ErrBadJSON is a body that is not a JSON object (400 bad_json).
var ErrBadJSON = errors.New("bad json")

// FieldError is one schema violation, named by its field path
// (`data.call.args_sha256`), with what was wanted.
type FieldError struct {
	Path string
	Msg  string
}

func (e *FieldError) Error() string { return e.Path + ": " + e.Msg }

// ValidationError lists every schema violation of one event (422 invalid).
type ValidationError struct {
	Problems []*FieldError
}

// maxListed bounds how many problems one message names, so an answer to a
// garbage event stays one readable sentence.
const maxListed = 5

func (e *ValidationError) Error() string {
	var b strings.Builder
	for i, p := range e.Problems {
		if i == maxListed {
			fmt.Fprintf(&b, "; and %d more", len(e.Problems)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(p.Error())
	}
	return b.String()
}

var (
	idPattern      = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,64}$`)
	eventIDPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)
	classPattern   = regexp.MustCompile(`^(read|write|egress|destructive|host\.[A-Za-z0-9._-]{1,253})$`)
)

// ValidID reports whether s is an approval or tenant id (1–64 of [A-Za-z0-9._:-]).
func ValidID(s string) bool { return idPattern.MatchString(s) }

// maxText bounds free-text fields so one event cannot make a card unbounded;
// the body limit (1 MiB) is the outer bound.
const maxText = 64 << 10

type envelope struct {
	ID     string          `json:"id"`
	Type   EventType       `json:"type"`
	Time   string          `json:"time"`
	Tenant string          `json:"tenant"`
	Data   json.RawMessage `json:"data"`
}

// approvalWire shadows the fields whose absence or form encoding/json
// cannot report with a path: times (parsed here with their path) and
// content.restricted (required, so a missing wall fails closed).
type approvalWire struct {
	Approval
	RequestedAt string  `json:"requested_at"`
	Deadline    *string `json:"deadline"`
	Content     *struct {
		Restricted *bool `json:"restricted"`
	} `json:"content"`
}

// wireEvent is an event body as it is decoded, the envelope with the data
// object of one type, so that strictjson knows the field names at every path.
type wireEvent[D any] struct {
	envelope
	Data D `json:"data"`
}

// The field names of each event type's body; an unknown type is checked
// against the envelope's alone, and refused for its type anyway.
var (
	envelopeKeys = strictjson.For[envelope]()
	// A role's found and a call's fingerprints are the bot's own, kept in
	// the stored form of a revision (Role.Found, Call.Fingerprints): a
	// backend that sends one is refused at its path, as any unknown field,
	// not read.
	approvalKeys = strictjson.For[wireEvent[approvalWire]]().Without("data", "roles", "found").Without("data", "call", "fingerprints").
			Without("data", "question").Without("data", "question_sha256")
	eventKeys = map[EventType]*strictjson.Schema{
		EventRequested:     approvalKeys,
		EventReasked:       approvalKeys,
		EventResolved:      strictjson.For[wireEvent[Resolved]](),
		EventRecheckFailed: strictjson.For[wireEvent[RecheckFailed]](),
		EventCancelled:     strictjson.For[wireEvent[Cancelled]](),
		EventCallFinished:  strictjson.For[wireEvent[Finished]](),
		EventAutoGranted:   strictjson.For[wireEvent[AutoGranted]](),
		// docs/protocol.md#questions
		EventQuestionAsked:     strictjson.For[wireEvent[questionWire]](),
		EventQuestionAnswered:  strictjson.For[wireEvent[questionAnswered]](),
		EventQuestionCancelled: strictjson.For[wireEvent[questionCancelled]](),
	}
)

// Parse decodes and validates one event body. It returns ErrBadJSON
// (wrapped) for a body that is not a JSON object, and *ValidationError for
// one that breaks the schema; the tenant's existence is the caller's check.
func Parse(body []byte) (*Event, error) {
	if !utf8.Valid(body) {
		return nil, fmt.Errorf("%w: the body is not valid UTF-8", ErrBadJSON)
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return nil, fmt.Errorf("%w: the body is not a JSON object", ErrBadJSON)
	}
	if tooDeep(body, MaxDepth) {
		return nil, fmt.Errorf("%w: the body nests deeper than %d levels", ErrBadJSON, MaxDepth)
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, decodeError(err, "")
	}
	// encoding/json lets the last of two equal keys win, in any case, so
	// `"content":{"restricted":true},"Content":{"restricted":false}` would
	// read as unrestricted: refuse a body with two readings before any
	// value is used. An ambiguous env.Type is safe: every schema checks the
	// envelope's keys alike.
	keys, ok := eventKeys[env.Type]
	if !ok {
		keys = envelopeKeys
	}
	if err := strictjson.CheckKnown(body, keys); err != nil {
		return nil, keyError(err)
	}
	v := &validator{}
	ev := &Event{ID: env.ID, Type: env.Type, Tenant: env.Tenant, Data: env.Data}
	v.check(eventIDPattern.MatchString(env.ID), "id", "want 1–128 of [A-Za-z0-9._:-]")
	v.check(idPattern.MatchString(env.Tenant), "tenant", "want 1–64 of [A-Za-z0-9._:-]")
	ev.Time = v.time("time", env.Time, true)
	data := bytes.TrimSpace(env.Data)
	if len(data) == 0 || data[0] != '{' {
		v.add("data", "want an object")
		return nil, v.err()
	}
	var err error
	switch env.Type {
	case EventRequested, EventReasked:
		ev.Approval, err = parseApproval(v, data, env)
	case EventResolved:
		ev.Resolved = &Resolved{}
		if err = decodeData(data, ev.Resolved); err == nil {
			validateResolved(v, ev.Resolved)
		}
	case EventRecheckFailed:
		ev.RecheckFailed = &RecheckFailed{}
		if err = decodeData(data, ev.RecheckFailed); err == nil {
			v.check(idPattern.MatchString(ev.RecheckFailed.ApprovalID), "data.approval_id", "want 1–64 of [A-Za-z0-9._:-]")
			v.text("data.message", ev.RecheckFailed.Message, true)
		}
	case EventCancelled:
		ev.Cancelled = &Cancelled{}
		if err = decodeData(data, ev.Cancelled); err == nil {
			v.check(idPattern.MatchString(ev.Cancelled.ApprovalID), "data.approval_id", "want 1–64 of [A-Za-z0-9._:-]")
			v.text("data.reason", ev.Cancelled.Reason, false)
		}
	case EventCallFinished:
		ev.Finished = &Finished{}
		if err = decodeData(data, ev.Finished); err == nil {
			v.check(idPattern.MatchString(ev.Finished.ApprovalID), "data.approval_id", "want 1–64 of [A-Za-z0-9._:-]")
			v.check(ev.Finished.Outcome == OutcomeCompleted || ev.Finished.Outcome == OutcomeFailed,
				"data.outcome", "want completed or failed")
			v.text("data.summary", ev.Finished.Summary, false)
		}
	case EventAutoGranted:
		ev.AutoGranted = &AutoGranted{}
		if err = decodeData(data, ev.AutoGranted); err == nil {
			ag := ev.AutoGranted
			v.text("data.job.id", ag.Job.ID, true)
			v.text("data.call.function", ag.Call.Function, true)
			v.digest("data.call.args_sha256", ag.Call.ArgsSHA256, true)
			v.text("data.policy_id", ag.PolicyID, true)
			// A grant's id is the bot's own ("g-" and hex); any other
			// names no grant and is refused rather than looked up.
			v.check(ag.GrantID == "" || GrantIDPattern.MatchString(ag.GrantID), "data.grant_id", "want g- and 16 lowercase hex")
		}
	case EventQuestionAsked:
		ev.Approval, err = parseQuestion(v, data, env)
	case EventQuestionAnswered:
		ev.Resolved, err = parseQuestionAnswered(v, data)
	case EventQuestionCancelled:
		ev.Cancelled, err = parseQuestionCancelled(v, data)
	default:
		v.add("type", fmt.Sprintf("unknown event type %q", truncate(string(env.Type), 64)))
	}
	if err != nil {
		return nil, err
	}
	if e := v.err(); e != nil {
		return nil, e
	}
	return ev, nil
}

// keyError turns strictjson's refusal into ours: a key with two readings
// is a schema violation at its path (422), anything else bad JSON.
func keyError(err error) error {
	var ke *strictjson.KeyError
	if !errors.As(err, &ke) {
		return fmt.Errorf("%w: %v", ErrBadJSON, err)
	}
	path := ke.Path
	if path == "" {
		path = "(top level)" // unreachable: every schema names its top-level keys
	}
	return &ValidationError{Problems: []*FieldError{{Path: path, Msg: ke.Reason()}}}
}

func decodeData(data []byte, into any) error {
	if err := json.Unmarshal(data, into); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			// encoding/json names no list index; find it in the value.
			te.Field = locate(data, strings.TrimPrefix(te.Field, "Approval."), te.Value)
		}
		return decodeError(err, "data.")
	}
	return nil
}

// locate turns a field path without list indexes ("roles.role") into the
// path of the first value of JSON kind kind along it ("roles[0].role").
func locate(data []byte, field, kind string) string {
	var v any
	if json.Unmarshal(data, &v) != nil || field == "" {
		return field
	}
	if p, ok := walk(v, strings.Split(field, "."), kind); ok {
		return p
	}
	return field
}

func walk(v any, segs []string, kind string) (string, bool) {
	if arr, ok := v.([]any); ok {
		for i, el := range arr {
			if p, ok := walk(el, segs, kind); ok {
				if p != "" && p[0] != '[' {
					p = "." + p
				}
				return fmt.Sprintf("[%d]", i) + p, true
			}
		}
		return "", false
	}
	if len(segs) == 0 {
		return "", jsonKind(v) == kind || strings.HasPrefix(kind, jsonKind(v))
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	child, ok := obj[segs[0]]
	if !ok {
		return "", false
	}
	p, ok := walk(child, segs[1:], kind)
	if !ok {
		return "", false
	}
	if len(p) > 0 && p[0] == '[' {
		return segs[0] + p, true
	}
	if p == "" {
		return segs[0], true
	}
	return segs[0] + "." + p, true
}

// jsonKind names a decoded value's kind as encoding/json's errors do.
func jsonKind(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "bool"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "null"
}

// decodeError turns encoding/json's errors into ours: syntax → bad JSON,
// a wrong type → a field error with its path.
func decodeError(err error, prefix string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		// approvalWire embeds Approval; encoding/json names the embedded
		// struct in the path, which the sender never wrote.
		path := prefix + strings.TrimPrefix(te.Field, "Approval.")
		if te.Field == "" {
			path = strings.TrimSuffix(prefix, ".")
		}
		want := te.Type.Kind().String()
		switch want {
		case "int", "int64":
			want = "an integer"
		case "string":
			want = "a string"
		case "bool":
			want = "true or false"
		case "slice":
			want = "a list"
		case "struct", "map":
			want = "an object"
		}
		return &ValidationError{Problems: []*FieldError{{Path: path, Msg: "want " + want}}}
	}
	return fmt.Errorf("%w: %v", ErrBadJSON, err)
}

func parseApproval(v *validator, data []byte, env envelope) (*Approval, error) {
	var w approvalWire
	if err := decodeData(data, &w); err != nil {
		return nil, err
	}
	a := w.Approval
	p := "data."
	v.check(idPattern.MatchString(a.ID), p+"id", "want 1–64 of [A-Za-z0-9._:-]")
	v.check(a.Revision >= 1, p+"revision", "want an integer ≥ 1")
	switch {
	case a.Tenant == "":
		v.add(p+"tenant", "required")
	case a.Tenant != env.Tenant:
		v.add(p+"tenant", fmt.Sprintf("%q is not the envelope's tenant %q", truncate(a.Tenant, 64), truncate(env.Tenant, 64)))
	}
	v.check(a.Kind == KindCall || a.Kind == KindChanges || a.Kind == KindProtectedPaths, p+"kind",
		"want call, changes or protected_paths")
	v.url(p+"console_url", a.ConsoleURL)
	v.text(p+"job.id", a.Job.ID, true)
	v.url(p+"job.url", a.Job.URL)
	v.text(p+"job.started_by", a.Job.StartedBy, false)
	v.text(p+"job.agent", a.Job.Agent, false)

	c := a.Call
	v.text(p+"call.function", c.Function, true)
	v.digest(p+"call.snapshot", c.Snapshot, false)
	v.digest(p+"call.args_sha256", c.ArgsSHA256, true)
	if args := bytes.TrimSpace(c.Arguments); len(args) > 0 && args[0] != '{' {
		v.add(p+"call.arguments", "want an object")
	}
	v.check(c.CallIndex >= 0, p+"call.call_index", "want an integer ≥ 0")

	for i, r := range a.Roles {
		rp := fmt.Sprintf("%sroles[%d].", p, i)
		v.text(rp+"argument", r.Argument, true)
		v.role(rp+"role", r.Role)
		v.check(r.LeftOut >= 0, rp+"left_out", "want an integer ≥ 0")
		for j, val := range r.Values {
			vp := fmt.Sprintf("%svalues[%d].", rp, j)
			v.text(vp+"value", val.Value, false)
			v.origin(vp+"origin", val.Origin)
		}
	}
	for i, f := range a.Flags.NotTraced {
		fp := fmt.Sprintf("%sflags.not_traced[%d].", p, i)
		v.text(fp+"argument", f.Argument, true)
		v.role(fp+"role", f.Role)
		v.origin(fp+"origin", f.Origin)
		v.origin(fp+"floor", f.Floor)
	}
	for i, f := range a.Flags.NewToJob {
		fp := fmt.Sprintf("%sflags.new_to_job[%d].", p, i)
		v.text(fp+"argument", f.Argument, true)
		v.role(fp+"role", f.Role)
	}
	if ca := a.Flags.ClassAbove; ca != nil {
		v.check(classPattern.MatchString(ca.Class), p+"flags.class_above.class",
			"want read, write, egress, destructive or host.<name>")
		if ca.Previous != "" {
			v.check(classPattern.MatchString(ca.Previous), p+"flags.class_above.previous",
				"want read, write, egress, destructive or host.<name>")
		}
	}
	validateAskedBy(v, p+"asked_by.", a.AskedBy)
	v.text(p+"agent_says", a.AgentSays, false)
	v.text(p+"level", a.Level, false)
	if a.Confirm != nil {
		v.text(p+"confirm.argument", a.Confirm.Argument, true)
	}
	for i, t := range a.Turn.Waiting {
		v.text(fmt.Sprintf("%sturn.waiting[%d]", p, i), t, true)
	}
	validateTurn(v, p, &a)
	if w.Content == nil || w.Content.Restricted == nil {
		v.add(p+"content.restricted", "required (true or false)")
	} else {
		a.Content.Restricted = *w.Content.Restricted
	}
	if a.Kind == KindChanges || a.Kind == KindProtectedPaths {
		if a.Changes == nil || len(a.Changes.Files) == 0 {
			v.add(p+"changes.files", "required for kind "+string(a.Kind))
		}
	}
	if ch := a.Changes; ch != nil {
		for i, f := range ch.Files {
			v.text(fmt.Sprintf("%schanges.files[%d].path", p, i), f.Path, true)
		}
		v.digest(p+"changes.patch_sha256", ch.PatchSHA256, false)
	}
	v.waiting(p, &a, w.RequestedAt, w.Deadline)
	switch {
	case env.Type == EventReasked:
		v.check(a.Why == WhyArgumentsChanged || a.Why == WhySnapshotChanged || a.Why == WhyPolicyChanged || a.Why == WhyHookChanged,
			p+"why", "want arguments_changed, snapshot_changed, policy_changed or hook_changed")
	case a.Why != "":
		v.add(p+"why", "only an approval.reasked event says why")
	}
	return &a, nil
}

// waiting reads and checks what an approval and a question share of
// their wait: requested_at, the deadline after it, and the ladder's name.
func (v *validator) waiting(p string, a *Approval, requestedAt string, deadline *string) {
	a.RequestedAt = v.time(p+"requested_at", requestedAt, true)
	if deadline != nil {
		d := v.time(p+"deadline", *deadline, true)
		if !d.IsZero() {
			a.Deadline = &d
			if !a.RequestedAt.IsZero() && !d.After(a.RequestedAt) {
				v.add(p+"deadline", "want a time after requested_at")
			}
		}
	}
	if a.Ladder != "" {
		v.check(idPattern.MatchString(a.Ladder), p+"ladder", "want 1–64 of [A-Za-z0-9._:-]")
	}
}

func validateAskedBy(v *validator, p string, ab AskedBy) {
	switch ab.Reason {
	case ReasonRequiresApproval, ReasonLoop:
	case ReasonPolicy:
		v.text(p+"rule", ab.Rule, true)
	case ReasonHook:
		v.text(p+"hook", ab.Hook, true)
	case ReasonTaint:
		if len(ab.Taint) == 0 {
			v.add(p+"taint", "required for reason taint")
		}
		for i, t := range ab.Taint {
			tp := fmt.Sprintf("%staint[%d].", p, i)
			v.text(tp+"source", t.Source, true)
			v.text(tp+"function", t.Function, true)
			v.check(t.Call >= 0, tp+"call", "want an integer ≥ 0")
		}
	case ReasonOrigin:
		v.text(p+"argument", ab.Argument, true)
		v.role(p+"role", ab.Role)
		v.origin(p+"floor", ab.Floor)
		v.origin(p+"origin", ab.Origin)
	case ReasonSequence:
		v.text(p+"rule", ab.Rule, true)
		v.text(p+"previous_call", ab.PreviousCall, true)
	default:
		v.add(p+"reason", "want requires_approval, policy, hook, taint, origin, sequence or loop")
	}
}

func validateResolved(v *validator, r *Resolved) {
	v.check(idPattern.MatchString(r.ApprovalID), "data.approval_id", "want 1–64 of [A-Za-z0-9._:-]")
	v.check(r.Revision >= 1, "data.revision", "want an integer ≥ 1")
	v.check(r.Status == StateApproved || r.Status == StateDenied, "data.status", "want approved or denied")
	v.text("data.actor", r.Actor, true)
	v.text("data.comment", r.Comment, false)
	v.text("data.via", r.Via, false)
	v.text("data.message", r.Message, false)
}

type validator struct {
	problems []*FieldError
}

func (v *validator) add(path, msg string) {
	v.problems = append(v.problems, &FieldError{Path: path, Msg: msg})
}

func (v *validator) check(ok bool, path, msg string) {
	if !ok {
		v.add(path, msg)
	}
}

func (v *validator) err() error {
	if len(v.problems) == 0 {
		return nil
	}
	return &ValidationError{Problems: v.problems}
}

func (v *validator) text(path, s string, required bool) {
	switch {
	case s == "" && required:
		v.add(path, "required")
	case len(s) > maxText:
		v.add(path, fmt.Sprintf("want at most %d bytes", maxText))
	}
}

func (v *validator) digest(path, s string, required bool) {
	if s == "" && !required {
		return
	}
	v.check(ValidDigest(s), path, "want sha256:<64 hex>")
}

func (v *validator) role(path string, r RoleKind) {
	switch r {
	case RoleRecipient, RoleAmount, RoleHost, RolePath, RolePayee, RoleRepository:
	default:
		v.add(path, "want recipient, amount, host, path, payee or repository")
	}
}

func (v *validator) origin(path string, o Origin) {
	if o.rank() < 0 {
		v.add(path, "want request, identity, tenant_record, job_read or nowhere")
	}
}

// url accepts only absolute http(s) links: they become links on cards, and
// another scheme (javascript:, file:) must never reach a person's click.
func (v *validator) url(path, s string) {
	if s == "" {
		return
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil {
		v.add(path, "want an absolute http(s) URL")
	}
}

func (v *validator) time(path, s string, required bool) time.Time {
	if s == "" {
		if required {
			v.add(path, "required (RFC 3339 time)")
		}
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		v.add(path, "want an RFC 3339 time such as 2026-11-29T18:00:00Z")
		return time.Time{}
	}
	if t.Year() < minYear {
		// A zero-ish time would read as unset further on and silently
		// replace a tool's own deadline with the default.
		v.add(path, fmt.Sprintf("want a time in the year %d or later", minYear))
		return time.Time{}
	}
	return t.UTC()
}

// rank orders origins, request highest (4) to nowhere (0); -1 is unknown.
func (o Origin) rank() int {
	switch o {
	case OriginRequest:
		return 4
	case OriginIdentity:
		return 3
	case OriginTenantRecord:
		return 2
	case OriginJobRead:
		return 1
	case OriginNowhere:
		return 0
	}
	return -1
}

// MaxDepth bounds how deeply an event's JSON may nest. No real call's
// arguments come near it; a body past it is refused before decoding, so a
// hostile one costs one pass over its bytes.
const MaxDepth = 256

// tooDeep reports whether the JSON text b nests arrays and objects deeper
// than max, counting brackets outside strings.
func tooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
			if depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}

// minYear bounds accepted times from below; nothing the backend sends
// predates it.
const minYear = 2000

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
