// Package approval is the bot's domain: the events of docs/protocol.md and
// their strict parsing, the states an approval moves through, what a card
// says of a call (docs/cards.md), the RFC 8785 digest, and redaction. It
// does no I/O.
package approval

import (
	"encoding/json"
	"time"
)

// EventType names an event of docs/protocol.md.
type EventType string

// The event types the backend sends.
const (
	EventRequested     EventType = "approval.requested"
	EventReasked       EventType = "approval.reasked"
	EventResolved      EventType = "approval.resolved"
	EventRecheckFailed EventType = "approval.recheck_failed"
	EventCancelled     EventType = "approval.cancelled"
	EventCallFinished  EventType = "call.finished"
	EventAutoGranted   EventType = "approval.auto_granted"
)

// EventTypes enumerates every event type, so tests cover each.
func EventTypes() []EventType {
	return []EventType{EventRequested, EventReasked, EventResolved, EventRecheckFailed,
		EventCancelled, EventCallFinished, EventAutoGranted,
		EventQuestionAsked, EventQuestionAnswered, EventQuestionCancelled}
}

// Event is one parsed and validated event. Exactly one of the data fields
// is set, chosen by Type.
type Event struct {
	ID     string
	Type   EventType
	Time   time.Time
	Tenant string
	// Data is the data object as received; a revision stores StoredForm.
	Data json.RawMessage

	Approval      *Approval      // requested, reasked, question.asked
	Resolved      *Resolved      // approval.resolved, question.answered
	RecheckFailed *RecheckFailed // approval.recheck_failed
	Cancelled     *Cancelled     // approval.cancelled, question.cancelled
	Finished      *Finished      // call.finished
	AutoGranted   *AutoGranted   // approval.auto_granted
}

// ApprovalID is the approval the event is about; empty for auto_granted,
// which is about a call that never waited.
func (e *Event) ApprovalID() string {
	switch {
	case e.Approval != nil:
		return e.Approval.ID
	case e.Resolved != nil:
		return e.Resolved.ApprovalID
	case e.RecheckFailed != nil:
		return e.RecheckFailed.ApprovalID
	case e.Cancelled != nil:
		return e.Cancelled.ApprovalID
	case e.Finished != nil:
		return e.Finished.ApprovalID
	}
	return ""
}

// Kind is what an approval decides.
type Kind string

// Approval kinds.
const (
	KindCall           Kind = "call"
	KindChanges        Kind = "changes"
	KindProtectedPaths Kind = "protected_paths"
)

// RoleKind is what an argument is to the call.
type RoleKind string

// Argument roles.
const (
	RoleRecipient  RoleKind = "recipient"
	RoleAmount     RoleKind = "amount"
	RoleHost       RoleKind = "host"
	RolePath       RoleKind = "path"
	RolePayee      RoleKind = "payee"
	RoleRepository RoleKind = "repository"
)

// Origin is where a value came from, ranked: request is highest.
type Origin string

// Origins, highest first.
const (
	OriginRequest      Origin = "request"
	OriginIdentity     Origin = "identity"
	OriginTenantRecord Origin = "tenant_record"
	OriginJobRead      Origin = "job_read"
	OriginNowhere      Origin = "nowhere"
)

// Reason says why the call waits for a person.
type Reason string

// Reasons of asked_by.
const (
	ReasonRequiresApproval Reason = "requires_approval"
	ReasonPolicy           Reason = "policy"
	ReasonHook             Reason = "hook"
	ReasonTaint            Reason = "taint"
	ReasonOrigin           Reason = "origin"
	ReasonSequence         Reason = "sequence"
	ReasonLoop             Reason = "loop"
)

// Why says why an approval was asked again.
type Why string

// Reasons for a reask.
const (
	WhyArgumentsChanged Why = "arguments_changed"
	WhySnapshotChanged  Why = "snapshot_changed"
	WhyPolicyChanged    Why = "policy_changed"
	WhyHookChanged      Why = "hook_changed"
)

// Approval is one pending tool call as docs/protocol.md describes it.
type Approval struct {
	ID              string     `json:"id"`
	Revision        int        `json:"revision"`
	Tenant          string     `json:"tenant"`
	Kind            Kind       `json:"kind"`
	ConsoleURL      string     `json:"console_url,omitempty"`
	Job             Job        `json:"job"`
	Call            Call       `json:"call"`
	Roles           []Role     `json:"roles,omitempty"`
	Flags           Flags      `json:"flags"`
	AskedBy         AskedBy    `json:"asked_by"`
	AgentSays       string     `json:"agent_says,omitempty"`
	Level           string     `json:"level,omitempty"`
	Confirm         *Confirm   `json:"confirm,omitempty"`
	EffectsMismatch bool       `json:"effects_mismatch,omitempty"`
	Turn            Turn       `json:"turn"`
	Content         Content    `json:"content"`
	Changes         *Changes   `json:"changes,omitempty"`
	RequestedAt     time.Time  `json:"requested_at"`
	Deadline        *time.Time `json:"deadline,omitempty"`
	Ladder          string     `json:"ladder,omitempty"`
	Why             Why        `json:"why,omitempty"`
	// Question is an agent's question (KindQuestion, question.asked);
	// nil for a call. A question has no Call.
	Question *Question `json:"question,omitempty"`
	// QuestionSHA256 is the digest of Question as the backend asked it
	// (QuestionDigest): the bot's own, kept in the stored form, so Parse
	// refuses one the backend sends.
	QuestionSHA256 string `json:"question_sha256,omitempty"`
}

// Job is the job that made the call.
type Job struct {
	ID          string `json:"id"`
	URL         string `json:"url,omitempty"`
	StartedBy   string `json:"started_by,omitempty"`
	Agent       string `json:"agent,omitempty"`
	PrivateChat bool   `json:"private_chat,omitempty"`
}

// Call is the tool call that waits.
type Call struct {
	Function     string          `json:"function"`
	Snapshot     string          `json:"snapshot,omitempty"`
	Annotations  Annotations     `json:"annotations"`
	Arguments    json.RawMessage `json:"arguments,omitempty"`
	ArgumentsCut bool            `json:"arguments_cut,omitempty"`
	Redaction    Redaction       `json:"redaction"`
	ArgsSHA256   string          `json:"args_sha256"`
	CallIndex    int             `json:"call_index,omitempty"`
	// Fingerprints let a reask tell that a hidden value changed; the bot's
	// own (StoredForm), so Parse refuses any the backend sends.
	Fingerprints *Fingerprints `json:"fingerprints,omitempty"`
	// Received are the arguments as sent, held in memory only.
	Received ReceivedArguments `json:"-"`
}

// Annotations are the tool's own hints; nil means the tool did not say.
type Annotations struct {
	ReadOnlyHint    *bool `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool `json:"destructiveHint,omitempty"`
	OpenWorldHint   *bool `json:"openWorldHint,omitempty"`
}

// Redaction is what the backend says it did to the projection.
type Redaction struct {
	Redacted  bool `json:"redacted"`
	Truncated bool `json:"truncated"`
}

// Role is a marked argument with the values the origin check compared.
type Role struct {
	Argument    string      `json:"argument"`
	Role        RoleKind    `json:"role"`
	Values      []RoleValue `json:"values"`
	LeftOut     int         `json:"left_out,omitempty"`
	NotCompared bool        `json:"not_compared,omitempty"`
	// Found is the warning line the values called for, kept once a stored
	// restricted revision drops them; Parse refuses any the backend sends.
	Found string `json:"found,omitempty"`
}

// RoleValue is one compared value and where it came from.
type RoleValue struct {
	Value      string `json:"value"`
	Origin     Origin `json:"origin"`
	OutOfScope bool   `json:"out_of_scope,omitempty"`
}

// Flags are the three facts the request never asked for.
type Flags struct {
	NotTraced  []NotTraced `json:"not_traced,omitempty"`
	NewToJob   []NewToJob  `json:"new_to_job,omitempty"`
	ClassAbove *ClassAbove `json:"class_above,omitempty"`
}

// NotTraced is an argument whose value came from below the request.
type NotTraced struct {
	Argument string   `json:"argument"`
	Role     RoleKind `json:"role"`
	Origin   Origin   `json:"origin"`
	Floor    Origin   `json:"floor"`
}

// NewToJob is a recipient or host argument the job has not used before.
type NewToJob struct {
	Argument string   `json:"argument"`
	Role     RoleKind `json:"role"`
}

// ClassAbove is a call whose action class ranks above the job's so far.
type ClassAbove struct {
	Class    string `json:"class"`
	Previous string `json:"previous,omitempty"`
}

// AskedBy says who sent the call to a person.
type AskedBy struct {
	Reason       Reason   `json:"reason"`
	Rule         string   `json:"rule,omitempty"`
	Hook         string   `json:"hook,omitempty"`
	Taint        []Taint  `json:"taint,omitempty"`
	Argument     string   `json:"argument,omitempty"`
	Role         RoleKind `json:"role,omitempty"`
	Floor        Origin   `json:"floor,omitempty"`
	Origin       Origin   `json:"origin,omitempty"`
	PreviousCall string   `json:"previous_call,omitempty"`
}

// Taint is one reason the job counts as having read untrusted input.
type Taint struct {
	Source   string `json:"source"`
	Function string `json:"function"`
	Call     int    `json:"call"`
}

// Confirm names the argument a person must type to approve; chat cannot.
type Confirm struct {
	Argument string `json:"argument"`
}

// Turn lists the turn's other calls that wait with this one.
type Turn struct {
	Waiting []string `json:"waiting,omitempty"`
	// ID names the model turn this call is one of; Members are the
	// approval ids of that turn's calls, in call order, this one among
	// them (docs/protocol.md#turns). Both empty for a backend that does
	// not say.
	ID      string   `json:"id,omitempty"`
	Members []string `json:"members,omitempty"`
}

// Content says whether details are walled off from shared places.
type Content struct {
	Restricted bool `json:"restricted"`
}

// Changes is a changeset's files and patch.
type Changes struct {
	Files       []ChangedFile `json:"files"`
	Patch       string        `json:"patch,omitempty"`
	PatchCut    bool          `json:"patch_cut,omitempty"`
	PatchSHA256 string        `json:"patch_sha256,omitempty"`
}

// ChangedFile is one file of a changeset.
type ChangedFile struct {
	Path      string `json:"path"`
	Protected bool   `json:"protected,omitempty"`
}

// Resolved is a decision made elsewhere (console, CLI, another chat).
type Resolved struct {
	ApprovalID string `json:"approval_id"`
	Revision   int    `json:"revision"`
	Status     State  `json:"status"`
	Actor      string `json:"actor"`
	Comment    string `json:"comment,omitempty"`
	Via        string `json:"via,omitempty"`
	Message    string `json:"message,omitempty"`
	// Answer is question.answered's answer (Status answered); nil for a
	// decision.
	Answer *Answer `json:"-"`
}

// RecheckFailed is a yes the backend turned into a denial.
type RecheckFailed struct {
	ApprovalID string `json:"approval_id"`
	Message    string `json:"message"`
}

// Cancelled is an approval no longer wanted.
type Cancelled struct {
	ApprovalID string `json:"approval_id"`
	Reason     string `json:"reason,omitempty"`
}

// Outcome is what an approved call did.
type Outcome string

// Call outcomes.
const (
	OutcomeCompleted Outcome = "completed"
	OutcomeFailed    Outcome = "failed"
)

// Finished reports what an approved call did.
type Finished struct {
	ApprovalID string  `json:"approval_id"`
	Outcome    Outcome `json:"outcome"`
	Summary    string  `json:"summary,omitempty"`
}

// AutoGranted is a call that ran unattended under a policy.
type AutoGranted struct {
	Job struct {
		ID    string `json:"id"`
		Agent string `json:"agent,omitempty"`
	} `json:"job"`
	Call struct {
		Function   string `json:"function"`
		ArgsSHA256 string `json:"args_sha256"`
	} `json:"call"`
	PolicyID string `json:"policy_id"`
	// GrantID names the grant the call ran under, when a person's grant
	// let it through (docs/protocol.md#grants); "" for a platform policy.
	GrantID string `json:"grant_id,omitempty"`
}
