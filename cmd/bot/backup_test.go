package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// writeConfig writes text as dir/bot.yaml and returns its path.
func writeConfig(t *testing.T, dir, text string) string {
	t.Helper()
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// `bot backup` needs only the store (no secret of the backend's), refuses
// to overwrite, says what to do for PostgreSQL, and copies nothing that is
// not there.
func TestBackupCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "bot.db")
	migratedStore(t, db)
	cfg := writeConfig(t, dir, `store: {dsn: "file:`+db+`"}
backend:
  url: "https://jobs.acme.example"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
`)
	backup := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"backup", "--config", cfg}, args...), &out, &errOut, lookup(nil))
		return code, out.String(), errOut.String()
	}
	copyPath := filepath.Join(dir, "bot-copy.db")
	code, out, errOut := backup(copyPath)
	if code != 0 || !strings.HasPrefix(out, "backed up "+db+" to "+copyPath+" (") || !strings.Contains(out, "to restore: stop the bot") {
		t.Fatalf("backup: exit %d\n%s%s", code, out, errOut)
	}
	fi, err := os.Stat(copyPath)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the copy: %v %v, want -rw-------", fi, err)
	}
	before, _ := os.ReadFile(copyPath)
	if code, _, errOut := backup(copyPath); code != 1 || !strings.Contains(errOut, "exists already: a backup never overwrites a file") {
		t.Errorf("a second backup onto the same file: exit %d, %q", code, errOut)
	}
	if after, _ := os.ReadFile(copyPath); !bytes.Equal(before, after) {
		t.Error("the existing copy was changed")
	}
	if code, _, _ := backup(); code != 2 {
		t.Errorf("backup without OUT: exit %d, want 2 (usage)", code)
	}

	other := t.TempDir()
	missing := filepath.Join(other, "bot.db")
	cfg = writeConfig(t, other, `store: {dsn: "file:`+missing+`"}`+"\n")
	if code, _, errOut := backup(filepath.Join(other, "copy.db")); code != 1 || !strings.Contains(errOut, "no SQLite store at "+missing) {
		t.Errorf("backup of a store never made: exit %d, %q", code, errOut)
	}
	if _, err := os.Stat(missing); !os.IsNotExist(err) {
		t.Errorf("backup created the store it was to copy: %v", err)
	}
	cfg = writeConfig(t, other, "store:\n  driver: postgres\n  dsn: \"postgres://bot:${PGPASSWORD}@db.internal/bot\"\n")
	var out2, errOut2 bytes.Buffer
	code = run(context.Background(), []string{"backup", "--config", cfg, filepath.Join(other, "pg.db")}, &out2, &errOut2,
		lookup(map[string]string{"PGPASSWORD": "secret-password"}))
	if code != 1 || !strings.Contains(errOut2.String(), "pg_dump") || strings.Contains(errOut2.String(), "secret-password") {
		t.Errorf("backup of PostgreSQL: exit %d, %q; want the pg_dump advice and no password", code, errOut2.String())
	}
}

// Backed up while the bot serves (holding the store's lock), and
// restored as docs/operations.md ("Backups") says: a bot started on the
// copy holds what the first one had accepted.
func TestBackupWhileServingAndRestore(t *testing.T) {
	dir := t.TempDir()
	cfg := e2eConfig(t, dir)
	bot := startBot(t, cfg)
	ev := eventsNow(t)
	merge := ev.event(t, "merge.json")
	if a := bot.send(t, merge, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	copyPath := filepath.Join(dir, "backup.db")
	backup := exec.Command(botBinary, "backup", "--config", cfg, copyPath)
	backup.Env = os.Environ() // no secret at all: the store is all it reads
	if out, err := backup.CombinedOutput(); err != nil {
		t.Fatalf("bot backup beside the serving bot: %v\n%s", err, out)
	}
	if err := bot.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-bot.done:
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}

	// Restore into a new place: the copy becomes the store.
	restored := t.TempDir()
	data, err := os.ReadFile(copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(restored, "bot.db"), data, 0o600); err != nil {
		t.Fatal(err)
	}
	again := startBot(t, e2eConfig(t, restored))
	if a := again.send(t, merge, nil); a.Status != http.StatusOK || a.State != "duplicate" {
		t.Errorf("the event sent again to the restored bot: %+v, want 200 duplicate (it is in the copy)", a)
	}
}
