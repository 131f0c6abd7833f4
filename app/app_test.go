package app_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	_ "modernc.org/sqlite"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/app"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/internal/syncbuf"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads/threadstest"
)

const (
	eventsSecret = "app-events-secret-0123456789abcdef"
	callsSecret  = "app-calls-secret-0123456789abcdef"
)

// requestedAt is when the fixture merge.json was sent: the bot's clock
// stands there, so the fixture is a fresh event as it is.
var requestedAt = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

// syncBuffer collects what the bot writes while a test reads it.
type syncBuffer = syncbuf.Buffer

// botConfig writes a configuration with the given sections after the
// common ones (a SQLite store in dir, a backend nobody answers at, one
// tenant whose cards go to the log surface) and loads it.
func botConfig(t *testing.T, dir, extra string, env map[string]string) (string, func() (*config.Config, error)) {
	t.Helper()
	text := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
stop_timeout: 5s
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
%s
tenants:
  acme:
    post: [slack:C0APPROVALS]
`, filepath.Join(dir, "bot.db"), extra)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) (string, bool) {
		switch k {
		case "BOT_EVENTS_SECRET":
			return eventsSecret, true
		case "BOT_CALLS_SECRET":
			return callsSecret, true
		}
		v, ok := env[k]
		return v, ok
	}
	return path, func() (*config.Config, error) { return config.Load(path, getenv) }
}

// bot is an app running in the test's process.
type bot struct {
	*app.App
	dir   string
	base  string
	clock *clockwork.FakeClock
	logs  *syncBuffer
	out   *syncBuffer
	ran   chan error // Run's result
}

// startBot builds the bot from the configuration load reads and runs it
// until the test ends.
func startBot(t *testing.T, dir string, load func() (*config.Config, error), reloads <-chan os.Signal) *bot {
	t.Helper()
	cfg, err := load()
	if err != nil {
		t.Fatalf("load the configuration: %v", err)
	}
	b := &bot{dir: dir, clock: clockwork.NewFakeClockAt(requestedAt), logs: &syncBuffer{}, out: &syncBuffer{}, ran: make(chan error, 1)}
	b.App, err = app.New(t.Context(), app.Options{Config: cfg, LoadConfig: load, Reloads: reloads, Clock: b.clock,
		Logger: slog.New(slog.NewJSONHandler(b.logs, &slog.HandlerOptions{Level: slog.LevelDebug})), Stdout: b.out})
	if err != nil {
		t.Fatalf("app.New: %v", err)
	}
	t.Cleanup(b.Stop)
	b.base = "http://" + b.Addr()
	go func() { b.ran <- b.Run(context.WithoutCancel(t.Context())) }()
	return b
}

// exited waits for Run to return and gives its error.
func (b *bot) exited(t *testing.T) error {
	t.Helper()
	select {
	case err := <-b.ran:
		return err
	case <-time.After(30 * time.Second):
		t.Fatalf("the bot did not stop\n%s", b.logs.String())
		return nil
	}
}

func (b *bot) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(b.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// send posts an event signed at the bot's clock and gives the status.
func (b *bot) send(t *testing.T, body []byte) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, b.base+"/v1/events", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(eventsSecret), b.clock.Now(), body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

func mergeEvent(t *testing.T) []byte {
	t.Helper()
	p, err := fixtures.Path("events", "merge.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return body
}

// reopen proves the bot let go of its store: a SQLite store is held by
// one process (one Exclusive store) at a time.
func reopen(t *testing.T, dir string) {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(dir, "bot.db"), Exclusive: true})
	if err != nil {
		t.Fatalf("the store is still held after the bot stopped: %v", err)
	}
	st.Close()
}

// The whole bot in-process: an event in, its card out, healthy and ready;
// Stop ends Run with no error and lets go of the store.
func TestRunServesUntilStopped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	b := startBot(t, dir, load, nil)
	if code := b.send(t, mergeEvent(t)); code != http.StatusAccepted {
		t.Fatalf("event: %d, want 202", code)
	}
	threadstest.Eventually(t, "the card on the log surface", func() bool {
		return strings.Contains(b.out.String(), "(approval a-merge1, revision 1)")
	})
	if code, body := b.get(t, "/healthz"); code != http.StatusOK || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	if code, body := b.get(t, "/readyz"); code != http.StatusOK || body != "ready\n" {
		t.Errorf("/readyz: %d %q", code, body)
	}
	b.Stop()
	if err := b.exited(t); err != nil {
		t.Fatalf("Run after Stop: %v, want nil", err)
	}
	if !strings.Contains(b.logs.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop logged:\n%s", b.logs.String())
	}
	reopen(t, dir)
}

// An essential part that stops takes the bot down: the Discord gateway
// refuses the bot's token, which no reconnection can mend. Run stops the
// rest as at any stop, lets go of the store, and returns why, for `bot
// serve` to exit non-zero.
func TestDiscordRefusingTheTokenStopsTheBot(t *testing.T) {
	t.Parallel()
	const appID = "1100000000000000001"
	dc := discordtest.New(t, discordtest.Options{Token: "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.the-right-token", ApplicationID: appID})
	dir := t.TempDir()
	_, load := botConfig(t, dir, fmt.Sprintf(`discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: %q
  api_url: %q`, appID, dc.URL()), map[string]string{"DISCORD_BOT_TOKEN": "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.a-revoked-token"})
	b := startBot(t, dir, load, nil)
	err := b.exited(t)
	if err == nil || !strings.Contains(err.Error(), "Discord stopped") || strings.Contains(err.Error(), "revoked") {
		t.Fatalf("Run: %v, want Discord's failure, without the token", err)
	}
	logs := b.logs.String()
	for _, want := range []string{`"msg":"an essential part of the bot stopped: stopping the rest, to exit and be restarted"`,
		`"msg":"stopping: no new work; finishing what is in flight"`, `"msg":"stopped"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %s:\n%s", want, logs)
		}
	}
	reopen(t, dir)
}

// Slack refusing the app token ends Socket Mode, and with it the bot.
func TestSlackRefusingTheAppTokenStopsTheBot(t *testing.T) {
	t.Parallel()
	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-app-test"}) // no app token: Socket Mode refused
	dir := t.TempDir()
	_, load := botConfig(t, dir, fmt.Sprintf(`slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  app_token: "${SLACK_APP_TOKEN}"
  api_url: %q`, sl.APIURL()), map[string]string{"SLACK_BOT_TOKEN": "xoxb-app-test", "SLACK_APP_TOKEN": "xapp-refused"})
	b := startBot(t, dir, load, nil)
	err := b.exited(t)
	if err == nil || !strings.Contains(err.Error(), "Slack stopped") || !strings.Contains(err.Error(), "invalid_auth") ||
		strings.Contains(err.Error(), "xapp-refused") {
		t.Fatalf("Run: %v, want Socket Mode's invalid_auth, without the token", err)
	}
	reopen(t, dir)
}

// /readyz asks the store for a write, not a query: while another process
// holds the SQLite file's write lock, it answers 503 (within its own
// bound, not after every writer's busy timeout), though the process is
// healthy; once the lock goes, 200 again.
func TestReadyzFailsWhileTheStoreTakesNoWrites(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	b := startBot(t, dir, load, nil)
	if code, _ := b.get(t, "/readyz"); code != http.StatusOK {
		t.Fatalf("/readyz before the lock: %d", code)
	}
	db, err := sql.Open("sqlite", sqlite.DSN(filepath.Join(dir, "bot.db")))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	holder, err := db.Conn(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	if _, err := holder.ExecContext(t.Context(), `BEGIN IMMEDIATE`); err != nil {
		t.Fatalf("take the write lock: %v", err)
	}
	if code, body := b.get(t, "/readyz"); code != http.StatusServiceUnavailable || body != "store does not take writes\n" {
		t.Errorf("/readyz while another process holds the write lock: %d %q, want 503", code, body)
	}
	if code, _ := b.get(t, "/healthz"); code != http.StatusOK {
		t.Errorf("/healthz while locked: %d, want 200 (the process is alive)", code)
	}
	if _, err := holder.ExecContext(t.Context(), `ROLLBACK`); err != nil {
		t.Fatal(err)
	}
	if code, body := b.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz once the lock is gone: %d %q", code, body)
	}
}

// A reload swaps in the file as it is now; a file that no longer loads
// keeps the configuration in force, and the bot runs on.
func TestReloadsSwapTheConfiguration(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, load := botConfig(t, dir, "", nil)
	reloads := make(chan os.Signal, 1)
	b := startBot(t, dir, load, reloads)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	two := strings.Replace(string(good), "tenants:\n", "tenants:\n  globex:\n    post: [slack:C0GLOBEX]\n", 1)
	if err := os.WriteFile(path, []byte(two), 0o600); err != nil {
		t.Fatal(err)
	}
	reloads <- syscall.SIGHUP
	threadstest.Eventually(t, "the reload logged", func() bool {
		return strings.Contains(b.logs.String(), `"msg":"configuration reloaded`) && strings.Contains(b.logs.String(), `"tenants":2`)
	})
	if err := os.WriteFile(path, []byte("tenants: [this is not a configuration\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	reloads <- syscall.SIGHUP
	threadstest.Eventually(t, "the refused reload logged", func() bool {
		return strings.Contains(b.logs.String(), `"msg":"configuration not reloaded; keeping the one in force"`)
	})
	if code, _ := b.get(t, "/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after a refused reload: %d", code)
	}
	b.Stop()
	if err := b.exited(t); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// A bot built and never run lets go of what New opened when stopped, and
// does not run after.
func TestStopWithoutRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(t.Context(), app.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	a.Stop()
	a.Stop()
	reopen(t, dir)
	if err := a.Run(t.Context()); err == nil {
		t.Error("Run after Stop: nil error")
	}
}

// New fails for a configuration it cannot build, and leaves nothing
// open: here the listen address is taken, and New has opened the store
// by then.
func TestNewReleasesWhatItOpenedOnError(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen = taken.Addr().String()
	if _, err := app.New(t.Context(), app.Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "listen on") {
		t.Fatalf("New on a taken address: %v", err)
	}
	reopen(t, dir)
}
