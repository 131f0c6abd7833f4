package main

import (
	"bufio"
	"fmt"
	"html"
	"io"
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
// this machine: its line that loads the development secrets from a file
// into the shell, then `bot serve`, the stand-in `bot backend` and `bot
// event`, each run as the README's own command line after that line (from
// the module root, the checkout the README runs in, with no secret in
// the test's environment), with examples/bot.yaml moved to free loopback
// ports and a temporary store. The card the bot prints carries kevin's
// decision link; opening it decides nothing; the Deny of the page's form
// reaches the stand-in, which prints the decision bound to the call's
// digest, and the bot prints the card edited to it. Run again, `bot
// event` shows a new card, of a new approval, whose arguments the
// stand-in still finds.
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
	secrets := readmeSecrets(t, root, string(readme))

	bot := startIn(t, root, secrets, readmeCommand(t, string(readme), "serve", cfg))
	waitOutput(t, bot.stderr, `"msg":"bot serving"`, bot)
	bot.base = "http://" + listen
	standin := startIn(t, root, secrets, readmeCommand(t, string(readme), "backend", cfg))
	waitOutput(t, standin.stdout, "stand-in job backend at http://"+backendAddr, standin)

	eventArgs := readmeCommand(t, string(readme), "event", cfg)
	first := sendEvent(t, root, secrets, eventArgs)
	event, err := os.ReadFile(filepath.Join(root, eventArgs[len(eventArgs)-1]))
	if err != nil {
		t.Fatal(err)
	}
	digest := eventDigest(t, event)

	// "The card the bot prints ends with the decision link of the member
	// who may decide it by mail (decide as user:kevin (deny): …)": ada,
	// the other member, started the job, and the tenant forbids deciding
	// one's own job's calls.
	link := kevinsLink(t, bot, listen, first)

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

	// "The stand-in then prints denied a-merge1.… revision 1 by
	// user:kevin via email (kevin@acme.example): "…" · bound to
	// sha256:…, and the bot prints the card edited to the decision." The
	// one decision is the form's: had opening the page decided, it would
	// carry no reason.
	want := fmt.Sprintf("denied %s revision 1 by user:kevin via email (kevin@acme.example): %q · bound to %s\n", first, reason, digest)
	pollUntil(t, 20*time.Second, "the stand-in printing the decision", func() bool {
		return strings.Contains(standin.stdout.String(), want)
	}, func() string { return standin.stdout.String() + bot.stderr.String() })
	pollUntil(t, 20*time.Second, "the card edited to the decision", func() bool {
		for _, e := range logEntries(bot.stdout.String()) {
			if strings.HasSuffix(e.header, " for slack:C0APPROVALS edited (approval "+first+")") &&
				strings.HasPrefix(e.body, "Denied by user:kevin") && strings.Contains(e.body, reason) {
				return true
			}
		}
		return false
	}, bot.stdout.String)

	// "Run it again for a new card, a new approval with its own decision
	// link": the stand-in answers its arguments from the same fixture.
	second := sendEvent(t, root, secrets, eventArgs)
	if second == first {
		t.Fatalf("bot event sent approval %s twice", first)
	}
	link = kevinsLink(t, bot, listen, second)
	_, page = bot.get(t, strings.TrimPrefix(link, bot.base))
	resp, err = http.PostForm(link, pageForm(t, page, "arguments"))
	if err != nil {
		t.Fatal(err)
	}
	shown, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(shown), "they match the card&#39;s digest "+digest) ||
		!strings.Contains(string(shown), "acme/api") {
		t.Errorf("POST the form's Show the call's full arguments of %s: %d\n%s", second, resp.StatusCode, shown)
	}
	// The stand-in prints its line as it answers: it may land just after
	// the page has the arguments.
	waitOutput(t, standin.stdout, "arguments of "+second+" revision 1 shown to user:kevin\n", standin)

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

// sentAs is how `bot event` says which fresh approval id it sent.
var sentAs = regexp.MustCompile(`(?m)^approval a-merge1 is sent as (a-merge1\.\S+), a fresh id`)

// sendEvent runs the README's `bot event` after its secrets line and
// returns the fresh approval id it says it sent.
func sendEvent(t *testing.T, root, secrets string, args []string) string {
	t.Helper()
	send := inShell(root, secrets, args)
	out, err := send.CombinedOutput()
	if err != nil {
		t.Fatalf("bot %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	m := sentAs.FindStringSubmatch(string(out))
	if m == nil || !strings.Contains(string(out), "202 Accepted") {
		t.Fatalf("bot %s: no fresh approval id, or not accepted:\n%s", strings.Join(args, " "), out)
	}
	return m[1]
}

// kevinsLink waits for the card of approval id on the log surface and
// returns the one decision link it ends with, kevin's.
func kevinsLink(t *testing.T, bot *botProc, listen, id string) string {
	t.Helper()
	var card logEntry
	pollUntil(t, 20*time.Second, "the card of "+id+" on the log surface", func() bool {
		for _, e := range logEntries(bot.stdout.String()) {
			if strings.HasPrefix(e.header, "card log-") && strings.HasSuffix(e.header, " for slack:C0APPROVALS (approval "+id+", revision 1)") {
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
		t.Fatalf("the card of %s does not end with kevin's one decision link (%s…):\n%s", id, prefix, card.body)
	}
	return strings.TrimPrefix(last, "decide as user:kevin (deny): ")
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

// secretsLine is the README's line that loads a file of secrets into
// the shell.
var secretsLine = regexp.MustCompile(`^set -a; \. (\S+); set \+a$`)

// readmeSecrets is the README's line that loads the development secrets,
// checked to name a file of the checkout.
func readmeSecrets(t *testing.T, root, readme string) string {
	t.Helper()
	for _, line := range strings.Split(readme, "\n") {
		if m := secretsLine.FindStringSubmatch(line); m != nil {
			if _, err := os.Stat(filepath.Join(root, m[1])); err != nil {
				t.Fatalf("the README loads %s: %v", m[1], err)
			}
			return line
		}
	}
	t.Fatalf("the README has no line that loads the secrets (set -a; . FILE; set +a)")
	return ""
}

// readmeCommand is the README's command line of `bot sub` (the one that
// runs it with `go run ./cmd/bot` on examples/bot.yaml, nothing before
// it): the arguments after the binary, the configuration swapped for cfg.
func readmeCommand(t *testing.T, readme, sub, cfg string) []string {
	t.Helper()
	// A command's continuation lines are one line to the shell.
	for _, line := range strings.Split(strings.ReplaceAll(readme, "\\\n", " "), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 4 || strings.Join(fields[:4], " ") != "go run ./cmd/bot "+sub {
			continue
		}
		args := shellWords(t, line)[3:]
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
		return args
	}
	t.Fatalf("the README has no line that runs `go run ./cmd/bot %s`", sub)
	return nil
}

// shellWords splits a command line into its words as a shell does for
// the README's commands: at spaces, a double-quoted part one word.
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	quoted, started := false, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted, started = !quoted, true
		case (r == ' ' || r == '\t') && !quoted:
			if started {
				words = append(words, cur.String())
			}
			cur.Reset()
			started = false
		default:
			cur.WriteRune(r)
			started = true
		}
	}
	if started {
		words = append(words, cur.String())
	}
	if quoted {
		t.Fatalf("the README's command has an unclosed quote: %s", line)
	}
	return words
}

// inShell is the built binary run with args in dir by a shell that first
// runs secrets, the README's line, in an environment without the bot's
// secrets: the README's file must give them.
func inShell(dir, secrets string, args []string) *exec.Cmd {
	cmd := exec.Command("sh", append([]string{"-c", secrets + "\nexec \"$@\"", "sh", botBinary}, args...)...)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BOT_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	return cmd
}

// startIn starts inShell's command.
func startIn(t *testing.T, dir, secrets string, args []string) *botProc {
	t.Helper()
	p := &botProc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = inShell(dir, secrets, args)
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
	formPattern   = regexp.MustCompile(`(?s)<form (?:id="[^"]*" )?method="post"[^>]*>(.*?)</form>`)
	hiddenPattern = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// denyForm is the fields of the page's form whose action is deny, as a
// browser would post them.
func denyForm(t *testing.T, page string) url.Values {
	t.Helper()
	// The answers form's buttons name the answer; its comment box sits
	// above the bar, in the form by its form attribute.
	for _, f := range formPattern.FindAllStringSubmatch(page, -1) {
		v := formFields(f[1])
		if strings.Contains(f[1], `name="action" value="deny"`) && v.Get("check") != "" &&
			strings.Contains(page, `name="reason" form="answers"`) {
			v.Set("action", "deny")
			return v
		}
	}
	t.Fatalf("the page has no Deny form:\n%s", page)
	return nil
}

// pageForm is the fields of the page's form whose action is action.
func pageForm(t *testing.T, page, action string) url.Values {
	t.Helper()
	for _, f := range formPattern.FindAllStringSubmatch(page, -1) {
		if v := formFields(f[1]); v.Get("action") == action && v.Get("check") != "" {
			return v
		}
	}
	t.Fatalf("the page has no form of action %s:\n%s", action, page)
	return nil
}

// formFields is a form's hidden fields.
func formFields(form string) url.Values {
	v := url.Values{}
	for _, in := range hiddenPattern.FindAllStringSubmatch(form, -1) {
		v.Set(html.UnescapeString(in[1]), html.UnescapeString(in[2]))
	}
	return v
}
