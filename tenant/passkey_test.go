package tenant_test

import (
	"testing"

	"approvalsbot/tenant"
)

// Each rule takes in the calls of the one before it; an unknown rule
// asks for a passkey.
func TestPasskeyRequired(t *testing.T) {
	t.Parallel()
	calls := map[string]tenant.PasskeyFacts{
		"plain":       {},
		"destructive": {Destructive: true, Flagged: true},
		"flagged":     {Flagged: true},
		"typed":       {Typed: true},
	}
	for _, c := range []struct {
		rule tenant.PasskeyRule
		want map[string]bool
	}{
		{tenant.PasskeysOff, map[string]bool{}},
		{"", map[string]bool{}},
		{tenant.PasskeysDestructive, map[string]bool{"destructive": true}},
		{tenant.PasskeysFlagged, map[string]bool{"destructive": true, "flagged": true}},
		{tenant.PasskeysTyped, map[string]bool{"destructive": true, "flagged": true, "typed": true}},
		{tenant.PasskeysAll, map[string]bool{"plain": true, "destructive": true, "flagged": true, "typed": true}},
		{"misread", map[string]bool{"plain": true, "destructive": true, "flagged": true, "typed": true}},
	} {
		for name, f := range calls {
			if got := tenant.PasskeyRequired(c.rule, f); got != c.want[name] {
				t.Errorf("rule %q, a %s call: required %v, want %v", c.rule, name, got, c.want[name])
			}
		}
	}
	// A destructive call the card does not flag (facts from elsewhere)
	// still needs one under destructive.
	if !tenant.PasskeyRequired(tenant.PasskeysDestructive, tenant.PasskeyFacts{Destructive: true}) {
		t.Error("destructive alone")
	}
}
