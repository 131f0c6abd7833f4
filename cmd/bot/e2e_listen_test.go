package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
)

// listenConfig is e2eConfig with listen_private set to private.
func listenConfig(t *testing.T, dir, private string) string {
	t.Helper()
	path := e2eConfig(t, dir)
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text = append(fmt.Appendf(nil, "listen_private: %q\n", private), text...)
	if err := os.WriteFile(path, text, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// call sends a request to url (an event signed now when body is not nil)
// and gives the status and the body.
func call(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	method := http.MethodGet
	if body != nil {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(e2eEventsSecret), time.Now(), body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// With listen_private, `bot serve` takes the backend's events and serves
// the metrics on the private listener only (the public one answers them
// 404), health on both; `bot check` names both listeners and `bot event`
// sends to the private one.
func TestPrivateListenerTakesEventsAndMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	private := freeAddr(t)
	cfg := listenConfig(t, dir, private)
	bot := startBot(t, cfg)
	if bot.private != "http://"+private || bot.private == bot.base {
		t.Fatalf("bot serving on %s and %q, want the private listener at %s", bot.base, bot.private, private)
	}
	ev := eventsNow(t)

	if code, body := call(t, bot.base+"/v1/events", ev.event(t, "merge.json")); code != http.StatusNotFound {
		t.Errorf("an event on the public listener: %d %s, want 404", code, body)
	}
	if code, body := call(t, bot.private+"/v1/events", ev.event(t, "merge.json")); code != http.StatusAccepted {
		t.Errorf("an event on the private listener: %d %s, want 202", code, body)
	}
	if code, _ := call(t, bot.base+"/metrics", nil); code != http.StatusNotFound {
		t.Errorf("/metrics on the public listener: %d, want 404", code)
	}
	if code, body := call(t, bot.private+"/metrics", nil); code != http.StatusOK || !strings.Contains(body, `bot_events_total{answer="accepted"`) {
		t.Errorf("/metrics on the private listener: %d, want 200 with the accepted event counted", code)
	}
	for _, base := range []string{bot.base, bot.private} {
		for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n"} {
			if code, body := call(t, base+path, nil); code != http.StatusOK || body != want {
				t.Errorf("GET %s%s: %d %q, want 200 %q", base, path, code, body, want)
			}
		}
	}

	var out, errOut bytes.Buffer
	if code := run(context.Background(), []string{"check", "--config", cfg}, &out, &errOut, lookup(doctorEnv)); code != 0 ||
		!strings.HasPrefix(out.String(), "listen 127.0.0.1:0: interactions, decision page, health\nlisten_private "+private+": events, metrics, health\n") {
		t.Errorf("bot check: exit %d, %s\n%s", code, errOut.String(), out.String())
	}

	file := filepath.Join(dir, "merge.json")
	if err := os.WriteFile(file, ev.event(t, "merge.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(botBinary, "event", "--config", cfg, file)
	cmd.Env = botEnv()
	if sent, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(sent), "202 Accepted") {
		t.Errorf("bot event to listen_private: %v\n%s", err, sent)
	}
}

// Without listen_private, one listener serves events, metrics and
// health, as the quick start has it.
func TestOneListenerTakesEverything(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bot := startBot(t, e2eConfig(t, dir))
	if bot.private != "" {
		t.Fatalf("a private listener at %s without listen_private", bot.private)
	}
	if code, body := call(t, bot.base+"/v1/events", eventsNow(t).event(t, "merge.json")); code != http.StatusAccepted {
		t.Errorf("an event: %d %s, want 202", code, body)
	}
	for path, want := range map[string]int{"/metrics": http.StatusOK, "/healthz": http.StatusOK, "/readyz": http.StatusOK} {
		if code, _ := call(t, bot.base+path, nil); code != want {
			t.Errorf("GET %s: %d, want %d", path, code, want)
		}
	}
}
