package templates_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestReaskLines: a card asked again says why, since which revision, and
// each changed path old → new; a restricted one only why; a long change
// list ends with how many more; a change the card cannot show says so;
// and every surface shows the lines.
func TestReaskLines(t *testing.T) {
	r := newRenderer(t)
	changes := []approval.ArgumentChange{
		{Path: "method", Kind: approval.ChangeChanged, Old: `"squash"`, New: `"rebase"`},
		{Path: "labels[2]", Kind: approval.ChangeAdded, New: `"urgent"`},
		{Path: "draft", Kind: approval.ChangeRemoved, Old: `true`},
		{Path: "api_key", Kind: approval.ChangeAdded, New: `"[redacted]"`},
	}
	snap1, snap2 := "sha256:"+strings.Repeat("1", 64), "sha256:"+strings.Repeat("2", 64)
	many := make([]approval.ArgumentChange, 14)
	for i := range many {
		many[i] = approval.ArgumentChange{Path: "k", Kind: approval.ChangeChanged, Old: "1", New: "2"}
	}
	tests := []struct {
		name       string
		reask      approval.Reask
		restricted bool
		want       templates.Reask
	}{
		{"arguments", approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged, Arguments: changes}, false, templates.Reask{
			Line: "Asked again: the arguments changed since revision 1",
			Changes: []string{`method: "squash" → "rebase"`, `labels[2] added: "urgent"`, `draft removed (was true)`,
				`api_key added: "[redacted]"`}}},
		{"a hidden value that changed is said, not shown", approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged,
			Arguments: []approval.ArgumentChange{
				{Path: "headers.X-Api-Key", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true},
				{Path: "memo", Kind: approval.ChangeChanged, Old: `"Refund for order 7781, …"`, New: `"Refund for order 7781 …"`, Hidden: true},
			}}, false, templates.Reask{
			Line: "Asked again: the arguments changed since revision 1",
			Changes: []string{`headers.X-Api-Key: "[redacted]", changed (not shown)`,
				`memo: "Refund for order 7781, …" → "Refund for order 7781 …" (more changed than shown)`}}},
		{"a hook's change reads the same way", approval.Reask{From: 1, Revision: 2, Why: approval.WhyHookChanged, Arguments: changes[:1]}, false, templates.Reask{
			Line:    "Asked again: a hook that checks calls before they run changed the call since revision 1; the arguments changed too",
			Changes: []string{`method: "squash" → "rebase"`}}},
		{"policy, nothing else", approval.Reask{From: 2, Revision: 3, Why: approval.WhyPolicyChanged}, false, templates.Reask{
			Line: "Asked again: the tenant's tool policy changed since revision 2"}},
		{"snapshot", approval.Reask{From: 1, Revision: 2, Why: approval.WhySnapshotChanged, SnapshotFrom: snap1, SnapshotTo: snap2}, false, templates.Reask{
			Line:    "Asked again: the function's snapshot changed since revision 1",
			Changes: []string{"snapshot sha256:111111111111… → sha256:222222222222…"}}},
		{"unshown", approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged, Unshown: true}, false, templates.Reask{
			Line: "Asked again: the arguments changed since revision 1",
			Note: "the change is in values this card does not show (redacted or cut): Show all arguments shows them"}},
		{"more than fit", approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged, Arguments: many, More: 3}, false, templates.Reask{
			Line:    "Asked again: the arguments changed since revision 1",
			Changes: strings.Split(strings.Repeat("k: 1 → 2\n", templates.ListMax-1)+"k: 1 → 2", "\n"),
			Note:    "and 7 more changes"}},
		{"restricted: only why", approval.Reask{From: 1, Revision: 2, Why: approval.WhyArgumentsChanged, Arguments: changes}, true, templates.Reask{
			Line: "Asked again: the arguments changed since revision 1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := templatestest.Synthetic()
			a.Revision = tt.reask.Revision
			a.Content.Restricted = tt.restricted
			reask := tt.reask
			c := templates.Build(templates.Input{Approval: a, Reask: &reask})
			if diff := cmp.Diff(&tt.want, c.Reask); diff != "" {
				t.Fatalf("reask (-want +got):\n%s", diff)
			}
			x := renderAll(t, r, c)
			for surface, s := range map[string]string{"slack": x.slack, "discord": plainDiscord(x.discord), "text": x.text} {
				for _, line := range append([]string{tt.want.Line, tt.want.Note}, tt.want.Changes...) {
					if !strings.Contains(s, jsonUnquote(line, surface)) {
						t.Errorf("%s lacks %q", surface, line)
					}
				}
				if tt.restricted && strings.Contains(s, "squash") {
					t.Errorf("%s: a restricted card shows a changed value", surface)
				}
			}
		})
	}
}

// TestQuestionReaskLine: a question asked again says on every surface
// that the question changed, as its mail does, never that a call did: a
// question has no call, and the reask of one names no reason.
func TestQuestionReaskLine(t *testing.T) {
	r := newRenderer(t)
	for _, restricted := range []bool{false, true} {
		a := *templatestest.Approval(t, "question.json")
		a.Revision, a.Content.Restricted = 3, restricted
		// What comparing two revisions of a question gives: no reason,
		// no call's changes.
		reask := approval.Reask{From: 2, Revision: 3, Withheld: restricted}
		in := templatestest.Input(t, &a, "pending")
		in.Reask = &reask
		c := templates.Build(in)
		want := &templates.Reask{Line: "Asked again: the question changed since revision 2"}
		if diff := cmp.Diff(want, c.Reask); diff != "" {
			t.Errorf("restricted %v: reask (-want +got):\n%s", restricted, diff)
		}
		renderAll(t, r, c).each(func(surface, s string) {
			if surface == "email subject" {
				return
			}
			if !strings.Contains(s, want.Line) {
				t.Errorf("restricted %v: %s lacks %q", restricted, surface, want.Line)
			}
			if strings.Contains(s, "call changed") {
				t.Errorf("restricted %v: %s says the call changed", restricted, surface)
			}
		})
	}
}

// plainDiscord undoes the markdown escapes of a rendered Discord message.
func plainDiscord(s string) string {
	return strings.NewReplacer(`\\_`, `_`, `\\*`, `*`, `\\[`, `[`, `\\]`, `]`).Replace(s)
}

// jsonUnquote is line as it appears inside a JSON rendering.
func jsonUnquote(line, surface string) string {
	if surface == "text" {
		return line
	}
	return strings.ReplaceAll(line, `"`, `\"`)
}

// TestTimesCarryADate: a time on the day the card is shown reads as the
// time of day; one on another day, in the tenant's zone, carries its
// date. The plan line's steps too: a card shown on a later day dates a
// step of the request's day.
func TestTimesCarryADate(t *testing.T) {
	a := templatestest.Synthetic() // requested 2030-01-02 09:00 UTC
	at := a.RequestedAt.Add(3 * time.Minute)
	decided := &approval.Decision{Actor: "user:kevin", At: at}
	berlin := time.FixedZone("CET", 3600)
	la := time.FixedZone("PST", -8*3600)
	plan := templates.LadderPlan{Steps: []templates.PlanStep{{At: a.RequestedAt.Add(15 * time.Hour), Who: "dm lead"}}, Deadline: a.RequestedAt.Add(24 * time.Hour)}
	tests := []struct {
		name       string
		now        time.Time
		zone       *time.Location
		wantStatus string
		wantPlan   string // for a pending card
	}{
		{"today in UTC", at, nil, "Approved by user:kevin at 09:03 UTC",
			"ladder: 2030-01-03 00:00 UTC dm lead · deadline 2030-01-03 09:00 UTC (no answer counts as a no)"},
		{"the next day", at.Add(24 * time.Hour), nil, "Approved by user:kevin at 2030-01-02 09:03 UTC",
			"ladder: 00:00 UTC dm lead · deadline 2030-01-03 09:00 UTC (no answer counts as a no)"},
		{"today in the tenant's zone", at, berlin, "Approved by user:kevin at 10:03 CET",
			"ladder: 2030-01-03 01:00 CET dm lead · deadline 2030-01-03 10:00 CET (no answer counts as a no)"},
		// 09:03 UTC is 01:03 the same day in PST, and 16:00 UTC is 08:00
		// that day: no date for the step.
		{"another zone's day", at, la, "Approved by user:kevin at 01:03 PST",
			"ladder: 16:00 PST dm lead · deadline 2030-01-03 01:00 PST (no answer counts as a no)"},
		// 20 hours later it is still that day in PST: a day later, not.
		{"the same day in another zone", at.Add(20 * time.Hour), la, "Approved by user:kevin at 01:03 PST",
			"ladder: 16:00 PST dm lead · deadline 2030-01-03 01:00 PST (no answer counts as a no)"},
		{"the next day in another zone", at.Add(24 * time.Hour), la, "Approved by user:kevin at 2030-01-02 01:03 PST",
			"ladder: 2030-01-02 16:00 PST dm lead · deadline 2030-01-03 01:00 PST (no answer counts as a no)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := templates.Build(templates.Input{Approval: a, State: approval.StateApproved, Decision: decided, Now: tt.now, Zone: tt.zone})
			if c.Status != tt.wantStatus {
				t.Errorf("status %q, want %q", c.Status, tt.wantStatus)
			}
			p := templates.Build(templates.Input{Approval: a, Ladder: plan, Now: tt.now, Zone: tt.zone})
			if p.Ladder != tt.wantPlan {
				t.Errorf("plan line %q, want %q", p.Ladder, tt.wantPlan)
			}
			d := templates.Build(templates.Input{Approval: a, Deciding: &templates.Deciding{Actor: "user:kevin", Approve: true, At: at}, Now: tt.now, Zone: tt.zone})
			if want := "at " + strings.TrimPrefix(tt.wantStatus, "Approved by user:kevin at "); d.StatusDetail != want {
				t.Errorf("deciding detail %q, want %q", d.StatusDetail, want)
			}
		})
	}
}

// TestLadderNote: a request that names a ladder the tenant lacks says
// which ran instead, while the card waits.
func TestLadderNote(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	in := templates.Input{Approval: a, Tenant: "acme", Ladder: templates.LadderPlan{Name: "default", Unknown: "payments2",
		Deadline: a.RequestedAt.Add(time.Hour)}}
	c := templates.Build(in)
	want := `The request named ladder "payments2", which tenant acme does not have, so the default ladder runs as if it named none.`
	if c.LadderNote != want {
		t.Fatalf("note %q, want %q", c.LadderNote, want)
	}
	x := renderAll(t, r, c)
	for surface, s := range map[string]string{"slack": x.slack, "discord": x.discord, "text": x.text} {
		if !strings.Contains(s, jsonUnquote(want, surface)) {
			t.Errorf("%s lacks the note", surface)
		}
	}
	in.Ladder.Unknown = ""
	if c := templates.Build(in); c.LadderNote != "" {
		t.Errorf("a named ladder the tenant has gives the note %q", c.LadderNote)
	}
	in.Ladder.Unknown, in.State = "payments2", approval.StateApproved
	if c := templates.Build(in); c.LadderNote != "" {
		t.Errorf("a closed card keeps the note %q", c.LadderNote)
	}
}

// TestApproveComment: the comment a person gave with their approval is
// on the card, deciding and decided, except on a restricted one.
func TestApproveComment(t *testing.T) {
	a := templatestest.Synthetic()
	at := a.RequestedAt.Add(time.Minute)
	const comment = "fine after the freeze"
	for _, restricted := range []bool{false, true} {
		a.Content.Restricted = restricted
		deciding := templates.Build(templates.Input{Approval: a, Deciding: &templates.Deciding{Actor: "user:kevin", Approve: true, Comment: comment, At: at}})
		decided := templates.Build(templates.Input{Approval: a, State: approval.StateApproved, Decision: &approval.Decision{Actor: "user:kevin", Comment: comment, At: at}})
		for name, c := range map[string]templates.Card{"deciding": deciding, "decided": decided} {
			shows := strings.Contains(c.Status+c.StatusDetail, comment)
			if shows == restricted {
				t.Errorf("restricted %v, %s: status %q · %q", restricted, name, c.Status, c.StatusDetail)
			}
			if restricted && c.StatusNote != templates.WithheldComment {
				t.Errorf("%s: note %q", name, c.StatusNote)
			}
		}
	}
}
