package app_test

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"approvalsbot/adapters/backend"
	"approvalsbot/app"
)

// status sends a request to base+path (an event signed at the bot's
// clock when body is not nil) and gives the answer's status and body.
func status(t *testing.T, b *bot, base, path string, body []byte) (int, string) {
	t.Helper()
	method := http.MethodGet
	if body != nil {
		method = http.MethodPost
	}
	req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(eventsSecret), b.clock.Now(), body))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s%s: %v", method, base, path, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(got)
}

// With listen_private, the job backend's events and the metrics are
// served there only, health on both, and each listener's connection and
// body budget metrics say which it is: each has its own budget.
func TestPrivateListenerServesEventsAndMetrics(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, load := botConfig(t, dir, `listen_private: "127.0.0.1:0"`, nil)
	b := startBot(t, dir, load, nil)
	if b.PrivateAddr() == "" || b.PrivateAddr() == b.Addr() {
		t.Fatalf("private address %q beside public %q", b.PrivateAddr(), b.Addr())
	}
	public, private := b.base, "http://"+b.PrivateAddr()

	if code, _ := status(t, b, public, "/v1/events", mergeEvent(t)); code != http.StatusNotFound {
		t.Errorf("a signed event on the public listener: %d, want 404", code)
	}
	if code, body := status(t, b, private, "/v1/events", mergeEvent(t)); code != http.StatusAccepted {
		t.Errorf("a signed event on the private listener: %d %s, want 202", code, body)
	}
	if code, _ := status(t, b, public, "/metrics", nil); code != http.StatusNotFound {
		t.Errorf("/metrics on the public listener: %d, want 404", code)
	}
	code, metrics := status(t, b, private, "/metrics", nil)
	if code != http.StatusOK {
		t.Errorf("/metrics on the private listener: %d, want 200", code)
	}
	for _, series := range []string{`bot_connections_open{listener="public"}`, `bot_connections_open{listener="private"}`,
		`bot_connections_refused_total{listener="private",reason="total"}`, `bot_events_total{answer="accepted"`,
		`bot_body_budget_bytes{listener="public"} 0`, `bot_body_budget_bytes{listener="private"} 0`,
		`bot_body_budget_refused_total{listener="public",reason="busy"}`,
		`bot_body_budget_refused_total{listener="private",reason="busy"}`} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics on the private listener lacks %s", series)
		}
	}
	for _, base := range []string{public, private} {
		for path, want := range map[string]string{"/healthz": "ok\n", "/readyz": "ready\n"} {
			if code, body := status(t, b, base, path, nil); code != http.StatusOK || body != want {
				t.Errorf("GET %s%s: %d %q, want 200 %q", base, path, code, body, want)
			}
		}
	}
	if !strings.Contains(b.logs.String(), `"listen_private":"`+b.PrivateAddr()+`"`) {
		t.Errorf("the serving line does not name the private listener:\n%s", b.logs.String())
	}
}

// Without listen_private, one listener serves everything, as before
// there could be two, and its connection and body budget metrics carry
// no listener.
func TestOneListenerServesEverything(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	b := startBot(t, dir, load, nil)
	if b.PrivateAddr() != "" {
		t.Fatalf("PrivateAddr = %q without listen_private", b.PrivateAddr())
	}
	if code, body := status(t, b, b.base, "/v1/events", mergeEvent(t)); code != http.StatusAccepted {
		t.Errorf("a signed event: %d %s, want 202", code, body)
	}
	code, metrics := status(t, b, b.base, "/metrics", nil)
	if code != http.StatusOK {
		t.Errorf("/metrics: %d, want 200", code)
	}
	for _, series := range []string{"\nbot_connections_open ", "\nbot_body_budget_bytes 0\n", "\nbot_body_budget_refused_total{reason=\"busy\"} "} {
		if !strings.Contains(metrics, series) {
			t.Errorf("/metrics lacks %q, unlabelled", strings.TrimSpace(series))
		}
	}
}

// A private address that is taken fails New, which lets go of the
// public listener and the store.
func TestNewReleasesThePublicListenerWhenThePrivateIsTaken(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	public := free.Addr().String()
	free.Close()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	cfg, err := load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Listen, cfg.ListenPrivate = public, taken.Addr().String()
	if _, err := app.New(t.Context(), app.Options{Config: cfg}); err == nil || !strings.Contains(err.Error(), "listen on "+cfg.ListenPrivate) {
		t.Fatalf("New with the private address taken: %v", err)
	}
	reopen(t, dir)
	again, err := net.Listen("tcp", public)
	if err != nil {
		t.Fatalf("the public address is still held: %v", err)
	}
	again.Close()
}
