package templates_test

import (
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TestPlanLineSaysEverySkippedStep: a ladder whose repeating step fills
// the plan line's first steps, and whose window-held step cannot fire
// before the deadline, shows that step, at the time it was due, with the
// plan's own reason, never counted into "and N more steps" nor called
// after the deadline. The plan goes through threads.CardPlan, as every
// card's does.
func TestPlanLineSaysEverySkippedStep(t *testing.T) {
	requested := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	deadline := requested.Add(9 * time.Hour) // 18:00
	evening := &ladder.Window{Days: ladder.EveryDay, Hours: ladder.Hours{Open: 20 * 60, Close: 22 * 60}}
	l := ladder.Ladder{Name: "office", Steps: []ladder.Step{
		{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}},
			Repeat: &ladder.Repeat{Every: time.Hour, Times: 3}},
		{Anchor: ladder.AnchorRequest, After: 30 * time.Minute, DM: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0LEAD"}},
			During: evening},
		{Anchor: ladder.AnchorRequest, After: 2 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
		{Anchor: ladder.AnchorRequest, After: 3 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "cto@acme.example"}}},
		{Anchor: ladder.AnchorRequest, After: 4 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "ceo@acme.example"}}},
		{Anchor: ladder.AnchorRequest, After: 5 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "board@acme.example"}}},
		{Anchor: ladder.AnchorRequest, After: 6 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "owner@acme.example"}}},
		{Anchor: ladder.AnchorRequest, After: 10 * time.Hour, Mention: []ladder.Target{{Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}}},
	}}
	p := l.Plan(requested, deadline)
	a := &approval.Approval{ID: "a-1", Revision: 1, Tenant: "acme", RequestedAt: requested,
		Call: approval.Call{Function: "acme_github.merge", Arguments: []byte(`{}`)}}
	c := templates.Build(templates.Input{Approval: a, Ladder: threads.CardPlan(p), Now: requested.Add(time.Minute)})
	want := "ladder: 09:15 UTC mention Slack user U0KEVIN, then every hour, 3 more times" +
		" · 09:30 UTC DM Slack user U0LEAD (skipped: its window does not open before the deadline)" +
		" · 11:00 UTC email leads@acme.example · 12:00 UTC email cto@acme.example · 13:00 UTC email ceo@acme.example" +
		" · 14:00 UTC email board@acme.example · and 1 more step" +
		" · 19:00 UTC mention Slack group S0ONCALL (skipped: after the deadline)" +
		" · deadline 2026-11-30 18:00 UTC (no answer counts as a no)"
	if c.Ladder != want {
		t.Errorf("plan line\n got %q\nwant %q", c.Ladder, want)
	}
}
