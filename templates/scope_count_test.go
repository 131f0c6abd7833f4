package templates_test

import (
	"fmt"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestRoleNotesCutCountsOutOfScope: 40 arguments, each with a tenant
// record and a value the job read. The rows hold 20 of the out-of-scope
// values and the notes' own cut stands for 30 notes, 10 of which count
// an out-of-scope value: the line that stands for them counts those 10,
// so every out-of-scope value is in a row or counted on every surface.
func TestRoleNotesCutCountsOutOfScope(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	for i := range 40 {
		a.Roles = append(a.Roles, approval.Role{Argument: fmt.Sprintf("a%d", i), Role: approval.RoleRecipient,
			Values: []approval.RoleValue{
				{Value: fmt.Sprintf("a%d@acme.example", i), Origin: approval.OriginTenantRecord},
				{Value: fmt.Sprintf("a%d@evil.example", i), Origin: approval.OriginJobRead},
			}})
	}
	c := templates.Build(templates.Input{Approval: a})
	if n := len(c.Roles.Rows); n != templates.RoleRowsMax {
		t.Fatalf("%d rows, want %d", n, templates.RoleRowsMax)
	}
	if len(c.Roles.Notes) != templates.ListMax+1 {
		t.Fatalf("notes %q, want %d", c.Roles.Notes, templates.ListMax+1)
	}
	if got := c.Roles.Notes[0]; got != "2 more values of a20 left out (1 of them out of scope)" {
		t.Errorf("first note %q", got)
	}
	const last = "and 30 more notes (10 values out of scope among them)"
	if got := c.Roles.Notes[templates.ListMax]; got != last {
		t.Errorf("last note %q, want %q", got, last)
	}
	wantLine(t, renderAll(t, r, c), last)
}

// TestRoleNotesBackendLeftOut: the values the job backend left out are
// said apart from the bot's own cut, with the card's honest word that it
// cannot know their scope; the bot's cut keeps CARD.md's form.
func TestRoleNotesBackendLeftOut(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	vals := templatestest.Recipients(22)
	vals[21].Origin = approval.OriginJobRead
	vals[20].Origin = approval.OriginJobRead
	for i := range 19 {
		vals[i].Origin = approval.OriginNowhere
	}
	a.Roles = []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: vals, LeftOut: 80}}
	c := templates.Build(templates.Input{Approval: a})
	want := []string{
		"2 more values of to left out (1 of them out of scope)",
		"80 more values of to left out by the job backend (not known whether any is out of scope)",
	}
	if strings.Join(c.Roles.Notes, "|") != strings.Join(want, "|") {
		t.Errorf("notes %q, want %q", c.Roles.Notes, want)
	}
	x := renderAll(t, r, c)
	for _, l := range want {
		wantLine(t, x, l)
	}
}

// restrictedScopeApproval is a content-restricted call whose role to has
// two values out of scope (one by origin, one by the backend's flag) and
// is new to the job; cc has none.
func restrictedScopeApproval() *approval.Approval {
	a := templatestest.Synthetic()
	a.Content.Restricted = true
	a.Roles = []approval.Role{
		{Argument: "to", Role: approval.RoleRecipient, Values: []approval.RoleValue{
			{Value: "x@evil.example", Origin: approval.OriginJobRead},
			{Value: "ok@acme.example", Origin: approval.OriginRequest},
			{Value: "y@evil.example", Origin: approval.OriginTenantRecord, OutOfScope: true},
		}},
		{Argument: "cc", Role: approval.RoleRecipient, Values: []approval.RoleValue{
			{Value: "z@acme.example", Origin: approval.OriginRequest},
		}},
	}
	a.Flags.NewToJob = []approval.NewToJob{{Argument: "to", Role: approval.RoleRecipient}}
	return a
}

// TestRestrictedCardCountsOutOfScope: a restricted card shows no role
// value, yet says, per argument, how many of its values are out of scope
// and that it is new to the job, on every surface; the stored revision,
// which keeps no value, says the same; a private chat's call too.
func TestRestrictedCardCountsOutOfScope(t *testing.T) {
	r := newRenderer(t)
	const line = "to (recipient): 2 values out of scope; new to this job (values are shown only to operators with the content permission)"
	private := restrictedScopeApproval()
	private.Content.Restricted, private.Job.PrivateChat = false, true
	s, err := approval.StoredForm(restrictedScopeApproval())
	if err != nil {
		t.Fatal(err)
	}
	walled := templatestest.Synthetic()
	walled.Roles = restrictedScopeApproval().Roles
	for name, in := range map[string]templates.Input{
		"restricted": {Approval: restrictedScopeApproval()},
		"stored":     {Approval: &s.Approval},
		"private":    {Approval: private},
		"walled":     {Approval: walled, Restricted: true},
	} {
		t.Run(name, func(t *testing.T) {
			c := templates.Build(in)
			if !c.Restricted {
				t.Fatal("card not restricted")
			}
			if c.Roles == nil || len(c.Roles.Rows) != 0 || c.Roles.Table != "" {
				t.Fatalf("roles %+v, want no rows", c.Roles)
			}
			want := line
			if name == "walled" {
				// New to the job is a flag of the call, not of walled.
				want = "to (recipient): 2 values out of scope (values are shown only to operators with the content permission)"
			}
			if strings.Join(c.Roles.Notes, "|") != want {
				t.Errorf("notes %q, want %q", c.Roles.Notes, want)
			}
			x := renderAll(t, r, c)
			wantLine(t, x, want)
			x.each(func(surface, text string) {
				if strings.Contains(text, "evil.example") || strings.Contains(text, "acme.example") {
					t.Errorf("%s shows a role value", surface)
				}
			})
		})
	}
}

// TestRestrictedCardRoleLinesBounded: many arguments with values out of
// scope on a restricted card: at most listMax lines, and the line that
// stands for the rest counts their out-of-scope values.
func TestRestrictedCardRoleLinesBounded(t *testing.T) {
	a := templatestest.Synthetic()
	a.Content.Restricted = true
	for i := range 15 {
		a.Roles = append(a.Roles, approval.Role{Argument: fmt.Sprintf("a%d", i), Role: approval.RoleHost,
			Values: []approval.RoleValue{{Value: "h.evil.example", Origin: approval.OriginNowhere}}})
	}
	c := templates.Build(templates.Input{Approval: a})
	if n := len(c.Roles.Notes); n != templates.ListMax+1 {
		t.Fatalf("%d notes, want %d: %q", n, templates.ListMax+1, c.Roles.Notes)
	}
	if got, want := c.Roles.Notes[templates.ListMax], "and 5 more notes (5 values out of scope among them)"; got != want {
		t.Errorf("last note %q, want %q", got, want)
	}
	for _, n := range c.Roles.Notes {
		if utf16text.Len(n) > templates.LineMax {
			t.Errorf("note of %d characters: %q", utf16text.Len(n), n)
		}
	}
}

// TestOriginCheckPutsDenyFirst: the platform's origin check found an
// argument below its floor: Deny comes first on every surface, both when
// the origin is below tenant_record (out of scope by the one rule) and
// when it is not (the floor the rule needs was not met).
func TestOriginCheckPutsDenyFirst(t *testing.T) {
	r := newRenderer(t)
	for _, origin := range []approval.Origin{approval.OriginJobRead, approval.OriginTenantRecord} {
		a := templatestest.Synthetic()
		a.AskedBy = approval.AskedBy{Reason: approval.ReasonOrigin, Argument: "to", Role: approval.RoleRecipient,
			Floor: approval.OriginRequest, Origin: origin}
		c := templates.Build(templates.Input{Approval: a})
		if len(c.Buttons) == 0 || c.Buttons[0].Label != templates.LabelDeny || !c.Buttons[0].Default {
			t.Errorf("origin %s: first button %+v, want Deny, the default", origin, c.Buttons)
		}
		x := renderAll(t, r, c)
		x.each(func(surface, text string) {
			if strings.HasPrefix(surface, "email") {
				return // mail carries its decision links, not the card's buttons
			}
			d, ap := strings.Index(text, templates.LabelDeny), strings.Index(text, `"`+templates.LabelApprove+`"`)
			if ap < 0 {
				ap = strings.Index(text, templates.LabelApprove)
			}
			if d < 0 || (ap >= 0 && ap < d) {
				t.Errorf("origin %s: %s does not put Deny before Approve", origin, surface)
			}
		})
	}
}
