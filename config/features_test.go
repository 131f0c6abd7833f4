package config_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
)

func TestBackendFeatures(t *testing.T) {
	t.Parallel()
	with := func(line string) string {
		return strings.Replace(base, "  calls_secrets: [\"${CALLS_SECRET}\"]\n", "  calls_secrets: [\"${CALLS_SECRET}\"]\n"+line, 1)
	}
	c, problems := parse(t, with("  features: [approvers]\n"))
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if diff := cmp.Diff([]string{config.FeatureApprovers}, c.Backend.Features); diff != "" || !c.Backend.Supports(config.FeatureApprovers) {
		t.Errorf("features (-want +got):\n%s", diff)
	}
	if !strings.Contains(c.Summary(), "backend https://jobs.acme.example (1 events secret, 1 calls secret; features approvers)\n") {
		t.Errorf("summary:\n%s", c.Summary())
	}
	c, _ = parse(t, base)
	if c.Backend.Features != nil || c.Backend.Supports(config.FeatureApprovers) {
		t.Errorf("a backend with no features supports %v", c.Backend.Features)
	}

	known := "the known ones are approvers, typed_confirmation, grants, turns, questions (docs/protocol.md#optional-features)"
	for _, tt := range []struct {
		name, line string
		want       []string
	}{
		{"unknown", "  features: [approvers, votes]\n", []string{
			`bot.yaml:5: backend.features[1]: "votes" is not a feature the bot knows: ` + known,
		}},
		{"twice", "  features: [approvers, approvers]\n", []string{
			`bot.yaml:5: backend.features[1]: approvers is already backend.features[0]`,
		}},
		{"empty", "  features: [\"\"]\n", []string{
			`bot.yaml:5: backend.features[0]: empty: name a feature the backend supports (approvers, typed_confirmation, grants, turns, questions)`,
		}},
		{"not a list", "  features: approvers\n", []string{
			`bot.yaml:5: backend.features: expected a list, got a string (a list of one is written in brackets: [item])`,
		}},
		{"not text", "  features: [[approvers]]\n", []string{
			`bot.yaml:5: backend.features[0]: expected a feature's name, got a list`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got := parse(t, with(tt.line))
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
