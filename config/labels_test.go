package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// labelled is a tenant whose ladder names a member, a labelled group, an
// unlabelled role and a list address.
const labelled = base + `    labels:
      slack:S0ONCALL: on-call group
      "discord:role:998877665544332211": ""
    ladders:
      default:
        - after: 15m
          mention: [slack:U0KEVIN, slack:S0ONCALL, discord:role:112233445566778899]
          email: [kevin@acme.example, leads@acme.example]
    members:
      - {user: user:kevin, role: operator, slack: U0KEVIN, email: kevin@acme.example}
`

// TestLabels: a ladder carries the labels of its targets, the tenant's
// own first, then a member's user id; a bad label is a problem.
func TestLabels(t *testing.T) {
	t.Parallel()
	_, problems := parse(t, labelled)
	want := []string{`bot.yaml:13: tenants.acme.labels["discord:role:998877665544332211"]: empty label: write what the card calls discord:role:998877665544332211, or leave it out`}
	if diff := cmp.Diff(want, problems); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
	c, problems := parse(t, strings.Replace(labelled, `      "discord:role:998877665544332211": ""`+"\n", "", 1))
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	if diff := cmp.Diff(ladder.Labels{"slack:S0ONCALL": "on-call group"}, acme.Labels); diff != "" {
		t.Errorf("tenant labels (-want +got):\n%s", diff)
	}
	wantLadder := ladder.Labels{"slack:U0KEVIN": "user:kevin", "slack:S0ONCALL": "on-call group", "kevin@acme.example": "user:kevin"}
	if diff := cmp.Diff(wantLadder, acme.Ladders["default"].Labels); diff != "" {
		t.Errorf("ladder labels (-want +got):\n%s", diff)
	}
	if s := c.Summary(); !strings.Contains(s, "  label slack:S0ONCALL: \"on-call group\" on the card's plan line\n") {
		t.Errorf("bot check does not show the label:\n%s", s)
	}
}

func TestLabelProblems(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ labels, want string }{
		{"{slack:X0NO: a}", `tenants.acme.labels["slack:X0NO"]: "slack:X0NO": a Slack id starting with "X" is none of`},
		{"[a, b]", "tenants.acme.labels: expected a mapping of targets to labels, got a list"},
		{"{slack:S0ONCALL: " + strings.Repeat("x", 65) + "}", `tenants.acme.labels["slack:S0ONCALL"]: a label is at most 64 characters`},
		{`{slack:S0ONCALL: "on\ncall"}`, `tenants.acme.labels["slack:S0ONCALL"]: a label is one line of visible characters`},
		{`{slack:S0ONCALL: "on` + "\u200b" + `call"}`, `tenants.acme.labels["slack:S0ONCALL"]: a label is one line of visible characters`},
		{`{slack:S0ONCALL: "<!here>"}`, `tenants.acme.labels["slack:S0ONCALL"]: a label is plain words: no <, >, @ or link`},
		{`{slack:S0ONCALL: "@everyone"}`, `tenants.acme.labels["slack:S0ONCALL"]: a label is plain words: no <, >, @ or link`},
		{`{slack:S0ONCALL: "see https://evil.example"}`, `tenants.acme.labels["slack:S0ONCALL"]: a label is plain words: no <, >, @ or link`},
	} {
		_, problems := parse(t, base+"    labels: "+tt.labels+"\n")
		if len(problems) != 1 || !strings.Contains(problems[0], tt.want) {
			t.Errorf("labels %s: problems %q, want one with %q", tt.labels, problems, tt.want)
		}
	}
}
