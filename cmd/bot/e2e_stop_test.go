package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// stopConfig writes a configuration whose one tenant's deadline comes two
// seconds after a request, with the given backend and stop timeout.
func stopConfig(t *testing.T, dir, backendURL string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store:
  driver: sqlite
  dsn: "file:%s"
tick: 1s
stop_timeout: 2s
log:
  level: debug
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    deadline: 2s
    post: [slack:C0APPROVALS]
`, filepath.Join(dir, "bot.db"), backendURL)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// SIGTERM while the deadline's deny is being sent to a job backend that
// takes the connection and never answers: the bot exits within its stop
// timeout (the client alone would have retried for a minute, and the row
// was allowed 90 s), the deny stays in the outbox, and the next start
// sends it, under the same idempotency key, to the backend now up.
func TestStopIsBoundedWhileTheBackendHangs(t *testing.T) {
	dir := t.TempDir()
	keys := make(chan string, 16)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		keys <- r.Header.Get("Idempotency-Key")
		io.Copy(io.Discard, r.Body) // read to the end, so the server sees the bot hang up
		<-r.Context().Done()        // holds the call until the bot gives up on it
	}))
	defer hung.Close()
	cfg := stopConfig(t, dir, hung.URL)
	bot := startBot(t, cfg)
	body, _ := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	var key string
	select {
	case key = <-keys: // the deadline's deny is in flight
	case err := <-bot.done:
		t.Fatalf("the bot exited: %v\n%s", err, bot.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the deadline's deny never reached the backend\n%s", bot.stderr.String())
	}
	if err := bot.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bot.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, bot.stderr.String())
		}
	case <-time.After(45 * time.Second): // far past the 2 s bound, short of the 60 s of retries
		t.Fatalf("no exit after SIGTERM while the backend hangs\n%s", bot.stderr.String())
	}
	logs := bot.stderr.String()
	for _, want := range []string{`"msg":"outbox row stopped in flight; it stays in the outbox for the next start"`,
		`"msg":"stopped"`, `"stop_timeout":"2s"`} {
		if !strings.Contains(logs, want) {
			t.Errorf("the stop's log lacks %s:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, `"stop_timeout":2000000000`) {
		t.Error("a duration was logged in nanoseconds")
	}

	// The next start, with the backend up: the same deny, once.
	fake := ladderBackend(t)
	stopConfig(t, dir, fake.URL())
	second := startBot(t, cfg)
	deadline := time.Now().Add(30 * time.Second)
	for len(fake.Decisions()) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after the restart the deny never reached the backend\n%s", second.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	got := fake.Decisions()
	if len(got) != 1 || got[0].IdempotencyKey != key || got[0].Request.Decision != "deny" ||
		got[0].Request.Actor != "system:deadline" || got[0].Status != http.StatusOK {
		t.Errorf("after the restart the backend got %+v; want the deadline's deny once, under key %s", got, key)
	}
}

// A second SIGTERM during a stop ends the process at once, as it would
// without the bot's handler: an operator who will not wait is not made to.
func TestASecondSignalEndsTheStop(t *testing.T) {
	dir := t.TempDir()
	calls := make(chan struct{}, 16)
	hung := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- struct{}{}
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
	}))
	defer hung.Close()
	cfg := stopConfig(t, dir, hung.URL)
	if err := os.WriteFile(cfg, []byte(strings.Replace(mustRead(t, cfg), "stop_timeout: 2s", "stop_timeout: 1m", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	bot := startBot(t, cfg)
	body, _ := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	select {
	case <-calls: // the deny is in flight, and the stop will wait for it
	case <-time.After(30 * time.Second):
		t.Fatalf("the deadline's deny never reached the backend\n%s", bot.stderr.String())
	}
	if err := bot.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(bot.stderr.String(), `"msg":"stopping: no new work; finishing what is in flight"`) {
		if time.Now().After(deadline) {
			t.Fatalf("the stop never began\n%s", bot.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := bot.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bot.done:
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
			t.Errorf("after a second SIGTERM: %v, want the process ended by the signal", err)
		}
	case <-time.After(30 * time.Second): // the stop would have waited a minute
		t.Fatalf("a second SIGTERM did not end the stop\n%s", bot.stderr.String())
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
