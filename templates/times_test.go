package templates_test

import (
	"strings"
	"testing"

	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestTimesInEachReadersZone: text and email print every time a card
// shows (the status, who is looking, what was escalated now, the plan's
// steps and deadline) in the tenant's zone, and no platform's token;
// Slack and Discord show each reader their own zone (their adapters'
// TestTimesInEachReadersZone). A token a person wrote stays text.
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
