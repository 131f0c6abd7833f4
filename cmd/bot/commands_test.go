package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `bot check` names the file by the path it was given, and prefixes every
// line of a report of several problems alike.
func TestCheckNamesThePathOnEveryLine(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "conf")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte("tick: soon\nlease: 1s\nbackend:\n  url: ftp://jobs\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", path}, &out, &errOut, lookup(nil)); code != 1 {
		t.Fatalf("check of a bad file: exit %d", code)
	}
	lines := strings.Split(strings.TrimSuffix(errOut.String(), "\n"), "\n")
	if len(lines) < 3 {
		t.Fatalf("want a problem a line, got:\n%s", errOut.String())
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "bot check: "+path+":") {
			t.Errorf("line %q does not start with %q", l, "bot check: "+path+":")
		}
	}
}

// `bot migrate` reads only the store: it runs with none of the backend's
// or the chat surfaces' secrets in its environment.
func TestMigrateNeedsNoOtherSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bot.yaml")
	db := filepath.Join(dir, "bot.db")
	cfg := `store: {driver: sqlite, dsn: "file:` + db + `"}
backend:
  url: "https://jobs.acme.example"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
tenants:
  acme:
    post: [slack:C0APPROVALS]
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"migrate", "--config", path}, &out, &errOut, lookup(nil)); code != 0 {
		t.Fatalf("migrate without secrets: exit %d: %s", code, errOut.String())
	}
	if out.String() != "store sqlite: migrations applied\n" {
		t.Errorf("migrate printed %q", out.String())
	}
	if _, err := os.Stat(db); err != nil {
		t.Errorf("no store after migrate: %v", err)
	}
}

// The serve logger drops records below its level and writes durations as
// durations, at the top level and in groups.
func TestLoggerLevelAndDurations(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	log := newLogger(&b, slog.LevelWarn)
	log.Info("not written")
	log.Warn("written", "wait", 1500*time.Millisecond, slog.Group("retry", "after", 2*time.Minute), "n", 3)
	got := strings.TrimSpace(b.String())
	if strings.Contains(got, "not written") || strings.Count(got, "\n") != 0 {
		t.Fatalf("want the one warning, got:\n%s", got)
	}
	for _, want := range []string{`"msg":"written"`, `"wait":"1.5s"`, `"retry":{"after":"2m0s"}`, `"n":3`} {
		if !strings.Contains(got, want) {
			t.Errorf("%s lacks %s", got, want)
		}
	}
}

// A --log-level that is not a level stops serve before it opens anything.
func TestServeRefusesAnUnknownLogLevel(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := e2eConfig(t, dir)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "--config", cfg, "--log-level", "verbose"}, &out, &errOut,
		lookup(map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret, "BOT_CALLS_SECRET": e2eCallsSecret}))
	if code != 1 || !strings.Contains(errOut.String(), `bot serve: --log-level: "verbose" is not one of debug, info, warn, error`) {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
	if _, err := os.Stat(filepath.Join(dir, "bot.db")); !os.IsNotExist(err) {
		t.Errorf("serve opened the store before refusing: %v", err)
	}
}

// `bot check` prints a push step in its ladder's timeline and how each
// member is pushed to, never where, and refuses a step that names a
// member with no push address.
func TestCheckPrintsThePushStep(t *testing.T) {
	t.Parallel()
	const topic = "https://ntfy.sh/kevin-7f3a9c2e1b"
	cfg := `backend:
  url: "https://jobs.acme.example"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    ladders:
      default:
        - after: 15m
          push: [user:kevin]
    members:
      - {user: user:kevin, role: operator, email: kevin@acme.example, push: {ntfy: "${KEVIN_NTFY}"}}
      - {user: user:lee, role: operator, slack: U0LEE}
`
	env := lookup(map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret, "BOT_CALLS_SECRET": e2eCallsSecret, "KEVIN_NTFY": topic})
	dir := t.TempDir()
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", path}, &out, &errOut, env); code != 0 {
		t.Fatalf("check: exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{
		"secret tenants.acme.members[0].push.ntfy: <secret> from ${KEVIN_NTFY}\n",
		"  push user:kevin by ntfy\n",
		"    15m push user:kevin\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("bot check lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String()+errOut.String(), "kevin-7f3a9c2e1b") {
		t.Errorf("bot check printed the topic:\n%s", out.String())
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte(strings.Replace(cfg, "push: [user:kevin]", "push: [user:kevin, user:lee]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errOut.Reset()
	if code := run(context.Background(), []string{"check", "--config", bad}, &out, &errOut, env); code != 1 {
		t.Fatalf("check of a push to a member without an address: exit %d", code)
	}
	want := "bot check: " + bad + ":11: tenants.acme.ladders.default[0].push[1]: user:lee has no push address to be sent a push: give the member one (tenants.acme.members)\n"
	if errOut.String() != want {
		t.Errorf("bot check said:\n%s\nwant:\n%s", errOut.String(), want)
	}
}
