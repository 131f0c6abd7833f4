package decidepage_test

import (
	"bytes"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/internal/refusal/refusaltest"
	"approvalsbot/internal/syncbuf"
	"approvalsbot/tenant"
)

// TestRefusalsAreCountedNotEachLogged: a flood of forged links and of
// POSTs not from the page's form writes one line per source and reason
// (a minute), while the counter counts every one.
func TestRefusalsAreCountedNotEachLogged(t *testing.T) {
	reg := prometheus.NewRegistry()
	var logs syncbuf.Buffer
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove),
		publicURL: "https://approvals.example", registry: reg, logger: slog.New(slog.NewTextHandler(&logs, nil))})
	p.ingest("merge.json")
	const n = 300
	forged := p.srv.URL + decidepage.Path + "1e30." + strings.Repeat("A", 43)
	for range n {
		if a := p.get(forged); a.status != http.StatusForbidden {
			t.Fatalf("a forged link: %d", a.status)
		}
	}
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	for range n {
		if a := p.post(link, map[string][]string{"action": {"deny"}}); a.status != http.StatusForbidden {
			t.Fatalf("a POST without the form check: %d", a.status)
		}
	}
	var lines []string
	for _, l := range strings.Split(logs.String(), "\n") {
		if strings.Contains(l, "decision page: requests refused") {
			lines = append(lines, l)
		}
	}
	// A minute may turn during the flood: then a line more counts the
	// rest.
	if len(lines) < 2 || len(lines) > 4 {
		t.Fatalf("%d refusals wrote %d lines, want one per reason:\n%s", 2*n, len(lines), strings.Join(lines, "\n"))
	}
	if !strings.Contains(lines[0], `reason="malformed or altered link"`) || !strings.Contains(lines[0], "source=127.0.0.1") {
		t.Errorf("the first line: %s", lines[0])
	}
	if got := refusaltest.Count(t, reg, "bot_decide_requests_refused_total", "other"); got != 2*n {
		t.Errorf("refusals counted %v, want %d", got, 2*n)
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("the backend received %d decisions", n)
	}
}

// countingBody counts what a handler reads of a request's body.
type countingBody struct {
	r    *bytes.Reader
	read int
}

func (c *countingBody) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.read += n
	return n, err
}

func (c *countingBody) Close() error { return nil }

// TestAForgedLinksBodyIsNotRead: a POST to a link this bot did not make
// is refused before a byte of its body is read; a real link's form is.
func TestAForgedLinksBodyIsNotRead(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	form := "check=x&action=deny&reason=" + strings.Repeat("a", 8<<10)
	send := func(path string) (int, int) {
		body := &countingBody{r: bytes.NewReader([]byte(form))}
		req := httptest.NewRequest(http.MethodPost, path, nil)
		req.Body = body
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		rec := httptest.NewRecorder()
		p.handler.ServeHTTP(rec, req)
		return rec.Code, body.read
	}
	if status, read := send(decidepage.Path + "1e30." + strings.Repeat("A", 43)); status != http.StatusForbidden || read != 0 {
		t.Errorf("a forged link: %d after reading %d bytes of its body, want 403 after none", status, read)
	}
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	path := link[strings.Index(link, decidepage.Path):]
	if status, read := send(path); status != http.StatusForbidden || read != len(form) {
		t.Errorf("a real link with a wrong check: %d after reading %d bytes, want 403 after the whole form", status, read)
	}
}
