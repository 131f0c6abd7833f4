package approval_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"approvalsbot/approval"
)

func hint(v bool) *bool { return &v }

func hintName(b *bool) string {
	if b == nil {
		return "absent"
	}
	return fmt.Sprint(*b)
}

// TestEffectLine covers every combination of the three hints (absent,
// true, false) with the card's rules written out as the expected line.
func TestEffectLine(t *testing.T) {
	t.Parallel()
	var (
		T = hint(true)
		F = hint(false)
	)
	const (
		out = "reaches outside the tenant"
		ro  = "reads only"
		de  = "DESTRUCTIVE"
		unk = "Unknown"
	)
	tests := []struct {
		readOnly, destructive, openWorld *bool
		want                             string
	}{
		// readOnlyHint absent: destructive true says DESTRUCTIVE; otherwise
		// the tool has not said it only reads, so Unknown.
		{nil, nil, nil, unk + " · " + out},
		{nil, nil, T, unk + " · " + out},
		{nil, nil, F, unk},
		{nil, T, nil, de + " · " + out},
		{nil, T, T, de + " · " + out},
		{nil, T, F, de},
		{nil, F, nil, unk + " · " + out},
		{nil, F, T, unk + " · " + out},
		{nil, F, F, unk},
		// readOnlyHint true: reads only, whatever destructiveHint says.
		{T, nil, nil, ro + " · " + out},
		{T, nil, T, ro + " · " + out},
		{T, nil, F, ro},
		{T, T, nil, ro + " · " + out},
		{T, T, T, ro + " · " + out},
		{T, T, F, ro},
		{T, F, nil, ro + " · " + out},
		{T, F, T, ro + " · " + out},
		{T, F, F, ro},
		// readOnlyHint false: a write. DESTRUCTIVE, Unknown when silent on
		// destroying, no word when it says it destroys nothing.
		{F, nil, nil, unk + " · " + out},
		{F, nil, T, unk + " · " + out},
		{F, nil, F, unk},
		{F, T, nil, de + " · " + out},
		{F, T, T, de + " · " + out},
		{F, T, F, de},
		{F, F, nil, out},
		{F, F, T, out},
		{F, F, F, ""},
	}
	if len(tests) != 27 {
		t.Fatalf("%d cases, want all 27", len(tests))
	}
	for _, tt := range tests {
		name := fmt.Sprintf("readOnly=%s,destructive=%s,openWorld=%s",
			hintName(tt.readOnly), hintName(tt.destructive), hintName(tt.openWorld))
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			a := approval.Annotations{ReadOnlyHint: tt.readOnly, DestructiveHint: tt.destructive, OpenWorldHint: tt.openWorld}
			if got := approval.EffectLine(a); got != tt.want {
				t.Errorf("EffectLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestEffectLineFixtures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		file, want string
	}{
		{"merge.json", "DESTRUCTIVE · reaches outside the tenant"}, // the card's own example
		{"search.json", "reads only · reaches outside the tenant"},
		{"mail.json", "reaches outside the tenant"},
		{"refund.json", "reaches outside the tenant"},
		{"private.json", "DESTRUCTIVE"},
		{"secrets.json", "Unknown · reaches outside the tenant"},
		{"unknown.json", "Unknown · reaches outside the tenant"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			if got := approval.EffectLine(fixtureApproval(t, tt.file).Call.Annotations); got != tt.want {
				t.Errorf("EffectLine = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestFlagLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a    func(t testing.TB) *approval.Approval
		want []string
	}{
		{"mail.json", fixture("mail.json"), []string{
			"Not traced to the request: to (recipient) came from something the job read; a rule needs a tenant record",
			"New to this job: to (recipient)",
			"A class above the job's so far: egress (so far: read)",
		}},
		{"refund.json", fixture("refund.json"), []string{
			"A class above the job's so far: write (so far: read)",
		}},
		{"unknown.json", fixture("unknown.json"), nil},
		{"every origin phrase", flags(approval.Flags{NotTraced: []approval.NotTraced{
			{Argument: "host", Role: approval.RoleHost, Origin: approval.OriginNowhere, Floor: approval.OriginRequest},
			{Argument: "payee", Role: approval.RolePayee, Origin: approval.OriginIdentity, Floor: approval.OriginRequest},
			{Argument: "path", Role: approval.RolePath, Origin: approval.OriginTenantRecord, Floor: approval.OriginIdentity},
		}}), []string{
			"Not traced to the request: host (host) came from nowhere the job read; a rule needs the request",
			"Not traced to the request: payee (payee) came from the starter's identity; a rule needs the request",
			"Not traced to the request: path (path) came from a tenant record; a rule needs the starter's identity",
		}},
		{"several new to the job on one line", flags(approval.Flags{NewToJob: []approval.NewToJob{
			{Argument: "to", Role: approval.RoleRecipient},
			{Argument: "url", Role: approval.RoleHost},
		}}), []string{"New to this job: to (recipient), url (host)"}},
		{"class above with nothing so far", flags(approval.Flags{ClassAbove: &approval.ClassAbove{Class: "destructive"}}),
			[]string{"A class above the job's so far: destructive"}},
		{"class above a host", flags(approval.Flags{ClassAbove: &approval.ClassAbove{Class: "host.api.example", Previous: "write"}}),
			[]string{"A class above the job's so far: host.api.example (so far: write)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.a(t).FlagLines(), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("FlagLines (-want +got):\n%s", diff)
			}
		})
	}
}

func fixture(file string) func(t testing.TB) *approval.Approval {
	return func(t testing.TB) *approval.Approval { return fixtureApproval(t, file) }
}

func flags(f approval.Flags) func(testing.TB) *approval.Approval {
	return func(testing.TB) *approval.Approval { return &approval.Approval{Flags: f} }
}

func askedBy(ab approval.AskedBy) func(testing.TB) *approval.Approval {
	return func(testing.TB) *approval.Approval { return &approval.Approval{AskedBy: ab} }
}

func TestAskedByLines(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a    func(t testing.TB) *approval.Approval
		want []string
	}{
		{"mail.json (origin)", fixture("mail.json"), []string{
			"asked because a value came from a place its rule does not trust",
			"to (recipient) came from something the job read; its rule needs a tenant record",
		}},
		{"refund.json (taint)", fixture("refund.json"), []string{
			"asked because the job read untrusted input",
			"open_world web.fetch (call 12)",
			"open_world mail.read (call 13)",
		}},
		// the card says `a pre_tool_call hook`; the line adds which hook.
		{"unknown.json (hook)", fixture("unknown.json"), []string{"asked by a hook that checks calls before they run (pre_tool_call:crm-guard)"}},
		{"merge.json (requires_approval)", fixture("merge.json"), []string{"asked because the tool always asks for approval"}},
		{"search.json (policy)", fixture("search.json"), []string{"asked by the tenant's tool policy (rule approval_mode: tools)"}},
		{"policy", askedBy(approval.AskedBy{Reason: approval.ReasonPolicy, Rule: "R"}), []string{"asked by the tenant's tool policy (rule R)"}},
		{"sequence", askedBy(approval.AskedBy{Reason: approval.ReasonSequence, Rule: "R", PreviousCall: "mail.send"}), []string{
			"asked by a tenant rule on the order of calls",
			"rule R: this call comes after mail.send",
		}},
		{"loop", askedBy(approval.AskedBy{Reason: approval.ReasonLoop}), []string{"asked because this call would complete a loop"}},
		{"origin", askedBy(approval.AskedBy{Reason: approval.ReasonOrigin, Argument: "to", Role: approval.RoleRecipient,
			Floor: approval.OriginTenantRecord, Origin: approval.OriginJobRead}), []string{
			"asked because a value came from a place its rule does not trust",
			"to (recipient) came from something the job read; its rule needs a tenant record",
		}},
		{"hook", askedBy(approval.AskedBy{Reason: approval.ReasonHook, Hook: "crm-guard"}), []string{"asked by a hook that checks calls before they run (crm-guard)"}},
		{"taint", askedBy(approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{
			{Source: "open_world", Function: "web.fetch", Call: 12},
		}}), []string{"asked because the job read untrusted input", "open_world web.fetch (call 12)"}},
		// Names come from the request: a credential in one is redacted as
		// in free text.
		{"policy rule holding a token", askedBy(approval.AskedBy{Reason: approval.ReasonPolicy, Rule: "R GITHUB_TOKEN=ghp_" + strings.Repeat("a", 36)}),
			[]string{"asked by the tenant's tool policy (rule R GITHUB_TOKEN=[redacted])"}},
		{"hook holding user-info", askedBy(approval.AskedBy{Reason: approval.ReasonHook, Hook: "https://u:hunter2@hooks.example/x"}),
			[]string{"asked by a hook that checks calls before they run (https://[redacted]@hooks.example/x)"}},
		{"sequence holding a bearer", askedBy(approval.AskedBy{Reason: approval.ReasonSequence, Rule: "Bearer s3cr3tvalue", PreviousCall: "api_key=s3cr3tvalue"}), []string{
			"asked by a tenant rule on the order of calls",
			"rule Bearer [redacted]: this call comes after api_key=[redacted]",
		}},
		{"taint function holding a token", askedBy(approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{
			{Source: "open_world", Function: "Bearer s3cr3tvalue", Call: 1},
		}}), []string{"asked because the job read untrusted input", "open_world Bearer [redacted] (call 1)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, tt.a(t).AskedByLines()); diff != "" {
				t.Errorf("AskedByLines (-want +got):\n%s", diff)
			}
		})
	}
}

// Flags and who-asks lines name arguments and classes, never a value.
func TestFlagAndAskedByLinesCarryNoValue(t *testing.T) {
	t.Parallel()
	checked := 0
	for _, path := range eventFiles(t) {
		ev := mustParse(t, mustRead(t, path))
		if ev.Approval == nil {
			continue
		}
		lines := strings.Join(append(ev.Approval.FlagLines(), ev.Approval.AskedByLines()...), "\n")
		for _, r := range ev.Approval.Roles {
			for _, v := range r.Values {
				if len(v.Value) < 4 {
					continue // too short to tell from an ordinary word
				}
				checked++
				if strings.Contains(lines, v.Value) {
					t.Errorf("%s: a line carries the value %q of %s:\n%s", path, v.Value, r.Argument, lines)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no role value was checked")
	}
}

func TestDenyFirst(t *testing.T) {
	t.Parallel()
	plain := func() *approval.Approval {
		return &approval.Approval{
			Call: approval.Call{Annotations: approval.Annotations{ReadOnlyHint: hint(false), DestructiveHint: hint(false)}},
			Roles: []approval.Role{{Argument: "to", Role: approval.RoleRecipient,
				Values: []approval.RoleValue{{Value: "ops@acme.example", Origin: approval.OriginTenantRecord}}}},
		}
	}
	with := func(f func(a *approval.Approval)) func(testing.TB) *approval.Approval {
		return func(testing.TB) *approval.Approval {
			a := plain()
			f(a)
			return a
		}
	}
	tests := []struct {
		name string
		a    func(t testing.TB) *approval.Approval
		want bool
	}{
		{"none", with(func(*approval.Approval) {}), false},
		{"destructive", with(func(a *approval.Approval) { a.Call.Annotations.DestructiveHint = hint(true) }), true},
		{"destructive, read-only hint absent", with(func(a *approval.Approval) {
			a.Call.Annotations = approval.Annotations{DestructiveHint: hint(true)}
		}), true},
		{"out of scope", with(func(a *approval.Approval) { a.Roles[0].Values[0].OutOfScope = true }), true},
		{"not compared past the limit", with(func(a *approval.Approval) { a.Roles[0].NotCompared = true }), true},
		{"not traced", with(func(a *approval.Approval) {
			a.Flags.NotTraced = []approval.NotTraced{{Argument: "to", Role: approval.RoleRecipient,
				Origin: approval.OriginJobRead, Floor: approval.OriginTenantRecord}}
		}), true},
		// docs/protocol.md: "a value whose origin is below tenant_record is out
		// of scope", whether or not the backend set out_of_scope.
		{"origin below tenant_record, flag unset", with(func(a *approval.Approval) {
			a.Roles[0].Values[0].Origin = approval.OriginJobRead
		}), true},
		{"new to job", with(func(a *approval.Approval) {
			a.Flags.NewToJob = []approval.NewToJob{{Argument: "to", Role: approval.RoleRecipient}}
		}), true},
		{"class above", with(func(a *approval.Approval) {
			a.Flags.ClassAbove = &approval.ClassAbove{Class: "egress", Previous: "read"}
		}), true},
		{"merge.json (destructive)", fixture("merge.json"), true},
		{"mail.json (out of scope, new, class above)", fixture("mail.json"), true},
		{"refund.json (class above)", fixture("refund.json"), true},
		{"private.json (destructive)", fixture("private.json"), true},
		{"search.json", fixture("search.json"), false},
		{"big.json", fixture("big.json"), false},
		// effects_mismatch is a warning line, and every warning puts Deny
		// first (docs/cards.md, "The warnings").
		{"unknown.json (effects_mismatch)", fixture("unknown.json"), true},
		{"readOnlyHint and destructiveHint both true", with(func(a *approval.Approval) {
			a.Call.Annotations = approval.Annotations{ReadOnlyHint: hint(true), DestructiveHint: hint(true)}
		}), true},
		{"stays inside but asked by taint", with(func(a *approval.Approval) {
			a.Call.Annotations.OpenWorldHint = hint(false)
			a.AskedBy = approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{{Source: "open_world", Function: "web.fetch", Call: 3}}}
		}), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.a(t).DenyFirst(); got != tt.want {
				t.Errorf("DenyFirst = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestChatMayApprove(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		a    func(t testing.TB) *approval.Approval
		want bool
	}{
		{"refund.json (confirm amount)", fixture("refund.json"), false},
		{"merge.json", fixture("merge.json"), true},
		{"confirm set", func(testing.TB) *approval.Approval {
			return &approval.Approval{Confirm: &approval.Confirm{Argument: "amount"}}
		}, false},
		{"no confirm", func(testing.TB) *approval.Approval { return &approval.Approval{} }, true},
		{"protected.json: protected paths are never approved from a chat", fixture("protected.json"), false},
		{"changes.json", fixture("changes.json"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.a(t).ChatMayApprove(); got != tt.want {
				t.Errorf("ChatMayApprove = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestEffectsWarning covers every combination of the three hints with and
// without the backend's effects_mismatch signal: the warning always
// carries the refused connection, says "stays inside" only where the
// function declared openWorldHint false, and never contradicts the effect
// line (which says "reaches outside the tenant" exactly where the
// function did not declare openWorldHint false).
func TestEffectsWarning(t *testing.T) {
	t.Parallel()
	values := []*bool{nil, hint(true), hint(false)}
	n := 0
	for _, readOnly := range values {
		for _, destructive := range values {
			for _, openWorld := range values {
				for _, mismatch := range []bool{false, true} {
					n++
					name := fmt.Sprintf("readOnly=%s,destructive=%s,openWorld=%s,mismatch=%v",
						hintName(readOnly), hintName(destructive), hintName(openWorld), mismatch)
					ann := approval.Annotations{ReadOnlyHint: readOnly, DestructiveHint: destructive, OpenWorldHint: openWorld}
					t.Run(name, func(t *testing.T) {
						t.Parallel()
						a := &approval.Approval{EffectsMismatch: mismatch, Call: approval.Call{Annotations: ann}}
						got := a.EffectsWarning()
						var want string
						switch {
						case !mismatch:
						case openWorld == nil:
							want = approval.WarningSaidSilent
						case *openWorld:
							want = approval.WarningSaidOutside
						default:
							want = approval.WarningSaidInside
						}
						if got != want {
							t.Fatalf("EffectsWarning = %q, want %q", got, want)
						}
						if !mismatch {
							return
						}
						if !strings.Contains(got, "sandbox was refused a connection earlier in this job") {
							t.Errorf("the warning %q lost the backend's signal", got)
						}
						outside := strings.Contains(approval.EffectLine(ann), approval.EffectOutside)
						if saysInside := strings.Contains(got, "says it stays inside"); saysInside == outside {
							t.Errorf("effect line %q and warning %q disagree", approval.EffectLine(ann), got)
						}
					})
				}
			}
		}
	}
	if n != 54 {
		t.Fatalf("%d cases, want all 54", n)
	}
}

// TestEffectsWarningFixtures: unknown.json declares nothing (annotations
// {}) and carries effects_mismatch, so its card says it reaches outside
// the tenant and that the function did not say whether it stays inside;
// no other fixture carries the signal.
func TestEffectsWarningFixtures(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ file, want string }{
		{"unknown.json", approval.WarningSaidSilent},
		{"merge.json", ""},
		{"search.json", ""},
		{"private.json", ""},
	} {
		t.Run(tt.file, func(t *testing.T) {
			t.Parallel()
			if got := fixtureApproval(t, tt.file).EffectsWarning(); got != tt.want {
				t.Errorf("EffectsWarning = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestIsOutOfScope: one rule for out of scope, the backend's flag or an
// origin below tenant_record (an unknown origin fails closed).
func TestIsOutOfScope(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		origin approval.Origin
		flag   bool
		want   bool
	}{
		{approval.OriginRequest, false, false},
		{approval.OriginIdentity, false, false},
		{approval.OriginTenantRecord, false, false},
		{approval.OriginTenantRecord, true, true},
		{approval.OriginJobRead, false, true},
		{approval.OriginNowhere, false, true},
		{approval.Origin("elsewhere"), false, true},
	} {
		v := approval.RoleValue{Value: "x", Origin: tt.origin, OutOfScope: tt.flag}
		if got := v.IsOutOfScope(); got != tt.want {
			t.Errorf("origin %s, out_of_scope %v: IsOutOfScope = %v, want %v", tt.origin, tt.flag, got, tt.want)
		}
	}
}

// TestRoleValueShown: a role row's value is redacted as the argument's
// value is in the projection: a secret-named argument whole, any other by
// the shapes of a credential.
func TestRoleValueShown(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		arg, value, want string
	}{
		{"smtp_password", "hunter2", "[redacted]"},
		{"api_key", "ops@acme.example", "[redacted]"},
		{"X-Api-Key", "abc", "[redacted]"},
		{"to", "ops@acme.example", "ops@acme.example"},
		{"host", "https://deploy:hunter2@ci.example", "https://[redacted]@ci.example"},
		// As a whole value, "Bearer " and whatever follows is a credential.
		{"host", "Bearer two words", "Bearer [redacted]"},
		{"to", "ghp_" + strings.Repeat("a", 36), "ghp_[redacted]"},
	} {
		r := approval.Role{Argument: tt.arg, Role: approval.RoleHost}
		if got := r.RoleValueShown(approval.RoleValue{Value: tt.value, Origin: approval.OriginRequest}); got != tt.want {
			t.Errorf("%s = %q: shown %q, want %q", tt.arg, tt.value, got, tt.want)
		}
	}
}

func TestNewToJob(t *testing.T) {
	t.Parallel()
	a := &approval.Approval{Flags: approval.Flags{NewToJob: []approval.NewToJob{{Argument: "cc", Role: approval.RoleRecipient}}}}
	if !a.NewToJob("cc") || a.NewToJob("to") {
		t.Errorf("NewToJob(cc) = %v, NewToJob(to) = %v", a.NewToJob("cc"), a.NewToJob("to"))
	}
}

// TestWarningLines: each warning docs/cards.md lists, alone and together,
// in order; the effect line stays as the annotations give it.
func TestWarningLines(t *testing.T) {
	t.Parallel()
	taint := approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{{Source: "open_world", Function: "web.fetch", Call: 12}}}
	egress := &approval.ClassAbove{Class: "egress", Previous: "read"}
	tests := []struct {
		name string
		a    approval.Approval
		want []string
	}{
		{"none", approval.Approval{}, nil},
		{"effects mismatch", approval.Approval{EffectsMismatch: true}, []string{approval.WarningSaidSilent}},
		{"read-only and destructive", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{
			ReadOnlyHint: hint(true), DestructiveHint: hint(true)}}}, []string{approval.WarningContradicts}},
		{"read-only, destructive false", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{
			ReadOnlyHint: hint(true), DestructiveHint: hint(false)}}}, nil},
		{"inside, class egress", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{OpenWorldHint: hint(false)}},
			Flags: approval.Flags{ClassAbove: egress}}, []string{approval.WarningInsideEgress}},
		{"inside, class write", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{OpenWorldHint: hint(false)}},
			Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "write"}}}, nil},
		{"silent on open world, class egress: the effect line says it reaches out", approval.Approval{
			Flags: approval.Flags{ClassAbove: egress}}, nil},
		{"inside, asked by taint", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{OpenWorldHint: hint(false)}},
			AskedBy: taint}, []string{approval.WarningInsideTaint}},
		{"inside, another taint source", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{OpenWorldHint: hint(false)}},
			AskedBy: approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{{Source: "upload", Function: "files.read", Call: 2}}}},
			[]string{approval.WarningInsideTaint}},
		{"outside, asked by taint", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{OpenWorldHint: hint(true)}},
			AskedBy: taint}, nil},
		{"all of them", approval.Approval{EffectsMismatch: true, AskedBy: taint, Flags: approval.Flags{ClassAbove: egress},
			Call: approval.Call{Annotations: approval.Annotations{ReadOnlyHint: hint(true), DestructiveHint: hint(true), OpenWorldHint: hint(false)}}},
			[]string{approval.WarningSaidInside, approval.WarningContradicts, "The tool says it only reads, but the call's class is egress.",
				approval.WarningInsideEgress, approval.WarningInsideTaint}},
		{"reads only, class write", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{ReadOnlyHint: hint(true)}},
			Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "write", Previous: "read"}}},
			[]string{"The tool says it only reads, but the call's class is write."}},
		{"reads only, class destructive", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{ReadOnlyHint: hint(true), DestructiveHint: hint(false)}},
			Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "destructive"}}},
			[]string{"The tool says it only reads, but the call's class is destructive."}},
		{"reads only, class host", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{ReadOnlyHint: hint(true)}},
			Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "host.db"}}}, nil},
		{"a write, class destructive", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{ReadOnlyHint: hint(false), DestructiveHint: hint(false)}},
			Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "destructive", Previous: "write"}}},
			[]string{"The tool does not say it destroys or overwrites anything, but the call's class is destructive."}},
		{"silent, class destructive", approval.Approval{Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "destructive"}}},
			[]string{"The tool does not say it destroys or overwrites anything, but the call's class is destructive."}},
		{"destructive, class destructive", approval.Approval{Call: approval.Call{Annotations: approval.Annotations{DestructiveHint: hint(true)}},
			Flags: approval.Flags{ClassAbove: &approval.ClassAbove{Class: "destructive"}}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.a.WarningLines()
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("WarningLines (-want +got):\n%s", diff)
			}
			if len(got) > 0 && !tt.a.DenyFirst() {
				t.Errorf("a card with warnings %q does not put Deny first", got)
			}
		})
	}
	// The contradiction leaves the effect line as declared.
	if got := approval.EffectLine(approval.Annotations{ReadOnlyHint: hint(true), DestructiveHint: hint(true), OpenWorldHint: hint(false)}); got != approval.EffectReadsOnly {
		t.Errorf("EffectLine = %q, want %q", got, approval.EffectReadsOnly)
	}
}

// TestOriginCheckOutOfScope: the platform's origin check (asked_by:
// origin) is one more place the card learns a value's origin. An origin
// below tenant_record is out of scope by the one rule; any origin check
// puts Deny first, since it found a value below the floor its rule needs.
func TestOriginCheckOutOfScope(t *testing.T) {
	t.Parallel()
	no := hint(false)
	for _, tt := range []struct {
		origin    approval.Origin
		outOfScop bool
	}{
		{approval.OriginJobRead, true},
		{approval.OriginNowhere, true},
		{approval.Origin("elsewhere"), true},
		{approval.OriginTenantRecord, false},
		{approval.OriginIdentity, false},
	} {
		a := &approval.Approval{
			Call:    approval.Call{Function: "mail.send", Annotations: approval.Annotations{ReadOnlyHint: no, DestructiveHint: no, OpenWorldHint: no}},
			AskedBy: approval.AskedBy{Reason: approval.ReasonOrigin, Argument: "to", Role: approval.RoleRecipient, Floor: approval.OriginRequest, Origin: tt.origin},
		}
		if got := a.OutOfScope(); got != tt.outOfScop {
			t.Errorf("origin %s: OutOfScope = %v, want %v", tt.origin, got, tt.outOfScop)
		}
		if !a.DenyFirst() {
			t.Errorf("origin %s: DenyFirst = false for an origin check", tt.origin)
		}
	}
}

// TestFlagLinesRedactNames: a flag line shows on a restricted shared
// card too, so the argument names it quotes from the request pass
// through RedactText.
func TestFlagLinesRedactNames(t *testing.T) {
	t.Parallel()
	const sec = "fl4gs3cr3tv4lu3"
	a := &approval.Approval{Flags: approval.Flags{
		NotTraced: []approval.NotTraced{{Argument: "https://u:" + sec + "@h.example", Role: approval.RoleHost, Origin: approval.OriginJobRead, Floor: approval.OriginRequest}},
		NewToJob:  []approval.NewToJob{{Argument: "Bearer " + sec, Role: approval.RoleRecipient}},
	}}
	lines := a.FlagLines()
	if len(lines) != 2 {
		t.Fatalf("lines %q", lines)
	}
	for _, l := range lines {
		if strings.Contains(l, sec) {
			t.Errorf("flag line shows the secret: %q", l)
		}
	}
}
