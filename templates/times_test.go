package templates_test

import (
	"strings"
	"testing"
	"time"

	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestTimesInEachReadersZone: text and email print every time a card
// shows (the status, who is looking, what was escalated now, the
// quorum's approvals, the plan's steps and deadline) in the tenant's
// zone, and no platform's token; Slack and Discord show each reader their
// own zone (their adapters' TestTimesInEachReadersZone). A token a person
// wrote stays text.
func TestTimesInEachReadersZone(t *testing.T) {
	r := newRenderer(t)
	for _, tt := range templatestest.ZoneCases() {
		t.Run(tt.Name, func(t *testing.T) {
			c := templates.Build(tt.In)
			// Text and email print the tenant's zone.
			for surface, s := range map[string]string{"text": r.Text(c), "email": r.Email(c).Text} {
				for _, w := range tt.Times {
					if !strings.Contains(s, w.Text) {
						t.Errorf("%s lacks %q", surface, w.Text)
					}
				}
				if strings.Contains(s, "<t:1") || strings.Contains(s, "<!date^1") {
					t.Errorf("%s holds a token:\n%s", surface, s)
				}
			}

			// A comment that looks like a token is text.
			if tt.Forged() {
				if !strings.Contains(c.Status+c.StatusDetail, "<t:0:f>") {
					t.Fatalf("the card does not show the comment: %q %q", c.Status, c.StatusDetail)
				}
			}
		})
	}
}

// Spans keeps a time only where the line prints it, in order; any other
// stays text, so a renderer never shows a time the line does not say.
func TestSpansKeepOnlyTimesWhereTheLineSaysThem(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 3, 1, 9, 3, 0, 0, time.UTC)
	s := "from 09:03 to 10:00"
	stamps := []templates.Stamp{
		{Off: 5, Text: "09:03", At: at},
		{Off: 0, Text: "from", At: at},   // before the last kept
		{Off: 11, Text: "xx", At: at},    // not what the line says there
		{Off: 14, Text: "", At: at},      // no text
		{Off: 17, Text: "00:00", At: at}, // past the line's end
		{Off: 14, Text: "10:00", At: at},
	}
	var got []string
	for text, st := range templates.Spans(s, stamps) {
		got = append(got, text)
		if st != nil {
			got = append(got, "<"+st.Text+">")
		}
	}
	want := []string{"from ", "<09:03>", " to ", "<10:00>", ""}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("spans %q, want %q", got, want)
	}
}
