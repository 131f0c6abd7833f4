package main

import (
	"strings"
	"testing"
	"time"
)

// checkDeadlineFigures: the running bot counts the deadline's deny on
// /metrics as the figures of fatigue say it (docs/operations.md,
// "Approval fatigue"): a deny of the default ladder, a close observed as
// expired, both steps fired by the ladder's time, and every tenant's
// counters present from the start.
func checkDeadlineFigures(t *testing.T, bot *botProc) {
	t.Helper()
	want := []string{
		`bot_deadline_denies_total{ladder="default",tenant="acme"} 1` + "\n",
		`bot_approval_decision_seconds_count{effect="destructive",outcome="expired",tenant="acme"} 1` + "\n",
		`bot_ladder_steps_fired_total{how="time",ladder="default",tenant="acme"} 2` + "\n",
		`bot_ladder_steps_fired_total{how="person",ladder="default",tenant="acme"} 0` + "\n",
		`bot_quick_destructive_approvals_total{surface="slack",tenant="acme"} 0` + "\n",
		`bot_repeat_approvals_total{tenant="acme"} 0` + "\n",
	}
	var metrics string
	pollUntil(t, 5*time.Second, "the deadline's deny counted", func() bool {
		_, metrics = bot.get(t, "/metrics")
		for _, w := range want {
			if !strings.Contains(metrics, w) {
				return false
			}
		}
		return true
	}, func() string { return linesWith(metrics, "bot_") })
	// Nobody acted: no first look.
	if strings.Contains(metrics, `bot_approval_first_look_seconds_count{tenant="acme"}`) {
		t.Errorf("a first look observed though nobody acted:\n%s", linesWith(metrics, "first_look"))
	}
}
