package app

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/internal/bodybudget"
	"approvalsbot/threads/threadstest"
)

// The body budget counts sources with the configured IPv6 prefix: two
// bodies from two /56 of one /48 share one source under 48, two under
// the default.
func TestBodyBudgetSourcesByPrefix(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		prefix, sources int
	}{{48, 1}, {0, 2}} {
		budget, err := bodyBudget(prometheus.NewRegistry(), tt.prefix)
		if err != nil {
			t.Fatal(err)
		}
		h := budget.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = bodybudget.Read(w, r, 1<<20)
		}))
		done := make(chan struct{})
		var writers []*io.PipeWriter
		for _, addr := range []string{"[2001:db8:0:100::1]:4000", "[2001:db8:0:200::1]:4000"} {
			pr, pw := io.Pipe()
			writers = append(writers, pw)
			req := httptest.NewRequest(http.MethodPost, "/v1/events", pr)
			req.RemoteAddr, req.ContentLength = addr, 1000
			go func() { h.ServeHTTP(httptest.NewRecorder(), req); done <- struct{}{} }()
		}
		// Both bodies hold their bytes while their sender stalls.
		threadstest.Eventually(t, "both bodies admitted", func() bool { return budget.Used() == 2*1001 })
		if got := budget.Sources(); got != tt.sources {
			t.Errorf("prefix %d: %d sources, want %d", tt.prefix, got, tt.sources)
		}
		for _, pw := range writers {
			_, _ = io.Copy(pw, strings.NewReader(strings.Repeat("x", 1000)))
			pw.Close()
		}
		<-done
		<-done
	}
}
