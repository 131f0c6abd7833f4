package backend_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/backend"
	"approvalsbot/internal/bodybudget"
)

// TestSignedEventWhileUnsignedBodiesHoldTheBudget: eight sources each
// hold an unsigned 1 MiB body stalled after 900 KiB, which together fill
// the budget; a signed event from a source of its own is still read and
// accepted (one stalled body is cut off and answered 503), and any more
// from the flooding sources are answered 503 unread.
func TestSignedEventWhileUnsignedBodiesHoldTheBudget(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2 and on: Linux only")
	}
	const sources, body = 8, 1 << 20
	log := slog.New(slog.DiscardHandler)
	w := wire(t, log)
	budget, err := bodybudget.New(bodybudget.Options{Total: sources * (body + 1)})
	if err != nil {
		t.Fatal(err)
	}
	h := backend.NewHandler(backend.HandlerOptions{Verifier: w.verifier, Ingester: w.service,
		Logger: log, Registry: prometheus.NewRegistry()})
	srv := httptest.NewServer(budget.Handler(h))
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")

	dial := func(from string) net.Conn {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
		c, err := d.Dial("tcp", addr)
		if err != nil {
			t.Fatalf("dial from %s: %v", from, err)
		}
		t.Cleanup(func() { c.Close() })
		c.SetDeadline(time.Now().Add(20 * time.Second)) // no connection outlives a stuck test
		return c
	}
	unsigned := func(from string, sent int) net.Conn {
		c := dial(from)
		fmt.Fprintf(c, "POST /v1/events HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", body)
		if _, err := c.Write(bytes.Repeat([]byte(" "), sent)); err != nil {
			t.Fatal(err)
		}
		return c
	}
	var stalled []net.Conn
	for i := range sources {
		stalled = append(stalled, unsigned(fmt.Sprintf("127.0.0.%d", 2+i), 900<<10))
	}
	for deadline := time.Now().Add(10 * time.Second); budget.Used() != budget.Total(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the stalled bodies hold %d bytes, want the whole budget %d", budget.Used(), budget.Total())
		}
	}

	more := unsigned("127.0.0.2", 0)
	if resp, err := http.ReadResponse(bufio.NewReader(more), nil); err != nil || resp.StatusCode != http.StatusServiceUnavailable ||
		resp.Header.Get("Retry-After") == "" {
		t.Errorf("one more unsigned body from a flooding source: %v %v, want 503 with Retry-After", resp, err)
	}

	ev := freshMerge(t, nil)
	c := dial("127.0.0.1")
	fmt.Fprintf(c, "POST /v1/events HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\n%s: %s\r\nContent-Length: %d\r\n\r\n%s",
		backend.SignatureHeader, backend.Sign(w.secrets[0], time.Now(), ev), len(ev), ev)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("a signed event while the budget is full: %d, want 202", resp.StatusCode)
	}
	// The one cut off answers 503, or ends: the server closes it with
	// the rest of the body unread, and the kernel may then reset it
	// before its 503 is read. A stalled body that still waits reads as a
	// timeout. All are read at once, each for a few seconds: the cut one
	// may still be on its way out when the signed event is answered.
	results := make(chan string, len(stalled))
	for _, s := range stalled {
		go func() {
			s.SetReadDeadline(time.Now().Add(3 * time.Second))
			resp, err := http.ReadResponse(bufio.NewReader(s), nil)
			var ne net.Error
			switch {
			case err == nil && resp.StatusCode == http.StatusServiceUnavailable:
				results <- "cut"
			case err == nil:
				results <- fmt.Sprintf("answered %d, want 503", resp.StatusCode)
			case errors.As(err, &ne) && ne.Timeout():
				results <- "waiting"
			case errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
				results <- "cut"
			default:
				results <- err.Error()
			}
		}()
	}
	cut := 0
	for range stalled {
		switch r := <-results; r {
		case "cut":
			cut++
		case "waiting":
		default:
			t.Errorf("a stalled body: %s", r)
		}
	}
	if cut != 1 {
		t.Errorf("%d stalled bodies cut off for the signed event, want 1", cut)
	}
}
