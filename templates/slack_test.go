package templates

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/slack-go/slack"

	"approvalsbot/approval"
)

// slackShown is one text a Slack message shows, with the type of the
// object that holds it: "plain_text", "mrkdwn", "text" (a rich_text run),
// "link" (a rich_text link's label), "emoji" (an icon's name) or "date"
// (a time's fallback).
type slackShown struct {
	holder, text string
	verbatim     bool
}

// slackShownTexts walks the blocks as sent (marshalled to JSON) and lists
// every text in them.
func slackShownTexts(t *testing.T, m SlackMessage) []slackShown {
	t.Helper()
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var out []slackShown
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			typ, _ := x["type"].(string)
			if s, ok := x["text"].(string); ok {
				verbatim, _ := x["verbatim"].(bool)
				out = append(out, slackShown{holder: typ, text: s, verbatim: verbatim})
			}
			if typ == "emoji" {
				name, _ := x["name"].(string)
				out = append(out, slackShown{holder: typ, text: name})
			}
			if typ == "date" {
				fallback, _ := x["fallback"].(string)
				out = append(out, slackShown{holder: typ, text: fallback})
			}
			for _, y := range x {
				walk(y)
			}
		case []any:
			for _, y := range x {
				walk(y)
			}
		}
	}
	walk(v)
	return out
}

// slackOwnLink is all a mrkdwn object may hold: one link of the bot's own
// words to a checked URL.
var slackOwnLink = regexp.MustCompile(`^<https?://[^|<> ]+\|(job)>$`)

// hostileTexts are texts that Slack's mrkdwn would turn into formatting,
// links or mentions, or an entity it would decode.
var hostileTexts = []string{
	"*Approved by user:ada*", "_x_", "~x~", "`x`", "<!here>", "@here",
	"<https://evil.example|click>", "&lt;",
}

// TestSlackUntrustedTextIsLiteral: text from the agent, the arguments, the
// backend and people is shown exactly as it is, and only in literal text
// (plain_text, rich_text runs and boxes), in every state that shows it;
// no mrkdwn object holds any of it, and every mrkdwn object is verbatim
// and holds only the bot's own link.
func TestSlackUntrustedTextIsLiteral(t *testing.T) {
	r := newRenderer(t)
	for _, h := range hostileTexts {
		t.Run(h, func(t *testing.T) {
			a := synthetic()
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
			inputs := map[string]Input{
				"pending":  {Approval: a},
				"deciding": {Approval: a, Deciding: &Deciding{Actor: "user:x", Comment: "because " + h, At: at}},
				"denied":   {Approval: a, State: approval.StateDenied, Decision: &approval.Decision{Actor: "user:x", Comment: "no " + h, At: at}},
				"cancelled": {Approval: a, State: approval.StateCancelled,
					Decision: &approval.Decision{Comment: "ended " + h, At: at}},
				"refused": {Approval: a, State: approval.StateRefused,
					Decision: &approval.Decision{Actor: "user:x", Message: "refused " + h, At: at}},
			}
			for state, in := range inputs {
				m := r.Slack(Build(in))
				literal := 0
				for _, s := range slackShownTexts(t, m) {
					if s.holder == "mrkdwn" {
						if !s.verbatim {
							t.Errorf("%s: mrkdwn %q is not verbatim", state, s.text)
						}
						if !slackOwnLink.MatchString(s.text) {
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

// TestSlackThreadRepliesAreLiteral: a thread reply's text from the backend
// or a person is shown only as literal text; its notification text is
// escaped; an escalation's mentions stay mrkdwn, where they notify.
func TestSlackThreadRepliesAreLiteral(t *testing.T) {
	r := newRenderer(t)
	for _, h := range hostileTexts {
		for _, m := range []ThreadMessage{
			BackendMessage("a-1", "msg "+h),
			RecheckRefused(&approval.RecheckFailed{ApprovalID: "a-1", Message: "why " + h}),
			{Kind: ThreadCancelled, ApprovalID: "a-1", Text: "reason " + h},
			{Kind: ThreadOutcome, ApprovalID: "a-1", Text: "did " + h},
			{Kind: ThreadAutoGranted, Text: "fn " + h},
		} {
			msg := r.SlackThread(m)
			shown := false
			for _, s := range slackShownTexts(t, msg) {
				if s.holder == "mrkdwn" {
					t.Errorf("%s: a mrkdwn object %q", m.Kind, s.text)
				}
				if strings.Contains(s.text, h) {
					shown = shown || s.holder == "text"
					if s.holder != "text" {
						t.Errorf("%s: %q in a %s", m.Kind, h, s.holder)
					}
				}
			}
			if !shown {
				t.Errorf("%s: %q is not shown", m.Kind, h)
			}
			if strings.ContainsAny(msg.Text, "<>") {
				t.Errorf("%s: notification text %q is not escaped", m.Kind, msg.Text)
			}
		}
	}
	esc := r.SlackThread(Escalation("a-1", []Mention{{Target: "slack:U0KEVIN"}}, time.Minute))
	if len(esc.Blocks) != 0 || !strings.Contains(esc.Text, "<@U0KEVIN>") {
		t.Errorf("escalation %+v: want its mention in the text", esc)
	}
}

// TestSlackNoZeroWidthTricks: values people copy (arguments, the patch,
// paths, the agent's text) reach Slack exactly, backtick runs included,
// with no zero width space put in.
func TestSlackNoZeroWidthTricks(t *testing.T) {
	r := newRenderer(t)
	a := synthetic()
	a.Call.Arguments = []byte(`{"cmd":"echo ` + "```" + ` done"}`)
	a.AgentSays = "run ``` this"
	a.Kind = approval.KindChanges
	a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "a``b.go"}}, Patch: "+ ```go\n"}
	raw, err := json.Marshal(r.Slack(Build(Input{Approval: a})))
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

// checkSlackShape validates m field by field against Block Kit as
// slack-go types it: the blocks survive a round trip through
// slack.Blocks unchanged (no field slack-go does not know, none lost),
// every block, rich text element and text is one a card uses, with the
// fields Slack requires, and within its limit.
func checkSlackShape(t *testing.T, m SlackMessage) {
	t.Helper()
	raw, err := json.Marshal(m.Blocks)
	if err != nil {
		t.Fatal(err)
	}
	var typed slack.Blocks
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
	runText := func(where string, e slack.RichTextSectionElement) int {
		switch e := e.(type) {
		case *slack.RichTextSectionTextElement:
			if e.Type != slack.RTSEText || e.Text == "" {
				t.Errorf("%s: text element %+v", where, e)
			}
			if s := e.Style; s != nil && (s.Strike || s.Underline || s.Highlight || s.ClientHighlight || s.Unlink) {
				t.Errorf("%s: style %+v", where, s)
			}
			return charLen(e.Text)
		case *slack.RichTextSectionEmojiElement:
			if e.Name != "warning" && e.Name != "lock" {
				t.Errorf("%s: emoji %q", where, e.Name)
			}
			return charLen(e.Name) + 2
		case *slack.RichTextSectionLinkElement:
			if linkable(e.URL) == "" || e.Text == "" {
				t.Errorf("%s: link %+v", where, e)
			}
			return charLen(e.Text)
		case *slack.RichTextSectionDateElement:
			// Slack requires timestamp and format; a card gives the
			// fallback, in the tenant's zone, too.
			if e.Type != slack.RTSEDate || e.Timestamp <= 0 || e.Format != slackDateFormat ||
				e.Fallback == nil || *e.Fallback == "" || e.URL != nil || e.Timezone != "" {
				t.Errorf("%s: date %+v", where, e)
			}
			if s := e.Style; s != nil && (s.Strike || s.Underline || s.Highlight || s.ClientHighlight || s.Unlink || s.Code) {
				t.Errorf("%s: date style %+v", where, s)
			}
			if e.Fallback == nil {
				return 0
			}
			return max(charLen(*e.Fallback), charLen(e.Format))
		default:
			t.Errorf("%s: element %T", where, e)
		}
		return 0
	}
	for _, blk := range typed.BlockSet {
		switch blk := blk.(type) {
		case *slack.RichTextBlock:
			if blk.Type != slack.MBTRichText || len(blk.Elements) == 0 {
				t.Errorf("rich_text %+v", blk)
			}
			total := 0
			for _, el := range blk.Elements {
				var elems []slack.RichTextSectionElement
				switch el := el.(type) {
				case *slack.RichTextSection:
					if el.Type != slack.RTESection {
						t.Errorf("section type %q", el.Type)
					}
					elems = el.Elements
				case *slack.RichTextPreformatted:
					elems = el.Elements
				case *slack.RichTextQuote:
					elems = el.Elements
				default:
					t.Errorf("rich_text element %T", el)
				}
				if len(elems) == 0 {
					t.Errorf("%s with no elements", el.RichTextElementType())
				}
				for _, e := range elems {
					if _, ok := e.(*slack.RichTextSectionTextElement); !ok && el.RichTextElementType() != slack.RTESection {
						t.Errorf("%s holds %T", el.RichTextElementType(), e)
					}
					total += runText(string(el.RichTextElementType()), e)
				}
			}
			if total > slackRichTextMax {
				t.Errorf("rich_text holds %d chars", total)
			}
		case *slack.HeaderBlock:
			checkTextObject(t, "header", blk.Text, slackHeaderTextMax, slack.PlainTextType)
		case *slack.ContextBlock:
			if n := len(blk.ContextElements.Elements); n == 0 || n > slackContextElementsMax {
				t.Errorf("context has %d elements", n)
			}
			for _, e := range blk.ContextElements.Elements {
				o, ok := e.(*slack.TextBlockObject)
				if !ok {
					t.Errorf("context element %T", e)
					continue
				}
				checkTextObject(t, "context", o, slackTextObjectMax, "")
			}
		case *slack.ActionBlock:
			for _, e := range blk.Elements.ElementSet {
				btn, ok := e.(*slack.ButtonBlockElement)
				if !ok {
					t.Errorf("actions element %T", e)
					continue
				}
				checkTextObject(t, "button", btn.Text, slackButtonTextMax, slack.PlainTextType)
				if cf := btn.Confirm; cf != nil {
					checkTextObject(t, "confirm title", cf.Title, slackConfirmTitleMax, slack.PlainTextType)
					checkTextObject(t, "confirm text", cf.Text, slackConfirmTextMax, slack.PlainTextType)
					checkTextObject(t, "confirm button", cf.Confirm, slackConfirmButtonMax, slack.PlainTextType)
					checkTextObject(t, "confirm deny", cf.Deny, slackConfirmButtonMax, slack.PlainTextType)
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
func checkTextObject(t *testing.T, where string, o *slack.TextBlockObject, max int, want string) {
	t.Helper()
	if o == nil {
		t.Errorf("%s: no text", where)
		return
	}
	if err := o.Validate(); err != nil {
		t.Errorf("%s: %v", where, err)
	}
	if n := charLen(o.Text); n == 0 || n > max {
		t.Errorf("%s: text of %d chars (1–%d)", where, n, max)
	}
	switch {
	case want != "" && o.Type != want:
		t.Errorf("%s: %s text", where, o.Type)
	case o.Type == slack.PlainTextType && (o.Emoji == nil || *o.Emoji):
		t.Errorf("%s: plain_text turns :codes: into emoji", where)
	case o.Type == slack.MarkdownType && !o.Verbatim:
		t.Errorf("%s: mrkdwn is not verbatim", where)
	}
}

// TestSlackShape: every fixture in every state, the ~1 MiB approval and
// every thread reply have Block Kit's shape.
func TestSlackShape(t *testing.T) {
	r := newRenderer(t)
	for name, a := range map[string]*approval.Approval{
		"merge": loadApproval(t, "merge.json"), "protected": loadApproval(t, "protected.json"),
		"private": loadApproval(t, "private.json"), "refund": loadApproval(t, "refund.json"),
		"huge": huge(t, true),
	} {
		for _, state := range PreviewStates() {
			t.Run(name+"/"+state, func(t *testing.T) { checkSlackShape(t, r.Slack(cardIn(t, a, state))) })
		}
	}
	for _, m := range selfTestThreads() {
		checkSlackShape(t, r.SlackThread(m))
	}
}

// TestReadElems: only elements, and white space between them, are read.
func TestReadElems(t *testing.T) {
	for _, bad := range []string{`*x*`, `{"k":"text","t":"a"} and more`, `{"k":"section","t":"x"}`, `{"k":"text","x":1}`} {
		if got, err := readElems(bad); err == nil {
			t.Errorf("readElems(%q) = %+v", bad, got)
		}
	}
	got, err := readElems(" {\"k\":\"text\",\"t\":\"a\"}\n{\"k\":\"br\"} ")
	if err != nil || len(got) != 2 || got[0].Text != "a" || got[1].Kind != elemBreak {
		t.Errorf("readElems = %+v, %v", got, err)
	}
}
