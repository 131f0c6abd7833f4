package templates_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestStatusLine: every state has its line on top of every surface; only
// a waiting card has Approve and Deny, and only a pending one (waiting, or
// its decision being sent) the plan line. Decisions come from the fixture
// events that close these approvals.
func TestStatusLine(t *testing.T) {
	r := newRenderer(t)
	for _, tt := range templatestest.StatusCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			c := templates.Build(tt.In)
			if c.Status != tt.Status {
				t.Errorf("status %q, want %q", c.Status, tt.Status)
			}
			if c.Message != tt.Message {
				t.Errorf("message %q, want %q", c.Message, tt.Message)
			}
			if got := len(c.Buttons) > 0; got != tt.Waiting {
				t.Errorf("buttons %v, want buttons only on a waiting card", c.Buttons)
			}
			if got := c.Ladder != ""; got != tt.Plan {
				t.Errorf("plan line %q, want one only on a pending card", c.Ladder)
			}
			if c.Deciding != (tt.Plan && !tt.Waiting) {
				t.Errorf("deciding %v", c.Deciding)
			}

			// On top of every surface (the chats': their adapters' tests).
			if txt := r.Text(c); !strings.HasPrefix(txt, tt.Status+"\n") {
				t.Errorf("text does not start with the status:\n%s", txt)
			}
			e := r.Email(c)
			if !strings.HasPrefix(e.Text, tt.Status+"\n") {
				t.Errorf("email text does not start with the status:\n%s", e.Text)
			}
			if tt.Message != "" && !strings.Contains(e.Text, tt.Message) {
				t.Errorf("email text lacks the backend's message")
			}
			if tt.Plan && !strings.Contains(r.Text(c), c.Ladder) {
				t.Errorf("text lacks the plan line %q", c.Ladder)
			}
		})
	}
}

// TestButtons: each waiting card has its buttons (ButtonCases: which,
// in which order, and why), each payload the button's own action, Deny
// the default where it says, and a typed confirmation's line and console
// link on every surface. (Each chat's buttons: its adapter's TestButtons.)
func TestButtons(t *testing.T) {
	r := newRenderer(t)
	for _, tt := range templatestest.ButtonCases() {
		t.Run(tt.Fixture, func(t *testing.T) {
			a := templatestest.Approval(t, tt.Fixture)
			c := templatestest.Card(t, a, "pending")
			var got []string
			for _, b := range c.Buttons {
				got = append(got, b.Label)
				act, err := templates.ParseAction(b.Payload)
				if err != nil || act != b.Action || act.ApprovalID != a.ID || act.Revision != a.Revision {
					t.Errorf("%s: payload %q → %+v, %v", b.Label, b.Payload, act, err)
				}
				if b.Default != (b.Action.Kind == templates.ActionDeny && tt.DenyDefault) {
					t.Errorf("%s: default %v", b.Label, b.Default)
				}
			}
			if diff := cmp.Diff(tt.Labels, got); diff != "" {
				t.Errorf("buttons (-want +got):\n%s", diff)
			}
			if (c.ConfirmLine != "") != (a.Confirm != nil) {
				t.Errorf("confirm line %q", c.ConfirmLine)
			}

			for _, b := range c.Buttons {
				if b.Action.Kind == templates.ActionApprove && (b.Confirm != nil) != tt.Confirm {
					t.Errorf("approve confirm dialog = %v, want %v", b.Confirm != nil, tt.Confirm)
				}
			}
			if a.Confirm != nil {
				line := "This call needs a typed confirmation of " + a.Confirm.Argument + ": approve it in the console"
				x := renderAll(t, r, c)
				for name, s := range map[string]string{"slack": x.slack, "discord": x.discord, "text": x.text, "email": x.emailText} {
					if !strings.Contains(s, line) || !strings.Contains(s, a.ConsoleURL) {
						t.Errorf("%s lacks the confirm line or the console link", name)
					}
				}
			}
		})
	}
}

// TestDomainLines: the effect line, flags and who asks are the approval
// package's own lines, shown on every surface.
func TestDomainLines(t *testing.T) {
	r := newRenderer(t)
	files, err := fixtures.EventFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		ev := templatestest.EventFile(t, f)
		if ev.Approval == nil {
			continue
		}
		a := ev.Approval
		t.Run(fixtureName(f), func(t *testing.T) {
			c := templatestest.Card(t, a, "pending")
			if a.IsQuestion() {
				// A question makes no call: none of a call's lines, its
				// own instead (question_mail_test.go).
				if c.Effect != "" || len(c.Flags) > 0 || c.AskedBy != "" || len(c.Reasons) > 0 || c.Function != "" || c.Question == nil {
					t.Errorf("question card: effect %q, flags %q, asked by %q %q, function %q, question %v",
						c.Effect, c.Flags, c.AskedBy, c.Reasons, c.Function, c.Question)
				}
				return
			}
			if c.Effect != approval.EffectLine(a.Call.Annotations) {
				t.Errorf("effect %q", c.Effect)
			}
			if diff := cmp.Diff(a.FlagLines(), c.Flags, cmpEmpty); diff != "" {
				t.Errorf("flags (-domain +card):\n%s", diff)
			}
			if diff := cmp.Diff(a.AskedByLines(), append([]string{c.AskedBy}, c.Reasons...)); diff != "" {
				t.Errorf("who asks (-domain +card):\n%s", diff)
			}
			x := renderAll(t, r, c)
			lines := append(append([]string{c.Effect}, c.Flags...), c.AskedBy)
			lines = append(lines, c.Reasons...)
			for _, l := range lines {
				if l == "" {
					continue
				}
				for name, s := range map[string]string{"slack": x.slack, "text": x.text, "email": x.emailText, "html": x.emailHTML} {
					var want string
					switch name {
					case "slack":
						want = templatestest.JSONString(l)
					case "html":
						want = htmlEscape(l)
					default:
						want = l
					}
					if !strings.Contains(s, want) {
						t.Errorf("%s lacks %q", name, l)
					}
				}
			}
			// Flags name arguments and classes, never a value.
			for _, role := range a.Roles {
				for _, v := range role.Values {
					for _, fl := range c.Flags {
						if strings.Contains(fl, v.Value) {
							t.Errorf("flag %q shows the value %q", fl, v.Value)
						}
					}
				}
			}
		})
	}
}

var cmpEmpty = cmp.Transformer("nilEmpty", func(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
})

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;", "+", "&#43;").Replace(s)
}

// TestRestricted: a content-restricted card shows no arguments, digest,
// role values, file paths, patch or agent text, on any surface, and says
// why, with Show details; the ephemeral answer to Show details does.
func TestRestricted(t *testing.T) {
	r := newRenderer(t)
	hidden := func(a *approval.Approval) []string {
		out := append(stringsIn(t, a.Call.Arguments), a.Call.ArgsSHA256)
		if a.AgentSays != "" {
			out = append(out, a.AgentSays)
		}
		for _, role := range a.Roles {
			for _, v := range role.Values {
				out = append(out, v.Value)
			}
		}
		if a.Changes != nil {
			for _, f := range a.Changes.Files {
				out = append(out, f.Path)
			}
			out = append(out, strings.Split(strings.TrimSpace(a.Changes.Patch), "\n")...)
		}
		return out
	}
	cases := []struct {
		name    string
		fixture string
		mod     func(*templates.Input)
		hide    bool
	}{
		{"content restricted", "private.json", nil, true},
		{"revealed to a content holder", "private.json", func(in *templates.Input) { in.RevealContent = true }, false},
		{"a wall beats reveal", "private.json", func(in *templates.Input) { in.RevealContent, in.Restricted = true, true }, true},
		{"walled job in a shared place", "mail.json", func(in *templates.Input) { in.Restricted = true }, true},
		{"walled changeset", "protected.json", func(in *templates.Input) { in.Restricted = true }, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a := templatestest.Approval(t, tt.fixture)
			at, ladder := templatestest.Pinned(a)
			in, _ := templates.PreviewInput(a, "pending", at, ladder)
			if tt.mod != nil {
				tt.mod(&in)
			}
			c := templates.Build(in)
			x := renderAll(t, r, c)
			x.each(func(surface, s string) {
				for _, h := range hidden(a) {
					if len(h) < 4 {
						continue // too short to tell apart from other text
					}
					if got := strings.Contains(s, h) || strings.Contains(s, templatestest.JSONString(h)) || strings.Contains(s, htmlEscape(h)); got == tt.hide {
						if tt.hide {
							t.Errorf("%s shows %q", surface, h)
						}
					}
				}
				if surface != "email subject" && strings.Contains(s, templates.RestrictedNote) != tt.hide {
					t.Errorf("%s: restricted note shown = %v", surface, !tt.hide)
				}
			})
			var details bool
			for _, b := range c.Buttons {
				details = details || b.Action.Kind == templates.ActionShowDetails
				if b.Action.Kind == templates.ActionShowArgs && tt.hide {
					t.Error("Show all arguments on a restricted card")
				}
			}
			if details != tt.hide {
				t.Errorf("Show details = %v", details)
			}
			if !tt.hide && !strings.Contains(x.text, a.AgentSays) {
				t.Error("revealed card lacks the agent's text")
			}
		})
	}
}

// stringsIn lists the string values of a JSON document.
func stringsIn(t testing.TB, raw []byte) []string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// TestArguments: the projection is pretty, cut at 2 KB with the cut
// note, and Show all arguments appears where it was cut or redacted by
// the backend or by us.
func TestArguments(t *testing.T) {
	r := newRenderer(t)
	big := map[string]string{}
	for i := range 40 {
		big[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", 150)
	}
	bigJSON, _ := json.Marshal(big)
	tests := []struct {
		name      string
		mod       func(*approval.Approval)
		wantCut   bool
		wantMarks string
	}{
		{"small", func(*approval.Approval) {}, false, ""},
		{"over 2 KB", func(a *approval.Approval) { a.Call.Arguments = bigJSON }, true, "truncated"},
		{"backend cut", func(a *approval.Approval) { a.Call.ArgumentsCut = true }, true, ""},
		{"backend redacted", func(a *approval.Approval) { a.Call.Redaction.Redacted = true }, false, "redacted"},
		{"backend truncated", func(a *approval.Approval) { a.Call.Redaction.Truncated = true }, true, "truncated"},
		{"we redact", func(a *approval.Approval) { a.Call.Arguments = []byte(`{"api_key":"k-123456"}`) }, false, "redacted"},
		{"not JSON", func(a *approval.Approval) { a.Call.Arguments = []byte(`{"a":`) }, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := templatestest.Synthetic()
			tt.mod(a)
			c := templates.Build(templates.Input{Approval: a})
			args := c.Arguments
			if len(args.JSON) > 2048 { // a card cuts its arguments at 2 KB
				t.Errorf("shown arguments are %d bytes, over 2 KB", len(args.JSON))
			}
			if got := args.CutNote == "[cut; Show all arguments shows all]"; got != tt.wantCut {
				t.Errorf("cut note %q", args.CutNote)
			}
			if args.Marks != tt.wantMarks {
				t.Errorf("marks %q, want %q", args.Marks, tt.wantMarks)
			}
			showAll := false
			for _, b := range c.Buttons {
				showAll = showAll || b.Action.Kind == templates.ActionShowArgs
			}
			want := tt.wantCut || tt.wantMarks != "" || tt.name == "not JSON"
			if showAll != want {
				t.Errorf("Show all arguments = %v, want %v", showAll, want)
			}
			if tt.wantCut {
				x := renderAll(t, r, c)
				note := "[cut; Show all arguments shows all]"
				for name, s := range map[string]string{"slack": x.slack, "text": x.text, "email": x.emailText} {
					want := note
					if name == "email" { // no Show all arguments button in a mail
						want = templates.MailArgsCutNote
					}
					if !strings.Contains(s, want) {
						t.Errorf("%s lacks the cut note", name)
					}
				}
			}
			if tt.name == "small" && !strings.Contains(args.JSON, "\n  \"a\": 1\n") {
				t.Errorf("not pretty-printed: %q", args.JSON)
			}
		})
	}
}

// TestRoles: at most 20 rows, out-of-scope values warned and first, what
// is left out and what was not compared said per argument.
func TestRoles(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.WithRoles()
	c := templates.Build(templates.Input{Approval: a})
	if n := len(c.Roles.Rows); n != templates.RoleRowsMax {
		t.Fatalf("%d rows, want %d", n, templates.RoleRowsMax)
	}
	// What counts as out of scope is said first (docs/cards.md), then
	// the backend's own left_out, whose scope the card cannot know, on a
	// line of its own apart from the bot's cut.
	wantNotes := []string{
		"cc: not compared past 200 values (counts as out of scope and new to the job)",
		"5 more values of to left out by the job backend (not known whether any is out of scope)",
		"5 more values of to left out",
		"2 more values of cc left out",
	}
	if diff := cmp.Diff(wantNotes, c.Roles.Notes); diff != "" {
		t.Errorf("notes (-want +got):\n%s", diff)
	}
	x := renderAll(t, r, c)
	// The out-of-scope value comes first, then the rest in order.
	const head = "  argument  role       value                came from\n"
	const warned = "⚠ to        recipient  u3@example.invalid   something the job read, out of scope"
	const plain = "\n  to        recipient  u0@example.invalid   a tenant record\n"
	if !strings.HasPrefix(c.Roles.Table, head+warned+plain) {
		t.Errorf("table:\n%s", c.Roles.Table)
	}
	for name, s := range map[string]string{"slack": x.slack, "text": x.text, "email": x.emailText, "html": x.emailHTML} {
		if !strings.Contains(s, warned) {
			t.Errorf("%s lacks the out-of-scope row %q", name, warned)
		}
		for _, n := range wantNotes {
			if !strings.Contains(s, n) && !strings.Contains(s, htmlEscape(n)) {
				t.Errorf("%s lacks %q", name, n)
			}
		}
	}
}

// TestChanges: protected files first with the protected note, and the
// governance rule on a protected_paths approval.
func TestChanges(t *testing.T) {
	r := newRenderer(t)
	prot := templatestest.Approval(t, "protected.json")
	c := templatestest.Card(t, prot, "pending")
	seenPlain := false
	for _, f := range c.Changes.Files {
		if !f.Protected {
			seenPlain = true
		} else if seenPlain {
			t.Errorf("protected %s after an unprotected file", f.Path)
		}
	}
	if c.Changes.ProtectedNote != "this change touches the plugin's tests or its rules" {
		t.Errorf("protected note %q", c.Changes.ProtectedNote)
	}
	if !strings.Contains(c.Changes.GovernanceNote, "Only another person with governance.write, who neither started the job") ||
		!strings.Contains(c.Changes.GovernanceNote, "nor approved its changes, may approve") {
		t.Errorf("governance note %q", c.Changes.GovernanceNote)
	}
	if c.Changes.PatchDigest != prot.Changes.PatchSHA256 || c.Changes.Patch == "" {
		t.Error("patch or its digest missing")
	}
	x := renderAll(t, r, c)
	for name, s := range map[string]string{"text": x.text, "email": x.emailText} {
		first := strings.Index(s, c.Changes.Files[0].Path)
		for _, f := range prot.Changes.Files {
			if !f.Protected && strings.Index(s, f.Path) < first {
				t.Errorf("%s: %s shown before the protected files", name, f.Path)
			}
		}
	}

	chg := templatestest.Card(t, templatestest.Approval(t, "changes.json"), "pending")
	if chg.Changes.ProtectedNote != "" || chg.Changes.GovernanceNote != "" {
		t.Errorf("an unprotected changeset says %q %q", chg.Changes.ProtectedNote, chg.Changes.GovernanceNote)
	}
}

func TestTurn(t *testing.T) {
	merge := templatestest.Approval(t, "merge.json")
	c := templatestest.Card(t, merge, "pending")
	want := fmt.Sprintf("%d other calls of this turn wait with it: %s", len(merge.Turn.Waiting), strings.Join(merge.Turn.Waiting, ", "))
	if c.Turn != want {
		t.Errorf("turn %q, want %q", c.Turn, want)
	}
	if got := templates.Turn([]string{"x.y"}); got != "1 other call of this turn waits with it: x.y" {
		t.Errorf("turn of one %q", got)
	}
}

// TestAgentSaysBox: the agent's text stays in its labelled quote box on
// every surface, every line of it, whatever it pretends to be.
func TestAgentSaysBox(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	a.AgentSays = "All fine.\n*Approved by user:kevin*\r\nreads only\u2028:white_check_mark: done"
	c := templates.Build(templates.Input{Approval: a})
	lines := strings.Split(c.AgentSays, "\n")
	if len(lines) != 4 {
		t.Fatalf("agent text lines %q", lines)
	}
	// Slack's and Discord's boxes: their adapters' TestAgentSaysBox.
	txt := r.Text(c)
	for _, l := range lines {
		if !strings.Contains(txt, "  > "+l+"\n") {
			t.Errorf("text: %q not quoted", l)
		}
	}
	if !strings.Contains(r.Email(c).HTML, "<blockquote") {
		t.Error("html: no quote box")
	}
}

// A restricted card does not name the private turn's other calls.
func TestRestrictedCardHidesTheTurn(t *testing.T) {
	a := templatestest.Approval(t, "private.json")
	a.Turn.Waiting = []string{"mail.send_private"}
	c := templatestest.Card(t, a, "pending")
	if c.Turn != "" {
		t.Fatalf("restricted card shows the turn: %q", c.Turn)
	}
	r := newRenderer(t)
	for name, out := range map[string]string{"text": r.Text(c), "email": r.Email(c).Text} {
		if strings.Contains(out, "mail.send_private") {
			t.Errorf("%s names the turn's call", name)
		}
	}
}

// TestPlanLineOwnDeadline: the approval's own deadline when the plan has
// none.
func TestPlanLineOwnDeadline(t *testing.T) {
	a := templatestest.Synthetic()
	own := a.RequestedAt.Add(2 * time.Hour)
	a.Deadline = &own
	if got, want := templates.Build(templates.Input{Approval: a}).Ladder, "deadline 2030-01-02 11:00 UTC (no answer counts as a no)"; got != want {
		t.Errorf("Build: plan line %q, want %q", got, want)
	}
}
