package backend_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/backend"
)

// TestBadSignaturesAreCountedNotEachLogged: a flood of unsigned events
// from one source writes a line (two if a minute turns), and
// bot_events_total keeps every one.
func TestBadSignaturesAreCountedNotEachLogged(t *testing.T) {
	logs := &syncLog{}
	w := wire(t, slog.New(slog.DiscardHandler))
	reg := prometheus.NewRegistry()
	h := backend.NewHandler(backend.HandlerOptions{Verifier: w.verifier, Ingester: w.service,
		Logger: slog.New(slog.NewJSONHandler(logs, nil)), Registry: reg})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	const n = 1000
	for range n {
		res, err := http.Post(srv.URL, "application/json", bytes.NewReader([]byte(`{}`)))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("unsigned: %d, want 401", res.StatusCode)
		}
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) > 2 || !strings.Contains(lines[0], `"refused":1`) || !strings.Contains(lines[0], `"source":"127.0.0.1"`) {
		t.Fatalf("%d refusals wrote %d lines, want one with its source and count:\n%s", n, len(lines), logs.String())
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var got float64
	for _, mf := range mfs {
		if mf.GetName() != "bot_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["type"] == "unparsed" && labels["answer"] == "bad_signature" {
				got = m.GetCounter().GetValue()
			}
		}
	}
	if got != n {
		t.Errorf("bot_events_total{type=unparsed,answer=bad_signature}: %v, want %d", got, n)
	}
}
