package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/internal/fixtures"
)

// runBot runs a command line in-process with the environment env.
func runBot(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut, lookup(env))
	return code, out.String(), errOut.String()
}

// Every command's -h is asked for, not a mistake: it exits 0 with a
// usage line that names the command's files, and an example.
func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	for cmd, files := range map[string]string{
		"serve": "", "check": "", "event": " EVENT.json", "preview": " EVENT.json",
		"backend": "", "migrate": "", "backup": " OUT.db", "doctor": "", "report": "", "turn": " EVENT.json EVENT.json EVENT.json",
		"question": " TEXT",
	} {
		if cmd == "version" {
			continue
		}
		for _, h := range []string{"-h", "--help"} {
			code, out, errOut := runBot(t, nil, cmd, h)
			if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: bot "+cmd+" [flags]"+files+"\n") ||
				!strings.Contains(out, "\nexample:\n  bot "+cmd+" ") || !strings.Contains(out, "\nflags:\n") || !strings.Contains(out, "\n  -config") {
				t.Errorf("bot %s %s: exit %d, stderr %q, stdout:\n%s", cmd, h, code, errOut, out)
			}
		}
	}
}

// A command line that cannot run is a usage error (exit 2) that says
// why in one line with one prefix (never "bot preview: preview: …"),
// then the usage line when the flags or files are wrong.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	merge := filepath.Join(root, "testdata", "fixtures", "events", "merge.json")
	example := filepath.Join(root, "examples", "bot.yaml")
	for _, c := range []struct {
		args  []string
		want  string
		usage bool // the usage line follows
	}{
		{[]string{"preview", "--as", "slak", merge}, `bot preview: --as "slak": want slack, discord, email or text`, true},
		{[]string{"preview", "--state", "unknown", merge}, `bot preview: --state "unknown": want pending, deciding, approved, denied, expired, cancelled, refused, answered, superseded`, true},
		{[]string{"preview", example}, "bot preview: " + example + ": expected an event file (a JSON event like testdata/fixtures/events/merge.json; a configuration goes with --config)", false},
		{[]string{"event", "--config", example, example}, "bot event: " + example + ": expected an event file", false},
		{[]string{"preview"}, "bot preview: missing EVENT.json", true},
		{[]string{"preview", merge, merge}, "bot preview: wants EVENT.json, got 2 files: ", true},
		{[]string{"preview", "--ass", "slack", merge}, "bot preview: flag provided but not defined: -ass", true},
		{[]string{"check", example}, "bot check: takes no file: give the configuration as --config " + example, true},
		{[]string{"backup", "--config", example}, "bot backup: missing OUT.db", true},
		{[]string{"version", "--bogus"}, "bot version: flag provided but not defined: -bogus", true},
	} {
		code, out, errOut := runBot(t, map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}, c.args...)
		name := strings.Join(c.args, " ")
		lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
		if code != 2 || out != "" || !strings.HasPrefix(lines[0], c.want) || strings.Count(lines[0], c.args[0]+": ") != 1 {
			t.Errorf("bot %s: exit %d, stdout %q, stderr:\n%s\nwant exit 2 and %q", name, code, out, errOut, c.want)
		}
		if usage := "usage: bot " + c.args[0] + " [flags]"; c.usage && (len(lines) != 2 || !strings.HasPrefix(lines[1], usage)) ||
			!c.usage && len(lines) != 1 {
			t.Errorf("bot %s: stderr:\n%s\nwant the usage line (%s…) %v", name, errOut, usage, c.usage)
		}
	}
}

// Flags after the file are read as before it.
func TestFlagsAfterTheFile(t *testing.T) {
	t.Parallel()
	merge, err := fixtures.Path("events", "merge.json")
	if err != nil {
		t.Fatal(err)
	}
	code, before, errOut := runBot(t, nil, "preview", "--as", "slack", "--state", "denied", merge)
	if code != 0 || errOut != "" {
		t.Fatalf("preview with flags before the file: %d %s", code, errOut)
	}
	code, after, errOut := runBot(t, nil, "preview", merge, "--as", "slack", "--state", "denied")
	if code != 0 || errOut != "" || after != before || !strings.HasPrefix(after, "{") {
		t.Errorf("preview with flags after the file: %d %s\n%s", code, errOut, after)
	}
}

// A refused connection asks whether bot serve runs where the
// configuration says it listens.
func TestEventAsksWhetherTheBotRuns(t *testing.T) {
	t.Parallel()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "examples", "bot.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	down := closedAddr(t)
	cfg := filepath.Join(t.TempDir(), "bot.yaml")
	if err := os.WriteFile(cfg, bytes.Replace(raw, []byte(`listen: "127.0.0.1:8080"`), []byte(`listen: "`+down+`"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	merge := filepath.Join(root, "testdata", "fixtures", "events", "merge.json")
	code, _, errOut := runBot(t, map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}, "event", "--config", cfg, merge)
	want := "bot event: nothing answers at " + down + " (listen in " + cfg + "): is bot serve running there? (dial tcp " + down + ": connect: connection refused)\n"
	if code != 1 || errOut != want {
		t.Errorf("bot event to a bot that does not run: exit %d\n%s\nwant:\n%s", code, errOut, want)
	}
}

// bot version -h says what it does and exits 0, as every command does.
func TestVersionHelp(t *testing.T) {
	t.Parallel()
	code, out, errOut := runBot(t, nil, "version", "-h")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "usage: bot version [flags]\n") {
		t.Errorf("bot version -h: exit %d, stderr %q, stdout:\n%s", code, errOut, out)
	}
}
