package main

import (
	"bufio"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalsbot/internal/fixtures"
)

// TestQuickStartLoop runs the README's quick start as a reader would, on
// this machine: `bot serve`, the stand-in `bot backend` and `bot event`,
// each run as the README's own command line (its environment and flags,
// from the module root, the checkout the README runs in), with
// examples/bot.yaml moved to free loopback ports and a temporary store.
// The card the bot prints carries kevin's decision link; opening it
// decides nothing; the Deny of the page's form reaches the stand-in,
// which prints the decision bound to the call's digest, and the bot
// prints the card edited to it.
func TestQuickStartLoop(t *testing.T) {
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	listen, backendAddr := freeAddr(t), freeAddr(t)
	cfg := quickStartConfig(t, root, dir, listen, backendAddr)

	serveEnv, serveArgs := readmeCommand(t, string(readme), "serve", cfg)
	bot := startIn(t, root, serveEnv, serveArgs)
	waitOutput(t, bot.stderr, `"msg":"bot serving"`, bot)
	bot.base = "http://" + listen
	backendEnv, backendArgs := readmeCommand(t, string(readme), "backend", cfg)
	standin := startIn(t, root, backendEnv, backendArgs)
	waitOutput(t, standin.stdout, "stand-in job backend at http://"+backendAddr, standin)

	eventEnv, eventArgs := readmeCommand(t, string(readme), "event", cfg)
	send := exec.Command(botBinary, eventArgs...)
	send.Dir, send.Env = root, append(os.Environ(), eventEnv...)
	if out, err := send.CombinedOutput(); err != nil {
		t.Fatalf("bot %s: %v\n%s", strings.Join(eventArgs, " "), err, out)
	}
	event, err := os.ReadFile(filepath.Join(root, eventArgs[len(eventArgs)-1]))
	if err != nil {
		t.Fatal(err)
	}
	digest := eventDigest(t, event)

	// "The card the bot prints ends with the decision link of the member
	// who may decide it by mail (decide as user:kevin (deny): …)": ada,
	// the other member, started the job, and the tenant forbids deciding
	// one's own job's calls.
	var card logEntry
	pollUntil(t, 20*time.Second, "the card on the log surface", func() bool {
		for _, e := range logEntries(bot.stdout.String()) {
			if e.header == "card log-1 for slack:C0APPROVALS (approval a-merge1, revision 1)" {
				card = e
				return true
			}
		}
		return false
	}, bot.stdout.String)
	lines := strings.Split(strings.TrimRight(card.body, "\n"), "\n")
	last := lines[len(lines)-1]
	prefix := "decide as user:kevin (deny): http://" + listen + "/decide/"
	if !strings.HasPrefix(last, prefix) || strings.Count(card.body, "decide as ") != 1 {
		t.Fatalf("the card does not end with kevin's one decision link (%s…):\n%s", prefix, card.body)
	}
	link := strings.TrimPrefix(last, "decide as user:kevin (deny): ")

	// "Open it in a browser: the page shows the card and whom you act as,
	// and decides nothing until you press Deny."
	status, page := bot.get(t, strings.TrimPrefix(link, bot.base))
	if status != http.StatusOK || !strings.Contains(page, "Waiting for a decision. Opening this page decided nothing") ||
		!strings.Contains(page, "You act as user:kevin (kevin@acme.example).") || !strings.Contains(page, "acme_github.merge") {
		t.Fatalf("GET %s: %d\n%s", link, status, page)
	}
	form := denyForm(t, page)
	const reason = "not before the release"
	form.Set("reason", reason)
	resp, err := http.PostForm(link, form) // the 303 to the page is followed, as a browser does
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Request.Method != http.MethodGet {
		t.Fatalf("POST the form's Deny: %d after %s %s", resp.StatusCode, resp.Request.Method, resp.Request.URL)
	}

	// "The stand-in then prints denied a-merge1 revision 1 by user:kevin
	// via email (kevin@acme.example): "…" · bound to sha256:…, and the bot
	// prints the card edited to the decision." The one decision is the
	// form's: had opening the page decided, it would carry no reason.
	want := fmt.Sprintf("denied a-merge1 revision 1 by user:kevin via email (kevin@acme.example): %q · bound to %s\n", reason, digest)
	pollUntil(t, 20*time.Second, "the stand-in printing the decision", func() bool {
		return strings.Contains(standin.stdout.String(), want)
	}, func() string { return standin.stdout.String() + bot.stderr.String() })
	pollUntil(t, 20*time.Second, "the card edited to the decision", func() bool {
		for _, e := range logEntries(bot.stdout.String()) {
			if e.header == "card log-1 for slack:C0APPROVALS edited (approval a-merge1)" &&
				strings.HasPrefix(e.body, "Denied by user:kevin") && strings.Contains(e.body, reason) {
				return true
			}
		}
		return false
	}, bot.stdout.String)

	for _, p := range []*botProc{standin, bot} {
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("%s: exit after SIGTERM: %v\n%s", strings.Join(p.cmd.Args, " "), err, p.stderr.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("%s: no exit after SIGTERM\n%s", strings.Join(p.cmd.Args, " "), p.stderr.String())
		}
	}
	var decisions []string
	sc := bufio.NewScanner(strings.NewReader(standin.stdout.String()))
	for sc.Scan() {
		if l := sc.Text(); strings.HasPrefix(l, "denied ") || strings.HasPrefix(l, "approved ") {
			decisions = append(decisions, l)
		}
	}
	if len(decisions) != 1 {
		t.Errorf("the stand-in received %d decisions, want the form's one:\n%s", len(decisions), standin.stdout.String())
	}
	t.Logf("the stand-in printed:\n%s", standin.stdout.String())
}

// quickStartConfig is examples/bot.yaml with its listen address (and the
// public_url on it), backend.url and store moved to listen, backendAddr
// and dir: each value is replaced where the example has it, so a change
// to the example that this misses fails here rather than run on its
// ports.
func quickStartConfig(t *testing.T, root, dir, listen, backendAddr string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, "examples", "bot.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	for _, r := range [][2]string{
		{`listen: "127.0.0.1:8080"`, fmt.Sprintf("listen: %q", listen)},
		{`public_url: "http://127.0.0.1:8080"`, fmt.Sprintf("public_url: %q", "http://"+listen)},
		{`url: "http://127.0.0.1:9090"`, fmt.Sprintf("url: %q", "http://"+backendAddr)},
		{`dsn: "file:bot.db"`, fmt.Sprintf("dsn: %q", "file:"+filepath.Join(dir, "bot.db"))},
	} {
		if n := strings.Count(cfg, r[0]); n != 1 {
			t.Fatalf("examples/bot.yaml has %s %d times, want once", r[0], n)
		}
		cfg = strings.Replace(cfg, r[0], r[1], 1)
	}
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// readmeCommand is the README's command line of `bot sub` (the one that
// runs it with `go run ./cmd/bot` on examples/bot.yaml): the environment
// it sets and the arguments after the binary, the configuration swapped
// for cfg.
func readmeCommand(t *testing.T, readme, sub, cfg string) (env, args []string) {
	t.Helper()
	for _, line := range strings.Split(readme, "\n") {
		fields := strings.Fields(line)
		i := 0
		for i < len(fields) && strings.Contains(fields[i], "=") {
			i++
		}
		if i == 0 || len(fields) < i+4 || strings.Join(fields[i:i+4], " ") != "go run ./cmd/bot "+sub {
			continue
		}
		env, args = fields[:i], fields[i+3:]
		swapped := 0
		for j, a := range args {
			if a == "examples/bot.yaml" {
				args[j] = cfg
				swapped++
			}
		}
		if swapped != 1 {
			t.Fatalf("the README's command %q does not name examples/bot.yaml once", line)
		}
		return env, args
	}
	t.Fatalf("the README has no line that runs `go run ./cmd/bot %s` with its environment", sub)
	return nil, nil
}

// startIn runs the built binary with args in dir, with env added to the
// test's environment.
func startIn(t *testing.T, dir string, env, args []string) *botProc {
	t.Helper()
	p := &botProc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(botBinary, args...)
	p.cmd.Dir, p.cmd.Env = dir, append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// waitOutput waits until out holds want, failing the test if p exits or
// has not written it within 30s.
func waitOutput(t *testing.T, out *syncBuffer, want string, p *botProc) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !strings.Contains(out.String(), want) {
		select {
		case err := <-p.done:
			t.Fatalf("%s exited (%v) before writing %q:\n%s\n%s", strings.Join(p.cmd.Args, " "), err, want, p.stdout.String(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never wrote %q:\n%s\n%s", strings.Join(p.cmd.Args, " "), want, p.stdout.String(), p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

var (
	formPattern   = regexp.MustCompile(`(?s)<form method="post"[^>]*>(.*?)</form>`)
	hiddenPattern = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// denyForm is the fields of the page's form whose action is deny, as a
// browser would post them.
func denyForm(t *testing.T, page string) url.Values {
	t.Helper()
	for _, f := range formPattern.FindAllStringSubmatch(page, -1) {
		v := url.Values{}
		for _, in := range hiddenPattern.FindAllStringSubmatch(f[1], -1) {
			v.Set(html.UnescapeString(in[1]), html.UnescapeString(in[2]))
		}
		if v.Get("action") == "deny" && v.Get("check") != "" && strings.Contains(f[1], `name="reason"`) {
			return v
		}
	}
	t.Fatalf("the page has no Deny form:\n%s", page)
	return nil
}
