package bodybudget_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"approvalsbot/internal/bodybudget"
)

// countingBody counts what is read of a body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (c countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// serve runs a handler that reads its body through b and answers 200
// with its length, 503, 408 or 413; read counts the body bytes it read.
func serve(t *testing.T, b *bodybudget.Budget) (addr string, read *atomic.Int64) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2 and on: Linux only")
	}
	read = new(atomic.Int64)
	srv := httptest.NewServer(b.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = countingBody{r.Body, read}
		body, err := bodybudget.Read(w, r, 1<<20)
		var tooBig *http.MaxBytesError
		switch {
		case errors.Is(err, bodybudget.ErrBusy):
			w.WriteHeader(http.StatusServiceUnavailable)
		case errors.Is(err, bodybudget.ErrTooSlow):
			w.WriteHeader(http.StatusRequestTimeout)
		case errors.As(err, &tooBig):
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		case err != nil:
			w.WriteHeader(http.StatusBadRequest)
		default:
			fmt.Fprint(w, len(body))
		}
	})))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "http://"), read
}

// post dials from a loopback address and sends a POST declaring size
// bytes, of which it sends sent at once; the rest is the caller's.
func post(t *testing.T, addr, from string, size, sent int) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(20 * time.Second)) // no connection outlives a stuck test
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n", size)
	if _, err := c.Write(make([]byte, sent)); err != nil {
		t.Fatal(err)
	}
	return c
}

func answer(t *testing.T, c net.Conn) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	return resp
}

// waitUsed waits until the budget holds n bytes.
func waitUsed(t *testing.T, b *bodybudget.Budget, n int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); b.Used() != n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the budget holds %d bytes, want %d", b.Used(), n)
		}
	}
}

// A source holding the whole budget is refused its next body unread,
// with Retry-After; another source is admitted by cutting a body of the
// first off, which is answered 503; and every byte comes back.
func TestBusyUnreadAndPreempted(t *testing.T) {
	b, err := bodybudget.New(bodybudget.Options{Total: 2<<20 + 2})
	if err != nil {
		t.Fatal(err)
	}
	addr, read := serve(t, b)
	hogs := []net.Conn{post(t, addr, "127.0.0.2", 1<<20, 100<<10), post(t, addr, "127.0.0.2", 1<<20, 100<<10)}
	waitUsed(t, b, 2<<20+2)
	// Admitted before they are read: wait until the hogs have read what
	// they were sent, so that what is read next is the refused body's.
	for deadline := time.Now().Add(10 * time.Second); read.Load() != 2*(100<<10); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the hogs read %d bytes, want the %d they sent", read.Load(), 2*(100<<10))
		}
	}
	before := read.Load()

	busy := post(t, addr, "127.0.0.2", 4<<10, 0)
	resp := answer(t, busy)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "10" {
		t.Errorf("over the budget: %d, Retry-After %q; want 503, 10", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	if got := read.Load() - before; got != 0 {
		t.Errorf("%d bytes of a refused body read, want none", got)
	}

	click := post(t, addr, "127.0.0.3", 16<<10, 16<<10)
	if resp := answer(t, click); resp.StatusCode != http.StatusOK {
		t.Errorf("a source under its share: %d, want 200", resp.StatusCode)
	}
	cut := 0
	for _, c := range hogs {
		c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)) // the one cut off has its answer already
		if resp, err := http.ReadResponse(bufio.NewReader(c), nil); err == nil {
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("a body cut off: %d, want 503", resp.StatusCode)
			}
			cut++
		}
	}
	if cut != 1 {
		t.Errorf("%d bodies cut off for a source under its share, want 1", cut)
	}
	for _, c := range hogs {
		c.Close()
	}
	waitUsed(t, b, 0)
}

// A body that trickles under the minimum rate is cut off once the grace
// is spent, and its bytes come back.
func TestTrickleIsCutOff(t *testing.T) {
	b, err := bodybudget.New(bodybudget.Options{Grace: 300 * time.Millisecond, MinRate: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serve(t, b)
	c := post(t, addr, "127.0.0.4", 1<<20, 1<<10)
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() { // 100 bytes every 20 ms: 5 KB/s
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := c.Write(make([]byte, 100)); err != nil {
					return
				}
			}
		}
	}()
	resp := answer(t, c)
	took := time.Since(start)
	if resp.StatusCode != http.StatusRequestTimeout {
		t.Errorf("a trickling body: %d, want 408", resp.StatusCode)
	}
	if took < 300*time.Millisecond || took > 5*time.Second {
		t.Errorf("a trickling body cut off after %s, want after the 300ms grace and soon after", took)
	}
	waitUsed(t, b, 0)
}

// A body at the minimum rate is read whole.
func TestBodyAtTheRateIsRead(t *testing.T) {
	b, err := bodybudget.New(bodybudget.Options{Grace: 200 * time.Millisecond, MinRate: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serve(t, b)
	const size = 128 << 10
	c := post(t, addr, "127.0.0.5", size, 0)
	for sent := 0; sent < size; sent += 16 << 10 { // 16 KiB every 100 ms: 160 KiB/s
		time.Sleep(100 * time.Millisecond)
		if _, err := c.Write(make([]byte, 16<<10)); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(got) != fmt.Sprint(size) {
		t.Errorf("a body at the rate: %d %q, want 200 %d", resp.StatusCode, got, size)
	}
}

// A small body cut off as too slow is answered Connection: close and its
// connection ends: net/http does not go on reading what is left of it at
// the sender's pace until the read timeout.
func TestTooSlowClosesConnection(t *testing.T) {
	b, err := bodybudget.New(bodybudget.Options{Grace: 200 * time.Millisecond, ReadTimeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	addr, _ := serve(t, b)
	c := post(t, addr, "127.0.0.2", 4<<10, 16)
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte every 50 ms, until the server hangs up or the test ends
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
				if _, err := c.Write([]byte("x")); err != nil {
					return
				}
			}
		}
	}()
	start := time.Now()
	c.SetReadDeadline(start.Add(5 * time.Second))
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatalf("no answer: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestTimeout || !resp.Close {
		t.Errorf("a trickle: %d, Connection %q; want 408, close", resp.StatusCode, resp.Header.Get("Connection"))
	}
	// Closed: an end of file, or a reset when the trickle's next byte
	// reached a socket the server had closed; not a timeout.
	if _, err := r.ReadByte(); err != io.EOF && !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("after the answer, the connection: %v after %s, want it closed (EOF or reset)", err, time.Since(start).Round(time.Millisecond))
	}
	waitUsed(t, b, 0)
}
