package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/discord/discordtest"
)

// An essential part that stops ends the process, non-zero, for its
// supervisor to start it again: here Discord's gateway refuses the bot
// token, which no reconnection mends. The process stops its other parts
// as at any stop, says why, and exits 1.
func TestAStoppedPartEndsTheProcess(t *testing.T) {
	const appID = "1100000000000000001"
	dc := discordtest.New(t, discordtest.Options{Token: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.the-right-token", ApplicationID: appID})
	dir := t.TempDir()
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: %q
  api_url: %q
tenants:
  acme:
    post: [slack:C0APPROVALS]
`, filepath.Join(dir, "bot.db"), appID, dc.URL())
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	const revoked = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.a-revoked-token"
	cmd := exec.Command(botBinary, "serve", "--config", path)
	cmd.Env = append(botEnv(), "DISCORD_BOT_TOKEN="+revoked)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		<-done
		t.Fatalf("the bot kept running with its gateway refused\n%s", stderr.String())
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exit: %v, want status 1\n%s", err, stderr.String())
	}
	logs := stderr.String()
	for _, want := range []string{`"msg":"an essential part of the bot stopped: stopping the rest, to exit and be restarted"`,
		`"msg":"stopped"`, "\nbot serve: Discord stopped: discord gateway: "} {
		if !strings.Contains(logs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, revoked) {
		t.Error("the token was printed")
	}
}
