package templates_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// Who is looking and the steps fired at once are state: a waiting card
// says them, worded for the hold's end (the deadline when the hold
// reaches it), and no card that no longer waits does.
func TestLadderStateLines(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "merge.json") // requested 18:00 UTC, deadline the next day 18:00 UTC
	at := func(d time.Duration) time.Time { return a.RequestedAt.Add(d) }
	kevin := &templates.Looking{Actor: "user:kevin", Since: at(10 * time.Minute), Until: at(40 * time.Minute)}
	tests := []struct {
		name    string
		state   string
		looking *templates.Looking
		want    string
	}{
		{"looking", "pending", kevin,
			"user:kevin is looking since 18:10 UTC; the ladder's next steps wait until 18:40 UTC"},
		{"taking over", "pending", &templates.Looking{Actor: "user:ada", Since: at(20 * time.Minute), Until: at(50 * time.Minute), From: "user:kevin"},
			"user:ada is looking since 18:20 UTC, taking over from user:kevin; the ladder's next steps wait until 18:50 UTC"},
		{"a hold that reaches the deadline", "pending", &templates.Looking{Actor: "user:kevin", Since: at(23*time.Hour + 50*time.Minute), Until: at(24*time.Hour + 20*time.Minute)},
			"user:kevin is looking since 2026-11-30 17:50 UTC; the ladder's next steps wait until the deadline"},
		{"a hold of nothing", "pending", &templates.Looking{Actor: "user:kevin", Since: at(10 * time.Minute), Until: at(10 * time.Minute)},
			"user:kevin is looking since 18:10 UTC"},
		{"a decision on its way", templates.PreviewDeciding, kevin, ""},
		{"superseded", templates.PreviewSuperseded, kevin, ""},
		{"closed", "approved", kevin, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := templatestest.Input(t, a, tt.state)
			in.Looking = tt.looking
			in.Escalations = []templates.EscalatedStep{{Actor: "user:lee", At: at(5 * time.Minute), Who: "mention slack:U0KEVIN", Planned: at(15 * time.Minute)}}
			c := templates.Build(in)
			if c.Looking != tt.want {
				t.Errorf("looking %q, want %q", c.Looking, tt.want)
			}
			wantEsc := []string{"Escalated now by user:lee at 18:05 UTC: mention slack:U0KEVIN (planned for 18:15 UTC)"}
			if tt.want == "" {
				wantEsc = nil
			}
			if diff := cmp.Diff(wantEsc, c.Escalated); diff != "" {
				t.Errorf("escalated (-want +got):\n%s", diff)
			}
		})
	}
}

// A card lists the last three steps fired at once and counts the rest.
func TestEscalatedLinesCountTheEarlierOnes(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "merge.json")
	in := templatestest.Input(t, a, "pending")
	for i := range 5 {
		in.Escalations = append(in.Escalations, templates.EscalatedStep{Actor: fmt.Sprintf("user:m%d", i), At: a.RequestedAt.Add(time.Duration(i) * time.Minute), Who: "mention slack:U0KEVIN"})
	}
	got := templates.Build(in).Escalated
	want := []string{
		"Escalated now by user:m2 at 18:02 UTC: mention slack:U0KEVIN",
		"Escalated now by user:m3 at 18:03 UTC: mention slack:U0KEVIN",
		"Escalated now by user:m4 at 18:04 UTC: mention slack:U0KEVIN",
		"and 2 earlier steps escalated now",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("escalated (-want +got):\n%s", diff)
	}
}

// Escalate now carries how many steps were escalated already, so a press
// on a card that is behind is told so rather than firing a second step;
// it is offered only while the plan has a step that can fire, and I'm
// looking on every waiting card.
func TestLadderButtons(t *testing.T) {
	t.Parallel()
	a := templatestest.Approval(t, "search.json")
	labels := func(c templates.Card) []string {
		var out []string
		for _, b := range c.Buttons {
			out = append(out, b.Label)
		}
		return out
	}
	in := templatestest.Input(t, a, "pending")
	in.Escalations = make([]templates.EscalatedStep, 2)
	c := templates.Build(in)
	i := slices.IndexFunc(c.Buttons, func(b templates.Button) bool { return b.Action.Kind == templates.ActionEscalate })
	if i < 0 || c.Buttons[i].Payload != "ab1|escalate|"+a.ID+"|1|2" {
		t.Fatalf("escalate button %+v", c.Buttons)
	}

	allSkipped := templatestest.Input(t, a, "pending")
	for k := range allSkipped.Ladder.Steps {
		allSkipped.Ladder.Steps[k].Skipped = true
	}
	if got := labels(templates.Build(allSkipped)); !cmp.Equal(got, []string{"Approve", "Deny", "Approve with comment…", "I'm looking"}) {
		t.Errorf("with no step that can fire: %v", got)
	}
	noLadder := templatestest.Input(t, a, "pending")
	noLadder.Ladder.Steps = nil
	if got := labels(templates.Build(noLadder)); slices.Contains(got, "Escalate now") || !slices.Contains(got, "I'm looking") {
		t.Errorf("with no ladder: %v", got)
	}
	full := templatestest.Input(t, a, "pending")
	full.Escalations = make([]templates.EscalatedStep, templates.MaxEscalations)
	if got := labels(templates.Build(full)); slices.Contains(got, "Escalate now") {
		t.Errorf("after %d escalations: %v", templates.MaxEscalations, got)
	}
	if got := labels(templates.Build(templatestest.Input(t, a, templates.PreviewDeciding))); slices.Contains(got, "I'm looking") || slices.Contains(got, "Escalate now") {
		t.Errorf("while a decision is on its way: %v", got)
	}
}
