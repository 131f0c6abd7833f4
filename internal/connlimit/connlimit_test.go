package connlimit_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/internal/connlimit"
	"approvalsbot/internal/syncbuf"
)

// server is a capped loopback listener whose accepted connections the
// test receives in order.
type server struct {
	ln       *connlimit.Listener
	reg      *prometheus.Registry
	accepted chan net.Conn
}

func serve(t *testing.T, opts connlimit.Options) *server {
	t.Helper()
	inner, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &server{reg: prometheus.NewRegistry(), accepted: make(chan net.Conn, 64)}
	opts.Registry = s.reg
	s.ln, err = connlimit.Wrap(inner, opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			c, err := s.ln.Accept()
			if err != nil {
				return
			}
			s.accepted <- c
		}
	})
	t.Cleanup(func() {
		s.ln.Close()
		wg.Wait()
		close(s.accepted)
		for c := range s.accepted {
			c.Close()
		}
	})
	return s
}

// dial connects from the loopback address from (127.0.0.1, 127.0.0.2, …).
func (s *server) dial(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", s.ln.Addr().String())
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// admit dials from and returns the server's side of the connection.
func (s *server) admit(t *testing.T, from string) net.Conn {
	t.Helper()
	s.dial(t, from)
	select {
	case c := <-s.accepted:
		return c
	case <-time.After(5 * time.Second):
		t.Fatalf("a connection from %s within the caps was not accepted", from)
		return nil
	}
}

// refused dials from and shows the server closed the connection unread.
func (s *server) refused(t *testing.T, from string) {
	t.Helper()
	c := s.dial(t, from)
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.Read(make([]byte, 1))
	if n != 0 || !(errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)) {
		t.Fatalf("a connection from %s over the cap: read %d, %v; want it closed by the server", from, n, err)
	}
}

// metric is the value of a counter or gauge with the given label value
// ("" for none).
func (s *server) metric(t *testing.T, name, label string) float64 {
	t.Helper()
	mfs, err := s.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if label != "" && (len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != label) {
				continue
			}
			if m.GetCounter() != nil {
				return m.GetCounter().GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	t.Fatalf("no %s{%s} in the registry", name, label)
	return 0
}

func TestPerSourceCap(t *testing.T) {
	t.Parallel()
	s := serve(t, connlimit.Options{PerSource: 2, Total: 10})
	s.admit(t, "127.0.0.1")
	s.admit(t, "127.0.0.1")
	s.refused(t, "127.0.0.1")
	s.refused(t, "127.0.0.1")
	if got := s.metric(t, "bot_connections_refused_total", "per_source"); got != 2 {
		t.Errorf("refused per source: %v, want 2", got)
	}
	if got := s.metric(t, "bot_connections_refused_total", "total"); got != 0 {
		t.Errorf("refused for the total: %v, want 0", got)
	}
	if got := s.metric(t, "bot_connections_open", ""); got != 2 {
		t.Errorf("open: %v, want 2", got)
	}
}

func TestCloseReleasesTheSlot(t *testing.T) {
	t.Parallel()
	s := serve(t, connlimit.Options{PerSource: 2, Total: 10})
	first := s.admit(t, "127.0.0.1")
	s.admit(t, "127.0.0.1")
	s.refused(t, "127.0.0.1")
	first.Close()
	first.Close() // a second Close gives back nothing more
	if got := s.ln.Open(); got != 1 {
		t.Fatalf("open after one of two closed (twice): %d, want 1", got)
	}
	s.admit(t, "127.0.0.1")
	s.refused(t, "127.0.0.1")
}

func TestSourcesAreIndependent(t *testing.T) {
	t.Parallel()
	s := serve(t, connlimit.Options{PerSource: 2, Total: 10})
	s.admit(t, "127.0.0.1")
	s.admit(t, "127.0.0.1")
	s.refused(t, "127.0.0.1")
	// Another source is not shut out by the one at its cap, and its own
	// cap is its own.
	s.admit(t, "127.0.0.2")
	s.admit(t, "127.0.0.2")
	s.refused(t, "127.0.0.2")
	s.admit(t, "127.0.0.3")
}

func TestTotalCap(t *testing.T) {
	t.Parallel()
	s := serve(t, connlimit.Options{PerSource: 2, Total: 3})
	s.admit(t, "127.0.0.1")
	s.admit(t, "127.0.0.1")
	last := s.admit(t, "127.0.0.2")
	s.refused(t, "127.0.0.3") // a source with none open, over the total
	if got := s.metric(t, "bot_connections_refused_total", "total"); got != 1 {
		t.Errorf("refused for the total: %v, want 1", got)
	}
	last.Close()
	s.admit(t, "127.0.0.3")
}

// try dials from and says whether the server accepted the connection
// (true) or closed it unread (false).
func (s *server) try(t *testing.T, from string) bool {
	t.Helper()
	c := s.dial(t, from)
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		c.Read(make([]byte, 1)) // an accepted connection is sent nothing
	}()
	select {
	case <-s.accepted:
		return true
	case <-closed:
		return false
	}
}

func TestAHandfulOfSourcesLeaveRoomForAnother(t *testing.T) {
	t.Parallel()
	// Four sources at a per-source cap of 16 would hold all 64 without
	// the busy share; with it, eight sources each at their cap leave
	// room for a ninth.
	const perSource, total = 16, 64
	const busy = perSource / connlimit.BusyShare
	s := serve(t, connlimit.Options{PerSource: perSource, Total: total})
	held := 0
	for i := 1; i <= 8; i++ {
		from := fmt.Sprintf("127.0.0.%d", i)
		for n := 0; n <= perSource; n++ {
			if !s.try(t, from) {
				break
			}
			held++
		}
	}
	// Two sources fill half at 16 each; the other six stop at the busy
	// share.
	if want := 2*perSource + 6*busy; held != want || s.ln.Open() != want {
		t.Fatalf("eight sources at their caps hold %d (open %d) of %d; want %d", held, s.ln.Open(), total, want)
	}
	// A ninth source gets its busy share, and no more.
	for range busy {
		s.admit(t, "127.0.0.9")
	}
	s.refused(t, "127.0.0.9")
	if got := s.metric(t, "bot_connections_refused_total", "share"); got != 6+1 {
		t.Errorf("refused for the busy share: %v, want 7", got)
	}
	if got := s.metric(t, "bot_connections_refused_total", "total"); got != 0 {
		t.Errorf("refused for the total: %v, want 0", got)
	}
}

func TestRefusalsAreLoggedAtMostOncePerInterval(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); defer mu.Unlock(); now = now.Add(d) }
	var out syncBuffer
	s := serve(t, connlimit.Options{PerSource: 1, Total: 10, Now: clock,
		Logger: slog.New(slog.NewJSONHandler(&out, nil))})
	s.admit(t, "127.0.0.1")
	s.refused(t, "127.0.0.1") // logged: the first
	s.refused(t, "127.0.0.1")
	advance(connlimit.LogEvery - time.Second)
	s.refused(t, "127.0.0.1")
	advance(time.Second)
	s.refused(t, "127.0.0.1") // logged, counting the three since the first line

	type line struct {
		Level, Msg, Reason, Source string
		Refused, Open              int
	}
	var got []line
	for _, raw := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
		var l line
		if err := json.Unmarshal(raw, &l); err != nil {
			t.Fatalf("log line %q: %v", raw, err)
		}
		got = append(got, l)
	}
	const msg = "connections closed unread: over the open-connection cap"
	want := []line{
		{Level: "WARN", Msg: msg, Reason: "per_source", Source: "127.0.0.1", Refused: 1, Open: 1},
		{Level: "WARN", Msg: msg, Reason: "per_source", Source: "127.0.0.1", Refused: 3, Open: 1},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("log lines (-want +got):\n%s", d)
	}
	if got := s.metric(t, "bot_connections_refused_total", "per_source"); got != 4 {
		t.Errorf("the counter counts every refusal: %v, want 4", got)
	}
}

func TestWrapRejectsBadCaps(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		opts connlimit.Options
		want string
	}{
		{"no per source cap", connlimit.Options{Total: 10}, "per source 0"},
		{"total below per source", connlimit.Options{PerSource: 8, Total: 4}, "total 4"},
		{"IPv6 prefix past 128 bits", connlimit.Options{PerSource: 4, Total: 8, IPv6Prefix: 129}, "/129"},
		{"negative IPv6 prefix", connlimit.Options{PerSource: 4, Total: 8, IPv6Prefix: -1}, "/-1"},
	} {
		t.Run(c.name, func(t *testing.T) {
			inner, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer inner.Close()
			if _, err := connlimit.Wrap(inner, c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Wrap: %v, want an error naming %q", err, c.want)
			}
		})
	}
}

type syncBuffer = syncbuf.Buffer
