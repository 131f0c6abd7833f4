package templates_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// grantValues are the values the generator draws role values from: plain
// ones, and each kind the card does not show whole (a credential's shape,
// a line break, an invisible character, a value past the card's cut).
var grantValues = []string{
	"acme/api", "ops@acme.example", "https://ci.acme.example/hook", "/srv/app/config.yaml", "1200.00", "acct-7731",
	"acme/web", "billing@acme.example",
	"xoxb-123456789012-abcdefghijkl", "AKIAIOSFODNN7EXAMPLE", "line one\nline two", "acme\u200b/api", "evil\u202eipa",
	strings.Repeat("a", 121), strings.Repeat("é", 70), "", "https://deploy:hunter2@ci.example",
}

var grantArguments = []string{"repo", "to", "host", "path", "amount", "payee", "api_key", "smtp_password", "dest\u200b", "recipients"}

var grantRoles = []approval.RoleKind{approval.RoleRepository, approval.RoleRecipient, approval.RoleHost, approval.RolePath,
	approval.RoleAmount, approval.RolePayee}

// genApproval is merge.json's request with roles drawn at random.
func genApproval(t *testing.T, r *rand.Rand, base approval.Approval) *approval.Approval {
	a := base
	a.Roles = nil
	used := map[string]bool{}
	for range r.IntN(5) {
		arg := grantArguments[r.IntN(6)]
		if r.IntN(6) == 0 {
			arg = grantArguments[r.IntN(len(grantArguments))]
		}
		if used[arg] {
			continue
		}
		used[arg] = true
		role := approval.Role{Argument: arg, Role: grantRoles[r.IntN(len(grantRoles))]}
		n := 1 + r.IntN(3)
		if r.IntN(8) == 0 {
			n = 21 + r.IntN(5) // more values than pins or rows
		}
		for i := range n {
			v := grantValues[r.IntN(8)] // plain, mostly
			if r.IntN(6) == 0 {
				v = grantValues[r.IntN(len(grantValues))]
			}
			if n > 3 {
				v = fmt.Sprintf("acme/repo-%d", i)
			}
			role.Values = append(role.Values, approval.RoleValue{Value: v, Origin: approval.OriginRequest})
		}
		switch r.IntN(12) {
		case 0:
			role.LeftOut = 1 + r.IntN(3)
		case 1:
			role.NotCompared = true
		}
		a.Roles = append(a.Roles, role)
	}
	a.Content.Restricted = r.IntN(10) == 0
	return &a
}

// TestGrantPinsAreTheShownValues is the property a "values" grant rests
// on: over generated calls, whenever pins are offered they are exactly
// the role rows the card shows (argument, role, value, in the card's
// order, each whole), one per value the call marks, never a value the
// call does not hold; and the scope's words name each pinned value.
// Whenever any value would not be shown whole, no pins are offered.
func TestGrantPinsAreTheShownValues(t *testing.T) {
	path, err := fixtures.Path("events", "merge.json")
	if err != nil {
		t.Fatal(err)
	}
	ev := templatestest.EventFile(t, path)
	r := rand.New(rand.NewPCG(31, 2026))
	offered, refused := 0, 0
	for i := range 3000 {
		a := genApproval(t, r, *ev.Approval)
		pins, why := a.GrantPins()
		c := templates.Build(templates.Input{Approval: a, State: approval.StatePending, Tenant: "acme", Now: time.Now()})
		var rows []templates.RoleRow
		if c.Roles != nil {
			rows = c.Roles.Rows
		}
		values := 0
		for _, role := range a.Roles {
			values += len(role.Values)
		}
		if why != "" {
			refused++
			if pins != nil {
				t.Fatalf("case %d: pins %v with a refusal %q", i, pins, why)
			}
			// Refused for a reason: some value is not shown whole.
			whole := !a.ContentRestricted() && len(a.Roles) > 0 && len(rows) == values && values <= approval.MaxGrantPins
			for _, row := range rows {
				// An empty value pins nothing a person could read: refused too.
				whole = whole && row.Value != "" && row.Value == flatValue(a, row) && row.Argument == argOf(a, row)
			}
			for _, role := range a.Roles {
				whole = whole && role.LeftOut == 0 && !role.NotCompared
			}
			if whole {
				t.Fatalf("case %d: refused (%q) though every value shows whole: %+v", i, why, a.Roles)
			}
			continue
		}
		offered++
		if len(pins) != len(rows) || len(pins) != values || len(pins) > approval.MaxGrantPins {
			t.Fatalf("case %d: %d pins, %d rows shown, %d values", i, len(pins), len(rows), values)
		}
		for j, p := range pins {
			row := rows[j]
			if row.Argument != p.Argument || row.Role != string(p.Role) || row.Value != p.Value {
				t.Fatalf("case %d: pin %+v is not the row shown %+v", i, p, row)
			}
			if !slices.ContainsFunc(a.Roles, func(role approval.Role) bool {
				return role.Argument == p.Argument && role.Role == p.Role &&
					slices.ContainsFunc(role.Values, func(v approval.RoleValue) bool { return v.Value == p.Value })
			}) {
				t.Fatalf("case %d: pin %+v is no value of the call", i, p)
			}
		}
		words := approval.GrantTerms{Scope: approval.GrantScopeValues, Function: a.Call.Function, Pins: pins}.ScopeWords()
		for _, p := range pins {
			if !strings.Contains(words, p.Value) {
				t.Fatalf("case %d: the words %q do not name pin %q", i, words, p.Value)
			}
		}
	}
	if offered < 300 || refused < 300 {
		t.Fatalf("the generator is lopsided: %d offered, %d refused", offered, refused)
	}
}

// flatValue is the call's value a row stands for when it is shown whole.
func flatValue(a *approval.Approval, row templates.RoleRow) string {
	for _, role := range a.Roles {
		for _, v := range role.Values {
			if v.Value == row.Value {
				return v.Value
			}
		}
	}
	return "\x00not a value"
}

func argOf(a *approval.Approval, row templates.RoleRow) string {
	for _, role := range a.Roles {
		if role.Argument == row.Argument {
			return role.Argument
		}
	}
	return "\x00not an argument"
}
