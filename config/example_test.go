package config_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/config"
)

// The example the README points to stays a working configuration, and
// `bot check` shows its rotation's turns.
func TestExampleIsValid(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"BOT_EVENTS_SECRET": strings.Repeat("e", config.MinHMACKey),
		"BOT_CALLS_SECRET":  strings.Repeat("c", config.MinHMACKey),
		"BOT_LINK_SECRET":   strings.Repeat("l", config.MinHMACKey),
	}
	c, err := config.Load(filepath.Join("..", "examples", "bot.yaml"), envOf(env))
	if err != nil {
		t.Fatalf("examples/bot.yaml:\n%v", err)
	}
	s := c.SummaryAt(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC))
	for _, want := range []string{
		"  rotation primary: user:kevin, user:ada take turns of 1w, handing off mon 09:00 Europe/Berlin, the first on 2026-11-30; 1 override\n",
		"    on duty now: user:kevin until Mon 2026-12-07 09:00 CET\n",
		"15m mention rotation:primary slack:S0ONCALL (then every 30m, 3 more times)",
		"1h email leads@acme.example kevin@acme.example · during mon-fri 09:00-18:00 Europe/Berlin",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
}
