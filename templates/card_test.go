package templates

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
)

// TestStatusLine: every state has its line on top of every surface; only
// a waiting card has Approve and Deny, and only a pending one (waiting, or
// its decision being sent) the plan line. Decisions come from the fixture
// events that close these approvals.
func TestStatusLine(t *testing.T) {
	r := newRenderer(t)
	merge := loadApproval(t, "merge.json")
	resolved := loadEvent(t, "merge-resolved.json").Resolved
	cancelled := loadEvent(t, "mail-cancelled.json").Cancelled
	recheck := loadEvent(t, "refund-recheck.json").RecheckFailed
	at := merge.RequestedAt.Add(3 * time.Minute)
	_, ladder := pinned(merge)
	sending := &Deciding{Actor: resolved.Actor, Approve: true, At: at}
	approved := &approval.Decision{Actor: resolved.Actor, Via: resolved.Via, At: at}

	tests := []struct {
		name        string
		in          Input
		wantStatus  string
		wantMessage string
		waiting     bool // Approve and Deny
		plan        bool // the plan line
	}{
		{"pending", Input{State: approval.StatePending}, "Waiting for a decision", "", true, true},
		{"deciding", Input{State: approval.StatePending, Deciding: sending},
			"Recorded: " + resolved.Actor + "'s approval is being sent to the job backend…", "", false, true},
		{"approved", Input{State: approval.StateApproved, Decision: approved},
			"Approved by " + resolved.Actor + " at " + at.Format("15:04") + " UTC", "", false, false},
		{"approved wins over deciding", Input{State: approval.StateApproved, Decision: approved, Deciding: sending},
			"Approved by " + resolved.Actor + " at " + at.Format("15:04") + " UTC", "", false, false},
		{"denied", Input{State: approval.StateDenied, Decision: &approval.Decision{Actor: resolved.Actor, Comment: resolved.Comment, Via: resolved.Via, At: at}},
			"Denied by " + resolved.Actor + ": " + resolved.Comment, "", false, false},
		{"expired", Input{State: approval.StateExpired, Decision: &approval.Decision{Actor: "system:deadline", Comment: "nobody answered", Via: "deadline", At: at}},
			"Denied: nobody answered by the deadline", "", false, false},
		{"cancelled", Input{State: approval.StateCancelled, Decision: &approval.Decision{Comment: cancelled.Reason, At: at}},
			"Cancelled: " + cancelled.Reason, "", false, false},
		// The re-check's refusal reads once: the status says the platform
		// refused the call after approval, the line below why.
		{"refused", Input{State: approval.StateRefused, Decision: &approval.Decision{Message: recheck.Message, At: at}},
			"The platform refused the call after approval",
			"Re-checked after a long wait: the job's starter user:ada no longer holds the operator role in tenant acme", false, false},
		{"refused after a known approval", Input{State: approval.StateRefused, Decision: &approval.Decision{Actor: resolved.Actor, Message: recheck.Message, At: at}},
			"The platform refused the call after " + resolved.Actor + " approved it",
			"Re-checked after a long wait: the job's starter user:ada no longer holds the operator role in tenant acme", false, false},
		{"superseded", Input{State: approval.StatePending, Superseded: true},
			"Superseded: the call changed; see the new card", "", false, false},
		{"superseded, saying why", Input{State: approval.StatePending, Superseded: true,
			SupersededBy: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged}},
			"Superseded: the arguments changed; see the new card", "", false, false},
		{"superseded by a hook", Input{State: approval.StatePending, Superseded: true,
			SupersededBy: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyHookChanged}},
			"Superseded: a pre_tool_call hook changed the call; see the new card", "", false, false},
		{"superseded wins over deciding", Input{State: approval.StatePending, Superseded: true, Deciding: sending},
			"Superseded: the call changed; see the new card", "", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Approval, in.Ladder = merge, ladder
			c := Build(in)
			if c.Status != tt.wantStatus {
				t.Errorf("status %q, want %q", c.Status, tt.wantStatus)
			}
			if c.Message != tt.wantMessage {
				t.Errorf("message %q, want %q", c.Message, tt.wantMessage)
			}
			if got := len(c.Buttons) > 0; got != tt.waiting {
				t.Errorf("buttons %v, want buttons only on a waiting card", c.Buttons)
			}
			if got := c.Ladder != ""; got != tt.plan {
				t.Errorf("plan line %q, want one only on a pending card", c.Ladder)
			}
			if c.Deciding != (tt.plan && !tt.waiting) {
				t.Errorf("deciding %v", c.Deciding)
			}

			// On top of every surface (the chats': their adapters' tests).
			if txt := r.Text(c); !strings.HasPrefix(txt, tt.wantStatus+"\n") {
				t.Errorf("text does not start with the status:\n%s", txt)
			}
			e := r.Email(c)
			if !strings.HasPrefix(e.Text, tt.wantStatus+"\n") {
				t.Errorf("email text does not start with the status:\n%s", e.Text)
			}
			if tt.wantMessage != "" && !strings.Contains(e.Text, tt.wantMessage) {
				t.Errorf("email text lacks the backend's message")
			}
			if tt.plan && !strings.Contains(r.Text(c), c.Ladder) {
				t.Errorf("text lacks the plan line %q", c.Ladder)
			}
		})
	}
}

// TestButtons: Deny as prominent as Approve and first (the default) for a
// destructive call, a value out of scope, one new to the job, a class
// above or a warning; only Deny where a typed confirmation is needed; Show all
// arguments where the projection was cut or redacted; Show details on a
// restricted card; a confirm dialog on Slack's Approve of a destructive
// call; Approve with comment… after the pair wherever Approve is; and the
// ladder's I'm looking and Escalate now on every waiting card, even one
// a chat cannot approve. (Each chat's buttons: its adapter's TestButtons.)
func TestButtons(t *testing.T) {
	r := newRenderer(t)
	const note = "Approve with comment…"
	const look, esc = "I'm looking", "Escalate now"
	tests := []struct {
		fixture     string
		want        []string
		denyDefault bool
		confirm     bool // Approve asks again in Slack
	}{
		{"merge.json", []string{"Deny", "Approve", note, look, esc}, true, true},                           // destructive
		{"mail.json", []string{"Deny", "Approve", note, look, esc}, true, false},                           // out of scope, new to the job, class above
		{"refund.json", []string{"Deny", look, esc}, true, false},                                          // confirm: approve it in the console
		{"search.json", []string{"Approve", "Deny", note, look, esc}, false, false},                        // reads only
		{"unknown.json", []string{"Deny", "Approve", note, look, esc}, true, false},                        // effects_mismatch: a warning
		{"secrets.json", []string{"Approve", "Deny", note, look, esc, "Show all arguments"}, false, false}, // redacted
		{"big.json", []string{"Approve", "Deny", note, look, esc, "Show all arguments"}, false, false},     // truncated
		{"private.json", []string{"Deny", "Approve", note, look, esc, "Show details"}, true, true},         // restricted, destructive
		{"protected.json", []string{"Deny", look, esc}, false, false},                                      // protected paths: never approved from a chat
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			a := loadApproval(t, tt.fixture)
			c := cardIn(t, a, "pending")
			var got []string
			for _, b := range c.Buttons {
				got = append(got, b.Label)
				act, err := ParseAction(b.Payload)
				if err != nil || act != b.Action || act.ApprovalID != a.ID || act.Revision != a.Revision {
					t.Errorf("%s: payload %q → %+v, %v", b.Label, b.Payload, act, err)
				}
				if b.Default != (b.Action.Kind == ActionDeny && tt.denyDefault) {
					t.Errorf("%s: default %v", b.Label, b.Default)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("buttons (-want +got):\n%s", diff)
			}
			if (c.ConfirmLine != "") != (a.Confirm != nil) {
				t.Errorf("confirm line %q", c.ConfirmLine)
			}

			for _, b := range c.Buttons {
				if b.Action.Kind == ActionApprove && (b.Confirm != nil) != tt.confirm {
					t.Errorf("approve confirm dialog = %v, want %v", b.Confirm != nil, tt.confirm)
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
		ev := parseEventFile(t, f)
		if ev.Approval == nil {
			continue
		}
		a := ev.Approval
		t.Run(fixtureName(f), func(t *testing.T) {
			c := cardIn(t, a, "pending")
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
						want = jsonString(l)
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

// jsonString is s as it appears inside a JSON string.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(unescapeHTML(b[1 : len(b)-1]))
}

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
		mod     func(*Input)
		hide    bool
	}{
		{"content restricted", "private.json", nil, true},
		{"revealed to a content holder", "private.json", func(in *Input) { in.RevealContent = true }, false},
		{"a wall beats reveal", "private.json", func(in *Input) { in.RevealContent, in.Restricted = true, true }, true},
		{"walled job in a shared place", "mail.json", func(in *Input) { in.Restricted = true }, true},
		{"walled changeset", "protected.json", func(in *Input) { in.Restricted = true }, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			a := loadApproval(t, tt.fixture)
			at, ladder := pinned(a)
			in, _ := PreviewInput(a, "pending", at, ladder)
			if tt.mod != nil {
				tt.mod(&in)
			}
			c := Build(in)
			x := renderAll(t, r, c)
			x.each(func(surface, s string) {
				for _, h := range hidden(a) {
					if len(h) < 4 {
						continue // too short to tell apart from other text
					}
					if got := strings.Contains(s, h) || strings.Contains(s, jsonString(h)) || strings.Contains(s, htmlEscape(h)); got == tt.hide {
						if tt.hide {
							t.Errorf("%s shows %q", surface, h)
						}
					}
				}
				if surface != "email subject" && strings.Contains(s, restrictedNote) != tt.hide {
					t.Errorf("%s: restricted note shown = %v", surface, !tt.hide)
				}
			})
			var details bool
			for _, b := range c.Buttons {
				details = details || b.Action.Kind == ActionShowDetails
				if b.Action.Kind == ActionShowArgs && tt.hide {
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

// synthetic is an approval built in code, for rules no fixture exercises.
func synthetic() *approval.Approval {
	no := false
	at := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	return &approval.Approval{
		ID: "a-syn1", Revision: 3, Tenant: "t1", Kind: approval.KindCall,
		ConsoleURL: "https://console.invalid/approvals/a-syn1",
		Job:        approval.Job{ID: "j-1", StartedBy: "user:x", Agent: "bot"},
		Call: approval.Call{
			Function:    "tool.write",
			Annotations: approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &no, OpenWorldHint: &no},
			Arguments:   []byte(`{"a":1}`),
			ArgsSHA256:  "sha256:" + strings.Repeat("a", 64),
		},
		AskedBy:     approval.AskedBy{Reason: approval.ReasonRequiresApproval},
		RequestedAt: at,
	}
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
			a := synthetic()
			tt.mod(a)
			c := Build(Input{Approval: a})
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
				showAll = showAll || b.Action.Kind == ActionShowArgs
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
						want = mailArgsCutNote
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
	a := synthetic()
	var vals []approval.RoleValue
	for i := range 25 {
		vals = append(vals, approval.RoleValue{Value: fmt.Sprintf("u%d@example.invalid", i), Origin: approval.OriginTenantRecord})
	}
	vals[3].OutOfScope, vals[3].Origin = true, approval.OriginJobRead
	a.Roles = []approval.Role{
		{Argument: "to", Role: approval.RoleRecipient, Values: vals, LeftOut: 5},
		{Argument: "cc", Role: approval.RoleRecipient, Values: vals[:2], NotCompared: true},
	}
	c := Build(Input{Approval: a})
	if n := len(c.Roles.Rows); n != roleRowsMax {
		t.Fatalf("%d rows, want %d", n, roleRowsMax)
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
	const warned = "⚠ to · recipient · u3@example.invalid · job_read · out of scope"
	const plain = "\n  to · recipient · u0@example.invalid · tenant_record\n"
	if !strings.HasPrefix(c.Roles.Table, warned+plain) {
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
	prot := loadApproval(t, "protected.json")
	c := cardIn(t, prot, "pending")
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

	chg := cardIn(t, loadApproval(t, "changes.json"), "pending")
	if chg.Changes.ProtectedNote != "" || chg.Changes.GovernanceNote != "" {
		t.Errorf("an unprotected changeset says %q %q", chg.Changes.ProtectedNote, chg.Changes.GovernanceNote)
	}
}

func TestTurn(t *testing.T) {
	merge := loadApproval(t, "merge.json")
	c := cardIn(t, merge, "pending")
	want := fmt.Sprintf("%d other calls of this turn wait with it: %s", len(merge.Turn.Waiting), strings.Join(merge.Turn.Waiting, ", "))
	if c.Turn != want {
		t.Errorf("turn %q, want %q", c.Turn, want)
	}
	if got := turn([]string{"x.y"}); got != "1 other call of this turn waits with it: x.y" {
		t.Errorf("turn of one %q", got)
	}
}

// TestPlanLine: the ladder as frozen at request, on one line with
// absolute times, bounded, whatever the ladder holds.
func TestPlanLine(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	req := day.Add(9 * time.Hour)
	dl := day.Add(18 * time.Hour)
	step := func(h, m int, who string) PlanStep {
		return PlanStep{At: day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute), Who: who}
	}
	skipped := func(s PlanStep) PlanStep { s.Skipped = true; return s }
	var thirty []PlanStep
	for i := range 30 {
		thirty = append(thirty, step(9, 10+i, fmt.Sprintf("mention @p%d", i)))
	}
	const no = " · deadline 2026-11-30 18:00 UTC (no answer counts as a no)"
	tests := []struct {
		name     string
		steps    []PlanStep
		deadline time.Time
		want     string
	}{
		{"example", []PlanStep{step(15, 15, "mention @kevin"), step(16, 0, "email leads@acme.example"), skipped(step(19, 0, "dm lead"))}, dl,
			"ladder: 15:15 UTC mention @kevin · 16:00 UTC email leads@acme.example · 19:00 UTC dm lead (skipped: after the deadline)" + no},
		{"no steps: only the deadline", nil, dl, strings.TrimPrefix(no, " · ")},
		{"no steps, no deadline", nil, time.Time{}, ""},
		{"no deadline", []PlanStep{step(10, 0, "mention @kevin")}, time.Time{}, "ladder: 10:00 UTC mention @kevin"},
		{"another day shows its date", []PlanStep{step(9, 15, "mention @kevin"), step(33, 0, "dm kevin")}, day.Add(48 * time.Hour),
			"ladder: 09:15 UTC mention @kevin · 2026-12-01 09:00 UTC dm kevin · deadline 2026-12-02 00:00 UTC (no answer counts as a no)"},
		{"before the request", []PlanStep{skipped(step(8, 0, "mention @oncall")), step(10, 0, "dm lead")}, dl,
			"ladder: 08:00 UTC mention @oncall (skipped: before the request) · 10:00 UTC dm lead" + no},
		{"shown in UTC", []PlanStep{{At: day.Add(15 * time.Hour).In(time.FixedZone("CET", 3600)), Who: "mention @kevin"}}, dl,
			"ladder: 15:00 UTC mention @kevin" + no},
		{"no targets", []PlanStep{step(10, 0, "")}, dl, "ladder: 10:00 UTC no targets" + no},
		{"one line", []PlanStep{step(10, 0, "mention @a\n@b\u202e")}, dl, "ladder: 10:00 UTC mention @a @b[U+202E]" + no},
		{"one more step", append(thirty[:5:5], thirty[5]), dl,
			"ladder: 09:10 UTC mention @p0 · 09:11 UTC mention @p1 · 09:12 UTC mention @p2 · 09:13 UTC mention @p3 · 09:14 UTC mention @p4 · and 1 more step" + no},
		{"thirty steps", thirty, dl,
			"ladder: 09:10 UTC mention @p0 · 09:11 UTC mention @p1 · 09:12 UTC mention @p2 · 09:13 UTC mention @p3 · 09:14 UTC mention @p4 · and 25 more steps" + no},
		{"whom a step tells is cut", []PlanStep{step(10, 0, strings.Repeat("x", 500))}, dl,
			"ladder: 10:00 UTC " + strings.Repeat("x", planWhoMax-1) + "…" + no},
		// A window that stays shut until the deadline: the plan's reason,
		// at the time the step was due, in time order.
		{"the plan's reason", []PlanStep{step(10, 0, "mention @kevin"),
			{At: day.Add(20 * time.Hour), HeldFrom: day.Add(9*time.Hour + 30*time.Minute), Who: "dm lead", Skipped: true, Skip: SkipWindowShut}}, dl,
			"ladder: 09:30 UTC dm lead (skipped: its window does not open before the deadline) · 10:00 UTC mention @kevin" + no},
		{"a skipped step after the first five", append(thirty[:6:6], skipped(step(19, 0, "dm lead"))), dl,
			"ladder: 09:10 UTC mention @p0 · 09:11 UTC mention @p1 · 09:12 UTC mention @p2 · 09:13 UTC mention @p3 · 09:14 UTC mention @p4" +
				" · and 1 more step · 19:00 UTC dm lead (skipped: after the deadline)" + no},
		{"skipped steps are bounded", []PlanStep{skipped(step(18, 0, "dm a")), skipped(step(18, 1, "dm b")), skipped(step(18, 2, "dm c")),
			skipped(step(18, 3, "dm d")), skipped(step(18, 4, "dm e")), skipped(step(18, 5, "dm f")), skipped(step(18, 6, "dm g"))}, dl,
			"ladder: 18:00 UTC dm a (skipped: after the deadline) · 18:01 UTC dm b (skipped: after the deadline) · 18:02 UTC dm c (skipped: after the deadline)" +
				" · 18:03 UTC dm d (skipped: after the deadline) · 18:04 UTC dm e (skipped: after the deadline) · and 2 more steps" + no},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := planLine(LadderPlan{Steps: tt.steps, Deadline: tt.deadline}, tt.deadline, req, clock{zone: time.UTC, today: req}).done(0); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}

	// Through Build: the approval's own deadline when the plan has none.
	a := synthetic()
	own := a.RequestedAt.Add(2 * time.Hour)
	a.Deadline = &own
	if got, want := Build(Input{Approval: a}).Ladder, "deadline 2030-01-02 11:00 UTC (no answer counts as a no)"; got != want {
		t.Errorf("Build: plan line %q, want %q", got, want)
	}
}

// TestAgentSaysBox: the agent's text stays in its labelled quote box on
// every surface, every line of it, whatever it pretends to be.
func TestAgentSaysBox(t *testing.T) {
	r := newRenderer(t)
	a := synthetic()
	a.AgentSays = "All fine.\n*Approved by user:kevin*\r\nreads only\u2028:white_check_mark: done"
	c := Build(Input{Approval: a})
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

// TestCleanText: control characters and bidirectional overrides are shown,
// not obeyed.
func TestCleanText(t *testing.T) {
	tests := map[string]string{
		"plain":             "plain",
		"a\x1b[31mred":      "a[U+001B][31mred",
		"evil\u202Etxt.exe": "evil[U+202E]txt.exe",
		"a\r\nb\rc\u2029d":  "a\nb\nc\nd",
		"bad\xffutf8":       "bad\uFFFDutf8",
		"tab\tkept":         "tab\tkept",
	}
	for in, want := range tests {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := visibleJSON(`{"a":"x` + "\u202E" + `y"}`); got != `{"a":"x\u202ey"}` {
		t.Errorf("visibleJSON = %q", got)
	}
	if got := oneLine("a\nb\t c"); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
}

// A restricted card does not name the private turn's other calls.
func TestRestrictedCardHidesTheTurn(t *testing.T) {
	a := loadApproval(t, "private.json")
	a.Turn.Waiting = []string{"mail.send_private"}
	c := cardIn(t, a, "pending")
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
