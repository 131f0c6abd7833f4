package slack

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	slackgo "github.com/slack-go/slack"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// What a card shows on Slack: package templates proves the card says it
// on every surface; these prove the Block Kit shows it.

// statusOf is the first line of the first block when it is bold literal
// text, as the status is: text, and times as their fallback.
func statusOf(m Message) string {
	if len(m.Blocks) == 0 {
		return ""
	}
	rt, ok := m.Blocks[0].(*slackgo.RichTextBlock)
	if !ok || len(rt.Elements) == 0 {
		return ""
	}
	sec, ok := rt.Elements[0].(*slackgo.RichTextSection)
	if !ok || len(sec.Elements) == 0 {
		return ""
	}
	var b strings.Builder
	for _, e := range sec.Elements {
		switch e := e.(type) {
		case *slackgo.RichTextSectionTextElement:
			if e.Style == nil || !e.Style.Bold {
				return b.String()
			}
			b.WriteString(e.Text)
		case *slackgo.RichTextSectionDateElement:
			if e.Style == nil || !e.Style.Bold || e.Fallback == nil {
				return b.String()
			}
			b.WriteString(*e.Fallback)
		default:
			return b.String()
		}
	}
	return b.String()
}

// linesOf is the text of each rich_text section of m, each time as its
// fallback (what the card's own line says), a link as its label and an
// icon as :name:.
func linesOf(m Message) []string {
	var out []string
	for _, sec := range sections(m) {
		var b strings.Builder
		for _, e := range sec.Elements {
			switch e := e.(type) {
			case *slackgo.RichTextSectionTextElement:
				b.WriteString(e.Text)
			case *slackgo.RichTextSectionDateElement:
				if e.Fallback != nil {
					b.WriteString(*e.Fallback)
				}
			case *slackgo.RichTextSectionLinkElement:
				b.WriteString(e.Text)
			case *slackgo.RichTextSectionEmojiElement:
				b.WriteString(":" + e.Name + ":")
			}
		}
		out = append(out, b.String())
	}
	return out
}

// sections are m's rich_text sections, in order.
func sections(m Message) []*slackgo.RichTextSection {
	var out []*slackgo.RichTextSection
	for _, blk := range m.Blocks {
		if rt, ok := blk.(*slackgo.RichTextBlock); ok {
			for _, el := range rt.Elements {
				if sec, ok := el.(*slackgo.RichTextSection); ok {
					out = append(out, sec)
				}
			}
		}
	}
	return out
}

func hasActions(m Message) bool {
	for _, b := range m.Blocks {
		if _, ok := b.(*slackgo.ActionBlock); ok {
			return true
		}
	}
	return false
}

func buttonsOf(m Message) []*slackgo.ButtonBlockElement {
	var out []*slackgo.ButtonBlockElement
	for _, b := range m.Blocks {
		if a, ok := b.(*slackgo.ActionBlock); ok {
			for _, e := range a.Elements.ElementSet {
				if btn, ok := e.(*slackgo.ButtonBlockElement); ok {
					out = append(out, btn)
				}
			}
		}
	}
	return out
}

// TestStatusLine: every state has its line on top, and only a waiting
// card has buttons. Decisions come from the fixture events that close
// these approvals.
func TestStatusLine(t *testing.T) {
	for _, tt := range templatestest.StatusCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			m := CardMessage(templates.Build(tt.In))
			if got := statusOf(m); got != tt.Status {
				t.Errorf("the first block's bold line is %q, want the status %q", got, tt.Status)
			}
			if hasActions(m) != tt.Waiting {
				t.Errorf("actions block present = %v, want %v", !tt.Waiting, tt.Waiting)
			}
		})
	}
}

// TestButtons: the card's buttons in its order, each with the card's
// payload as action_id and value, Deny danger and Approve primary, and
// a confirm dialog on Approve of a destructive call.
func TestButtons(t *testing.T) {
	for _, tt := range templatestest.ButtonCases() {
		t.Run(tt.Fixture, func(t *testing.T) {
			c := templatestest.Card(t, templatestest.Approval(t, tt.Fixture), "pending")
			sb := buttonsOf(CardMessage(c))
			if len(sb) != len(tt.Labels) {
				t.Fatalf("%d buttons, want %d", len(sb), len(tt.Labels))
			}
			for i, label := range tt.Labels {
				if sb[i].Text.Text != label {
					t.Errorf("button %d: %q, want %q", i, sb[i].Text.Text, label)
				}
				if sb[i].ActionID != c.Buttons[i].Payload || sb[i].Value != c.Buttons[i].Payload {
					t.Errorf("button %d: payloads differ from the card's", i)
				}
				var want slackgo.Style
				switch label {
				case "Deny":
					want = slackgo.StyleDanger
				case "Approve":
					want = slackgo.StylePrimary
					if (sb[i].Confirm != nil) != tt.Confirm {
						t.Errorf("approve confirm dialog = %v, want %v", sb[i].Confirm != nil, tt.Confirm)
					}
				}
				if sb[i].Style != want {
					t.Errorf("%s: style %q", label, sb[i].Style)
				}
			}
		})
	}
}

// TestAgentSaysBox: a bold label, then one quote box holding all of the
// agent's text, whatever it pretends to be.
func TestAgentSaysBox(t *testing.T) {
	a := templatestest.Synthetic()
	a.AgentSays = "All fine.\n*Approved by user:kevin*\r\nreads only\u2028:white_check_mark: done"
	c := templates.Build(templates.Input{Approval: a})
	var quoted []string
	for _, b := range CardMessage(c).Blocks {
		rt, ok := b.(*slackgo.RichTextBlock)
		if !ok || len(rt.Elements) != 2 {
			continue
		}
		label, ok := rt.Elements[0].(*slackgo.RichTextSection)
		if !ok || len(label.Elements) != 1 {
			continue
		}
		if l, ok := label.Elements[0].(*slackgo.RichTextSectionTextElement); !ok || l.Text != "The agent says" || l.Style == nil || !l.Style.Bold {
			continue
		}
		q, ok := rt.Elements[1].(*slackgo.RichTextQuote)
		if !ok {
			t.Fatalf("the agent's text is in a %T", rt.Elements[1])
		}
		for _, e := range q.Elements {
			quoted = append(quoted, e.(*slackgo.RichTextSectionTextElement).Text)
		}
	}
	if diff := cmp.Diff([]string{c.AgentSays}, quoted); diff != "" {
		t.Errorf("the quote box (-want +got):\n%s", diff)
	}
}

// TestEscaping: text from the agent or the backend that would be markup,
// a link or a mention in mrkdwn is only ever literal text.
func TestEscaping(t *testing.T) {
	a := templatestest.Synthetic()
	a.AgentSays = "<!channel> <@U0BOSS> @everyone @here [click](https://evil.invalid) **bold**"
	a.Job.Agent = "<https://evil.invalid|bot>"
	for _, s := range shownTexts(t, CardMessage(templates.Build(templates.Input{Approval: a}))) {
		for _, bad := range []string{"<!channel>", "<@U0BOSS>", "<https://evil.invalid|bot>"} {
			if strings.Contains(s.text, bad) && s.holder != "text" && s.holder != "plain_text" {
				t.Errorf("shows %q in a %s object", bad, s.holder)
			}
		}
	}
}

// checkLimits: every Slack limit holds on m, the card's shape is Block
// Kit's, and the status (on top), the effect line, the flags and every
// button are there.
func checkLimits(t *testing.T, c templates.Card, m Message) {
	t.Helper()
	if n := len(m.Blocks); n > maxBlocks {
		t.Errorf("%d blocks", n)
	}
	if utf16text.Len(m.Text) > messageTextMax {
		t.Errorf("text %d chars", utf16text.Len(m.Text))
	}
	checkShape(t, m)
	var all []string
	total := 0
	for _, s := range shownTexts(t, m) {
		all = append(all, s.text)
		total += utf16text.Len(s.text)
	}
	if total > blocksTextMax {
		t.Errorf("the blocks hold %d chars in all", total)
	}
	joined := strings.Join(append(all, linesOf(m)...), "\n")
	for _, want := range templatestest.Essentials(c) {
		if !strings.Contains(joined, want) {
			t.Errorf("lacks %q", want)
		}
	}
	if statusOf(m) != c.Status {
		t.Error("the status is not on top")
	}
	if n := len(buttonsOf(m)); n != len(c.Buttons) {
		t.Errorf("%d buttons, the card has %d", n, len(c.Buttons))
	}
}

// TestLimits: every Slack limit holds for the fixtures and a ~1 MiB
// approval, in every state, with the essentials all there.
func TestLimits(t *testing.T) {
	for _, tt := range templatestest.LimitCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			checkLimits(t, tt.Card, CardMessage(tt.Card))
		})
	}
}

// TestHugeCutsVisibly: what a card leaves out, it says it left out.
func TestHugeCutsVisibly(t *testing.T) {
	c := templatestest.Card(t, templatestest.Huge(t, false), "pending")
	sj, err := templates.MarshalPreview(CardMessage(c))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(sj), "left out to fit Slack") || !strings.Contains(string(sj), cutNote) {
		t.Error("the card was cut without saying so")
	}
}

// TestLongLadderKeepsTheEssentials: a 30-step ladder, each step telling
// dozens of people, never pushes the status, the effect line, the flags
// or the buttons out.
func TestLongLadderKeepsTheEssentials(t *testing.T) {
	for _, tt := range templatestest.LongLadderCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			m := CardMessage(tt.Card)
			checkLimits(t, tt.Card, m)
			if want := len(tt.Short.Buttons); len(buttonsOf(m)) != want {
				t.Errorf("%d buttons, want %d as under a short ladder", len(buttonsOf(m)), want)
			}
		})
	}
}

// TestDeciding: a card whose decision is on its way shows who decided
// what on top, with its detail on the next line, and only the buttons
// that stay (Show all arguments, Show details).
func TestDeciding(t *testing.T) {
	for _, tt := range templatestest.DecidingCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			m := CardMessage(templates.Build(tt.In))
			if sb := buttonsOf(m); len(sb) != len(tt.Buttons) {
				t.Errorf("%d buttons, want %d", len(sb), len(tt.Buttons))
			}
			if lines := linesOf(m); statusOf(m) != tt.Status || len(lines) == 0 || !strings.Contains(lines[0], "\n"+tt.Detail) {
				t.Errorf("lacks the status: %q", lines)
			}
		})
	}
}

// shownTime is a time a card shows in each reader's own zone: the
// instant, the card's own text of it and Slack's format.
type shownTime struct {
	Unix     int64
	Fallback string
	Format   string
}

// datesOf reads back every date element of m, in order.
func datesOf(m Message) []shownTime {
	var out []shownTime
	for _, sec := range sections(m) {
		for _, e := range sec.Elements {
			if d, ok := e.(*slackgo.RichTextSectionDateElement); ok {
				fb := ""
				if d.Fallback != nil {
					fb = *d.Fallback
				}
				out = append(out, shownTime{Unix: int64(d.Timestamp), Fallback: fb, Format: d.Format})
			}
		}
	}
	return out
}

// TestTimesInEachReadersZone: every time a card prints (the status, who
// is looking, what was escalated now, the quorum's approvals, the plan's
// steps and deadline) is a date element for the instant meant, its
// fallback the card's own text in the tenant's zone, with the reader's
// day; the text around each reads as the card's line. A token a person
// wrote is shown as text, never as a time.
func TestTimesInEachReadersZone(t *testing.T) {
	for _, tt := range templatestest.ZoneCases() {
		t.Run(tt.Name, func(t *testing.T) {
			c := templates.Build(tt.In)
			m := CardMessage(c)
			var want []shownTime
			for _, w := range tt.Times {
				want = append(want, shownTime{Unix: w.At.Unix(), Fallback: w.Text, Format: "{date_short_pretty} {time}"})
			}
			if diff := cmp.Diff(want, datesOf(m)); diff != "" {
				t.Errorf("dates (-want +got):\n%s", diff)
			}
			// With each date as its fallback, Slack reads as the card.
			if statusOf(m) != c.Status {
				t.Errorf("status %q, want %q", statusOf(m), c.Status)
			}
			joined := strings.Join(linesOf(m), "\n")
			for _, l := range append([]string{c.StatusDetail, c.Looking, c.Quorum, c.Ladder}, c.Escalated...) {
				if !strings.Contains(joined, l) {
					t.Errorf("lacks %q", l)
				}
			}
			// A comment that looks like a token is text.
			if tt.Forged() {
				raw, _ := json.Marshal(m.Blocks)
				if !strings.Contains(string(raw), `\u003ct:0:f\u003e \u003c!date^0^{time}|x\u003e`) {
					t.Errorf("does not show the comment as text: %s", raw)
				}
			}
		})
	}
}
