package templates_test

import (
	"encoding/json"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"
	"unicode"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// hiddenClasses holds a character of each class a reader cannot see:
// bidi controls, zero width characters, Hangul fillers, tag characters,
// the rest of the default ignorables (variation selectors among them),
// other format controls, private use, noncharacters and controls.
var hiddenClasses = []rune{
	0x202e, 0x2067, 0x200e, 0x061c, // bidi
	0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, // zero width
	0x115f, 0x1160, 0x3164, 0xffa0, // Hangul fillers
	0xe0001, 0xe0041, 0xe007f, // tags
	0x00ad, 0x034f, 0x17b4, 0x180e, 0x2064, 0x206a, 0xfe0f, 0xe0100, 0x1d173, 0xfff0, // default ignorable
	0x0600, 0xfff9, // other format controls
	0xe000, 0xf8ff, 0x10fffd, // private use
	0xfdd0, 0xffff, // noncharacters
	0x1b, 0x85, // controls
}

// hostileApproval is a call whose every field a card prints holds h.
func hostileApproval(t *testing.T, h string) *approval.Approval {
	t.Helper()
	a := *templatestest.Approval(t, "mail.json")
	w := func(s string) string { return s[:len(s)/2] + h + s[len(s)/2:] }
	a.Call.Function = w("acme_github.merge")
	a.Job.ID = w("j-42")
	a.Job.Agent = w("release-bot")
	a.Job.StartedBy = w("user:ada")
	a.Level = w("L2")
	a.AgentSays = w("Sending the summary to the address the ticket gave.") + "\n" + w("second line")
	a.Turn.Waiting = []string{w("mail.send"), w("files.delete")}
	a.Confirm = &approval.Confirm{Argument: w("to")}
	args, err := json.Marshal(map[string]any{w("to"): []string{w("ops@acme.example"), w("x@evil.example")},
		"subject": w("Weekly summary"), w("body"): w("See attached.")})
	if err != nil {
		t.Fatal(err)
	}
	a.Call.Arguments = args
	a.Roles = []approval.Role{{Argument: w("to"), Role: approval.RoleRecipient, Values: []approval.RoleValue{
		{Value: w("ops@acme.example"), Origin: approval.OriginTenantRecord},
		{Value: w("x@evil.example"), Origin: approval.OriginJobRead, OutOfScope: true}}}}
	a.Flags.NotTraced = []approval.NotTraced{{Argument: w("to"), Role: approval.RoleRecipient,
		Origin: approval.OriginJobRead, Floor: approval.OriginTenantRecord}}
	a.Flags.NewToJob = []approval.NewToJob{{Argument: w("to"), Role: approval.RoleRecipient}}
	a.AskedBy = approval.AskedBy{Reason: approval.ReasonTaint, Taint: []approval.Taint{{Source: w("web"), Function: w("web.fetch"), Call: 3}}}
	a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: w("src/retry.go")}, {Path: w("src/retry_test.go"), Protected: true}},
		Patch: "--- a/src/retry.go\n+++ b/src/retry.go\n@@ -10,3 +10,4 @@\n-\t" + w("max := 3") + "\n+\t" + w("max := 5") + "\n"}
	return &a
}

// unshown returns the hidden characters of text that no [U+XXXX] (or, in
// JSON arguments, no \u escape) shows: none may reach a reader, but for
// a presentation selector right after a symbol (the templates' own "⚠️",
// and the one free text keeps).
func unshown(text string) []string {
	var out []string
	prev := rune(-1)
	for _, r := range text {
		kept := (r == 0xfe0f || r == 0xfe0e) && unicode.Is(unicode.So, prev)
		if r != '\n' && r != '\t' && approval.Invisible(r) && !kept {
			out = append(out, fmt.Sprintf("U+%04X", r))
		}
		prev = r
	}
	return out
}

// jsonStrings is every string in a rendered message's JSON, decoded.
func jsonStrings(t *testing.T, raw string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(raw), &v); err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	var b strings.Builder
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			b.WriteString(x + "\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + "\n")
				walk(e)
			}
		}
	}
	walk(v)
	return b.String()
}

// TestHiddenCharactersShownEverywhere: a call whose function name, job,
// agent, level, argument keys and values, role values, flags, reasons,
// agent text, turn, file paths and patch each hold a hidden character
// reaches no surface with it unshown (Slack, Discord, mail subject, text
// and HTML, the decision page's card, plain text, the Show details
// card, thread replies), and each surface shows it as [U+XXXX].
func TestHiddenCharactersShownEverywhere(t *testing.T) {
	r := newRenderer(t)
	for _, h := range hiddenClasses {
		a := hostileApproval(t, string(h))
		mark := fmt.Sprintf("[U+%04X]", h)
		check := func(what, text string) {
			t.Helper()
			if bad := unshown(text); len(bad) > 0 {
				t.Errorf("U+%04X: %s lets %v through unshown", h, what, bad)
			}
		}
		for _, state := range []string{"pending", "approved", "denied", templates.PreviewSuperseded} {
			c := templatestest.Card(t, a, state)
			x := renderAll(t, r, c)
			x.slack, x.discord = jsonStrings(t, x.slack), jsonStrings(t, x.discord)
			x.emailHTML = html.UnescapeString(x.emailHTML)
			x.each(func(surface, text string) {
				check(state+" "+surface, text)
				if !strings.Contains(text, mark) {
					t.Errorf("U+%04X: %s %s does not show %s", h, state, surface, mark)
				}
				if state != "pending" || strings.Contains(surface, "subject") {
					return
				}
				// Each field shows its own mark where the character was:
				// one field's mark never stands in for another's.
				plain := strings.ReplaceAll(text, `\`, "") // Discord's markdown escapes
				for _, field := range []string{"x@evil.example", "ops@acme.example", "src/retry_test.go", "second line"} {
					if want := field[:len(field)/2] + mark + field[len(field)/2:]; !strings.Contains(plain, want) {
						t.Errorf("U+%04X: %s %s does not show %q", h, state, surface, want)
					}
				}
			})
			check(state+" page", html.UnescapeString(string(r.CardHTML(c))))
			check(state+" headline", c.Headline)
		}
		// Show details: a restricted call's card, revealed to one person.
		b := *a
		b.Content.Restricted = true
		c := templates.Build(templates.Input{Approval: &b, State: approval.StatePending, RevealContent: true})
		x := renderAll(t, r, c)
		x.slack, x.discord = jsonStrings(t, x.slack), jsonStrings(t, x.discord)
		x.each(func(surface, text string) { check("details "+surface, text) })

		text := "The call to " + string(h) + "acme_github.merge was not made:" + string(h) + " user:kevin denied it"
		for _, m := range []templates.ThreadMessage{
			templates.BackendMessage(a.ID, text),
			templates.RecheckRefused(&approval.RecheckFailed{ApprovalID: a.ID, Message: text}),
			templates.Outcome(&approval.Finished{ApprovalID: a.ID, Outcome: approval.OutcomeCompleted, Summary: text}),
			{Kind: templates.ThreadCancelled, ApprovalID: a.ID, Text: text},
			{Kind: templates.ThreadEscalation, ApprovalID: a.ID, Waited: time.Hour, By: "user:" + string(h) + "ada",
				Mentions: []templates.Mention{{Target: "email:x", Name: "ke" + string(h) + "vin"}}},
		} {
			sj, _ := chats.SlackThread(m)
			dj, err := templates.MarshalPreview(chats.DiscordThread(m))
			if err != nil {
				t.Fatal(err)
			}
			check("slack thread "+string(m.Kind), jsonStrings(t, sj))
			check("discord thread "+string(m.Kind), jsonStrings(t, string(dj)))
			check("text thread "+string(m.Kind), r.TextThread(m))
		}
		check("mail subject", templates.MailSubject(a.Call.Function, a.ID))
	}
}

// TestHiddenInArguments: a hidden character in an argument shows as a
// JSON escape, one escape pair past U+FFFF, so the text stays valid JSON
// that decodes to the call's own string.
func TestHiddenInArguments(t *testing.T) {
	for _, h := range hiddenClasses {
		if h < 0x80 {
			continue // the JSON encoder escapes ASCII controls itself
		}
		in := `{"k` + string(h) + `": "a` + string(h) + `b"}`
		got := templates.VisibleJSON(in)
		if bad := unshown(got); len(bad) > 0 {
			t.Errorf("visibleJSON(%+q) = %q", in, got)
		}
		var back map[string]string
		if err := json.Unmarshal([]byte(got), &back); err != nil || back["k"+string(h)] != "a"+string(h)+"b" {
			t.Errorf("visibleJSON(%+q) = %q: decodes to %q (%v)", in, got, back, err)
		}
	}
}

// TestPresentationSelector: a single emoji presentation selector after a
// symbol stays in free text, as "⚠️" is written; anywhere else, or in a
// run, or in an identifier, it is shown.
func TestPresentationSelector(t *testing.T) {
	for in, want := range map[string]string{
		"⚠\ufe0f careful":   "⚠\ufe0f careful",
		"✔\ufe0e done":      "✔\ufe0e done",
		"❤\ufe0f\ufe0f":     "❤\ufe0f[U+FE0F]",
		"a\ufe0f":           "a[U+FE0F]",
		"\ufe0f":            "[U+FE0F]",
		"⚠\ufe01":           "⚠[U+FE01]",
		"😀\U000E0100":       "😀[U+E0100]",
		"😀\U000E0041\ufe0f": "😀[U+E0041][U+FE0F]",
	} {
		if got := templates.Visible(in); got != want {
			t.Errorf("cleanText(%+q) = %+q, want %+q", in, got, want)
		}
	}
	if got := templates.VisibleLine("acme⚠\ufe0f.merge"); got != "acme⚠[U+FE0F].merge" {
		t.Errorf("oneLine = %+q", got)
	}
	// A role value is cleaned as text first, then as a line: shown.
	if got := templates.VisibleLine(templates.Visible("⚠\ufe0f@acme.example")); got != "⚠[U+FE0F]@acme.example" {
		t.Errorf("oneLine(cleanText) = %+q", got)
	}
}

// BenchmarkCleanText: the cost per byte of showing hidden characters, to
// compare across sizes, on text of nothing else and on Japanese prose.
func BenchmarkCleanText(b *testing.B) {
	for _, unit := range []string{"\u200b", "\U000E0041", "東京の天気を調べる。"} {
		for _, size := range []int{1 << 10, 1 << 20} {
			s := strings.Repeat(unit, size/len(unit))
			b.Run(fmt.Sprintf("%+q/%d", unit, size), func(b *testing.B) {
				b.SetBytes(int64(len(s)))
				for b.Loop() {
					templates.Visible(s)
				}
			})
		}
	}
}
