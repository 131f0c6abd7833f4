package slack

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	slackgo "github.com/slack-go/slack"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// shown is one text a Slack message shows, with the type of the object
// that holds it: "plain_text", "mrkdwn", "text" (a rich_text run),
// "link" (a rich_text link's label), "emoji" (an icon's name) or "date"
// (a time's fallback).
type shown struct {
	holder, text string
	verbatim     bool
}

// shownTexts walks the blocks as sent (marshalled to JSON) and lists
// every text in them.
func shownTexts(t *testing.T, m Message) []shown {
	t.Helper()
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var out []shown
	EachObject(v, func(x map[string]any) {
		typ, _ := x["type"].(string)
		if s, ok := x["text"].(string); ok {
			verbatim, _ := x["verbatim"].(bool)
			out = append(out, shown{holder: typ, text: s, verbatim: verbatim})
		}
		if typ == "emoji" {
			name, _ := x["name"].(string)
			out = append(out, shown{holder: typ, text: name})
		}
		if typ == "date" {
			fallback, _ := x["fallback"].(string)
			out = append(out, shown{holder: typ, text: fallback})
		}
	})
	return out
}

// EachObject calls f with each object in v, decoded JSON, outer first
// (for package slack_test too).
func EachObject(v any, f func(map[string]any)) {
	switch x := v.(type) {
	case map[string]any:
		f(x)
		for _, y := range x {
			EachObject(y, f)
		}
	case []any:
		for _, y := range x {
			EachObject(y, f)
		}
	}
}

// ownLink is all a mrkdwn object may hold: one link of the bot's own
// words to a checked URL.
var ownLink = regexp.MustCompile(`^<https?://[^|<> ]+\|(job)>$`)

// hostileTexts are texts that Slack's mrkdwn would turn into formatting,
// links or mentions, or an entity it would decode.
var hostileTexts = []string{
	"*Approved by user:ada*", "_x_", "~x~", "`x`", "<!here>", "@here",
	"<https://evil.example|click>", "&lt;",
}

// TestCardTextIsLiteral: text from the agent, the arguments, the backend
// and people is shown exactly as it is, and only in literal text
// (plain_text, rich_text runs and boxes), in every state that shows it;
// no mrkdwn object holds any of it, and every mrkdwn object is verbatim
// and holds only the bot's own link.
func TestCardTextIsLiteral(t *testing.T) {
	for _, h := range hostileTexts {
		t.Run(h, func(t *testing.T) {
			a := templatestest.Synthetic()
			a.AgentSays = "before " + h + " after"
			a.Job.ID, a.Job.Agent, a.Job.StartedBy = "j-"+h, "bot "+h, "user:"+h
			a.Job.URL = "https://console.invalid/jobs/j-1"
			args, _ := json.Marshal(map[string]string{"note": h})
			a.Call.Arguments = args
			a.Kind = approval.KindChanges
			a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "dir/" + h + ".go"}}, Patch: "+ " + h + "\n"}
			a.Roles = []approval.Role{{Argument: "to" + h, Role: approval.RoleRecipient,
				Values: []approval.RoleValue{{Value: h + "@example.invalid", Origin: approval.OriginJobRead, OutOfScope: true}}}}
			a.Flags = approval.Flags{NewToJob: []approval.NewToJob{{Argument: "to" + h, Role: approval.RoleRecipient}}}
			at := a.RequestedAt.Add(time.Minute)
			inputs := map[string]templates.Input{
				"pending":  {Approval: a},
				"deciding": {Approval: a, Deciding: &templates.Deciding{Actor: "user:x", Comment: "because " + h, At: at}},
				"denied":   {Approval: a, State: approval.StateDenied, Decision: &approval.Decision{Actor: "user:x", Comment: "no " + h, At: at}},
				"cancelled": {Approval: a, State: approval.StateCancelled,
					Decision: &approval.Decision{Comment: "ended " + h, At: at}},
				"refused": {Approval: a, State: approval.StateRefused,
					Decision: &approval.Decision{Actor: "user:x", Message: "refused " + h, At: at}},
			}
			for state, in := range inputs {
				m := CardMessage(templates.Build(in))
				literal := 0
				for _, s := range shownTexts(t, m) {
					if s.holder == "mrkdwn" {
						if !s.verbatim {
							t.Errorf("%s: mrkdwn %q is not verbatim", state, s.text)
						}
						if !ownLink.MatchString(s.text) {
							t.Errorf("%s: mrkdwn %q holds more than the bot's own link", state, s.text)
						}
					}
					if !strings.Contains(s.text, h) {
						continue
					}
					switch s.holder {
					case "plain_text", "text":
						literal++
					default:
						t.Errorf("%s: %q shown in a %s object: %q", state, h, s.holder, s.text)
					}
				}
				// The agent's text, the job's fields, an argument, a file,
				// the patch, a role, a flag, and the state's own text.
				want := 7
				if state != "pending" {
					want++
				}
				if literal < want {
					t.Errorf("%s: %q shown literally %d times, want at least %d", state, h, literal, want)
				}
				if strings.ContainsAny(m.Text, "<>") {
					t.Errorf("%s: notification text %q is not escaped", state, m.Text)
				}
			}
		})
	}
}

// TestThreadRepliesAreLiteral: a thread reply's text from the backend or
// a person is shown only as literal text; its notification text is
// escaped; an escalation's mentions stay mrkdwn, where they notify.
func TestThreadRepliesAreLiteral(t *testing.T) {
	for _, h := range hostileTexts {
		for _, m := range []templates.ThreadMessage{
			templates.BackendMessage("a-1", "msg "+h),
			templates.RecheckRefused(&approval.RecheckFailed{ApprovalID: "a-1", Message: "why " + h}),
			{Kind: templates.ThreadCancelled, ApprovalID: "a-1", Text: "reason " + h},
			{Kind: templates.ThreadOutcome, ApprovalID: "a-1", Text: "did " + h},
			{Kind: templates.ThreadAutoGranted, Text: "fn " + h},
		} {
			msg := ThreadReply(m)
			seen := false
			for _, s := range shownTexts(t, msg) {
				if s.holder == "mrkdwn" {
					t.Errorf("%s: a mrkdwn object %q", m.Kind, s.text)
				}
				if strings.Contains(s.text, h) {
					seen = seen || s.holder == "text"
					if s.holder != "text" {
						t.Errorf("%s: %q in a %s", m.Kind, h, s.holder)
					}
				}
			}
			if !seen {
				t.Errorf("%s: %q is not shown", m.Kind, h)
			}
			if strings.ContainsAny(msg.Text, "<>") {
				t.Errorf("%s: notification text %q is not escaped", m.Kind, msg.Text)
			}
		}
	}
	esc := ThreadReply(templates.Escalation("a-1", []templates.Mention{{Target: "slack:U0KEVIN"}}, time.Minute))
	if len(esc.Blocks) != 0 || !strings.Contains(esc.Text, "<@U0KEVIN>") {
		t.Errorf("escalation %+v: want its mention in the text", esc)
	}
}

// TestEscalationMentions: an escalation mentions Slack users and groups
// by id, and everyone else as escaped @names that notify nobody.
func TestEscalationMentions(t *testing.T) {
	m := templatestest.Escalation()
	if got, want := ThreadReply(m).Text, "<@U0KEVIN> <!subteam^S0ONCALL> @kevin @oncall @&lt;!channel&gt; @@everyone: waiting 15m"; got != want {
		t.Errorf("slack %q, want %q", got, want)
	}
}

// TestNoZeroWidthTricks: values people copy (arguments, the patch,
// paths, the agent's text) reach Slack exactly, backtick runs included,
// with no zero width space put in.
func TestNoZeroWidthTricks(t *testing.T) {
	a := templatestest.Synthetic()
	a.Call.Arguments = []byte(`{"cmd":"echo ` + "```" + ` done"}`)
	a.AgentSays = "run ``` this"
	a.Kind = approval.KindChanges
	a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "a``b.go"}}, Patch: "+ ```go\n"}
	raw, err := json.Marshal(CardMessage(templates.Build(templates.Input{Approval: a})))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "\u200b") || strings.Contains(string(raw), `\u200b`) {
		t.Errorf("a zero width space in %s", raw)
	}
	for _, want := range []string{"echo ```", "run ``` this", "a``b.go", "+ ```go"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("%q is not shown exactly", want)
		}
	}
}

// checkShape validates m field by field against Block Kit as slack-go
// types it: the blocks survive a round trip through slack.Blocks
// unchanged (no field slack-go does not know, none lost), every block,
// rich text element and text is one a card uses, with the fields Slack
// requires, and within its limit.
// cardIcons are the emoji a card's parts write, and no other.
var cardIcons = map[string]bool{"warning": true, "lock": true, "repeat": true, "eyes": true, "rotating_light": true}

func checkShape(t *testing.T, m Message) {
	t.Helper()
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var typed slackgo.Blocks
	if err := json.Unmarshal(raw, &typed); err != nil {
		t.Fatalf("slack-go cannot read the blocks: %v", err)
	}
	again, err := json.Marshal(typed.BlockSet)
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	_ = json.Unmarshal(raw, &a)
	_ = json.Unmarshal(again, &b)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("blocks differ after a round trip through slack-go (-sent +read):\n%s", diff)
	}
	runText := func(where string, e slackgo.RichTextSectionElement) int {
		switch e := e.(type) {
		case *slackgo.RichTextSectionTextElement:
			if e.Type != slackgo.RTSEText || e.Text == "" {
				t.Errorf("%s: text element %+v", where, e)
			}
			if s := e.Style; s != nil && (s.Strike || s.Underline || s.Highlight || s.ClientHighlight || s.Unlink) {
				t.Errorf("%s: style %+v", where, s)
			}
			return utf16text.Len(e.Text)
		case *slackgo.RichTextSectionEmojiElement:
			if !cardIcons[e.Name] {
				t.Errorf("%s: emoji %q", where, e.Name)
			}
			return utf16text.Len(e.Name) + 2
		case *slackgo.RichTextSectionLinkElement:
			if templates.Linkable(e.URL) == "" || e.Text == "" {
				t.Errorf("%s: link %+v", where, e)
			}
			return utf16text.Len(e.Text)
		case *slackgo.RichTextSectionDateElement:
			// Slack requires timestamp and format; a card gives the
			// fallback, in the tenant's zone, too.
			if e.Type != slackgo.RTSEDate || e.Timestamp <= 0 || e.Format != dateFormat ||
				e.Fallback == nil || *e.Fallback == "" || e.URL != nil || e.Timezone != "" {
				t.Errorf("%s: date %+v", where, e)
			}
			if s := e.Style; s != nil && (s.Strike || s.Underline || s.Highlight || s.ClientHighlight || s.Unlink || s.Code) {
				t.Errorf("%s: date style %+v", where, s)
			}
			if e.Fallback == nil {
				return 0
			}
			return max(utf16text.Len(*e.Fallback), utf16text.Len(e.Format))
		default:
			t.Errorf("%s: element %T", where, e)
		}
		return 0
	}
	for _, blk := range typed.BlockSet {
		switch blk := blk.(type) {
		case *slackgo.RichTextBlock:
			if blk.Type != slackgo.MBTRichText || len(blk.Elements) == 0 {
				t.Errorf("rich_text %+v", blk)
			}
			total := 0
			for _, el := range blk.Elements {
				var elems []slackgo.RichTextSectionElement
				switch el := el.(type) {
				case *slackgo.RichTextSection:
					if el.Type != slackgo.RTESection {
						t.Errorf("section type %q", el.Type)
					}
					elems = el.Elements
				case *slackgo.RichTextPreformatted:
					elems = el.Elements
				case *slackgo.RichTextQuote:
					elems = el.Elements
				default:
					t.Errorf("rich_text element %T", el)
				}
				if len(elems) == 0 {
					t.Errorf("%s with no elements", el.RichTextElementType())
				}
				for _, e := range elems {
					if _, ok := e.(*slackgo.RichTextSectionTextElement); !ok && el.RichTextElementType() != slackgo.RTESection {
						t.Errorf("%s holds %T", el.RichTextElementType(), e)
					}
					total += runText(string(el.RichTextElementType()), e)
				}
			}
			if total > richTextMax {
				t.Errorf("rich_text holds %d chars", total)
			}
		case *slackgo.HeaderBlock:
			checkTextObject(t, "header", blk.Text, headerTextMax, slackgo.PlainTextType)
		case *slackgo.ContextBlock:
			if n := len(blk.ContextElements.Elements); n == 0 || n > contextElementsMax {
				t.Errorf("context has %d elements", n)
			}
			for _, e := range blk.ContextElements.Elements {
				o, ok := e.(*slackgo.TextBlockObject)
				if !ok {
					t.Errorf("context element %T", e)
					continue
				}
				checkTextObject(t, "context", o, textObjectMax, "")
			}
		case *slackgo.ActionBlock:
			for _, e := range blk.Elements.ElementSet {
				btn, ok := e.(*slackgo.ButtonBlockElement)
				if !ok {
					t.Errorf("actions element %T", e)
					continue
				}
				checkTextObject(t, "button", btn.Text, buttonTextMax, slackgo.PlainTextType)
				if cf := btn.Confirm; cf != nil {
					checkTextObject(t, "confirm title", cf.Title, confirmTitleMax, slackgo.PlainTextType)
					checkTextObject(t, "confirm text", cf.Text, confirmTextMax, slackgo.PlainTextType)
					checkTextObject(t, "confirm button", cf.Confirm, confirmButtonMax, slackgo.PlainTextType)
					checkTextObject(t, "confirm deny", cf.Deny, confirmButtonMax, slackgo.PlainTextType)
				}
			}
		default:
			t.Errorf("block %T", blk)
		}
	}
}

// checkTextObject: a text object of a type a card uses (want, or either
// when empty), 1 to max chars; plain_text shows emoji codes as typed, and
// mrkdwn is verbatim.
func checkTextObject(t *testing.T, where string, o *slackgo.TextBlockObject, max int, want string) {
	t.Helper()
	if o == nil {
		t.Errorf("%s: no text", where)
		return
	}
	if err := o.Validate(); err != nil {
		t.Errorf("%s: %v", where, err)
	}
	if n := utf16text.Len(o.Text); n == 0 || n > max {
		t.Errorf("%s: text of %d chars (1–%d)", where, n, max)
	}
	switch {
	case want != "" && o.Type != want:
		t.Errorf("%s: %s text", where, o.Type)
	case o.Type == slackgo.PlainTextType && (o.Emoji == nil || *o.Emoji):
		t.Errorf("%s: plain_text turns :codes: into emoji", where)
	case o.Type == slackgo.MarkdownType && !o.Verbatim:
		t.Errorf("%s: mrkdwn is not verbatim", where)
	}
}

// everyThread is a thread reply of every kind.
func everyThread() []templates.ThreadMessage {
	return []templates.ThreadMessage{
		{Kind: templates.ThreadBackendMessage, Text: "x"},
		{Kind: templates.ThreadRecheckRefused, Text: "x"},
		{Kind: templates.ThreadOutcome, Text: "x"},
		{Kind: templates.ThreadCancelled, Text: "x"},
		{Kind: templates.ThreadAutoGranted, Text: "x"},
		{Kind: templates.ThreadEscalation, Mentions: []templates.Mention{{Target: "slack:U1", Name: "a"}, {Target: "discord:role:1", Name: "b"}}, Waited: time.Minute},
		{Kind: templates.ThreadEscalation, Mentions: []templates.Mention{{Target: "slack:U1", Name: "a"}}, Waited: time.Minute, By: "user:a"},
	}
}

// TestShape: every fixture in every state its kind reaches (a question
// is answered, a call decided), the ~1 MiB approval and every thread
// reply have Block Kit's shape.
func TestShape(t *testing.T) {
	for name, a := range map[string]*approval.Approval{
		"merge": templatestest.Approval(t, "merge.json"), "protected": templatestest.Approval(t, "protected.json"),
		"private": templatestest.Approval(t, "private.json"), "refund": templatestest.Approval(t, "refund.json"),
		"huge": templatestest.Huge(t, true), "question": templatestest.Approval(t, "question.json"),
		"question-private": templatestest.Approval(t, "question-private.json"),
	} {
		for _, state := range templates.PreviewStatesOf(a) {
			t.Run(name+"/"+state, func(t *testing.T) { checkShape(t, CardMessage(templatestest.Card(t, a, state))) })
		}
	}
	for _, m := range everyThread() {
		checkShape(t, ThreadReply(m))
	}
}

// TestEveryPartIsWritten: each part of a card has its writer here.
func TestEveryPartIsWritten(t *testing.T) {
	for _, name := range templates.CardParts() {
		if partWriters[name] == nil {
			t.Errorf("no writer for %s", name)
		}
	}
	if len(partWriters) != len(templates.CardParts()) {
		t.Errorf("%d writers for %d parts", len(partWriters), len(templates.CardParts()))
	}
}

// TestZeroCard: a card with nothing in it renders without panicking.
func TestZeroCard(t *testing.T) {
	for _, c := range []templates.Card{{}, templates.Build(templates.Input{})} {
		_ = CardMessage(c)
	}
}

// TestMsgOptions: the options carry the blocks and the fallback text as
// rendered (already escaped, so slack-go must not escape again).
func TestMsgOptions(t *testing.T) {
	m := CardMessage(templatestest.Card(t, templatestest.Approval(t, "merge.json"), "pending"))
	_, form, err := slackgo.UnsafeApplyMsgOptions("xoxb-test", "C1", "https://slack.invalid/api/", m.MsgOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	if form.Get("text") != m.Text || form.Get("unfurl_links") != "false" || form.Get("unfurl_media") != "false" {
		t.Errorf("form %v", form)
	}
	if n := len(m.MsgOptions()); n != 4 {
		t.Errorf("%d options, want text, two unfurl settings and blocks", n)
	}
}

// TestContextDate: a date in a context block is mrkdwn holding only its
// token, verbatim, the fallback escaped and the token itself not.
func TestContextDate(t *testing.T) {
	at := time.Date(2030, 1, 2, 9, 3, 0, 0, time.UTC)
	var e elems
	e.text("sent ")
	e.timed("09:03 <UTC>", nil, []templates.Stamp{{Text: "09:03 <UTC>", At: at}})
	e.text(" by a&b")
	els := contextBlock(e).ContextElements.Elements
	if len(els) != 3 {
		t.Fatalf("%d elements: %+v", len(els), els)
	}
	o, ok := els[1].(*slackgo.TextBlockObject)
	want := "<!date^" + strconv.FormatInt(at.Unix(), 10) + "^{date_short_pretty} {time}|09:03 &lt;UTC&gt;>"
	if !ok || o.Type != slackgo.MarkdownType || !o.Verbatim || o.Text != want {
		t.Errorf("date %+v, want verbatim mrkdwn %q", els[1], want)
	}
	for _, i := range []int{0, 2} {
		if o, ok := els[i].(*slackgo.TextBlockObject); !ok || o.Type != slackgo.PlainTextType {
			t.Errorf("element %d %+v, want plain_text", i, els[i])
		}
	}
}

// TestCutText: a cut keeps within max, ends with the marker, closes a
// code block it left open and never ends inside an entity.
func TestCutText(t *testing.T) {
	code := "intro\n```\n" + strings.Repeat("line of code\n", 50) + "```"
	tests := []struct {
		name, in string
		max      int
		check    func(t *testing.T, got string)
	}{
		{"fits", "short", 10, func(t *testing.T, got string) {
			if got != "short" {
				t.Errorf("%q", got)
			}
		}},
		{"closes a fence", code, 120, func(t *testing.T, got string) {
			if strings.Count(got, "```")%2 != 0 {
				t.Errorf("fence left open:\n%s", got)
			}
		}},
		{"entity", strings.Repeat("a", 90) + strings.Repeat("&amp;", 40), 97 + len(cutMarker), func(t *testing.T, got string) { // the cut falls inside &amp;
			body := strings.TrimSuffix(got, "\n"+cutMarker)
			if i := strings.LastIndexByte(body, '&'); i >= 0 && !strings.Contains(body[i:], ";") {
				t.Errorf("cut entity: %q", body)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := utf16text.Fit(tt.in, tt.max, cutMarker, trimMrkdwn)
			if utf16text.Len(got) > tt.max {
				t.Errorf("%d chars, max %d", utf16text.Len(got), tt.max)
			}
			if got != tt.in && !strings.HasSuffix(got, "\n"+cutMarker) {
				t.Errorf("cut without the marker: %q", got)
			}
			tt.check(t, got)
		})
	}
}

// TestLinkIsEscaped: a link the adapter lays out is escaped as the
// card's are.
func TestLinkIsEscaped(t *testing.T) {
	b, err := json.Marshal(richText(linkElem("https://chat.example/t/\u200bx", "thread")))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "https://chat.example/t/%E2%80%8Bx") || strings.Contains(string(b), "\u200b") {
		t.Errorf("linkElem wrote %s", b)
	}
}

// TestActionsFitButtons: the longest action a card encodes fits a
// button's action_id and value.
func TestActionsFitButtons(t *testing.T) {
	longID := strings.Repeat("a", 62) + ".:"
	for _, k := range templates.ActionKinds() {
		for _, a := range []templates.Action{
			{Kind: k, ApprovalID: longID, Revision: 999999999999999999},
			{Kind: k, ApprovalID: longID, Revision: 999999999999999999, Escalations: templates.MaxEscalations},
		} {
			if s := templates.EncodeAction(a); len(s) > actionIDMax || len(s) > buttonValueMax {
				t.Errorf("%q is %d bytes, over Slack's limit", s, len(s))
			}
		}
	}
}

// BenchmarkCardMessage builds and renders one card per iteration:
// go test ./adapters/slack -run '^$' -bench CardMessage -benchmem -cpu 1.
func BenchmarkCardMessage(b *testing.B) {
	for _, name := range []string{"merge.json", "big.json", "question.json"} {
		in := templatestest.Input(b, templatestest.Approval(b, name), "pending")
		b.Run(strings.TrimSuffix(name, ".json"), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = CardMessage(templates.Build(in))
			}
		})
	}
}
