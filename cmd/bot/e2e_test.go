package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/internal/syncbuf"
	"approvalsbot/templates"
)

// The end-to-end tests run the built binary as an operator would.

var botBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bot-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	botBinary = filepath.Join(dir, "bot")
	args := []string{"build", "-o", botBinary}
	if raceEnabled {
		// Under -race the binary the tests drive is raced too: its
		// goroutines are where the races would be.
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build the bot:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const (
	e2eEventsSecret = "e2e-events-secret-0123456789abcdef"
	e2eCallsSecret  = "e2e-calls-secret-0123456789abcdef"
	e2eLinkSecret   = "e2e-link-secret-0123456789abcdef0"
)

func e2eConfig(t *testing.T, dir string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store:
  driver: sqlite
  dsn: "file:%s"
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
`, filepath.Join(dir, "bot.db"))
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// syncBuffer collects a process's output while tests read it.
type syncBuffer = syncbuf.Buffer

type botProc struct {
	cmd    *exec.Cmd
	stdout *syncBuffer
	stderr *syncBuffer
	base   string
	done   chan error

	// private is the private listener's base URL (listen_private), or "".
	private string
}

func botEnv() []string {
	return append(os.Environ(), "BOT_EVENTS_SECRET="+e2eEventsSecret, "BOT_CALLS_SECRET="+e2eCallsSecret,
		"BOT_LINK_SECRET="+e2eLinkSecret)
}

// startBot runs `bot serve` and waits for it to say where it listens;
// env are more VAR=value for its environment.
func startBot(t testing.TB, cfg string, env ...string) *botProc {
	t.Helper()
	p := &botProc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(botBinary, "serve", "--config", cfg)
	p.cmd.Env = append(botEnv(), env...)
	p.cmd.Stdout = p.stdout
	pr, pw := io.Pipe()
	p.cmd.Stderr = io.MultiWriter(p.stderr, pw)
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait(); pw.Close() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	addr := make(chan [2]string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var line struct {
				Msg, Listen   string
				ListenPrivate string `json:"listen_private"`
			}
			if json.Unmarshal(sc.Bytes(), &line) == nil && line.Msg == "bot serving" {
				addr <- [2]string{line.Listen, line.ListenPrivate}
			}
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case a := <-addr:
		p.base = "http://" + a[0]
		if a[1] != "" {
			p.private = "http://" + a[1]
		}
	case err := <-p.done:
		t.Fatalf("bot exited before serving: %v\n%s", err, p.stderr.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("bot did not start\n%s", p.stderr.String())
	}
	return p
}

type answer struct {
	Status  int
	Code    string `json:"error"`
	Message string `json:"message"`
	State   string `json:"status"`
}

func (p *botProc) send(t *testing.T, body []byte, mutate func(*http.Request)) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.base+"/v1/events", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(e2eEventsSecret), time.Now(), body))
	if mutate != nil {
		mutate(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("send: %v", err)
	}
	defer resp.Body.Close()
	var a answer
	if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
		t.Fatalf("answer %d is not JSON: %v", resp.StatusCode, err)
	}
	a.Status = resp.StatusCode
	return a
}

// waitFor polls the bot's stdout until it holds want.
func (p *botProc) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.stdout.String(), want) {
		if time.Now().After(deadline) {
			t.Fatalf("stdout never showed %q:\n%s", want, p.stdout.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (p *botProc) get(t *testing.T, path string) (int, string) {
	t.Helper()
	resp, err := http.Get(p.base + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// fixtureOrder sends the events as the backend would: requests first,
// then what follows them, and the orphan resolve before its late request,
// on purpose.
func fixtureOrder(t *testing.T, ev *fixtureEvents) []string {
	rank := map[string]int{"approval.requested": 0, "approval.reasked": 1}
	type file struct {
		name string
		rank int
	}
	var list []file
	for _, name := range ev.names() {
		var head struct{ Type string }
		if err := json.Unmarshal(ev.raw[name], &head); err != nil {
			t.Fatal(err)
		}
		r, ok := rank[head.Type]
		if !ok {
			r = 2
		}
		if name == "late-requested.json" {
			r = 3
		}
		list = append(list, file{name, r})
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].rank != list[j].rank {
			return list[i].rank < list[j].rank
		}
		return list[i].name < list[j].name
	})
	names := make([]string, len(list))
	for i, f := range list {
		names[i] = f.name
	}
	return names
}

func TestEndToEnd(t *testing.T) {
	dir := t.TempDir()
	cfg := e2eConfig(t, dir)
	bot := startBot(t, cfg)
	ev := eventsNow(t)

	// The integrator's way in: `bot event` signs and sends a file, moved
	// to now, under a fresh event id and a fresh approval id, so the quick
	// start can be run twice and shows a new card each time.
	merge, _ := fixtures.Path("events", "merge.json")
	sentIDs, sentApprovals := map[string]bool{}, map[string]bool{}
	for range 2 {
		out := botEvent(t, cfg, bot, merge)
		m := regexp.MustCompile(`moved the event's times by \S+ to now \(time \S+\); sending it as event (evt-0001\.\S+)\n` +
			`approval a-merge1 is sent as (a-merge1\.\S+), a fresh id, so this run shows a new card\n202 .*accepted`).FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("bot event: want the move, the ids sent and 202 accepted:\n%s", out)
		}
		sentIDs[m[1]], sentApprovals[m[2]] = true, true
	}
	if len(sentIDs) != 2 || len(sentApprovals) != 2 {
		t.Errorf("bot event sent the same id twice: events %v, approvals %v", sentIDs, sentApprovals)
	}
	for _, name := range fixtureOrder(t, ev) {
		if a := bot.send(t, ev.event(t, name), nil); a.Status != http.StatusAccepted {
			t.Errorf("%s: %d %+v, want 202", name, a.Status, a)
		}
	}
	// The same request under two more event ids changes nothing.
	for _, id := range []string{"evt-0001-again", "evt-0001-once-more"} {
		again := ev.eventWith(t, "merge.json", func(e map[string]any) { e["id"] = id })
		if a := bot.send(t, again, nil); a.Status != http.StatusAccepted && a.Status != http.StatusOK {
			t.Errorf("merge.json as %s: %d %+v, want 202 or 200", id, a.Status, a)
		}
	}
	// --as-is sends the file's own bytes: the event the helper just sent,
	// saved to a file, is the same event, a duplicate.
	search := filepath.Join(dir, "search-now.json")
	if err := os.WriteFile(search, ev.event(t, "search.json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := botEvent(t, cfg, bot, search, "--as-is"); !strings.HasPrefix(out, "200 ") || !strings.Contains(out, "duplicate") ||
		strings.Contains(out, "moved") {
		t.Errorf("bot event --as-is of an event sent before: want 200 duplicate and no move:\n%s", out)
	}
	// Every live request shows as a card on the log surface.
	for _, want := range []string{"(approval a-merge1, revision 1)", "(approval a-mail1, revision 1)",
		"(approval a-big1, revision 1)", "(approval a-sec1, revision 1)", "(approval a-merge1, revision 2)",
		"DESTRUCTIVE · reaches outside the tenant", "reads only · reaches outside the tenant",
		"user:kevin denied it: not before the release", "The call completed: 10 results"} {
		bot.waitFor(t, want)
	}
	if n := len(regexp.MustCompile(`card log-\d+ for slack:C0APPROVALS \(approval a-merge1, revision 1\)`).FindAllString(bot.stdout.String(), -1)); n != 1 {
		t.Errorf("a-merge1 was requested three times under three event ids: %d cards, want 1", n)
	}
	for id := range sentApprovals {
		bot.waitFor(t, "(approval "+id+", revision 1)")
		if n := len(regexp.MustCompile(`card log-\d+ for slack:C0APPROVALS \(approval `+regexp.QuoteMeta(id)+`, revision 1\)`).FindAllString(bot.stdout.String(), -1)); n != 1 {
			t.Errorf("bot event's approval %s: %d cards, want 1", id, n)
		}
	}
	if strings.Contains(bot.stdout.String(), "(approval a-late1") {
		t.Error("a late request of an approval decided before it posted a card")
	}
	// No secret of secrets.json leaves the bot, on the surface or in logs.
	for _, secret := range []string{"hunter2", "eyJhbGciOiJIUzI1NiJ9", "ak_live_51H8", "correct horse", "cs_9f8e", "BEGIN PRIVATE KEY", e2eEventsSecret} {
		if strings.Contains(bot.stdout.String(), secret) || strings.Contains(bot.stderr.String(), secret) {
			t.Errorf("%q leaked", secret)
		}
	}
	if !strings.Contains(bot.stdout.String(), "token rotation") {
		t.Error("a harmless value was redacted")
	}

	// Bad input gets its answer and the bot stays up.
	good := ev.event(t, "search.json")
	deep := []byte(`{"id":"evt-deep","type":"approval.requested","time":"2026-11-29T18:00:00Z","tenant":"acme","data":` +
		strings.Repeat(`{"a":`, 10000) + `1` + strings.Repeat(`}`, 10000) + `}`)
	bigNumber := ev.eventWith(t, "refund.json", func(e map[string]any) {
		e["id"] = "evt-bignum"
		e["data"].(map[string]any)["revision"] = json.Number("1" + strings.Repeat("0", 400))
	})
	reused := bytes.Replace(good, []byte(`acme api rate limits`), []byte(`other query`), 1)
	unknownTenant := bytes.ReplaceAll(bytes.Replace(good, []byte(`"evt-0004"`), []byte(`"evt-globex"`), 1), []byte(`"acme"`), []byte(`"globex"`))
	oversize := append([]byte(`{"pad":"`), bytes.Repeat([]byte("x"), 1<<20)...)
	oversize = append(oversize, []byte(`"}`)...)
	cases := []struct {
		name   string
		body   []byte
		mutate func(*http.Request)
		status int
		code   string
		msg    string
	}{
		{"not json", []byte("hello"), nil, 400, "bad_json", ""},
		{"truncated", good[:len(good)/2], nil, 400, "bad_json", ""},
		{"invalid utf-8", []byte("{\"id\":\"\xff\xfe\"}"), nil, 400, "bad_json", "UTF-8"},
		{"nested 10000 deep", deep, nil, 400, "bad_json", ""},
		{"400-digit number", bigNumber, nil, 422, "invalid", "data.revision"},
		{"reused id, other body", reused, nil, 422, "invalid", "id: evt-0004"},
		{"unknown tenant", unknownTenant, nil, 422, "unknown_tenant", "globex"},
		{"1 MiB + 1 byte", oversize, nil, 413, "too_large", ""},
		{"unsigned", good, func(r *http.Request) { r.Header.Del(backend.SignatureHeader) }, 401, "bad_signature", ""},
		{"stale signature", good, func(r *http.Request) {
			r.Header.Set(backend.SignatureHeader, backend.Sign([]byte(e2eEventsSecret), time.Now().Add(-301*time.Second), good))
		}, 401, "bad_signature", ""},
		{"wrong secret", good, func(r *http.Request) {
			r.Header.Set(backend.SignatureHeader, backend.Sign([]byte("guess"), time.Now(), good))
		}, 401, "bad_signature", ""},
		{"text/plain", good, func(r *http.Request) { r.Header.Set("Content-Type", "text/plain") }, 415, "unsupported_media_type", ""},
	}
	for _, c := range cases {
		a := bot.send(t, c.body, c.mutate)
		if a.Status != c.status || a.Code != c.code || !strings.Contains(a.Message, c.msg) || a.Message == "" {
			t.Errorf("%s: got %d %q %q, want %d %q containing %q", c.name, a.Status, a.Code, a.Message, c.status, c.code, c.msg)
		}
	}
	if code, body := bot.get(t, "/healthz"); code != 200 {
		t.Fatalf("healthz after bad input: %d %s", code, body)
	}
	if code, _ := bot.get(t, "/readyz"); code != 200 {
		t.Fatalf("readyz: %d", code)
	}
	_, metrics := bot.get(t, "/metrics")
	for _, want := range []string{`bot_events_total{answer="accepted",type="approval.requested"}`,
		`bot_events_total{answer="bad_signature",type="unparsed"}`, "bot_outbox_pending", "bot_deliveries_total",
		`bot_outbox_lane_pending{lane="backend"}`, `bot_outbox_lane_oldest_seconds{lane="chat"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// doctor checks the store beside the running bot, which holds it; the
	// configuration's backend address has nothing behind it, and doctor
	// says so (and fails for it).
	doctor := exec.Command(botBinary, "doctor", "--config", cfg)
	doctor.Env = botEnv()
	out, err := doctor.CombinedOutput()
	if !strings.Contains(string(out), "store: sqlite "+filepath.Join(dir, "bot.db")+" answers\n") ||
		!strings.Contains(string(out), "backend: PROBLEM: cannot reach http://127.0.0.1:9: ") || err == nil {
		t.Errorf("doctor beside the running bot: %v\n%s", err, out)
	}

	// SIGTERM: stop taking events, finish, close the store, exit 0.
	if err := bot.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bot.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, bot.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no exit after SIGTERM")
	}
	if !strings.Contains(bot.stderr.String(), `"msg":"stopped"`) {
		t.Errorf("no clean stop logged:\n%s", bot.stderr.String())
	}
}

// kill -9 right after a 202: after a restart the approval is there and its
// card is posted; the duplicate answer proves the event was committed.
func TestCrashAfterAccept(t *testing.T) {
	dir := t.TempDir()
	cfg := e2eConfig(t, dir)
	first := startBot(t, cfg)
	const n = 20
	ev := eventsNow(t)
	bodies := make([][]byte, n)
	for i := range bodies {
		bodies[i] = ev.eventWith(t, "merge.json", func(e map[string]any) {
			e["id"] = fmt.Sprintf("evt-crash-%d", i)
			e["data"].(map[string]any)["id"] = fmt.Sprintf("a-crash%d", i)
		})
	}
	for i, b := range bodies {
		if a := first.send(t, b, nil); a.Status != http.StatusAccepted {
			t.Fatalf("event %d: %+v", i, a)
		}
	}
	if err := first.cmd.Process.Kill(); err != nil { // SIGKILL: no shutdown at all
		t.Fatal(err)
	}
	<-first.done

	second := startBot(t, cfg)
	for i, b := range bodies {
		if a := second.send(t, b, nil); a.Status != http.StatusOK || a.State != "duplicate" {
			t.Fatalf("event %d after the crash: %+v (want duplicate: it was committed before 202)", i, a)
		}
	}
	card := regexp.MustCompile(`card log-\d+ for slack:C0APPROVALS \(approval (a-crash\d+), revision 1\)`)
	deadline := time.Now().Add(20 * time.Second)
	for {
		seen := map[string]int{}
		for _, out := range []string{first.stdout.String(), second.stdout.String()} {
			for _, m := range card.FindAllStringSubmatch(out, -1) {
				seen[m[1]]++
			}
		}
		if len(seen) == n {
			for id, c := range seen {
				// A crash between posting and recording repeats at most that
				// one post; anything more is a bug.
				if c > 2 {
					t.Errorf("%s posted %d times", id, c)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after restart only %d of %d cards were posted", len(seen), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	deadline = time.Now().Add(20 * time.Second)
	for {
		_, metrics := second.get(t, "/metrics")
		if strings.Contains(metrics, "\nbot_outbox_pending 0\n") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("outbox never drained:\n%s", metrics)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestCheckAndPreview(t *testing.T) {
	ctx := context.Background()
	cfg := e2eConfig(t, t.TempDir())
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"check", "--config", cfg}, &out, &errOut, lookup(map[string]string{
		"BOT_EVENTS_SECRET": e2eEventsSecret, "BOT_CALLS_SECRET": e2eCallsSecret})); code != 0 {
		t.Fatalf("check: %d %s", code, errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := run(ctx, []string{"check", "--config", cfg}, &out, &errOut, lookup(nil)); code != 1 ||
		!strings.Contains(errOut.String(), "BOT_EVENTS_SECRET") {
		t.Fatalf("check with unset secrets: %d %q", code, errOut.String())
	}
	files, _ := fixtures.EventFiles()
	for _, f := range files {
		for _, as := range []string{"slack", "discord", "email", "text"} {
			out.Reset()
			errOut.Reset()
			if code := run(ctx, []string{"preview", "--as", as, f}, &out, &errOut, lookup(nil)); code != 0 || out.Len() == 0 {
				t.Errorf("preview --as %s %s: %d %s", as, filepath.Base(f), code, errOut.String())
			}
		}
	}
	// Every state a call reaches, on a call; every state a question
	// reaches, on a question.
	for _, name := range []string{"merge.json", "question.json"} {
		f, _ := fixtures.Path("events", name)
		body, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := approval.Parse(body)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, st := range templates.PreviewStatesOf(ev.Approval) {
			out.Reset()
			if code := run(ctx, []string{"preview", "--state", st, f}, &out, &errOut, lookup(nil)); code != 0 {
				t.Errorf("preview --state %s %s: %s", st, name, errOut.String())
			}
		}
	}
}

// botEvent runs `bot event` against the running bot and returns what it
// printed; it fails the test when the command fails.
func botEvent(t *testing.T, cfg string, bot *botProc, file string, flags ...string) string {
	t.Helper()
	args := append([]string{"event", "--config", cfg, "--url", bot.base + "/v1/events"}, flags...)
	cmd := exec.Command(botBinary, append(args, file)...)
	cmd.Env = botEnv()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bot event %v: %v\n%s", flags, err, out)
	}
	return string(out)
}

func lookup(m map[string]string) env {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}
