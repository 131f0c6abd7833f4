package slack_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/ladder"
	"approvalsbot/templates/templatestest"
)

// TestPlanLineMentionsNobody: the plan line names a Slack group, a
// Discord role and any label as literal text, so it never pings, and a
// Discord role on a Slack card reads as one, not as a mention.
func TestPlanLineMentionsNobody(t *testing.T) {
	for _, label := range []string{"<!subteam^S0ONCALL>", "<@U0KEVIN>", "<!here>", "@here", "<@&998877665544332211>", "*on call*"} {
		t.Run(label, func(t *testing.T) {
			a := templatestest.Approval(t, "merge.json")
			s := ladder.AfterStep(15 * time.Minute)
			s.Mention = []ladder.Target{{Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}, {Kind: ladder.KindDiscordRole, ID: "998877665544332211"},
				{Kind: ladder.KindSlackUserGroup, ID: "S0LABEL"}}
			l := ladder.Ladder{Name: "default", Steps: []ladder.Step{s}, Labels: ladder.Labels{"slack:S0LABEL": label}}
			c := templatestest.CardWith(t, a, "pending", templatestest.Frozen(l.Plan(a.RequestedAt, a.RequestedAt.Add(24*time.Hour))))
			if !strings.Contains(c.Ladder, "mention Slack group S0ONCALL, Discord role 998877665544332211 and "+label) {
				t.Fatalf("plan line %q", c.Ladder)
			}
			m := slackad.CardMessage(c)
			blocks, err := json.Marshal(m.Blocks)
			if err != nil {
				t.Fatal(err)
			}
			for _, text := range []string{label, "Slack group S0ONCALL", "Discord role 998877665544332211"} {
				if literalOnly(t, "card", blocks, text) == 0 {
					t.Errorf("the card lacks %q", text)
				}
			}
			if strings.Contains(m.Text, label) {
				t.Errorf("the notification text holds the plan line: %q", m.Text)
			}
		})
	}
}
