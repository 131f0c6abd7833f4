package discord_test

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/discord"
	"approvalsbot/ladder"
	"approvalsbot/templates/templatestest"
)

// mentionForm is a Discord mention or everyone ping left unescaped.
var mentionForm = regexp.MustCompile(`(^|[^\\])<(@|#|@&|@!)[0-9]|@everyone|@here`)

// TestPlanLineMentionsNobody: the plan line names a Discord role, a Slack
// group and any label as escaped text, sent with no mention allowed, so
// it never pings.
func TestPlanLineMentionsNobody(t *testing.T) {
	for _, label := range []string{"<@&998877665544332211>", "<@223344556677889900>", "@everyone", "@here", "<!subteam^S0ONCALL>"} {
		t.Run(label, func(t *testing.T) {
			a := templatestest.Approval(t, "merge.json")
			s := ladder.AfterStep(15 * time.Minute)
			s.Mention = []ladder.Target{{Kind: ladder.KindDiscordRole, ID: "998877665544332211"}, {Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"},
				{Kind: ladder.KindDiscordRole, ID: "112233445566778899"}}
			l := ladder.Ladder{Name: "default", Steps: []ladder.Step{s}, Labels: ladder.Labels{"discord:role:112233445566778899": label}}
			c := templatestest.CardWith(t, a, "pending", templatestest.Frozen(l.Plan(a.RequestedAt, a.RequestedAt.Add(24*time.Hour))))
			m := discord.RenderCard(c)
			am := m.AllowedMentions
			if am == nil || am.Parse == nil || len(am.Parse)+len(am.Users)+len(am.Roles) != 0 {
				t.Fatalf("allowed mentions %+v, want none", am)
			}
			var text strings.Builder
			text.WriteString(m.Content)
			for _, e := range m.Embeds {
				text.WriteString(e.Description)
			}
			if !strings.Contains(text.String(), "mention Discord role 998877665544332211, Slack group S0ONCALL and ") {
				t.Fatalf("the plan line is not on the card:\n%s", text.String())
			}
			if loc := mentionForm.FindStringIndex(text.String()); loc != nil {
				t.Errorf("a mention's form %q on the card", text.String()[loc[0]:loc[1]])
			}
		})
	}
}
