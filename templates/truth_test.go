package templates_test

import (
	"fmt"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// showsLine reports, per surface, whether x shows line as that surface
// writes it (JSON for Slack, HTML escaped in the mail's HTML); the
// Discord adapter's tests check its own.
func showsLine(x rendering, line string) map[string]bool {
	return map[string]bool{
		"slack":      strings.Contains(x.slack, templatestest.JSONString(line)),
		"email text": strings.Contains(x.emailText, line),
		"email html": strings.Contains(x.emailHTML, htmlEscape(line)),
		"text":       strings.Contains(x.text, line),
	}
}

// wantLine fails t for each surface of x that does not show line.
func wantLine(t *testing.T, x rendering, line string) {
	t.Helper()
	for surface, ok := range showsLine(x, line) {
		if !ok {
			t.Errorf("%s lacks %q", surface, line)
		}
	}
}

// TestRolesAttackerAt26Of100: the one out-of-scope value among 100
// recipients, at position 26, heads the rows with its warning, though
// the backend left its out_of_scope unset (its origin says so), and the
// cut counts the 80 values left out, none of them out of scope.
func TestRolesAttackerAt26Of100(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	vals := templatestest.Recipients(100)
	vals[25] = approval.RoleValue{Value: "x@evil.example", Origin: approval.OriginJobRead}
	a.Roles = []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: vals}}
	c := templates.Build(templates.Input{Approval: a})
	if n := len(c.Roles.Rows); n != templates.RoleRowsMax {
		t.Fatalf("%d rows, want %d", n, templates.RoleRowsMax)
	}
	if first := c.Roles.Rows[0]; first.Value != "x@evil.example" || !first.OutOfScope {
		t.Errorf("first row %+v, want the out-of-scope value, warned", first)
	}
	for i, row := range c.Roles.Rows[1:] {
		if want := fmt.Sprintf("u%d@acme.example", i); row.Value != want || row.OutOfScope {
			t.Errorf("row %d %+v, want %s unwarned (the rest in the request's order)", i+1, row, want)
		}
	}
	if want := []string{"80 more values of to left out"}; strings.Join(c.Roles.Notes, "|") != want[0] {
		t.Errorf("notes %q, want %q", c.Roles.Notes, want)
	}
	x := renderAll(t, r, c)
	wantLine(t, x, "⚠ to        recipient  x@evil.example    something the job read, out of scope")
	wantLine(t, x, "80 more values of to left out")
	if !c.Buttons[0].Default || c.Buttons[0].Label != templates.LabelDeny {
		t.Errorf("first button %+v, want Deny, the default", c.Buttons[0])
	}
}

// TestRolesCutCountsOutOfScope: more out-of-scope values than rows: every
// row shows one, and the cut says how many of the values it leaves out
// are out of scope. The backend's own left_out is said apart: the card
// cannot know whether any of those is out of scope. The count comes
// before the notes of other arguments, so their own cut (at listMax
// notes) never hides it.
func TestRolesCutCountsOutOfScope(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	vals := templatestest.Recipients(100)
	for i := 50; i <= 70; i++ {
		vals[i].Origin = approval.OriginNowhere
	}
	for i := range templates.ListMax + 2 {
		a.Roles = append(a.Roles, approval.Role{Argument: fmt.Sprintf("h%d", i), Role: approval.RoleHost,
			Values: []approval.RoleValue{{Value: "api.acme.example", Origin: approval.OriginRequest}}, LeftOut: 1})
	}
	a.Roles = append(a.Roles, approval.Role{Argument: "to", Role: approval.RoleRecipient, Values: vals, LeftOut: 5})
	c := templates.Build(templates.Input{Approval: a})
	for i, row := range c.Roles.Rows {
		if !row.OutOfScope {
			t.Errorf("row %d %+v is not out of scope", i, row)
		}
	}
	const note = "80 more values of to left out (1 of them out of scope)"
	if len(c.Roles.Notes) == 0 || c.Roles.Notes[0] != note {
		t.Errorf("notes %q, want %q first", c.Roles.Notes, note)
	}
	wantLine(t, renderAll(t, r, c), note)
}

// TestRolesNewToJobNext: after the out-of-scope values come the values
// of arguments flagged new to the job, then the rest.
func TestRolesNewToJobNext(t *testing.T) {
	a := templatestest.Synthetic()
	to := templatestest.Recipients(25)
	to[24].Origin = approval.OriginJobRead
	cc := []approval.RoleValue{
		{Value: "c0@other.example", Origin: approval.OriginTenantRecord},
		{Value: "c1@other.example", Origin: approval.OriginRequest},
	}
	bcc := templatestest.Recipients(30)
	bcc[29].OutOfScope = true
	a.Roles = []approval.Role{
		{Argument: "to", Role: approval.RoleRecipient, Values: to},
		{Argument: "cc", Role: approval.RoleRecipient, Values: cc},
		{Argument: "bcc", Role: approval.RoleRecipient, Values: bcc},
	}
	a.Flags.NewToJob = []approval.NewToJob{{Argument: "cc", Role: approval.RoleRecipient}}
	c := templates.Build(templates.Input{Approval: a})
	var got []string
	for _, row := range c.Roles.Rows[:5] {
		got = append(got, row.Argument+"="+row.Value)
	}
	want := []string{"to=u24@acme.example", "bcc=u29@acme.example", "cc=c0@other.example", "cc=c1@other.example", "to=u0@acme.example"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("first rows %q, want %q", got, want)
	}
}

// TestRoleRowsRedacted: a role row shows a value as the arguments do: a
// secret-named argument's value is [redacted], and a credential's shape
// is redacted in any value, on every surface.
func TestRoleRowsRedacted(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	const pass, bearer, urlPass = "hunter2hunter2", "s3cr3tb34r3rv4lu3", "p4ssw0rdinurl"
	a.Roles = []approval.Role{
		{Argument: "smtp_password", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: pass, Origin: approval.OriginRequest}}},
		{Argument: "api_key", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "plain-looking", Origin: approval.OriginRequest}}},
		{Argument: "header", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "Bearer " + bearer, Origin: approval.OriginRequest}}},
		{Argument: "host", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "https://deploy:" + urlPass + "@ci.example", Origin: approval.OriginRequest}}},
	}
	c := templates.Build(templates.Input{Approval: a})
	want := []string{"[redacted]", "[redacted]", "Bearer [redacted]", "https://[redacted]@ci.example"}
	for i, row := range c.Roles.Rows {
		if row.Value != want[i] {
			t.Errorf("row %s shows %q, want %q", row.Argument, row.Value, want[i])
		}
	}
	x := renderAll(t, r, c)
	wantLine(t, x, "smtp_password  host  [redacted]                     the request")
	x.each(func(surface, s string) {
		for _, sec := range []string{pass, "plain-looking", bearer, urlPass} {
			if strings.Contains(s, sec) {
				t.Errorf("%s shows the secret %q", surface, sec)
			}
		}
	})
}

// TestWarningLinesOnEverySurface: each warning is a line of its own on
// every surface, and puts Deny first; the effect line stays as declared.
func TestWarningLinesOnEverySurface(t *testing.T) {
	r := newRenderer(t)
	for name, tt := range templatestest.Warnings() {
		t.Run(name, func(t *testing.T) {
			a := templatestest.Synthetic()
			tt.Set(a)
			c := templates.Build(templates.Input{Approval: a})
			if strings.Join(c.Warnings, "|") != strings.Join(tt.Want, "|") {
				t.Errorf("warnings %q, want %q", c.Warnings, tt.Want)
			}
			if c.Effect != approval.EffectLine(a.Call.Annotations) {
				t.Errorf("effect %q changed", c.Effect)
			}
			x := renderAll(t, r, c)
			for _, w := range tt.Want {
				wantLine(t, x, w)
			}
			// One line each: plain text marks each with its own "! ".
			for _, w := range tt.Want {
				if !strings.Contains(x.text, "\n! "+w+"\n") || !strings.Contains(x.emailText, "\n! "+w+"\n") {
					t.Errorf("%q is not a line of its own in text and mail", w)
				}
			}
			if !c.Buttons[0].Default || c.Buttons[0].Label != templates.LabelDeny {
				t.Errorf("first button %+v, want Deny, the default", c.Buttons[0])
			}
		})
	}
}

// TestNotGiven: a request without a level or a snapshot says so on every
// surface, a content-restricted card included, rather than leaving it out.
func TestNotGiven(t *testing.T) {
	r := newRenderer(t)
	for _, restricted := range []bool{false, true} {
		a := templatestest.Synthetic()
		a.Level, a.Call.Snapshot = "", ""
		a.Content.Restricted = restricted
		x := renderAll(t, r, templates.Build(templates.Input{Approval: a}))
		wantLine(t, x, "agent bot · autonomy level not given")
		wantLine(t, x, "snapshot not given")
	}
	a := templatestest.Synthetic()
	a.Level, a.Call.Snapshot = "L2", "sha256:"+strings.Repeat("b", 64)
	x := renderAll(t, r, templates.Build(templates.Input{Approval: a}))
	x.each(func(surface, s string) {
		if strings.Contains(s, "not given") {
			t.Errorf("%s says not given of a level and snapshot that are given", surface)
		}
	})
}

// TestNamesRedacted: the turn's waiting calls and the rule a card quotes
// come from the request, and are redacted as free text is.
func TestNamesRedacted(t *testing.T) {
	r := newRenderer(t)
	const sec = "s3cr3tb34r3rv4lu3"
	a := templatestest.Synthetic()
	a.Turn.Waiting = []string{"mail.send", "Bearer " + sec}
	a.AskedBy = approval.AskedBy{Reason: approval.ReasonSequence, Rule: "api_key=" + sec, PreviousCall: "https://u:" + sec + "@x.example"}
	c := templates.Build(templates.Input{Approval: a})
	if c.Turn != "2 other calls of this turn wait with it: mail.send, Bearer [redacted]" {
		t.Errorf("turn %q", c.Turn)
	}
	renderAll(t, r, c).each(func(surface, s string) {
		if strings.Contains(s, sec) {
			t.Errorf("%s shows the secret", surface)
		}
	})
}
