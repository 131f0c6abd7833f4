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

// EffectLine says what the call does from the tool's annotations only,
// never from what the agent says (docs/cards.md); "reaches outside the
// tenant" unless openWorldHint is exactly false.
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

// The effects_mismatch warnings, one per thing the function declared about
// where it reaches (docs/cards.md, "The warnings").
const (
	WarningSaidInside  = "The tool says it stays inside the tenant, but its sandbox was refused a connection earlier in this job."
	WarningSaidSilent  = "The tool does not say whether it stays inside the tenant, and its sandbox was refused a connection earlier in this job."
	WarningSaidOutside = "The tool says it reaches outside the tenant, and its sandbox was refused a connection earlier in this job."
)

// EffectsWarning words the backend's effects_mismatch for what the
// function declared, so it never contradicts the effect line; "" without
// the signal.
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

// Warnings a card adds where the effect line says less than the truth
// (docs/cards.md, "The warnings").
const (
	WarningContradicts  = "The tool's declarations contradict each other: it says it only reads (readOnlyHint) and that it may destroy or overwrite (destructiveHint)."
	WarningInsideEgress = "The tool says it stays inside the tenant, but the call's class is egress: it sends data out."
	WarningInsideTaint  = "The tool says it stays inside the tenant, but the platform asked for this call because the job read untrusted input and this function can send data out."
	// The Fmt lines take the call's class (flags.class_above.class).
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

// WarningLines are the card's warning lines, each putting Deny first, in
// the order docs/cards.md lists them; nil when none applies. Any taint
// source counts: the taint-default rule asks only for a function that can
// send data out, whatever the tool declares.
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

// IsOutOfScope reports whether the value lies below a tenant record: the
// backend flagged it, or its origin ranks below tenant_record (an unknown
// one included), so a missing flag fails closed. Every reader asks this.
func (v RoleValue) IsOutOfScope() bool {
	return v.OutOfScope || v.Origin.rank() < OriginTenantRecord.rank()
}

// OutOfScope reports whether the call reaches below a tenant record,
// wherever the card learns it: a value, a marked argument not compared, an
// argument not traced, or the origin check.
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

// RoleValueShown is v as a role row shows it: [redacted] whole when the
// argument's name is secret, else redacted as a whole argument value is.
// A secret never shows in a row.
func (r Role) RoleValueShown(v RoleValue) string {
	if SensitiveKey(r.Argument) {
		return redactedMarker
	}
	s, _ := redactText(v.Value, true)
	return s
}

// DenyFirst reports whether Deny comes first and takes the focus: the call
// is destructive, out of scope, new to the job, of a class above the job's,
// warned about, or asked by the origin check (whatever the floor).
func (a *Approval) DenyFirst() bool {
	return a.Destructive() || a.OutOfScope() || len(a.Flags.NewToJob) > 0 || a.Flags.ClassAbove != nil ||
		a.AskedBy.Reason == ReasonOrigin || len(a.WarningLines()) > 0
}

// ChatMayApprove reports whether a chat may offer Approve: not for a typed
// confirmation, which only the console takes, nor for protected paths,
// which only a person signed in with governance.write approves.
func (a *Approval) ChatMayApprove() bool {
	return a.Confirm == nil && a.Kind != KindProtectedPaths
}

// OriginPhrase says where a value came from in a person's words; an
// origin the bot does not know as it is.
func OriginPhrase(o Origin) string {
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

// FlagLines are the three facts the request never asked for, by name and
// class, never a value; names are redacted, as a restricted card shows them.
func (a *Approval) FlagLines() []string {
	var lines []string
	for _, f := range a.Flags.NotTraced {
		lines = append(lines, fmt.Sprintf("Not traced to the request: %s (%s) came from %s; a rule needs %s",
			RedactText(f.Argument), f.Role, OriginPhrase(f.Origin), OriginPhrase(f.Floor)))
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

// AskedByLines say who sent the call to a person, in words a person reads,
// then one line per reason; the request's names in them are redacted.
func (a *Approval) AskedByLines() []string {
	ab := a.AskedBy
	r := RedactText
	switch ab.Reason {
	case ReasonRequiresApproval:
		return []string{"asked because the tool always asks for approval"}
	case ReasonPolicy:
		return []string{"asked by the tenant's tool policy (rule " + r(ab.Rule) + ")"}
	case ReasonHook:
		return []string{"asked by a hook that checks calls before they run (" + r(ab.Hook) + ")"}
	case ReasonTaint:
		lines := []string{"asked because the job read untrusted input"}
		for _, t := range ab.Taint {
			lines = append(lines, fmt.Sprintf("%s %s (call %d)", r(t.Source), r(t.Function), t.Call))
		}
		return lines
	case ReasonOrigin:
		return []string{"asked because a value came from a place its rule does not trust",
			fmt.Sprintf("%s (%s) came from %s; its rule needs %s", r(ab.Argument), ab.Role, OriginPhrase(ab.Origin), OriginPhrase(ab.Floor))}
	case ReasonSequence:
		return []string{"asked by a tenant rule on the order of calls",
			fmt.Sprintf("rule %s: this call comes after %s", r(ab.Rule), r(ab.PreviousCall))}
	case ReasonLoop:
		return []string{"asked because this call would complete a loop"}
	}
	return []string{"asked for a reason this bot does not know (" + r(string(ab.Reason)) + ")"}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }
