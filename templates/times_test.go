package templates

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/slack-go/slack"

	"approvalsbot/approval"
)

// shownTime is a time a Slack or Discord card shows in each reader's own
// zone: the instant, and what the card says in the tenant's zone.
type shownTime struct {
	Unix     int64
	Fallback string // Slack only
	Format   string // Slack's format, or Discord's style
}

// slackDates reads back every date element of m, in order.
func slackDates(t *testing.T, m SlackMessage) []shownTime {
	t.Helper()
	var out []shownTime
	for _, blk := range m.Blocks {
		rt, ok := blk.(*slack.RichTextBlock)
		if !ok {
			continue
		}
		for _, el := range rt.Elements {
			sec, ok := el.(*slack.RichTextSection)
			if !ok {
				continue
			}
			for _, e := range sec.Elements {
				if d, ok := e.(*slack.RichTextSectionDateElement); ok {
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

// TestTimesInEachReadersZone: Slack and Discord write every time a card
// prints (the status, who is looking, what was escalated now, the plan's
// steps and deadline) as the platform's date token for the instant meant,
// Slack's fallback the card's own text in the tenant's zone, and with the
// date where that text has one; the text around each reads as the card's
// line. A token a person wrote is shown as text, never as a time.
func TestTimesInEachReadersZone(t *testing.T) {
	r := newRenderer(t)
	a := synthetic() // requested 2030-01-02 09:00 UTC
	req := a.RequestedAt
	cet := time.FixedZone("CET", 3600)
	dl := req.Add(26 * time.Hour)
	plan := LadderPlan{Deadline: dl, Steps: []PlanStep{{At: req.Add(15 * time.Minute), Who: "mention @kevin"}, {At: req.Add(25 * time.Hour), Who: "dm lead"}}}
	forged := "<t:0:f> <!date^0^{time}|x>"
	at := req.Add(3 * time.Minute)
	now := req.Add(20 * time.Minute)
	// Every time carries the reader's day, dated in the tenant's text or
	// not: whether it is today is the reader's zone's to say.
	tod := func(d time.Duration, text string) shownTime {
		return shownTime{Unix: req.Add(d).Unix(), Fallback: text, Format: "{date_short_pretty} {time}"}
	}
	tests := []struct {
		name string
		in   Input
		// want are the times in the order the card shows them: the
		// status part (Discord's content), then the plan line.
		want []shownTime
	}{
		{"waiting, looked at and escalated", Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Looking:     &Looking{Actor: "user:ada", Since: req.Add(10 * time.Minute), Until: req.Add(40 * time.Minute)},
			Escalations: []EscalatedStep{{Actor: "user:kevin", At: req.Add(5 * time.Minute), Who: "dm slack:U0LEE", Planned: req.Add(15 * time.Minute)}}},
			[]shownTime{tod(10*time.Minute, "10:10 CET"), tod(40*time.Minute, "10:40 CET"), tod(5*time.Minute, "10:05 CET"), tod(15*time.Minute, "10:15 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"approved, shown the next day", Input{Approval: a, State: approval.StateApproved, Now: now.Add(24 * time.Hour), Zone: cet,
			Decision: &approval.Decision{Actor: "user:kevin", Comment: forged, Via: "slack", At: at}},
			[]shownTime{tod(3*time.Minute, "2030-01-02 10:03 CET")}},
		{"denied", Input{Approval: a, State: approval.StateDenied, Now: now, Zone: cet,
			Decision: &approval.Decision{Actor: "user:kevin", Comment: forged, Via: "slack", At: at}},
			[]shownTime{tod(3*time.Minute, "10:03 CET")}},
		{"expired", Input{Approval: a, State: approval.StateExpired, Ladder: plan, Now: now, Zone: cet,
			Decision: &approval.Decision{Actor: "system:deadline", At: dl}},
			[]shownTime{tod(26*time.Hour, "2030-01-03 12:00 CET")}},
		{"deciding", Input{Approval: a, Ladder: plan, Now: now, Zone: cet,
			Deciding: &Deciding{Actor: "user:kevin", Comment: forged, At: at}},
			[]shownTime{tod(3*time.Minute, "10:03 CET"),
				tod(15*time.Minute, "10:15 CET"), tod(25*time.Hour, "2030-01-03 11:00 CET"), tod(26*time.Hour, "2030-01-03 12:00 CET")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Build(tt.in)
			sm := r.Slack(c)
			if diff := cmp.Diff(tt.want, slackDates(t, sm)); diff != "" {
				t.Errorf("slack dates (-want +got):\n%s", diff)
			}
			// With each date as its fallback, Slack reads as the card.
			lines := slackLines(sm)
			if slackStatus(sm) != c.Status {
				t.Errorf("slack status %q, want %q", slackStatus(sm), c.Status)
			}
			joined := strings.Join(lines, "\n")
			for _, l := range append([]string{c.StatusDetail, c.Looking, c.Ladder}, c.Escalated...) {
				if !strings.Contains(joined, l) {
					t.Errorf("slack lacks %q", l)
				}
			}

			// Every other surface prints the tenant's zone, as before.
			for surface, s := range map[string]string{"text": r.Text(c), "email": r.Email(c).Text} {
				for _, w := range tt.want {
					if !strings.Contains(s, w.Fallback) {
						t.Errorf("%s lacks %q", surface, w.Fallback)
					}
				}
				if strings.Contains(s, "<t:1") || strings.Contains(s, "<!date^1") {
					t.Errorf("%s holds a token:\n%s", surface, s)
				}
			}

			// A comment that looks like a token is text on both.
			if tt.in.Decision != nil && tt.in.Decision.Comment == forged || tt.in.Deciding != nil && tt.in.Deciding.Comment == forged {
				if !strings.Contains(c.Status+c.StatusDetail, "<t:0:f>") {
					t.Fatalf("the card does not show the comment: %q %q", c.Status, c.StatusDetail)
				}
				raw, _ := json.Marshal(sm.Blocks)
				if !strings.Contains(string(raw), `\u003ct:0:f\u003e \u003c!date^0^{time}|x\u003e`) {
					t.Errorf("slack does not show the comment as text: %s", raw)
				}
			}
		})
	}
}

// TestSlackContextDate: a date in a context block is mrkdwn holding only
// its token, verbatim, the fallback escaped and the token itself not.
func TestSlackContextDate(t *testing.T) {
	at := time.Date(2030, 1, 2, 9, 3, 0, 0, time.UTC)
	blk := slackContext([]slackElem{{Kind: elemText, Text: "sent "}, slackDate(Stamp{Text: "09:03 <UTC>", At: at}, nil), {Kind: elemText, Text: " by a&b"}})
	els := blk.ContextElements.Elements
	if len(els) != 3 {
		t.Fatalf("%d elements: %+v", len(els), els)
	}
	o, ok := els[1].(*slack.TextBlockObject)
	want := "<!date^" + strconv.FormatInt(at.Unix(), 10) + "^{date_short_pretty} {time}|09:03 &lt;UTC&gt;>"
	if !ok || o.Type != slack.MarkdownType || !o.Verbatim || o.Text != want {
		t.Errorf("date %+v, want verbatim mrkdwn %q", els[1], want)
	}
	for _, i := range []int{0, 2} {
		if o, ok := els[i].(*slack.TextBlockObject); !ok || o.Type != slack.PlainTextType {
			t.Errorf("element %d %+v, want plain_text", i, els[i])
		}
	}
}
