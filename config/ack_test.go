package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

// A ladder written as a mapping takes its steps and its ack_pause: how
// long "I'm looking" holds the steps still to come. Written as a list it
// holds them the default 30m.
func TestAckPause(t *testing.T) {
	t.Parallel()
	text := oncallBase + `    ladders:
      default:
        ack_pause: 45m
        steps:
          - after: 15m
            mention: [slack:U0KEVIN]
      quick:
        - after: 5m
          mention: [slack:U0KEVIN]
      none: {steps: []}
`
	c, problems := parse(t, text)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	for name, want := range map[string]time.Duration{"default": 45 * time.Minute, "quick": ladder.DefaultAckPause, "none": ladder.DefaultAckPause} {
		if got := acme.Ladders[name].Pause(); got != want {
			t.Errorf("ladder %s pauses %v, want %v", name, got, want)
		}
	}
	if n := len(acme.Ladders["default"].Steps); n != 1 {
		t.Errorf("the long form's steps: %d", n)
	}
	// The pause is frozen into each approval's plan with the steps.
	p := acme.Ladders["default"].Plan(time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC), time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC))
	if p.Pause() != 45*time.Minute {
		t.Errorf("plan pause %v", p.Pause())
	}
	// bot check shows it, in the ladder's timeline.
	sum := c.Summary()
	for _, want := range []string{
		"  ladder default, deadline 24h:\n    0s post slack:C0APPROVALS\n    15m mention slack:U0KEVIN\n    24h deadline: denied, nobody answered\n" +
			"    any time: I'm looking holds the steps to come 45m (never the deadline) · Escalate now fires the next one at once\n",
		"    5m mention slack:U0KEVIN\n    24h deadline: denied, nobody answered\n    any time: I'm looking holds the steps to come 30m",
		// A ladder with no step has nothing to hold.
		"  ladder none, deadline 24h:\n    0s post slack:C0APPROVALS\n    24h deadline: denied, nobody answered\n  ladder quick",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary lacks %q:\n%s", want, sum)
		}
	}
}

func TestAckPauseProblems(t *testing.T) {
	t.Parallel()
	long := func(lines string) string {
		return oncallBase + "    ladders:\n      default:\n" + lines
	}
	steps := "        steps:\n          - after: 15m\n            mention: [slack:U0KEVIN]\n"
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"too short", long("        ack_pause: 500ms\n" + steps), []string{
			`bot.yaml:19: tenants.acme.ladders.default.ack_pause: 500ms is too short: an acknowledgement holds the ladder at least 1s`,
		}},
		{"too long", long("        ack_pause: 48h\n" + steps), []string{
			`bot.yaml:19: tenants.acme.ladders.default.ack_pause: 48h is too long: an acknowledgement holds the ladder at most 24h (the deadline is what ends a call nobody decides)`,
		}},
		{"not a duration", long("        ack_pause: half an hour\n" + steps), []string{
			`bot.yaml:19: tenants.acme.ladders.default.ack_pause: "half an hour" is not a duration (write it like 10s, 15m or 1h30m)`,
		}},
		{"zero", long("        ack_pause: 0s\n" + steps), []string{
			`bot.yaml:19: tenants.acme.ladders.default.ack_pause: 0s is too short: an acknowledgement holds the ladder at least 1s`,
		}},
		{"negative", long("        ack_pause: -5m\n" + steps), []string{
			`bot.yaml:19: tenants.acme.ladders.default.ack_pause: -5m is negative`,
		}},
		{"a typo", long("        ack_paus: 45m\n" + steps), []string{
			`bot.yaml:19: tenants.acme.ladders.default.ack_paus: unknown key (did you mean ack_pause?)`,
		}},
		{"no steps", long("        ack_pause: 45m\n"), []string{
			`bot.yaml:19: tenants.acme.ladders.default.steps: missing: the ladder's steps (a list; [] for none)`,
		}},
		{"a step's problem keeps its path", long("        ack_pause: 45m\n        steps:\n          - after: soon\n            mention: [slack:U0KEVIN]\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default.steps[0].after: "soon" is not a duration (write it like 10s, 15m or 1h30m)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := parse(t, tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
