package templates_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestRestrictedStatusWithholdsText: on a content-restricted card (and a
// walled one) the status keeps the comment, the cancel reason and the
// re-check's message off every rendering, each of them marshalled whole,
// and says where to read them; the same card revealed to a content holder
// shows them, so the search could find them.
func TestRestrictedStatusWithholdsText(t *testing.T) {
	r := newRenderer(t)
	const secret = "ledger 4471 for the quartz account"
	private := templatestest.Approval(t, "private.json")
	if !private.Content.Restricted {
		t.Fatal("private.json is not content-restricted")
	}
	at := private.RequestedAt.Add(3 * time.Minute)
	decided := func(comment, message string) *approval.Decision {
		return &approval.Decision{Actor: "user:kevin", Comment: comment, Message: message, Via: "console", At: at}
	}
	cases := []struct {
		name     string
		in       templates.Input
		walled   bool   // the approval is not restricted; the place is
		note     string // what the card says instead; "" for none
		revealed bool   // a content holder's card shows the text
	}{
		{"refused message", templates.Input{State: approval.StateRefused, Decision: decided("", "The call was not made: "+secret)}, false, templates.WithheldRecheck, true},
		{"approved comment", templates.Input{State: approval.StateApproved, Decision: decided("fine, "+secret, "")}, false, templates.WithheldComment, true},
		{"denied comment", templates.Input{State: approval.StateDenied, Decision: decided("no: "+secret, "")}, false, templates.WithheldReason, true},
		{"cancel reason", templates.Input{State: approval.StateCancelled, Decision: &approval.Decision{Comment: "the job ended over " + secret, At: at}}, false, templates.WithheldReason, true},
		{"deciding approve comment", templates.Input{Deciding: &templates.Deciding{Actor: "user:kevin", Approve: true, Comment: secret, At: at}}, false, templates.WithheldComment, true},
		{"deciding deny reason", templates.Input{Deciding: &templates.Deciding{Actor: "user:kevin", Comment: secret, At: at}}, false, templates.WithheldReason, true},
		{"expired", templates.Input{State: approval.StateExpired, Decision: decided(secret, secret)}, false, "", false},
		{"superseded", templates.Input{Superseded: true, Decision: decided(secret, secret)}, false, "", false},
		{"walled denied comment", templates.Input{State: approval.StateDenied, Decision: decided("no: "+secret, ""), Restricted: true}, true, templates.WithheldReason, true},
		{"walled refused message", templates.Input{State: approval.StateRefused, Decision: decided("", secret), Restricted: true}, true, templates.WithheldRecheck, true},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.in
			in.Approval = private
			if tt.walled {
				in.Approval = templatestest.Approval(t, "mail.json")
			}
			c := templates.Build(in)
			if c.StatusNote != tt.note {
				t.Errorf("note %q, want %q", c.StatusNote, tt.note)
			}
			for surface, s := range wholeRenderings(t, r, c) {
				if strings.Contains(s, secret) {
					t.Errorf("%s shows the withheld text:\n%s", surface, s)
				}
				if tt.note != "" && !strings.Contains(s, tt.note) && surface != "email subject" {
					t.Errorf("%s lacks the note %q", surface, tt.note)
				}
			}

			// Revealed (the ephemeral answer to Show details), the text
			// is there, and no note stands in for it.
			if tt.walled {
				in.Restricted = false
			} else {
				in.RevealContent = true
			}
			open := templates.Build(in)
			if open.StatusNote != "" {
				t.Errorf("revealed card notes %q", open.StatusNote)
			}
			for surface, s := range wholeRenderings(t, r, open) {
				if surface == "email subject" {
					continue
				}
				if got := strings.Contains(s, secret); got != tt.revealed {
					t.Errorf("revealed %s shows the text = %v, want %v", surface, got, tt.revealed)
				}
			}
		})
	}
}

// wholeRenderings is every rendering of c as sent: the Slack message and
// the Discord message and its edit marshalled to JSON, the email
// marshalled to JSON (subject, text and HTML) and the plain text.
func wholeRenderings(t *testing.T, r *templates.Renderer, c templates.Card) map[string]string {
	t.Helper()
	marshal := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	d, de := chats.DiscordCard(c)
	e := r.Email(c)
	sj, _ := chats.SlackCard(c)
	return map[string]string{
		"slack":         sj,
		"discord":       marshal(d),
		"discord edit":  marshal(de),
		"email":         marshal(e),
		"email subject": e.Subject,
		"text":          r.Text(c),
	}
}
