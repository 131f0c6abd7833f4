package ladder_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// TestSay: the plan line names each target by its label, else by what it
// is and its id (never a mention's form), a rotation with who is on call
// at the step's time; mail counts its addresses.
func TestSay(t *testing.T) {
	t.Parallel()
	s0 := ladder.AfterStep(15 * time.Minute)
	s0.Mention = mustTargets(t, "rotation:primary", "slack:S0ONCALL", "discord:role:998877665544332211")
	s0.Repeat = &ladder.Repeat{Every: 30 * time.Minute, Times: 3}
	s1 := ladder.AfterStep(time.Hour)
	s1.Post = mustTargets(t, "slack:C0FINANCE", "discord:channel:112233445566778899")
	s1.DM = mustTargets(t, "slack:U0LEAD", "discord:user:223344556677889900")
	s1.Email = mustTargets(t, "leads@acme.example", "kevin@acme.example")
	s2 := ladder.AfterStep(2 * time.Hour)
	s2.Push = mustTargets(t, "user:ada", "rotation:primary", "approvers")
	l := ladder.Ladder{Name: "default", Steps: []ladder.Step{s0, s1, s2},
		Rotations: map[string]ladder.Rotation{"primary": weekly(t)},
		Labels:    ladder.Labels{"slack:S0ONCALL": "on-call group", "kevin@acme.example": "user:kevin", "slack:U9UNUSED": "nobody"}}
	p := l.Plan(at(0, 0), at(24, 0))
	if diff := cmp.Diff(ladder.Labels{"slack:S0ONCALL": "on-call group", "kevin@acme.example": "user:kevin"}, p.Labels); diff != "" {
		t.Errorf("frozen labels: only those of the steps' targets (-want +got):\n%s", diff)
	}
	if p.Steps[2].Index != 1 {
		t.Fatalf("step 2 is ladder step %d, want 1", p.Steps[2].Index)
	}
	for _, tt := range []struct {
		i          int
		countEmail bool
		want       string
	}{
		{0, false, "mention rotation primary (user:lee on call), on-call group and Discord role 998877665544332211"},
		{2, false, "post to Slack channel C0FINANCE and Discord channel 112233445566778899; DM Slack user U0LEAD and Discord user 223344556677889900; email leads@acme.example and user:kevin"},
		{2, true, "post to Slack channel C0FINANCE and Discord channel 112233445566778899; DM Slack user U0LEAD and Discord user 223344556677889900; email 2 people"},
		// A member is named by user id, as the tenant knows them.
		{5, false, "push to user:ada, rotation primary (user:lee on call) and the approvers still missing"},
	} {
		if got := p.Say(p.Steps[tt.i], tt.countEmail); got != tt.want {
			t.Errorf("step %d:\n got %q\nwant %q", tt.i, got, tt.want)
		}
	}
	// A plan frozen before labels existed names every target by its id.
	p.Labels = nil
	if got, want := p.Say(p.Steps[0], false), "mention rotation primary (user:lee on call), Slack group S0ONCALL and Discord role 998877665544332211"; got != want {
		t.Errorf("without labels:\n got %q\nwant %q", got, want)
	}
}

// TestPlanLabelsJSON: the labels are stored with the plan, and a plan
// stored without them reads as one without labels.
func TestPlanLabelsJSON(t *testing.T) {
	t.Parallel()
	l := acmeDefault(t)
	l.Labels = ladder.Labels{"slack:S0ONCALL": "on-call group"}
	p := l.Plan(requested, at(2, 0))
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var back ladder.Plan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("JSON round trip (-before +after):\n%s", diff)
	}
	var old ladder.Plan
	if err := json.Unmarshal([]byte(`{"ladder":"default","steps":[]}`), &old); err != nil || old.Labels != nil {
		t.Errorf("a plan without labels: %v, labels %v", err, old.Labels)
	}
}
