package templates

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
)

// shownTime is a time a Slack or Discord card shows in each reader's own
// zone: the instant, and what the card says in the tenant's zone.
type shownTime struct {
	Unix     int64
	Fallback string // the card's own text of it, in the tenant's zone
	Format   string // Slack's format, or Discord's style
}

// discordTokenRE is a Discord timestamp not escaped by a backslash.
var discordTokenRE = regexp.MustCompile(`(?:^|[^\\])<t:(-?[0-9]+):([a-zA-Z])>`)

// discordDates reads back every timestamp of s, in order.
func discordDates(t *testing.T, s string) []shownTime {
	t.Helper()
	var out []shownTime
	for _, m := range discordTokenRE.FindAllStringSubmatch(s, -1) {
		n, err := strconv.ParseInt(m[1], 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, shownTime{Unix: n, Format: m[2]})
	}
	return out
}

// TestTimesInEachReadersZone: Discord writes every time a card prints
// (the status, who is looking, what was escalated now, the plan's steps
// and deadline) as its timestamp for the instant meant, and the text
// around each reads as the card's line; every other surface prints the
// tenant's zone. A token a person wrote is shown as text, never as a
// time. (Slack's dates: the adapter's TestTimesInEachReadersZone.)
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
			dm := r.Discord(c)
			var want []shownTime
			for _, w := range tt.want {
				want = append(want, shownTime{Unix: w.Unix, Format: "f"})
			}
			got := append(discordDates(t, dm.Content), discordDates(t, dm.Embeds[0].Description)...)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("discord timestamps (-want +got):\n%s", diff)
			}
			// The tenant's text is not shown beside the token.
			for _, w := range tt.want {
				if strings.Contains(dm.Content+dm.Embeds[0].Description, w.Fallback) {
					t.Errorf("discord shows %q as text", w.Fallback)
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
				if !strings.Contains(dm.Content, `\<t:0:f> \<!date^0^{time}\|x>`) {
					t.Errorf("discord does not escape the comment: %q", dm.Content)
				}
			}
		})
	}
}

// TestDiscordTimestampCut: a cut never leaves a timestamp open.
func TestDiscordTimestampCut(t *testing.T) {
	for in, want := range map[string]string{
		"at <t:1795975":       "at ",
		"at <t:1795975380:t>": "at <t:1795975380:t>",
		`at \<t:17`:           `at \<t:17`,
	} {
		if got := trimDiscord(in); got != want {
			t.Errorf("trimDiscord(%q) = %q, want %q", in, got, want)
		}
	}
}
