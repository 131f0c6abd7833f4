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

// Destructive reports whether the card must say DESTRUCTIVE.
func (a *Approval) Destructive() bool {
	return !isTrue(a.Call.Annotations.ReadOnlyHint) && isTrue(a.Call.Annotations.DestructiveHint)
}

// OutOfScope reports whether any compared value lies below a tenant record:
// flagged so by the backend, or with an origin below tenant_record
// (docs/protocol.md's own definition; fail closed when the flag is missing), or
// not compared at all.
func (a *Approval) OutOfScope() bool {
	for _, r := range a.Roles {
		if r.NotCompared {
			return true
		}
		for _, v := range r.Values {
			if v.OutOfScope || v.Origin.rank() < OriginTenantRecord.rank() {
				return true
			}
		}
	}
	return len(a.Flags.NotTraced) > 0
}

// DenyFirst reports whether Deny comes first and takes the focus: a
// destructive call, one with a value out of scope, one new to the job, or
// one above the job's class so far.
func (a *Approval) DenyFirst() bool {
	return a.Destructive() || a.OutOfScope() || len(a.Flags.NewToJob) > 0 || a.Flags.ClassAbove != nil
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
// name and class only, never a value.
func (a *Approval) FlagLines() []string {
	var lines []string
	for _, f := range a.Flags.NotTraced {
		lines = append(lines, fmt.Sprintf("Not traced to the request: %s (%s) came from %s; a rule needs %s",
			f.Argument, f.Role, originPhrase(f.Origin), originPhrase(f.Floor)))
	}
	if len(a.Flags.NewToJob) > 0 {
		names := make([]string, len(a.Flags.NewToJob))
		for i, f := range a.Flags.NewToJob {
			names[i] = fmt.Sprintf("%s (%s)", f.Argument, f.Role)
		}
		lines = append(lines, "New to this job: "+strings.Join(names, ", "))
	}
	if c := a.Flags.ClassAbove; c != nil {
		line := "A class above the job's so far: " + c.Class
		if c.Previous != "" {
			line += " (so far: " + c.Previous + ")"
		}
		lines = append(lines, line)
	}
	return lines
}

// AskedByLines say who sent the call to a person: a first line, then one
// line per reason (each taint source, the origin or sequence detail).
func (a *Approval) AskedByLines() []string {
	ab := a.AskedBy
	switch ab.Reason {
	case ReasonRequiresApproval:
		return []string{"asked by the tool's own requires_approval"}
	case ReasonPolicy:
		return []string{"asked by the tenant's policy (rule " + ab.Rule + ")"}
	case ReasonHook:
		return []string{"asked by a pre_tool_call hook (" + ab.Hook + ")"}
	case ReasonTaint:
		lines := []string{"asked by taint: the job read untrusted input"}
		for _, t := range ab.Taint {
			lines = append(lines, fmt.Sprintf("%s %s (call %d)", t.Source, t.Function, t.Call))
		}
		return lines
	case ReasonOrigin:
		return []string{"asked by the origin check",
			fmt.Sprintf("origin: %s (%s) is below its floor %s (origin %s)", ab.Argument, ab.Role, ab.Floor, ab.Origin)}
	case ReasonSequence:
		return []string{"asked by a sequence rule",
			fmt.Sprintf("sequence: rule %s, after %s", ab.Rule, ab.PreviousCall)}
	case ReasonLoop:
		return []string{"asked by the loop check", "loop"}
	}
	return []string{"asked by " + string(ab.Reason)}
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }
