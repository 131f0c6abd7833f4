package templates

import (
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
)

// shownTime is a time a card shows: the instant, and the card's own
// text of it, in the tenant's zone.
type shownTime struct {
	Unix     int64
	Fallback string
}

// TestTimesInEachReadersZone: text and email print every time a card
// shows (the status, who is looking, what was escalated now, the plan's
// steps and deadline) in the tenant's zone, and no platform's token;
// Slack and Discord show each reader their own zone (their adapters'
// TestTimesInEachReadersZone). A token a person wrote stays text.
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
		return shownTime{Unix: req.Add(d).Unix(), Fallback: text}
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
			// Text and email print the tenant's zone.
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

			// A comment that looks like a token is text.
			if tt.in.Decision != nil && tt.in.Decision.Comment == forged || tt.in.Deciding != nil && tt.in.Deciding.Comment == forged {
				if !strings.Contains(c.Status+c.StatusDetail, "<t:0:f>") {
					t.Fatalf("the card does not show the comment: %q %q", c.Status, c.StatusDetail)
				}
			}
		})
	}
}
