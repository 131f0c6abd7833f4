package main

import (
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/internal/bodybudget"
	"approvalsbot/internal/connlimit"
	"approvalsbot/notify/smtptest"
)

// Bodies read before their signature, against the built binary: floods of
// unsigned bodies that stall short of their end, bodies that trickle, and
// both on the public listener while the backend's events go to the
// private one. Attackers dial from 127.0.0.2 on, the backend from
// 127.0.0.1.

const (
	floodConns   = 512       // the attack: 512 connections
	floodSources = 8         // from 8 addresses
	floodLength  = 1 << 20   // each announcing a 1 MiB body
	floodSent    = 900 << 10 // and stalling after 900 KiB of it
)

// floodConfig is a bot with Slack configured (against a fake Slack), so
// that /slack/interactions reads unsigned bodies too; private, when not
// "", is its listen_private.
func floodConfig(t testing.TB, dir, private string) string {
	t.Helper()
	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e"})
	sl.AddChannel("C0APPROVALS", "approvals", true)
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
  api_url: %q
tenants:
  acme:
    post: [slack:C0APPROVALS]
`, filepath.Join(dir, "bot.db"), sl.APIURL())
	if private != "" {
		cfg = fmt.Sprintf("listen_private: %q\n", private) + cfg
	}
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)
	return path
}

// bodyHead is the request line and headers of an unsigned POST to path
// announcing a body of length bytes.
func bodyHead(path string, length int) []byte {
	return fmt.Appendf(nil, "POST %s HTTP/1.1\r\nHost: bot\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, length)
}

// openBody opens a connection from from, as attack.open does, and sends
// head then body from a goroutine of its own, which marks written when it
// is done (all sent, or the bot hung up).
func (a *attack) openBody(t testing.TB, from string, head, body []byte, written *sync.WaitGroup) {
	t.Helper()
	a.open(t, from, nil, 0)
	a.mu.Lock()
	c := a.conns[len(a.conns)-1]
	a.mu.Unlock()
	written.Add(1)
	a.wg.Go(func() {
		defer written.Done()
		if _, err := c.Write(head); err != nil {
			return
		}
		c.Write(body)
	})
}

// bodyFlood opens floodConns connections from floodSources addresses
// (127.0.0.2 on), each sending the head of a 1 MiB POST to one of paths
// in turn and 900 KiB of its body, then stalling; it returns once every
// one has sent what it could.
func bodyFlood(t testing.TB, addr string, paths []string) *attack {
	t.Helper()
	a := newAttack(t, addr)
	body := []byte(`{"x":"` + strings.Repeat("x", floodSent-6))
	var written sync.WaitGroup
	for i := range floodConns {
		a.openBody(t, fmt.Sprintf("127.0.0.%d", 2+i%floodSources), bodyHead(paths[i%len(paths)], floodLength), body, &written)
	}
	done := make(chan struct{})
	go func() { written.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the flood's connections were still sending after 20 s")
	}
	return a
}

// bodyOutcomes sorts the ended connections of a body flood: answered
// 503, closed without an answer, any other answer.
func (a *attack) bodyOutcomes() (busy, closed int, other []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, f := range a.first {
		switch {
		case strings.HasPrefix(f, "HTTP/1.1 503 "):
			busy++
		case f == "":
			closed++
		default:
			other = append(other, f)
		}
	}
	return busy, closed, other
}

// settledRSS reads the bot's memory until its resident set stops growing
// (the bot may still be copying what the kernel holds for it), at most
// for a few seconds: a figure to log and bound, not a proof of anything.
func settledRSS(t testing.TB, bot *botProc) memory {
	t.Helper()
	m := procMemory(t, bot)
	for range 30 {
		time.Sleep(100 * time.Millisecond)
		next := procMemory(t, bot)
		if next.rss <= m.rss {
			return next
		}
		m = next
	}
	return m
}

// waitMetric polls until the series reads want.
func (s *scraper) waitMetric(t *testing.T, series string, want float64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		v, ok := s.get(t)[series]
		if ok && v == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed at %v, want %v", series, v, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitAtMost polls until the series reads at most limit, for at most
// within, and returns the last reading and how long it took.
func (s *scraper) waitAtMost(t *testing.T, series string, limit float64, within time.Duration) (float64, time.Duration) {
	t.Helper()
	start := time.Now()
	for {
		v, ok := s.get(t)[series]
		if ok && v <= limit {
			return v, time.Since(start)
		}
		if time.Since(start) > within {
			t.Fatalf("%s stayed at %v for %s, want at most %v", series, v, within, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// signedEvents sends signed events to base's /v1/events, each a new
// approval, and wants each answered 202.
type signedEvents struct {
	ev   *fixtureEvents
	base string
	n    int
}

func (s *signedEvents) send(t *testing.T, when string) {
	t.Helper()
	s.n++
	body := s.ev.eventWith(t, "merge.json", func(e map[string]any) {
		e["id"] = fmt.Sprintf("evt-flood-%d", s.n)
		e["data"].(map[string]any)["id"] = fmt.Sprintf("a-flood%d", s.n)
	})
	start := time.Now()
	if code, got := call(t, s.base+"/v1/events", body); code != http.StatusAccepted {
		t.Fatalf("a signed event %s: %d %s, want 202", when, code, got)
	}
	t.Logf("a signed event %s: 202 in %s", when, time.Since(start).Round(time.Millisecond))
}

// 512 connections from 8 addresses each stall after 900 KiB of a 1 MiB
// unsigned body: the budget admits what it holds and answers the rest 503
// unread, so the bot's memory grows by a bounded amount, a signed event
// still gets in, and once they leave the budget is spent on nothing and
// the Go heap in use falls back near what it was idle.
func TestBodyFloodKeepsMemoryBounded(t *testing.T) {
	requireLoopbackRange(t)
	bot := startBot(t, floodConfig(t, t.TempDir(), ""))
	addr := strings.TrimPrefix(bot.base, "http://")
	events := &signedEvents{ev: eventsNow(t), base: bot.base}
	scraper := newScraper(t, bot)
	events.send(t, "before the flood")
	base := procMemory(t, bot)
	idleHeap := scraper.get(t)[heapInUse]
	t.Logf("before: RSS %s, heap in use %s", mib(base.rss), mib(int64(idleHeap)))

	flood := bodyFlood(t, addr, []string{"/v1/events", "/slack/interactions"})
	events.send(t, "during the flood")
	m := scraper.get(t)
	held := m["bot_body_budget_bytes"]
	if held <= 0 || held > bodybudget.DefaultTotal {
		t.Errorf("during the flood: bot_body_budget_bytes %v, want some and at most the budget, %d", held, bodybudget.DefaultTotal)
	}
	during := settledRSS(t, bot)
	busy, closed, other := flood.bodyOutcomes()
	t.Logf("%d connections from %d sources stalling after 900 KiB of 1 MiB: %d answered 503, %d closed unread, %s held by the budget (%v refused busy); heap in use %s; RSS %s (+%s), peak %s (+%s)",
		floodConns, floodSources, busy, closed, mib(int64(held)), m[`bot_body_budget_refused_total{reason="busy"}`],
		mib(int64(m[heapInUse])), mib(during.rss), mib(during.rss-base.rss), mib(during.peak), mib(during.peak-base.rss))
	if len(other) > 0 {
		t.Errorf("flood: answers other than 503: %q", other)
	}
	if busy == 0 {
		t.Errorf("flood: no connection answered 503 (%d closed unread): the budget held every body", closed)
	}
	if limit := int64(64 << 20); !raceEnabled && during.peak-base.rss > limit {
		t.Errorf("the flood took the bot's RSS up by %s, want at most %s", mib(during.peak-base.rss), mib(limit))
	}

	flood.close()
	scraper.waitMetric(t, "bot_body_budget_bytes", 0)
	// The bodies are garbage now, and the heap holds them until the next
	// collection: at the latest the runtime's forced one, two minutes
	// after the last (during the flood); sooner as the bot allocates,
	// and these scrapes allocate. Near idle: within a quarter of the
	// budget of what it was before the flood.
	heap, took := scraper.waitAtMost(t, heapInUse, idleHeap+bodybudget.DefaultTotal/4, forcedGC+30*time.Second)
	after := procMemory(t, bot)
	t.Logf("after the flood: heap in use %s (+%s on idle) %s after the budget was spent on nothing; RSS %s (+%s), which the runtime returns to the system gradually",
		mib(int64(heap)), mib(int64(heap-idleHeap)), took.Round(time.Millisecond), mib(after.rss), mib(after.rss-base.rss))
	events.send(t, "after the flood")
}

// heapInUse is the Go heap's spans in use, the bot's live objects and the
// garbage not yet collected (the Go collector's metric).
const heapInUse = "go_memstats_heap_inuse_bytes"

// forcedGC is how long the Go runtime lets pass without a collection
// (runtime.forcegcperiod).
const forcedGC = 2 * time.Minute

// Bodies that trickle a few bytes a second are cut off once the grace is
// spent (a body must then average the minimum rate), long before the
// server's 30 s read timeout, and counted as too slow.
func TestSlowBodiesAreCutOff(t *testing.T) {
	requireLoopbackRange(t)
	bot := startBot(t, floodConfig(t, t.TempDir(), ""))
	addr := strings.TrimPrefix(bot.base, "http://")
	scraper := newScraper(t, bot)
	slowBefore := scraper.get(t)[`bot_body_budget_refused_total{reason="too_slow"}`]

	const conns = 4
	slow := newAttack(t, addr)
	started := time.Now()
	for i, path := range []string{"/v1/events", "/slack/interactions", "/v1/events", "/slack/interactions"}[:conns] {
		slow.open(t, fmt.Sprintf("127.0.0.%d", 2+i), nil, 0)
		slow.mu.Lock()
		c := slow.conns[len(slow.conns)-1]
		slow.mu.Unlock()
		slow.wg.Go(func() {
			if _, err := c.Write(bodyHead(path, 4096)); err != nil {
				return
			}
			// 4 bytes a second until the bot hangs up (or the test
			// closes the connection).
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			for range tick.C {
				if _, err := c.Write([]byte(`"xx"`)); err != nil {
					return
				}
			}
		})
	}
	// The grace is 5 s and the bytes sent buy milliseconds: each is cut
	// off at about 5 s. 12 s is well short of the 30 s read timeout.
	const bound = 12 * time.Second
	waitUntil := time.AfterFunc(bound, func() { slow.mu.Lock(); slow.cond.Broadcast(); slow.mu.Unlock() })
	defer waitUntil.Stop()
	slow.mu.Lock()
	for slow.ended < conns && time.Since(started) < bound {
		slow.cond.Wait()
	}
	ended, first := slow.ended, append([]string(nil), slow.first...)
	slow.mu.Unlock()
	took := time.Since(started)
	if ended < conns {
		t.Fatalf("after %s, %d of %d trickling bodies were cut off; want all, well before the 30 s read timeout", took.Round(time.Millisecond), ended, conns)
	}
	t.Logf("%d bodies trickling 4 bytes a second cut off within %s", conns, took.Round(time.Millisecond))
	if took < bodybudget.DefaultGrace {
		t.Errorf("cut off after %s, before the grace of %s", took, bodybudget.DefaultGrace)
	}
	for _, f := range first {
		if f != "" && !strings.HasPrefix(f, "HTTP/1.1 408 ") && !strings.HasPrefix(f, "HTTP/1.1 400 ") && !strings.HasPrefix(f, "HTTP/1.1 503 ") {
			t.Errorf("a trickling body was answered %q, want it closed or answered 408, 400 or 503", f)
		}
	}
	if got := scraper.get(t)[`bot_body_budget_refused_total{reason="too_slow"}`] - slowBefore; got != conns {
		t.Errorf("%v bodies counted too slow, want %d", got, conns)
	}
	slow.close()
	scraper.waitMetric(t, "bot_body_budget_bytes", 0)
}

// With listen_private, the public listener takes a body flood and then a
// connection flood that fills its ceiling, while the backend's signed
// events, on the private listener, are answered 202 throughout: the
// private listener's body budget and connections are its own.
func TestFloodsOnPublicSparePrivateEvents(t *testing.T) {
	requireLoopbackRange(t)
	private := freeAddr(t)
	bot := startBot(t, floodConfig(t, t.TempDir(), private))
	if bot.private == "" {
		t.Fatal("no private listener")
	}
	addr := strings.TrimPrefix(bot.base, "http://")
	events := &signedEvents{ev: eventsNow(t), base: bot.private}
	scraper := newScraper(t, bot)
	scraper.base = bot.private
	events.send(t, "before the floods")

	// The body flood, on the interactions the public listener reads.
	flood := bodyFlood(t, addr, []string{"/slack/interactions"})
	events.send(t, "during the body flood")
	busy, closed, other := flood.bodyOutcomes()
	t.Logf("body flood on the public listener: %d answered 503, %d closed unread, %s held", busy, closed,
		mib(int64(scraper.get(t)[publicHeld])))
	if len(other) > 0 {
		t.Errorf("body flood: answers other than 503: %q", other)
	}

	// And, while its stalled bodies are held, a hundred and forty
	// sources each at the busy share of unfinished header blocks.
	conns := newAttack(t, addr)
	const sources, share = 140, 64 / connlimit.BusyShare
	for i := range sources * share {
		conns.open(t, fmt.Sprintf("127.0.1.%d", 2+i%sources), headerBlock(8<<10, false), 0)
		if i%(sources*share/4) == 0 {
			events.send(t, fmt.Sprintf("with %d connections of the connection flood opened", i))
		}
	}
	m := scraper.get(t)
	t.Logf("connection flood on the public listener: public open %v, refused %v (total) %v (share)",
		m[`bot_connections_open{listener="public"}`], m[`bot_connections_refused_total{listener="public",reason="total"}`],
		m[`bot_connections_refused_total{listener="public",reason="share"}`])
	if m[`bot_connections_open{listener="public"}`] < 512 {
		t.Errorf("the public listener held %v connections during the floods; want the floods to have filled at least half of it",
			m[`bot_connections_open{listener="public"}`])
	}
	for i := range 3 {
		events.send(t, fmt.Sprintf("during both floods (%d)", i+1))
	}
	conns.close()
	flood.close()
	scraper.waitMetric(t, publicHeld, 0)
	events.send(t, "after the floods")
}

// The body budgets' bytes held, by listener, with listen_private.
const (
	publicHeld  = `bot_body_budget_bytes{listener="public"}`
	privateHeld = `bot_body_budget_bytes{listener="private"}`
)

// wideSources is how many sources (127.0.2.2 on) the wide flood comes
// from, a body each of its share of the budget: together they fill it,
// and leave a newcomer a share of 256 KiB.
const wideSources = 128

// A body flood on the public listener from a hundred and twenty-eight
// sources, each stalling in a body of its share of the budget (32 MiB /
// 128, 256 KiB), fills the public budget. On that budget a newcomer's
// share is 256 KiB, and a 600 KiB body is answered 503, as a signed event
// of that size was while both listeners shared one budget. The private
// listener's budget is its own: the same event there is answered 202.
func TestWideBodyFloodOnPublicSparesBigPrivateEvents(t *testing.T) {
	requireLoopbackRange(t)
	private := freeAddr(t)
	bot := startBot(t, floodConfig(t, t.TempDir(), private))
	if bot.private == "" {
		t.Fatal("no private listener")
	}
	addr := strings.TrimPrefix(bot.base, "http://")
	scraper := newScraper(t, bot)
	scraper.base = bot.private
	ev := eventsNow(t)
	big := ev.eventWith(t, "merge.json", func(e map[string]any) {
		e["id"] = "evt-wide-big"
		d := e["data"].(map[string]any)
		d["id"] = "a-widebig1"
		d["call"].(map[string]any)["arguments"].(map[string]any)["notes"] = strings.Repeat("n", 600<<10)
	})
	if len(big) < 600<<10 || len(big) > bodybudget.DefaultTotal/wideSources*3 {
		t.Fatalf("the big event is %d bytes, want about 600 KiB", len(big))
	}

	// Each source sends all of its body but the last KiB and stalls: the
	// bot cuts each off about 9 s after it began (5 s of grace, and the
	// 4 s its bytes bought at 64 KiB/s), and the attack's own deadline is
	// 30 s.
	length := bodybudget.DefaultTotal / wideSources
	body := []byte(`{"x":"` + strings.Repeat("x", length-(1<<10)-6))
	flood := newAttack(t, addr)
	var written sync.WaitGroup
	started := time.Now()
	for i := range wideSources {
		flood.openBody(t, fmt.Sprintf("127.0.2.%d", 2+i), bodyHead("/slack/interactions", length), body, &written)
	}
	// All but the last source hold their share (the last finds the budget
	// full and is over its share by the byte past the body).
	full := float64((wideSources - 1) * length)
	deadline := started.Add(bodybudget.DefaultGrace)
	for scraper.get(t)[publicHeld] < full {
		if time.Now().After(deadline) {
			t.Fatalf("%s after %s: the flood held %s of the public budget, want %s", publicHeld,
				time.Since(started).Round(time.Millisecond), mib(int64(scraper.get(t)[publicHeld])), mib(int64(full)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("%d sources hold %s of the public budget after %s", wideSources, mib(int64(scraper.get(t)[publicHeld])),
		time.Since(started).Round(time.Millisecond))

	// The public budget is now what one shared budget was: a body of 600
	// KiB from a new source, the backend's address, is over its share.
	probe := newAttack(t, addr)
	var probed sync.WaitGroup
	probe.openBody(t, "127.0.0.1", bodyHead("/slack/interactions", len(big)), big, &probed)
	probe.waitEnded(t, 1)
	if busy, closed, other := probe.bodyOutcomes(); busy != 1 {
		t.Errorf("a %d KiB body on the flooded public listener: %d closed unread, answered %q; want 503 (over its share)",
			len(big)>>10, closed, other)
	}
	// And on the private listener, the signed event is read whole. No
	// flood body is cut off for its pace before its grace is spent, so
	// an event sent within the grace of the flood's start is read while
	// the flood holds the public budget.
	sent := time.Now()
	if into := sent.Sub(started); into >= bodybudget.DefaultGrace {
		t.Fatalf("the event would go %s into the flood, past the grace its bodies have: too late to prove anything", into.Round(time.Millisecond))
	}
	if code, answer := call(t, bot.private+"/v1/events", big); code != http.StatusAccepted {
		t.Fatalf("a signed event of %d KiB on the private listener during the flood: %d %s, want 202", len(big)>>10, code, answer)
	}
	m := scraper.get(t)
	t.Logf("a signed event of %d KiB on the private listener, sent %s into the flood: 202 in %s; then %s held of the public budget",
		len(big)>>10, sent.Sub(started).Round(time.Millisecond), time.Since(sent).Round(time.Millisecond), mib(int64(m[publicHeld])))
	if got := m[`bot_body_budget_refused_total{listener="private",reason="busy"}`]; got != 0 {
		t.Errorf("the private budget refused %v bodies, want none", got)
	}
	busy, closed, other := flood.bodyOutcomes()
	t.Logf("the flood so far: %d answered 503, %d closed unread, %d held", busy, closed, wideSources-busy-closed-len(other))
	if len(other) > 0 {
		t.Errorf("flood: answers other than 503: %q", other)
	}
	flood.close()
	scraper.waitMetric(t, publicHeld, 0)
	scraper.waitMetric(t, privateHeld, 0)
}

// shownArguments is what a page showing the call's full arguments says.
const shownArguments = "as the job backend holds them"

var argumentsCheck = regexp.MustCompile(`<input type="hidden" name="check" value="([^"]+)">\s*<input type="hidden" name="action" value="arguments">`)

// A decision link once its approval is closed: its page, a GET asking for
// the arguments and a POST of the page's own arguments form ask the
// backend nothing, where the same POST did while the approval waited.
func TestClosedLinkLooksNothingUp(t *testing.T) {
	dir := t.TempDir()
	sink := smtptest.Start(t, smtptest.Options{})
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	fake.AddApproval(ladderApproval, 1, readArguments(t, ladderApproval+".json"), false)
	fake.SetFunction(ladderApproval, "acme_github.merge")
	bot := startBot(t, mailConfig(t, dir, freeAddr(t), fake.URL(), sink.Addr))
	ev := eventsNow(t)
	body, _ := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	dump := func() string { return bot.stderr.String() }
	pollUntil(t, 15*time.Second, "kevin's mail", func() bool { return len(mailsTo(t, sink, "kevin@acme.example")) == 1 }, dump)
	links := linkPattern.FindAllString(mailsTo(t, sink, "kevin@acme.example")[0].Parts["text/plain"], -1)
	if len(links) == 0 {
		t.Fatal("no decision link in kevin's mail")
	}
	link := links[0]
	get := func(url string) string {
		t.Helper()
		resp, err := http.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	postArguments := func(check string) (int, string) {
		t.Helper()
		resp, err := http.PostForm(link, url.Values{"check": {check}, "action": {"arguments"}})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	// Live: the page offers the arguments form, and its POST looks them
	// up at the backend as kevin.
	m := argumentsCheck.FindStringSubmatch(get(link))
	if m == nil {
		t.Fatalf("the live page offers no arguments form:\n%s", get(link))
	}
	check := html.UnescapeString(m[1])
	before := len(fake.Lookups())
	if code, page := postArguments(check); code != http.StatusOK || len(fake.Lookups()) != before+1 || !strings.Contains(page, shownArguments) {
		t.Fatalf("the live page's arguments form: %d, %d look-ups (want one)\n%s", code, len(fake.Lookups())-before, page)
	}

	// Closed: denied at the console.
	resolved := ev.eventWith(t, "merge-resolved.json", func(e map[string]any) { e["data"].(map[string]any)["revision"] = 1 })
	if a := bot.send(t, resolved, nil); a.Status != http.StatusAccepted {
		t.Fatalf("resolved: %+v", a)
	}
	pollUntil(t, 15*time.Second, "the page saying the call is closed", func() bool {
		return strings.Contains(get(link), "This call is closed")
	}, dump)

	// Each answer comes after any look-up it made: counted after it, a
	// look-up would show.
	before = len(fake.Lookups())
	page := get(link)
	if argumentsCheck.MatchString(page) || strings.Contains(page, `name="action"`) {
		t.Errorf("the closed link's page still offers a form:\n%s", page)
	}
	get(link + "?arguments")
	code, page := postArguments(check)
	if got := len(fake.Lookups()) - before; got != 0 {
		t.Errorf("the closed link made %d look-ups at the backend (GET, GET ?arguments, POST of its arguments form), want none", got)
	}
	if strings.Contains(page, shownArguments) {
		t.Errorf("the closed link's arguments form answered %d with the arguments:\n%s", code, page)
	}
	t.Logf("the closed link's arguments form: %d", code)
}

// BenchmarkStalledBodyMemory is what the body flood costs: two bots in
// the same run, one idle and one taking the flood (512 connections from
// 8 addresses, each stalling after 900 KiB of a 1 MiB unsigned body),
// their resident sets once the flood is in, and the difference per
// connection of the flood and per connection still open, stalled (the
// budget answers the others 503). Each iteration is one flood; run it with
// -benchtime=1x (docs/security.md, "Open connections").
func BenchmarkStalledBodyMemory(b *testing.B) {
	if runtime.GOOS != "linux" {
		b.Skip("dials from 127.0.0.2 and on, and reads /proc: Linux only")
	}
	idle := startBot(b, floodConfig(b, b.TempDir(), ""))
	bot := startBot(b, floodConfig(b, b.TempDir(), ""))
	addr := strings.TrimPrefix(bot.base, "http://")
	var idleRSS, floodRSS, open int64
	for b.Loop() {
		flood := bodyFlood(b, addr, []string{"/v1/events", "/slack/interactions"})
		rss := settledRSS(b, bot).rss
		flood.mu.Lock()
		held := int64(len(flood.conns) - flood.ended)
		flood.mu.Unlock()
		floodRSS, open = max(floodRSS, rss), max(open, held)
		idleRSS = max(idleRSS, procMemory(b, idle).rss)
		flood.close()
	}
	b.ReportMetric(float64(idleRSS)/(1<<20), "MiB-idle")
	b.ReportMetric(float64(floodRSS)/(1<<20), "MiB-flooded")
	b.ReportMetric(float64(floodRSS-idleRSS)/floodConns/(1<<10), "KiB/conn")
	b.ReportMetric(float64(open), "stalled-open")
	if open > 0 {
		b.ReportMetric(float64(floodRSS-idleRSS)/float64(open)/(1<<10), "KiB/stalled")
	}
}
