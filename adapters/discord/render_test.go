package discord

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// The card's rules are package templates' and tested there, on every
// surface Discord included (its tests render through RenderCard); these
// are what only Discord's layout decides: where each line goes, its
// escapes, timestamps, buttons and limits.

var (
	// timestampRE is a timestamp a card writes.
	timestampRE = regexp.MustCompile(`<t:[0-9]+:[tf]>`)
	// cardTimeRE is a time a card's line prints in the tenant's zone.
	cardTimeRE = regexp.MustCompile(`([0-9]{4}-[0-9]{2}-[0-9]{2} )?[0-9]{2}:[0-9]{2} ([A-Z]{3,5}|[+-][0-9]{2,4})`)
)

// timeless is Discord text with each timestamp as TIME, to compare with
// want of the card's line: which instant each one is, is
// TestTimesInEachReadersZone's to check.
func timeless(s string) string { return timestampRE.ReplaceAllString(s, "TIME") }

// want is a card's line as a card shows it, escaped, each of its times
// as TIME.
func want(line string) string { return escape(cardTimeRE.ReplaceAllString(line, "TIME")) }

// cardJSON is c as posted, as MarshalPreview writes it.
func cardJSON(t testing.TB, c templates.Card) string {
	t.Helper()
	b, err := templates.MarshalPreview(RenderCard(c))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func buttonsOf(m *Message) []Button {
	var out []Button
	for _, row := range m.Components {
		if ar, ok := row.(ActionRow); ok {
			for _, c := range ar.Components {
				if b, ok := c.(Button); ok {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// TestEveryPartIsWritten: every part of a chat card has its writer, and
// every payload fits a custom_id.
func TestEveryPartIsWritten(t *testing.T) {
	for _, name := range templates.CardParts() {
		if cardParts[name] == nil {
			t.Errorf("no writer for %s", name)
		}
	}
	if len(cardParts) != len(templates.CardParts()) {
		t.Errorf("%d writers for %d parts", len(cardParts), len(templates.CardParts()))
	}
	if templates.MaxActionLen > customIDMax {
		t.Errorf("payloads up to %d bytes, custom_id up to %d", templates.MaxActionLen, customIDMax)
	}
}

// TestStatusOnTop: every state's status line starts the content; only a
// waiting card has buttons. Decisions come from the fixture events that
// close these approvals.
func TestStatusOnTop(t *testing.T) {
	for _, tt := range templatestest.StatusCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			c := templates.Build(tt.In)
			if c.Status != tt.Status {
				t.Fatalf("status %q, want %q", c.Status, tt.Status)
			}
			dm := RenderCard(c)
			if !strings.HasPrefix(timeless(dm.Content), "**"+want(tt.Status)+"**") {
				t.Errorf("content %q does not start with the status", dm.Content)
			}
			if (len(dm.Components) > 0) != tt.Waiting {
				t.Errorf("components %v, want some only on a waiting card", dm.Components)
			}
		})
	}
}

// TestButtons: each of the card's buttons, in order, its label and
// payload the card's; Deny red, Approve green, the rest grey.
func TestButtons(t *testing.T) {
	for _, tt := range templatestest.ButtonCases() {
		t.Run(tt.Fixture, func(t *testing.T) {
			c := templatestest.Card(t, templatestest.Approval(t, tt.Fixture), "pending")
			db := buttonsOf(RenderCard(c))
			if len(db) != len(tt.Labels) || len(c.Buttons) != len(tt.Labels) {
				t.Fatalf("%d buttons, the card %d, want %d", len(db), len(c.Buttons), len(tt.Labels))
			}
			for i, label := range tt.Labels {
				if db[i].Label != label {
					t.Errorf("button %d: %q, want %q", i, db[i].Label, label)
				}
				if db[i].CustomID != c.Buttons[i].Payload {
					t.Errorf("button %d: payload differs from the card's", i)
				}
				style := buttonSecondary
				switch label {
				case "Deny":
					style = buttonDanger
				case "Approve":
					style = buttonSuccess
				}
				if db[i].Style != style {
					t.Errorf("%s: style %d, want %d", label, db[i].Style, style)
				}
			}
		})
	}
}

// TestEditRemovesButtons: an edit of a decided card removes its buttons.
func TestEditRemovesButtons(t *testing.T) {
	a := templatestest.Approval(t, "merge.json")
	for _, state := range []string{"pending", "approved"} {
		send := RenderCard(templatestest.Card(t, a, state))
		e := send.Edit()
		if e.Content != send.Content || len(e.Embeds) != 1 {
			t.Fatalf("%s: edit %+v", state, e)
		}
		if e.Components == nil || len(e.Components) != len(send.Components) {
			t.Errorf("%s: components %v, want %d rows", state, e.Components, len(send.Components))
		}
		// Discord removes buttons only when told so with an empty list.
		js, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		if state != "pending" && !strings.Contains(string(js), `"components":[]`) {
			t.Errorf("%s: the edit keeps the buttons: %s", state, js)
		}
	}
}

// TestDomainLines: the effect line, the flags and who asks, as
// package approval words them, each escaped once.
func TestDomainLines(t *testing.T) {
	files, err := fixtures.EventFiles()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(f[strings.LastIndexByte(f, '/')+1:], ".json")
		ev := templatestest.Event(t, name+".json")
		if ev.Approval == nil {
			continue
		}
		t.Run(name, func(t *testing.T) {
			c := templatestest.Card(t, ev.Approval, "pending")
			s := cardJSON(t, c)
			lines := append(append([]string{c.Effect}, c.Flags...), c.AskedBy)
			for _, l := range append(lines, c.Reasons...) {
				if l != "" && !strings.Contains(s, templatestest.JSONString(escape(l))) {
					t.Errorf("lacks %q", l)
				}
			}
		})
	}
}

// TestArgumentsCutNote: arguments cut (by the card, or by the backend)
// say so under the arguments.
func TestArgumentsCutNote(t *testing.T) {
	big := map[string]string{}
	for i := range 40 {
		big[fmt.Sprintf("k%02d", i)] = strings.Repeat("v", 150)
	}
	bigJSON, _ := json.Marshal(big)
	for name, mod := range map[string]func(*approval.Approval){
		"over 2 KB":         func(a *approval.Approval) { a.Call.Arguments = bigJSON },
		"backend cut":       func(a *approval.Approval) { a.Call.ArgumentsCut = true },
		"backend truncated": func(a *approval.Approval) { a.Call.Redaction.Truncated = true },
	} {
		a := templatestest.Synthetic()
		mod(a)
		c := templates.Build(templates.Input{Approval: a})
		const note = "[cut; Show all arguments shows all]"
		if c.Arguments.CutNote != note {
			t.Fatalf("%s: cut note %q", name, c.Arguments.CutNote)
		}
		if !strings.Contains(cardJSON(t, c), templatestest.JSONString(escape(note))) {
			t.Errorf("%s: lacks the cut note", name)
		}
	}
}

// TestRoles: the out-of-scope row, in its block, and every note.
func TestRoles(t *testing.T) {
	a := templatestest.WithRoles()
	c := templates.Build(templates.Input{Approval: a})
	s := cardJSON(t, c)
	const warned = "⚠ to        recipient  u3@example.invalid   something the job read, out of scope"
	if !strings.Contains(s, warned) {
		t.Errorf("lacks the out-of-scope row %q", warned)
	}
	if len(c.Roles.Notes) != 4 {
		t.Fatalf("notes %q", c.Roles.Notes)
	}
	for _, n := range c.Roles.Notes {
		if !strings.Contains(s, n) && !strings.Contains(s, escape(n)) {
			t.Errorf("lacks %q", n)
		}
	}
}

// TestShowsTheLines: lines the card's tests want on every surface, as
// Discord writes them (escaped outside a code block, as they are within
// one).
func TestShowsTheLines(t *testing.T) {
	shows := func(t *testing.T, c templates.Card, lines ...string) {
		t.Helper()
		s := cardJSON(t, c)
		for _, l := range lines {
			if !strings.Contains(s, templatestest.JSONString(escape(l))) && !strings.Contains(s, templatestest.JSONString(l)) {
				t.Errorf("lacks %q", l)
			}
		}
	}
	build := func(a *approval.Approval) templates.Card { return templates.Build(templates.Input{Approval: a}) }

	t.Run("attacker at 26 of 100", func(t *testing.T) {
		a := templatestest.Synthetic()
		vals := templatestest.Recipients(100)
		vals[25] = approval.RoleValue{Value: "x@evil.example", Origin: approval.OriginJobRead}
		a.Roles = []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: vals}}
		shows(t, build(a), "⚠ to        recipient  x@evil.example    something the job read, out of scope", "80 more values of to left out")
	})
	t.Run("the cut counts the values out of scope", func(t *testing.T) {
		a := templatestest.Synthetic()
		vals := templatestest.Recipients(100)
		for i := 50; i <= 70; i++ {
			vals[i].Origin = approval.OriginNowhere
		}
		for i := range 12 { // more notes than a card lists
			a.Roles = append(a.Roles, approval.Role{Argument: fmt.Sprintf("h%d", i), Role: approval.RoleHost,
				Values: []approval.RoleValue{{Value: "api.acme.example", Origin: approval.OriginRequest}}, LeftOut: 1})
		}
		a.Roles = append(a.Roles, approval.Role{Argument: "to", Role: approval.RoleRecipient, Values: vals, LeftOut: 5})
		shows(t, build(a), "80 more values of to left out (1 of them out of scope)")
	})
	t.Run("role rows redacted", func(t *testing.T) {
		a := templatestest.Synthetic()
		a.Roles = []approval.Role{
			{Argument: "smtp_password", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "hunter2hunter2", Origin: approval.OriginRequest}}},
			{Argument: "api_key", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "plain-looking", Origin: approval.OriginRequest}}},
			{Argument: "header", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "Bearer s3cr3tb34r3rv4lu3", Origin: approval.OriginRequest}}},
			{Argument: "host", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "https://deploy:p4ssw0rdinurl@ci.example", Origin: approval.OriginRequest}}},
		}
		shows(t, build(a), "smtp_password  host  [redacted]                     the request")
	})
	for name, tt := range templatestest.Warnings() {
		t.Run("warnings: "+name, func(t *testing.T) {
			a := templatestest.Synthetic()
			tt.Set(a)
			shows(t, build(a), tt.Want...)
		})
	}
	for _, restricted := range []bool{false, true} {
		t.Run(fmt.Sprintf("not given, restricted %v", restricted), func(t *testing.T) {
			a := templatestest.Synthetic()
			a.Level, a.Call.Snapshot = "", ""
			a.Content.Restricted = restricted
			shows(t, build(a), "agent bot · autonomy level not given", "snapshot not given")
		})
	}
}

// TestAgentSaysBox: the agent's text stays in its labelled quote box,
// every line of it, whatever it pretends to be.
func TestAgentSaysBox(t *testing.T) {
	a := templatestest.Synthetic()
	a.AgentSays = "All fine.\n*Approved by user:kevin*\r\nreads only\u2028:white_check_mark: done"
	c := templates.Build(templates.Input{Approval: a})
	desc := RenderCard(c).Embeds[0].Description
	i := strings.Index(desc, "**The agent says**\n")
	if i < 0 {
		t.Fatal("no agent box")
	}
	box, _, _ := strings.Cut(desc[i+len("**The agent says**\n"):], "\n\n")
	lines := strings.Split(box, "\n")
	if len(lines) != 4 {
		t.Fatalf("box lines %q", lines)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "> ") {
			t.Errorf("line %q escapes the quote", l)
		}
	}
}

// TestEscaping: text from the agent or the backend cannot form markup,
// links or mentions, and a card pings nobody.
func TestEscaping(t *testing.T) {
	a := templatestest.Synthetic()
	a.AgentSays = "<!channel> <@U0BOSS> @everyone @here [click](https://evil.invalid) **bold**"
	a.Job.Agent = "<https://evil.invalid|bot>"
	dm := RenderCard(templates.Build(templates.Input{Approval: a}))
	desc := dm.Embeds[0].Description
	for _, bad := range []string{"@everyone", "@here", "[click](", "**bold**", "<@U0BOSS>"} {
		// A backslash before markup shows it as text.
		for i := strings.Index(desc, bad); i >= 0; i = indexFrom(desc, bad, i+1) {
			if i == 0 || desc[i-1] != '\\' {
				t.Errorf("renders %q live", bad)
				break
			}
		}
	}
	if dm.AllowedMentions == nil || dm.AllowedMentions.Parse == nil || len(dm.AllowedMentions.Parse) != 0 {
		t.Errorf("a card may ping: %+v", dm.AllowedMentions)
	}
}

func indexFrom(s, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	if i := strings.Index(s[from:], sub); i >= 0 {
		return from + i
	}
	return -1
}

// TestEscalation: a reply's mentions ping exactly the Discord users and
// roles it names; every other target shows as @name, escaped.
func TestEscalation(t *testing.T) {
	m := templatestest.Escalation()
	d := RenderThread(m)
	if want := "@kevin @oncall <@112233> <@&445566> @<!channel> @@\u200beveryone: waiting 15m"; !strings.Contains(strings.ReplaceAll(d.Content, `\<`, "<"), strings.TrimSpace(want)) {
		t.Errorf("content %q", d.Content)
	}
	if diff := cmp.Diff([]string{"112233"}, d.AllowedMentions.Users); diff != "" {
		t.Errorf("users may ping (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"445566"}, d.AllowedMentions.Roles); diff != "" {
		t.Errorf("roles may ping (-want +got):\n%s", diff)
	}
	if d.AllowedMentions.Parse == nil || len(d.AllowedMentions.Parse) != 0 {
		t.Errorf("parse %v: @everyone could ping", d.AllowedMentions.Parse)
	}
}

// TestDeciding: a card whose decision is on its way offers only the
// buttons that decide nothing, its edit removing the rest, and says who
// decided what on top.
func TestDeciding(t *testing.T) {
	for _, tt := range templatestest.DecidingCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			c := templates.Build(tt.In)
			if c.Status != tt.Status || c.StatusDetail != tt.Detail || len(c.Buttons) != len(tt.Buttons) {
				t.Fatalf("status %q / %q, %d buttons", c.Status, c.StatusDetail, len(c.Buttons))
			}
			dm := RenderCard(c)
			if db := buttonsOf(dm); len(db) != len(tt.Buttons) {
				t.Errorf("%d buttons", len(db))
			}
			if len(tt.Buttons) == 0 {
				js, err := json.Marshal(dm.Edit())
				if err != nil {
					t.Fatal(err)
				}
				if dm.Components != nil || !strings.Contains(string(js), `"components":[]`) {
					t.Error("an edit to a deciding card keeps the buttons")
				}
			}
			if !strings.HasPrefix(timeless(dm.Content), "**"+want(tt.Status)+"**\n"+want(tt.Detail)) {
				t.Errorf("content %q", dm.Content)
			}
		})
	}
}

// timestampTokenRE is a timestamp not escaped by a backslash.
var timestampTokenRE = regexp.MustCompile(`(?:^|[^\\])<t:(-?[0-9]+):([a-zA-Z])>`)

// shownTime is a time a card shows in each reader's own zone.
type shownTime struct {
	Unix  int64
	Style string
}

// timestamps reads back every timestamp of s, in order.
func timestamps(t *testing.T, s string) []shownTime {
	t.Helper()
	var out []shownTime
	for _, m := range timestampTokenRE.FindAllStringSubmatch(s, -1) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, shownTime{Unix: n, Style: m[2]})
	}
	return out
}

// TestTimesInEachReadersZone: every time a card prints (the status, who
// is looking, what was escalated now, the quorum's approvals, the plan's
// steps and deadline) is a timestamp of the instant meant, with the
// date, in the order the card prints them; the tenant's text is not shown
// beside it, and a token a person wrote is shown as text, never as a time.
func TestTimesInEachReadersZone(t *testing.T) {
	for _, tt := range templatestest.ZoneCases() {
		t.Run(tt.Name, func(t *testing.T) {
			c := templates.Build(tt.In)
			dm := RenderCard(c)
			var want []shownTime
			for _, w := range tt.Times {
				want = append(want, shownTime{Unix: w.At.Unix(), Style: "f"})
				// The tenant's text is not shown beside the token, and
				// every other surface prints it: package templates'
				// test of the same name.
				if strings.Contains(dm.Content+dm.Embeds[0].Description, w.Text) {
					t.Errorf("shows %q as text", w.Text)
				}
			}
			got := append(timestamps(t, dm.Content), timestamps(t, dm.Embeds[0].Description)...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("timestamps (-want +got):\n%s", diff)
			}
			// A comment that looks like a token is text.
			if tt.Forged() {
				if !strings.Contains(c.Status+c.StatusDetail, "<t:0:f>") {
					t.Fatalf("the card does not show the comment: %q %q", c.Status, c.StatusDetail)
				}
				if !strings.Contains(dm.Content, `\<t:0:f> \<!date^0^{time}\|x>`) {
					t.Errorf("does not escape the comment: %q", dm.Content)
				}
			}
		})
	}
}

// TestTimestampCut: a cut never leaves a timestamp open.
func TestTimestampCut(t *testing.T) {
	for in, want := range map[string]string{
		"at <t:1795975":       "at ",
		"at <t:1795975380:t>": "at <t:1795975380:t>",
		`at \<t:17`:           `at \<t:17`,
	} {
		if got := trimCut(in); got != want {
			t.Errorf("trimCut(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestCutLeavesNoLoneBackslash: a cut after a backslash drops it, so it
// cannot escape the marker's newline.
func TestCutLeavesNoLoneBackslash(t *testing.T) {
	in := strings.Repeat(`a\*`, 60)
	max := 52 + len(cutMarker)
	got := utf16text.Fit(in, max, cutMarker, trimCut)
	if utf16text.Len(got) > max || !strings.HasSuffix(got, "\n"+cutMarker) {
		t.Fatalf("%q: %d chars, max %d", got, utf16text.Len(got), max)
	}
	body := strings.TrimSuffix(got, "\n"+cutMarker)
	if n := len(body) - len(strings.TrimRight(body, `\`)); n%2 == 1 {
		t.Errorf("lone backslash at the cut: %q", body)
	}
}
