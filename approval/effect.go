package approval

import (
	"fmt"
	"strings"
)

// Effect words a card's effect line uses (docs/cards.md).
const (
	EffectReadsOnly   = "reads only"
	EffectDestructive = "DESTRUCTIVE"
	EffectUnknown     = "Unknown"
	EffectOutside     = "reaches outside the tenant"
)

// EffectLine says what the call does, from the tool's annotations only
// (never from what the agent says): `reads only`, `DESTRUCTIVE`, nothing
// for a write that destroys nothing, `Unknown` when the tool is silent or
// writes without saying whether it destroys; plus `reaches outside the
// tenant` unless openWorldHint is exactly false. Joined with " · ".
func EffectLine(a Annotations) string {
	var words []string
	switch {
	case isTrue(a.ReadOnlyHint):
		words = append(words, EffectReadsOnly)
	case isTrue(a.DestructiveHint):
		words = append(words, EffectDestructive)
	case isFalse(a.ReadOnlyHint) && isFalse(a.DestructiveHint):
		// A write that destroys nothing shows no word of its own.
	default:
		words = append(words, EffectUnknown)
	}
	if !isFalse(a.OpenWorldHint) {
		words = append(words, EffectOutside)
	}
	return strings.Join(words, " · ")
}

// The warning's words (docs/cards.md, "The warning"), one per thing the function
// declared about where it reaches: the backend's effects_mismatch says
// its sandbox was refused a connection earlier in the job, and only a
// function that declared openWorldHint: false said it stays inside.
const (
	WarningSaidInside  = "The tool says it stays inside the tenant, but its sandbox was refused a connection earlier in this job."
	WarningSaidSilent  = "The tool does not say whether it stays inside the tenant, and its sandbox was refused a connection earlier in this job."
	WarningSaidOutside = "The tool says it reaches outside the tenant, and its sandbox was refused a connection earlier in this job."
)

// EffectsWarning words the backend's effects_mismatch signal for what the
// function declared, so it agrees with the effect line: "says it stays
// inside" only for openWorldHint exactly false; a function silent on it,
// or one that says it reaches out, is told apart. The signal itself (a
// refused connection) is kept in every case. "" without the signal.
func (a *Approval) EffectsWarning() string {
	if !a.EffectsMismatch {
		return ""
	}
	switch ow := a.Call.Annotations.OpenWorldHint; {
	case isFalse(ow):
		return WarningSaidInside
	case isTrue(ow):
		return WarningSaidOutside
	}
	return WarningSaidSilent
}

// Warning lines a card adds when the effect line, which stays as the
// tool's annotations give it, says less than the tool's other
// declarations or than the card's own flags and reasons (docs/cards.md,
// "The warnings").
const (
	WarningContradicts  = "The tool's declarations contradict each other: it says it only reads (readOnlyHint) and that it may destroy or overwrite (destructiveHint)."
	WarningInsideEgress = "The tool says it stays inside the tenant, but the call's class is egress: it sends data out."
	WarningInsideTaint  = "The tool says it stays inside the tenant, but the platform asked for this call because the job read untrusted input and this function can send data out."
	// WarningReadsOnlyFmt and WarningNotDestructiveFmt take the call's
	// class (flags.class_above.class).
	WarningReadsOnlyFmt      = "The tool says it only reads, but the call's class is %s."
	WarningNotDestructiveFmt = "The tool does not say it destroys or overwrites anything, but the call's class is %s."
)

// The action classes above read (docs/protocol.md).
const (
	ClassWrite       = "write"
	ClassDestructive = "destructive"
)

// ClassEgress is the action class of a call that sends data out of the
// tenant (flags.class_above.class).
const ClassEgress = "egress"

// WarningLines are the card's warnings, each a line, each putting Deny
// first: EffectsWarning; the tool declaring both readOnlyHint and
// destructiveHint true; a call whose class (flags.class_above) is above
// what the effect line says (it says "reads only", or no DESTRUCTIVE for
// a destructive class); and a tool that declares openWorldHint false
// while the call's class is egress, or while the platform's taint check
// asked for the call. Every taint source counts: whatever the job read
// (open_world or any other source), the taint-default rule asks only for
// a function that can send data out, so asked_by: taint with any reason
// says this call can, whatever the tool declares. Last come the
// IdentityWarnings: a function name or a role value that hides a
// character or mixes scripts. nil when none applies.
func (a *Approval) WarningLines() []string {
	var lines []string
	if w := a.EffectsWarning(); w != "" {
		lines = append(lines, w)
	}
	ann := a.Call.Annotations
	if isTrue(ann.ReadOnlyHint) && isTrue(ann.DestructiveHint) {
		lines = append(lines, WarningContradicts)
	}
	if c := a.Flags.ClassAbove; c != nil {
		switch {
		case isTrue(ann.ReadOnlyHint) && (c.Class == ClassWrite || c.Class == ClassEgress || c.Class == ClassDestructive):
			lines = append(lines, fmt.Sprintf(WarningReadsOnlyFmt, c.Class))
		case !a.Destructive() && c.Class == ClassDestructive:
			lines = append(lines, fmt.Sprintf(WarningNotDestructiveFmt, c.Class))
		}
	}
	if isFalse(ann.OpenWorldHint) {
		if c := a.Flags.ClassAbove; c != nil && c.Class == ClassEgress {
			lines = append(lines, WarningInsideEgress)
		}
		if a.AskedBy.Reason == ReasonTaint && len(a.AskedBy.Taint) > 0 {
			lines = append(lines, WarningInsideTaint)
		}
	}
	return append(lines, a.IdentityWarnings()...)
}

// Destructive reports whether the card must say DESTRUCTIVE.
func (a *Approval) Destructive() bool {
	return !isTrue(a.Call.Annotations.ReadOnlyHint) && isTrue(a.Call.Annotations.DestructiveHint)
}

// IsOutOfScope reports whether the value lies below a tenant record, the
// one rule for it (docs/protocol.md): the backend flagged it, or its
// origin ranks below tenant_record (an unknown origin included), so a
// missing flag fails closed. The card's row warning, the rows' order, the
// cut's count and Deny-first all ask this.
func (v RoleValue) IsOutOfScope() bool {
	return v.OutOfScope || v.Origin.rank() < OriginTenantRecord.rank()
}

// OutOfScope reports whether any compared value lies below a tenant record
// (RoleValue.IsOutOfScope), or a marked argument was not compared at
// all, or an argument was not traced to the request, or the platform's
// origin check (asked_by: origin) found an argument whose origin ranks
// below tenant_record (an unknown origin included): one rule for the
// same fact, wherever the card learns it.
func (a *Approval) OutOfScope() bool {
	if a.AskedBy.Reason == ReasonOrigin && a.AskedBy.Origin.rank() < OriginTenantRecord.rank() {
		return true
	}
	for _, r := range a.Roles {
		if r.NotCompared {
			return true
		}
		for _, v := range r.Values {
			if v.IsOutOfScope() {
				return true
			}
		}
	}
	return len(a.Flags.NotTraced) > 0
}

// NewToJob reports whether the backend flagged the argument named arg as
// new to the job (flags.new_to_job is per argument).
func (a *Approval) NewToJob(arg string) bool {
	for _, f := range a.Flags.NewToJob {
		if f.Argument == arg {
			return true
		}
	}
	return false
}

// RoleValueShown is v as a card's role row may show it, redacted by the
// rules the arguments are (Project): the whole value of an argument whose
// name SensitiveKey calls secret is [redacted], and any other value loses
// the credentials its shape gives away, as a whole argument value does
// ("Bearer …" whatever follows it, URL user-info, NAME=secret, tokens by
// their prefix). A secret never shows in a row.
func (r Role) RoleValueShown(v RoleValue) string {
	if SensitiveKey(r.Argument) {
		return redactedMarker
	}
	s, _ := redactText(v.Value, true)
	return s
}

// DenyFirst reports whether Deny comes first and takes the focus: a
// destructive call, one with a value out of scope, one new to the job, one
// above the job's class so far, one the card warns about (WarningLines),
// or one the platform's origin check asked about (asked_by: origin): it
// found a value below the floor its rule needs, whatever the floor.
func (a *Approval) DenyFirst() bool {
	return a.Destructive() || a.OutOfScope() || len(a.Flags.NewToJob) > 0 || a.Flags.ClassAbove != nil ||
		a.AskedBy.Reason == ReasonOrigin || len(a.WarningLines()) > 0
}

// ChatMayApprove reports whether a chat may offer Approve: not when the call
// needs a typed confirmation, which only the console takes, and never for
// protected paths, whose approval only a person signed in with
// governance.write gives, "never a key, an app, an MCP client, a chat or a
// policy" (the platform's description of approvals).
func (a *Approval) ChatMayApprove() bool {
	return a.Confirm == nil && a.Kind != KindProtectedPaths
}

// originPhrase says where a value came from in words.
func originPhrase(o Origin) string {
	switch o {
	case OriginRequest:
		return "the request"
	case OriginIdentity:
		return "the starter's identity"
	case OriginTenantRecord:
		return "a tenant record"
	case OriginJobRead:
		return "something the job read"
	case OriginNowhere:
		return "nowhere the job read"
	}
	return string(o)
}

// FlagLines are the three facts of what the request never asked for, by
// name and class only, never a value. The argument names come from the
// request and pass through RedactText, as free text does: a flag line
// shows on a restricted shared card too.
func (a *Approval) FlagLines() []string {
	var lines []string
	for _, f := range a.Flags.NotTraced {
		lines = append(lines, fmt.Sprintf("Not traced to the request: %s (%s) came from %s; a rule needs %s",
			RedactText(f.Argument), f.Role, originPhrase(f.Origin), originPhrase(f.Floor)))
	}
	if len(a.Flags.NewToJob) > 0 {
		names := make([]string, len(a.Flags.NewToJob))
		for i, f := range a.Flags.NewToJob {
			names[i] = fmt.Sprintf("%s (%s)", RedactText(f.Argument), f.Role)
		}
		lines = append(lines, "New to this job: "+strings.Join(names, ", "))
	}
	if c := a.Flags.ClassAbove; c != nil {
		line := "A class above the job's so far: " + RedactText(c.Class)
		if c.Previous != "" {
			line += " (so far: " + RedactText(c.Previous) + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// AskedByLines say who sent the call to a person: a first line, then one
// line per reason (each taint source, the origin or sequence detail). The
// names in them (a rule, a hook, a function, an argument) come from the
// request and pass through RedactText, as free text does.
func (a *Approval) AskedByLines() []string {
	ab := a.AskedBy
	r := RedactText
	switch ab.Reason {
	case ReasonRequiresApproval:
		return []string{"asked by the tool's own requires_approval"}
	case ReasonPolicy:
		return []string{"asked by the tenant's policy (rule " + r(ab.Rule) + ")"}
	case ReasonHook:
		return []string{"asked by a pre_tool_call hook (" + r(ab.Hook) + ")"}
	case ReasonTaint:
		lines := []string{"asked by taint: the job read untrusted input"}
		for _, t := range ab.Taint {
			lines = append(lines, fmt.Sprintf("%s %s (call %d)", r(t.Source), r(t.Function), t.Call))
		}
		return lines
	case ReasonOrigin:
		return []string{"asked by the origin check",
			fmt.Sprintf("origin: %s (%s) is below its floor %s (origin %s)", r(ab.Argument), ab.Role, ab.Floor, ab.Origin)}
	case ReasonSequence:
		return []string{"asked by a sequence rule",
			fmt.Sprintf("sequence: rule %s, after %s", r(ab.Rule), r(ab.PreviousCall))}
	case ReasonLoop:
		return []string{"asked by the loop check", "loop"}
	}
	return []string{"asked by " + r(string(ab.Reason))}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }
