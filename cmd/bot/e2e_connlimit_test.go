package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/app"
	"approvalsbot/internal/connlimit"
)

// The memory an open connection may cost, against the built binary:
// connections that send a header block and never finish it, as many as
// the caps take, from several loopback addresses (127.0.0.2 on), while
// the legitimate caller connects from 127.0.0.1.

// headerBlock is a request line and headers of exactly n bytes; finished
// ends it with the blank line, else it is left open as an attacker does.
func headerBlock(n int, finished bool) []byte {
	b := []byte("GET /healthz HTTP/1.1\r\nHost: bot\r\nX-Pad: ")
	end := "\r\n"
	if finished {
		end = "\r\n\r\n"
	}
	b = append(b, bytes.Repeat([]byte("x"), n-len(b)-len(end))...)
	return append(b, end...)
}

func TestHeaderBlockOver16KiBIs431(t *testing.T) {
	requireLoopbackRange(t)
	bot := startBot(t, e2eConfig(t, t.TempDir()))
	for _, c := range []struct {
		size int
		want int
	}{
		{app.MaxHeaderBlock, http.StatusOK},
		{app.MaxHeaderBlock + 1, http.StatusRequestHeaderFieldsTooLarge},
		{64 << 10, http.StatusRequestHeaderFieldsTooLarge},
	} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(bot.base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(headerBlock(c.size, true)); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("a %d-byte header block: %v", c.size, err)
		}
		resp.Body.Close()
		conn.Close()
		if resp.StatusCode != c.want {
			t.Errorf("a %d-byte header block: %d, want %d", c.size, resp.StatusCode, c.want)
		}
	}
}

func TestOpenConnectionsKeepMemoryBounded(t *testing.T) {
	requireLoopbackRange(t)
	bot := startBot(t, e2eConfig(t, t.TempDir()))
	ev := eventsNow(t)
	addr := strings.TrimPrefix(bot.base, "http://")
	events := 0
	signedEvent := func(when string) {
		t.Helper()
		events++
		body := ev.eventWith(t, "merge.json", func(e map[string]any) {
			e["id"] = fmt.Sprintf("evt-conns-%d", events)
			e["data"].(map[string]any)["id"] = fmt.Sprintf("a-conns%d", events)
		})
		start := time.Now()
		if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
			t.Fatalf("a signed event %s: %d %+v, want 202", when, a.Status, a)
		}
		t.Logf("a signed event %s: 202 in %s", when, time.Since(start).Round(time.Millisecond))
	}
	signedEvent("before the attack")
	base := procMemory(t, bot)
	t.Logf("before: RSS %s", mib(base.rss))

	// 1. Four sources, a hundred connections each, each sending header
	// lines until 1 MiB (the old default bound) or until the bot hangs up.
	// Each is answered 431 at 16 KiB, or closed unread over its source's
	// cap. Each would otherwise hold its megabyte until the header timeout.
	flood := newAttack(t, addr)
	for i := range 4 * 100 {
		flood.open(t, fmt.Sprintf("127.0.0.%d", 2+i%4), nil, 1<<20)
	}
	flood.waitEnded(t, 4*100)
	answered, closed, other := flood.outcomes()
	if answered == 0 || answered+closed != 4*100 {
		t.Errorf("flood: %d answered 431, %d closed unread, other answers %q; want each one or the other, some 431",
			answered, closed, other)
	}
	flood.close()
	afterFlood := procMemory(t, bot)
	t.Logf("1 MiB header flood, 400 connections from 4 sources: %d answered 431, %d closed unread; peak RSS %s (+%s)",
		answered, closed, mib(afterFlood.peak), mib(afterFlood.peak-base.rss))

	// 2. The same four sources hold unfinished blocks just under the bound:
	// each holds its 64, the other 36 are closed at once, and the backend,
	// connecting from its own address, still gets its signed event in.
	scraper := newScraper(t, bot)
	http.DefaultClient.CloseIdleConnections()
	scraper.waitOpen(t, 1) // the scraper's own
	refusedBefore := scraper.get(t)[`bot_connections_refused_total{reason="per_source"}`]
	hold := newAttack(t, addr)
	started := time.Now()
	for i := range 4 * 100 {
		hold.open(t, fmt.Sprintf("127.0.0.%d", 2+i%4), headerBlock(app.MaxHeaderBlock-512, false), 0)
	}
	hold.waitEnded(t, 4*36)
	m := scraper.get(t)
	if got := m[`bot_connections_refused_total{reason="per_source"}`] - refusedBefore; got != 4*36 {
		t.Errorf("held: %v refused per source, want %d", got, 4*36)
	}
	if got := m["bot_connections_open"]; got != 4*64+1 {
		t.Errorf("held: %v open, want the %d of the four sources and the scraper's", got, 4*64)
	}
	signedEvent("while four sources hold their caps")
	extra := newAttack(t, addr)
	extra.open(t, "127.0.0.2", nil, 0)
	extra.waitEnded(t, 1)
	held := procMemory(t, bot)
	if time.Since(started) >= 10*time.Second {
		t.Fatalf("holding took %s, past the header timeout: the figures above are not of held connections", time.Since(started))
	}
	t.Logf("256 connections held with 15.5 KiB unfinished headers: RSS %s (+%s)", mib(held.rss), mib(held.rss-base.rss))
	hold.close()
	extra.close()

	// 3. A hundred and forty sources, each at its busy share (past half
	// the ceiling a source holding ConnsPerSource/BusyShare gets no
	// more, so a handful of sources can no longer fill it): 1,120
	// connections against the ceiling of 1,024, the most the bot ever
	// holds.
	http.DefaultClient.CloseIdleConnections()
	scraper.waitOpen(t, 1)
	totalBefore := scraper.get(t)[`bot_connections_refused_total{reason="total"}`]
	ceiling := newAttack(t, addr)
	started = time.Now()
	const sources, share = 140, app.ConnsPerSource / connlimit.BusyShare
	for i := range sources * share {
		ceiling.open(t, fmt.Sprintf("127.0.0.%d", 2+i%sources), headerBlock(app.MaxHeaderBlock-512, false), 0)
	}
	over := sources*share - (app.ConnsTotal - 1) // the scraper holds one slot
	ceiling.waitEnded(t, over)
	full := procMemory(t, bot)
	m = scraper.get(t)
	if time.Since(started) >= 10*time.Second {
		t.Fatalf("filling took %s, past the header timeout: the figures above are not of held connections", time.Since(started))
	}
	if got := m[`bot_connections_refused_total{reason="total"}`] - totalBefore; got != float64(over) {
		t.Errorf("at the ceiling: %v refused for the total, want %d", got, over)
	}
	if got := m["bot_connections_open"]; got != app.ConnsTotal {
		t.Errorf("at the ceiling: %v open, want %d", got, app.ConnsTotal)
	}
	t.Logf("%d connections held at the ceiling: RSS %s (+%s)", app.ConnsTotal, mib(full.rss), mib(full.rss-base.rss))
	ceiling.close()
	scraper.waitOpen(t, 1)
	signedEvent("after the attack")

	// Each connection's share is bounded by the header bound and the caps.
	// At net/http's default bound (1 MiB) each held its megabyte: the
	// flood alone took hundreds of MiB.
	limit := int64(64 << 20)
	if raceEnabled {
		limit *= 5 // the race detector's shadow memory and larger stacks
	}
	for _, c := range []struct {
		name  string
		bytes int64
	}{
		{"the flood's peak", afterFlood.peak - base.rss},
		{"held at 4 sources' caps", held.rss - base.rss},
		{"held at the ceiling, the process's peak", full.peak - base.rss},
	} {
		if c.bytes > limit {
			t.Errorf("%s: RSS grew by %s, want at most %s", c.name, mib(c.bytes), mib(limit))
		}
	}
	if n := strings.Count(bot.stderr.String(), "connections closed unread: over the open-connection cap"); n < 1 || n > 3 {
		t.Errorf("%d log lines for the refusals; want them logged at most once a minute", n)
	}
}

// requireLoopbackRange skips where 127.0.0.2 and on cannot be dialed
// from (Linux routes the whole of 127.0.0.0/8 to loopback).
func requireLoopbackRange(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("dials from 127.0.0.2 and on, and reads /proc: Linux only")
	}
}

// attack holds connections to the bot and sees how each ends.
type attack struct {
	addr  string
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns []net.Conn
	ended int
	first []string // what each ended connection read first
	cond  *sync.Cond
}

func newAttack(t testing.TB, addr string) *attack {
	a := &attack{addr: addr}
	a.cond = sync.NewCond(&a.mu)
	t.Cleanup(a.close)
	return a
}

// open dials from a loopback address, sends head, then header lines up
// to flood bytes (stopping when the bot hangs up), and keeps the
// connection open, noting when the bot ends it and what it answered.
func (a *attack) open(t testing.TB, from string, head []byte, flood int) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	c, err := d.Dial("tcp", a.addr)
	if err != nil {
		t.Fatalf("dial from %s: %v", from, err)
	}
	c.SetDeadline(time.Now().Add(30 * time.Second)) // no connection outlives a stuck test
	a.mu.Lock()
	a.conns = append(a.conns, c)
	a.mu.Unlock()
	a.wg.Go(func() {
		var got []byte
		buf := make([]byte, 64)
		for {
			n, err := c.Read(buf)
			if len(got) < 64 {
				got = append(got, buf[:n]...)
			}
			if err != nil {
				break
			}
		}
		a.mu.Lock()
		a.ended++
		a.first = append(a.first, string(got))
		a.cond.Broadcast()
		a.mu.Unlock()
	})
	a.wg.Go(func() {
		if len(head) > 0 {
			if _, err := c.Write(head); err != nil {
				return
			}
		}
		if flood == 0 {
			return
		}
		w := bufio.NewWriterSize(c, 32<<10)
		fmt.Fprintf(w, "POST /v1/events HTTP/1.1\r\nHost: bot\r\n")
		line := []byte("X-Pad-0000: " + strings.Repeat("x", 1010) + "\r\n")
		for sent, i := 0, 0; sent < flood; sent, i = sent+len(line), i+1 {
			copy(line[6:10], fmt.Sprintf("%04d", i%10000))
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		w.Flush()
	})
}

// waitEnded waits until n of the connections were ended by the bot.
func (a *attack) waitEnded(t *testing.T, n int) {
	t.Helper()
	timer := time.AfterFunc(20*time.Second, func() { a.mu.Lock(); a.cond.Broadcast(); a.mu.Unlock() })
	defer timer.Stop()
	deadline := time.Now().Add(20 * time.Second)
	a.mu.Lock()
	defer a.mu.Unlock()
	for a.ended < n {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d connections ended by the bot, want %d", a.ended, len(a.conns), n)
		}
		a.cond.Wait()
	}
}

// outcomes sorts the ended connections: answered 431, closed without an
// answer, and any other answer.
func (a *attack) outcomes() (answered, closed int, other []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range a.first {
		switch {
		case strings.HasPrefix(f, "HTTP/1.1 431 "):
			answered++
		case f == "":
			closed++
		default:
			other = append(other, f)
		}
	}
	return answered, closed, other
}

func (a *attack) close() {
	a.mu.Lock()
	for _, c := range a.conns {
		c.Close()
	}
	a.mu.Unlock()
	a.wg.Wait()
}

type memory struct{ rss, peak int64 } // bytes

// procMemory reads the bot process's resident set and its peak.
func procMemory(t testing.TB, bot *botProc) memory {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", bot.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	var m memory
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 || f[2] != "kB" {
			continue
		}
		kb, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			m.rss = kb << 10
		case "VmHWM:":
			m.peak = kb << 10
		}
	}
	if m.rss == 0 || m.peak == 0 {
		t.Fatalf("no VmRSS or VmHWM in /proc status:\n%s", b)
	}
	return m
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// scraper reads the bot's metrics over one connection it keeps open, so
// that its own slot is steady: the figures count it as one.
type scraper struct {
	base   string
	client *http.Client
}

func newScraper(t *testing.T, bot *botProc) *scraper {
	tr := &http.Transport{MaxConnsPerHost: 1, IdleConnTimeout: time.Minute}
	t.Cleanup(tr.CloseIdleConnections)
	return &scraper{base: bot.base, client: &http.Client{Transport: tr, Timeout: 10 * time.Second}}
}

// get reads the bot's metrics as series → value.
func (s *scraper) get(t *testing.T) map[string]float64 {
	t.Helper()
	resp, err := s.client.Get(s.base + "/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	m := map[string]float64{}
	for _, line := range strings.Split(string(b), "\n") {
		i := strings.LastIndexByte(line, ' ')
		if line == "" || line[0] == '#' || i < 0 {
			continue
		}
		if v, err := strconv.ParseFloat(line[i+1:], 64); err == nil {
			m[line[:i]] = v
		}
	}
	return m
}

// waitOpen polls until the bot holds n connections open.
func (s *scraper) waitOpen(t *testing.T, n float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := s.get(t)["bot_connections_open"]
		if v == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("bot_connections_open stayed at %v, want %v", v, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
