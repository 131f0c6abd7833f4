package pagesec_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"approvalsbot/internal/pagesec"
)

func TestSet(t *testing.T) {
	for _, csp := range []string{pagesec.NoScript, pagesec.WithScript} {
		rec := httptest.NewRecorder()
		pagesec.Set(rec, csp)
		h := rec.Header()
		if h.Get("Content-Security-Policy") != csp || h.Get("Cache-Control") != "no-store" || h.Get("X-Frame-Options") != "DENY" ||
			h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("headers %v", h)
		}
	}
	if strings.Contains(pagesec.NoScript, "script-src") || !strings.Contains(pagesec.WithScript, "script-src 'self'") ||
		strings.Contains(pagesec.WithScript, "unsafe-eval") {
		t.Errorf("policies: %q / %q", pagesec.NoScript, pagesec.WithScript)
	}
}
