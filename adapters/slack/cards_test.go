package slack

import (
	"encoding/json"
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
	for _, blk := range m.Blocks {
		rt, ok := blk.(*slackgo.RichTextBlock)
		if !ok {
			continue
		}
		for _, el := range rt.Elements {
			sec, ok := el.(*slackgo.RichTextSection)
			if !ok {
				continue
			}
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
	merge := templatestest.Approval(t, "merge.json")
	resolved := templatestest.Event(t, "merge-resolved.json").Resolved
	cancelled := templatestest.Event(t, "mail-cancelled.json").Cancelled
	recheck := templatestest.Event(t, "refund-recheck.json").RecheckFailed
	at := merge.RequestedAt.Add(3 * time.Minute)
	_, plan := templatestest.Pinned(merge)
	sending := &templates.Deciding{Actor: resolved.Actor, Approve: true, At: at}
	approved := &approval.Decision{Actor: resolved.Actor, Via: resolved.Via, At: at}

	tests := []struct {
		name       string
		in         templates.Input
		wantStatus string
		waiting    bool // Approve and Deny
	}{
		{"pending", templates.Input{State: approval.StatePending}, "Waiting for a decision", true},
		{"deciding", templates.Input{State: approval.StatePending, Deciding: sending},
			"Recorded: " + resolved.Actor + "'s approval is being sent to the job backend…", false},
		{"approved", templates.Input{State: approval.StateApproved, Decision: approved},
			"Approved by " + resolved.Actor + " at " + at.Format("15:04") + " UTC", false},
		{"approved wins over deciding", templates.Input{State: approval.StateApproved, Decision: approved, Deciding: sending},
			"Approved by " + resolved.Actor + " at " + at.Format("15:04") + " UTC", false},
		{"denied", templates.Input{State: approval.StateDenied, Decision: &approval.Decision{Actor: resolved.Actor, Comment: resolved.Comment, Via: resolved.Via, At: at}},
			"Denied by " + resolved.Actor + ": " + resolved.Comment, false},
		{"expired", templates.Input{State: approval.StateExpired, Decision: &approval.Decision{Actor: "system:deadline", Comment: "nobody answered", Via: "deadline", At: at}},
			"Denied: nobody answered by the deadline", false},
		{"cancelled", templates.Input{State: approval.StateCancelled, Decision: &approval.Decision{Comment: cancelled.Reason, At: at}},
			"Cancelled: " + cancelled.Reason, false},
		{"refused", templates.Input{State: approval.StateRefused, Decision: &approval.Decision{Message: recheck.Message, At: at}},
			"The platform refused the call after approval", false},
		{"refused after a known approval", templates.Input{State: approval.StateRefused, Decision: &approval.Decision{Actor: resolved.Actor, Message: recheck.Message, At: at}},
			"The platform refused the call after " + resolved.Actor + " approved it", false},
		{"superseded", templates.Input{State: approval.StatePending, Superseded: true},
			"Superseded: the call changed; see the new card", false},
		{"superseded, saying why", templates.Input{State: approval.StatePending, Superseded: true,
			SupersededBy: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged}},
			"Superseded: the arguments changed; see the new card", false},
		{"superseded by a hook", templates.Input{State: approval.StatePending, Superseded: true,
			SupersededBy: &approval.Reask{From: 1, Revision: 2, Why: approval.WhyHookChanged}},
			"Superseded: a pre_tool_call hook changed the call; see the new card", false},
		{"superseded wins over deciding", templates.Input{State: approval.StatePending, Superseded: true, Deciding: sending},
			"Superseded: the call changed; see the new card", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Approval, in.Ladder = merge, plan
			m := CardMessage(templates.Build(in))
			if got := statusOf(m); got != tt.wantStatus {
				t.Errorf("the first block's bold line is %q, want the status %q", got, tt.wantStatus)
			}
			if hasActions(m) != tt.waiting {
				t.Errorf("actions block present = %v, want %v", !tt.waiting, tt.waiting)
			}
		})
	}
}

// TestButtons: the card's buttons in its order, each with the card's
// payload as action_id and value, Deny danger and Approve primary, and
// a confirm dialog on Approve of a destructive call.
func TestButtons(t *testing.T) {
	const note = "Approve with comment…"
	const look, esc = "I'm looking", "Escalate now"
	tests := []struct {
		fixture string
		want    []string
		confirm bool // Approve asks again
	}{
		{"merge.json", []string{"Deny", "Approve", note, look, esc}, true},
		{"mail.json", []string{"Deny", "Approve", note, look, esc}, false},
		{"refund.json", []string{"Deny", look, esc}, false},
		{"search.json", []string{"Approve", "Deny", note, look, esc}, false},
		{"unknown.json", []string{"Deny", "Approve", note, look, esc}, false},
		{"secrets.json", []string{"Approve", "Deny", note, look, esc, "Show all arguments"}, false},
		{"big.json", []string{"Approve", "Deny", note, look, esc, "Show all arguments"}, false},
		{"private.json", []string{"Deny", "Approve", note, look, esc, "Show details"}, true},
		{"protected.json", []string{"Deny", look, esc}, false},
	}
	for _, tt := range tests {
		t.Run(tt.fixture, func(t *testing.T) {
			c := templatestest.Card(t, templatestest.Approval(t, tt.fixture), "pending")
			sb := buttonsOf(CardMessage(c))
			if len(sb) != len(tt.want) {
				t.Fatalf("%d buttons, want %d", len(sb), len(tt.want))
			}
			for i, label := range tt.want {
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
					if (sb[i].Confirm != nil) != tt.confirm {
						t.Errorf("approve confirm dialog = %v, want %v", sb[i].Confirm != nil, tt.confirm)
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

// essentials are what must survive every cut: the status line, the effect
// line and the flags.
func essentials(c templates.Card) []string {
	out := []string{c.Status}
	if c.Effect != "" {
		out = append(out, c.Effect)
	}
	return append(out, c.Flags...)
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
	for _, want := range essentials(c) {
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
	cases := map[string]*approval.Approval{
		"big.json":        templatestest.Approval(t, "big.json"),
		"merge.json":      templatestest.Approval(t, "merge.json"),
		"huge":            templatestest.Huge(t, false),
		"huge confirm":    templatestest.Huge(t, true),
		"protected.json":  templatestest.Approval(t, "protected.json"),
		"secrets.json":    templatestest.Approval(t, "secrets.json"),
		"refund.json":     templatestest.Approval(t, "refund.json"),
		"private.json":    templatestest.Approval(t, "private.json"),
		"synthetic small": templatestest.Synthetic(),
	}
	for name, a := range cases {
		for _, state := range templates.PreviewStates() {
			t.Run(name+"/"+state, func(t *testing.T) {
				c := templatestest.Card(t, a, state)
				checkLimits(t, c, CardMessage(c))
			})
		}
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
	long := templatestest.LongLadder()
	for name, a := range map[string]*approval.Approval{"merge.json": templatestest.Approval(t, "merge.json"),
		"huge": templatestest.Huge(t, false), "huge confirm": templatestest.Huge(t, true)} {
		for _, state := range []string{"pending", templates.PreviewDeciding} {
			t.Run(name+"/"+state, func(t *testing.T) {
				c := templatestest.CardWith(t, a, state, templatestest.Frozen(long.Plan(a.RequestedAt, a.RequestedAt.Add(24*time.Hour))))
				m := CardMessage(c)
				checkLimits(t, c, m)
				if want := len(templatestest.Card(t, a, state).Buttons); len(buttonsOf(m)) != want {
					t.Errorf("%d buttons, want %d as under a short ladder", len(buttonsOf(m)), want)
				}
			})
		}
	}
}

// TestDeciding: a card whose decision is on its way shows who decided
// what on top, with its detail on the next line, and only the buttons
// that stay (Show all arguments, Show details).
func TestDeciding(t *testing.T) {
	const reason = "not before the release"
	tests := []struct {
		name       string
		fixture    string
		d          templates.Deciding
		reveal     bool
		wantStatus string
		wantDetail string
		buttons    int
	}{
		{"approval", "merge.json", templates.Deciding{Actor: "user:kevin", Approve: true}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC", 0},
		{"denial with a reason", "merge.json", templates.Deciding{Actor: "user:kevin", Comment: reason}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: " + reason, 0},
		{"approval with a comment", "mail.json", templates.Deciding{Actor: "user:kevin", Approve: true, Comment: "checked"}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC · comment: checked", 0},
		{"no actor", "search.json", templates.Deciding{}, false,
			"Recorded: a denial is being sent to the job backend…", "at 18:03 UTC", 0},
		{"restricted: no comment", "private.json", templates.Deciding{Actor: "user:kevin", Comment: reason}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC", 1},
		{"revealed to a content holder", "private.json", templates.Deciding{Actor: "user:kevin", Comment: reason}, true,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: " + reason, 0},
		{"redacted arguments keep Show all arguments", "secrets.json", templates.Deciding{Actor: "user:kevin", Approve: true}, false,
			"Recorded: user:kevin's approval is being sent to the job backend…", "at 18:03 UTC", 1},
		{"the deadline's deny", "merge.json", templates.Deciding{Actor: "system:deadline", Comment: "nobody answered", Deadline: true}, false,
			"Nobody answered by the deadline: the denial is being sent to the job backend…", "at 18:03 UTC", 0},
		{"typed confirmation", "refund.json", templates.Deciding{Actor: "user:kevin", Comment: "Bearer sk-live-0123456789abcdef"}, false,
			"Recorded: user:kevin's denial is being sent to the job backend…", "at 18:03 UTC · reason: Bearer [redacted]", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := templatestest.Approval(t, tt.fixture)
			at, plan := templatestest.Pinned(a)
			d := tt.d
			d.At = at
			m := CardMessage(templates.Build(templates.Input{Approval: a, State: approval.StatePending, Deciding: &d, Ladder: plan, RevealContent: tt.reveal}))
			if sb := buttonsOf(m); len(sb) != tt.buttons {
				t.Errorf("%d buttons, want %d", len(sb), tt.buttons)
			}
			if lines := linesOf(m); statusOf(m) != tt.wantStatus || len(lines) == 0 || !strings.Contains(lines[0], "\n"+tt.wantDetail) {
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
	for _, blk := range m.Blocks {
		rt, ok := blk.(*slackgo.RichTextBlock)
		if !ok {
			continue
		}
		for _, el := range rt.Elements {
			sec, ok := el.(*slackgo.RichTextSection)
			if !ok {
				continue
			}
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
	}
	return out
}

// TestTimesInEachReadersZone: every time a card prints (the status, who
// is looking, what was escalated now, the plan's steps and deadline) is a
// date element for the instant meant, its fallback the card's own text in
// the tenant's zone, with the reader's day; the text around each reads as
// the card's line. A token a person wrote is shown as text, never as a
// time.
func TestTimesInEachReadersZone(t *testing.T) {
	a := templatestest.Synthetic() // requested 2030-01-02 09:00 UTC
	req := a.RequestedAt
	cet := time.FixedZone("CET", 3600)
	dl := req.Add(26 * time.Hour)
	plan := templates.LadderPlan{Deadline: dl, Steps: []templates.PlanStep{{At: req.Add(15 * time.Minute), Who: "mention @kevin"}, {At: req.Add(25 * time.Hour), Who: "dm lead"}}}
	forged := "<t:0:f> <!date^0^{time}|x>"
	at := req.Add(3 * time.Minute)
	now := req.Add(20 * time.Minute)
	tod := func(d time.Duration, text string) shownTime {
		return shownTime{Unix: req.Add(d).Unix(), Fallback: text, Format: "{date_short_pretty} {time}"}
	}
	tests := []struct {
		name string
		in   templates.Input
		want []shownTime
	}{
		{"waiting, looked at and escalated", templates.Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Looking:     &templates.Looking{Actor: "user:ada", Since: req.Add(10 * time.Minute), Until: req.Add(40 * time.Minute)},
			Escalations: []templates.EscalatedStep{{Actor: "user:kevin", At: req.Add(5 * time.Minute), Who: "dm slack:U0LEE", Planned: req.Add(15 * time.Minute)}}},
			[]shownTime{tod(10*time.Minute, "10:10 CET"), tod(40*time.Minute, "10:40 CET"), tod(5*time.Minute, "10:05 CET"), tod(15*time.Minute, "10:15 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"approved, shown the next day", templates.Input{Approval: a, State: approval.StateApproved, Now: now.Add(24 * time.Hour), Zone: cet,
			Decision: &approval.Decision{Actor: "user:kevin", Comment: forged, Via: "slack", At: at}},
			[]shownTime{tod(3*time.Minute, "2030-01-02 10:03 CET")}},
		{"denied", templates.Input{Approval: a, State: approval.StateDenied, Now: now, Zone: cet,
			Decision: &approval.Decision{Actor: "user:kevin", Comment: forged, Via: "slack", At: at}},
			[]shownTime{tod(3*time.Minute, "10:03 CET")}},
		{"expired", templates.Input{Approval: a, State: approval.StateExpired, Ladder: plan, Now: now, Zone: cet,
			Decision: &approval.Decision{Actor: "system:deadline", At: dl}},
			[]shownTime{tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"deciding", templates.Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Deciding: &templates.Deciding{Actor: "user:kevin", Comment: forged, At: at}},
			[]shownTime{tod(3*time.Minute, "10:03 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := templates.Build(tt.in)
			m := CardMessage(c)
			if diff := cmp.Diff(tt.want, datesOf(m)); diff != "" {
				t.Errorf("dates (-want +got):\n%s", diff)
			}
			// With each date as its fallback, Slack reads as the card.
			if statusOf(m) != c.Status {
				t.Errorf("status %q, want %q", statusOf(m), c.Status)
			}
			joined := strings.Join(linesOf(m), "\n")
			for _, l := range append([]string{c.StatusDetail, c.Looking, c.Ladder}, c.Escalated...) {
				if !strings.Contains(joined, l) {
					t.Errorf("lacks %q", l)
				}
			}
			// A comment that looks like a token is text.
			if tt.in.Decision != nil && tt.in.Decision.Comment == forged || tt.in.Deciding != nil && tt.in.Deciding.Comment == forged {
				raw, _ := json.Marshal(m.Blocks)
				if !strings.Contains(string(raw), `\u003ct:0:f\u003e \u003c!date^0^{time}|x\u003e`) {
					t.Errorf("does not show the comment as text: %s", raw)
				}
			}
		})
	}
}
