package config_test

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
)

func TestLogLevel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file string
		want slog.Level
	}{
		{"", slog.LevelInfo},
		{"log:\n", slog.LevelInfo},
		{"log: {level: debug}\n", slog.LevelDebug},
		{"log: {level: info}\n", slog.LevelInfo},
		{"log: {level: warn}\n", slog.LevelWarn},
		{"log: {level: error}\n", slog.LevelError},
	} {
		cfg, err := config.Parse("bot.yaml", []byte(c.file+backendOnly), baseEnv(nil))
		if err != nil {
			t.Fatalf("%q: %v", c.file, err)
		}
		if cfg.Log.Level != c.want {
			t.Errorf("%q: level %v, want %v", c.file, cfg.Log.Level, c.want)
		}
	}
	for file, want := range map[string]string{
		"log: {level: verbose}\n": `bot.yaml:1: log.level: "verbose" is not one of debug, info, warn, error`,
		"log: {level: INFO}\n":    `bot.yaml:1: log.level: "INFO" is not one of debug, info, warn, error`,
		"log: {format: json}\n":   "bot.yaml:1: log.format: unknown key",
		"log: debug\n":            "bot.yaml:1: log: expected a mapping, got a string",
	} {
		_, err := config.Parse("bot.yaml", []byte(file+backendOnly), baseEnv(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", file, err, want)
		}
	}
}

func TestParseLogLevel(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError} {
		if got, err := config.ParseLogLevel(s); err != nil || got != want {
			t.Errorf("ParseLogLevel(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if _, err := config.ParseLogLevel("warning"); err == nil || !strings.Contains(err.Error(), `"warning" is not one of debug, info, warn, error`) {
		t.Errorf("ParseLogLevel(warning): %v", err)
	}
}

func TestStopTimeout(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		file string
		want time.Duration
	}{
		{"", config.DefaultStopTimeout},
		{"stop_timeout: 25s\n", 25 * time.Second},
		{"stop_timeout: 1s\n", time.Second},
		// The default stays under a short lease, so a stop never outlasts
		// the claims it holds.
		{"lease: 6s\n", 3 * time.Second},
		{"lease: 6s\nstop_timeout: 5s\n", 5 * time.Second},
	} {
		cfg, err := config.Parse("bot.yaml", []byte(c.file+backendOnly), baseEnv(nil))
		if err != nil {
			t.Fatalf("%q: %v", c.file, err)
		}
		if cfg.StopTimeout != c.want {
			t.Errorf("%q: stop timeout %v, want %v", c.file, cfg.StopTimeout, c.want)
		}
	}
	for file, want := range map[string]string{
		"stop_timeout: 500ms\n":          "bot.yaml:1: stop_timeout: 500ms is too short: at least 1s",
		"stop_timeout: soon\n":           `bot.yaml:1: stop_timeout: "soon" is not a duration`,
		"stop_timeout: -5s\n":            "bot.yaml:1: stop_timeout: -5s is negative",
		"stop_timeout: 2m\n":             "bot.yaml:1: stop_timeout: 2m is not shorter than lease (2m)",
		"lease: 10s\nstop_timeout: 1m\n": "bot.yaml:2: stop_timeout: 1m is not shorter than lease (10s)",
	} {
		_, err := config.Parse("bot.yaml", []byte(file+backendOnly), baseEnv(nil))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", file, err, want)
		}
	}
}

// LoadStore reads the store, and nothing else: `bot migrate` and `bot
// backup` need no backend or chat secrets, and a file whose other
// sections are wrong still names its store.
func TestLoadStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	noEnv := envOf(nil)
	cases := []struct {
		name, file string
		env        map[string]string
		want       config.Store
	}{
		{"the default store", backendOnly, nil, config.Store{Driver: "sqlite", DSN: "file:bot.db"}},
		{"sqlite, other sections unreadable",
			"store: {driver: sqlite, dsn: \"file:/var/lib/approvalsbot/bot.db\"}\n" + backendOnly + "tick: soon\nslack:\n  bot_token: \"${SLACK_BOT_TOKEN}\"\n",
			nil, config.Store{Driver: "sqlite", DSN: "file:/var/lib/approvalsbot/bot.db"}},
		{"postgres, its password from the environment",
			"store:\n  driver: postgres\n  dsn: \"postgres://bot:${PGPASSWORD}@db.internal/bot\"\n" + backendOnly,
			map[string]string{"PGPASSWORD": "p@ss/word"},
			config.Store{Driver: "postgres", DSN: "postgres://bot:p%40ss%2Fword@db.internal/bot"}},
		{"an empty file", "", nil, config.Store{Driver: "sqlite", DSN: "file:bot.db"}},
	}
	for _, c := range cases {
		env := noEnv
		if c.env != nil {
			env = envOf(c.env)
		}
		got, err := config.LoadStore(write(strings.ReplaceAll(c.name, " ", "-")+".yaml", c.file), env)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", c.name, diff)
		}
	}

	// The store's own problems are reported, at the path given.
	path := write("bad.yaml", "# the store\nstore:\n  driver: mysql\n  dsn: \"${DSN}\"\n")
	_, err := config.LoadStore(path, noEnv)
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("LoadStore of a bad store: %v, want *config.Error", err)
	}
	want := path + `:3: store.driver: "mysql" is not one of sqlite, postgres` + "\n" +
		path + ":4: store.dsn: environment variable DSN is not set"
	if err.Error() != want {
		t.Errorf("LoadStore problems:\n%s\nwant:\n%s", err, want)
	}
	if _, err := config.LoadStore(write("list.yaml", "- store\n"), noEnv); err == nil ||
		!strings.Contains(err.Error(), "list.yaml:1: expected a mapping, got a list") {
		t.Errorf("LoadStore of a list: %v", err)
	}
	if _, err := config.LoadStore(filepath.Join(dir, "missing.yaml"), noEnv); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadStore of a missing file: %v, want os.ErrNotExist", err)
	}
}
