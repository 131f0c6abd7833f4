package approval

import (
	"testing"
	"time"
)

func TestGrantWordsAndIDs(t *testing.T) {
	t.Parallel()
	pins := []GrantPin{{Argument: "repo", Role: RoleRepository, Value: "acme/api"}, {Argument: "amount", Role: RoleAmount, Value: "12.00"}}
	for _, tt := range []struct {
		terms GrantTerms
		want  string
	}{
		{GrantTerms{Scope: GrantScopeValues, Function: "acme_github.merge", Pins: pins[:1], TTL: time.Hour, Uses: 5},
			"for 1 h: acme_github.merge to acme/api only, every other argument as in this call, 5 uses"},
		{GrantTerms{Scope: GrantScopeValues, Function: "payments.refund", Pins: pins, Free: []string{"memo", "note"}, TTL: 15 * time.Minute, Uses: 1},
			"for 15 min: payments.refund to acme/api and for 12.00 only, memo and note may differ, 1 use"},
		{GrantTerms{Scope: GrantScopeCall, Function: "deploy\u200b.prod", TTL: 24 * time.Hour, Uses: 3},
			"for 24 h: this exact call of deploy[U+200B].prod (the same arguments), 3 uses"},
	} {
		if got := tt.terms.Words(); got != tt.want {
			t.Errorf("Words()\n got %q\nwant %q", got, tt.want)
		}
	}
	a, b := NewGrantID("row-1"), NewGrantID("row-1")
	if a != b || !GrantIDPattern.MatchString(a) || NewGrantID("row-2") == a {
		t.Errorf("grant ids %q %q %q", a, b, NewGrantID("row-2"))
	}
}

func TestGrantBar(t *testing.T) {
	t.Parallel()
	yes := true
	base := Approval{Kind: KindCall, Call: Call{Function: "f"}}
	base.Call.ArgsSHA256 = "sha256:0000000000000000000000000000000000000000000000000000000000000000"
	for _, tt := range []struct {
		name        string
		edit        func(a *Approval)
		destructive bool
		want        GrantBar
	}{
		{"plain", func(*Approval) {}, false, GrantOK},
		{"typed", func(a *Approval) { a.Confirm = &Confirm{Argument: "x"} }, false, GrantBarConfirm},
		{"paths", func(a *Approval) { a.Kind = KindProtectedPaths }, false, GrantBarPaths},
		{"new", func(a *Approval) { a.Flags.NewToJob = []NewToJob{{Argument: "to"}} }, false, GrantBarNew},
		{"class", func(a *Approval) { a.Flags.ClassAbove = &ClassAbove{Class: "egress"} }, false, GrantBarClass},
		{"scope", func(a *Approval) {
			a.Roles = []Role{{Argument: "to", Role: RoleRecipient, Values: []RoleValue{{Value: "x", Origin: OriginJobRead}}}}
		}, false, GrantBarScope},
		{"destructive", func(a *Approval) { a.Call.Annotations.DestructiveHint = &yes }, false, GrantBarDestruct},
		{"destructive allowed", func(a *Approval) { a.Call.Annotations.DestructiveHint = &yes }, true, GrantOK},
		{"no digest", func(a *Approval) { a.Call.ArgsSHA256 = "" }, false, GrantBarDigest},
	} {
		a := base
		tt.edit(&a)
		if got := a.GrantBar(tt.destructive); got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, got, tt.want)
		}
	}
}
