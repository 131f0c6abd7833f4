package api_test

import (
	"fmt"
	"html"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/syncbuf"
)

// The secrets the bot and an example backend share in these tests (each
// at least 32 bytes, as the bot requires).
const (
	exampleEventsSecret = "example-events-secret-0123456789abcdef"
	exampleCallsSecret  = "example-calls-secret-0123456789abcdef0"
	exampleLinkSecret   = "example-link-secret-0123456789abcdef01"
)

// exampleArguments are the call's arguments the example backends send:
// keys out of order, nested, and text outside ASCII with a quote and a
// line separator, so the digest depends on each example's RFC 8785 form.
const exampleArguments = `{"repo":"acme/api","pr":1234,"title":"Größe \"v2\" ✓ \u2028 done","labels":["b","a"],"z":{"b":-7,"a":[true,null,{}]},"A":"upper first"}`

var (
	botOnce sync.Once
	botPath string
	botErr  error
)

// builtBot builds the bot once for the package's tests.
func builtBot(t *testing.T) string {
	t.Helper()
	botOnce.Do(func() {
		dir, err := os.MkdirTemp("", "api-bot-")
		if err != nil {
			botErr = err
			return
		}
		botPath = filepath.Join(dir, "bot")
		out, err := exec.Command("go", "build", "-o", botPath, "../cmd/bot").CombinedOutput()
		if err != nil {
			botErr = fmt.Errorf("go build ./cmd/bot: %v\n%s", err, out)
		}
	})
	if botErr != nil {
		t.Fatal(botErr)
	}
	return botPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if botPath != "" {
		os.RemoveAll(filepath.Dir(botPath))
	}
	os.Exit(code)
}

// proc is a program a test started, its output kept.
type proc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncbuf.Buffer
	done           chan error
}

func start(t *testing.T, env []string, name string, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(name, args...), stdout: &syncbuf.Buffer{}, stderr: &syncbuf.Buffer{}, done: make(chan error, 1)}
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait polls p's output until re matches it, for at most 30 s.
func (p *proc) wait(t *testing.T, out *syncbuf.Buffer, re *regexp.Regexp) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			return m
		}
		select {
		case err := <-p.done:
			t.Fatalf("%s exited (%v) before writing %s:\n%s\n%s", p.cmd.Path, err, re, p.stdout.String(), p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never wrote %s:\n%s\n%s", p.cmd.Path, re, p.stdout.String(), p.stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// exampleConfig is examples/bot.yaml on free loopback ports with a
// temporary store, its backend.url the example backend's, which lists no
// optional feature.
func exampleConfig(t *testing.T, listen, backendAddr string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "examples", "bot.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := string(b)
	for _, r := range [][2]string{
		{`listen: "127.0.0.1:8080"`, fmt.Sprintf("listen: %q", listen)},
		{`public_url: "http://127.0.0.1:8080"`, fmt.Sprintf("public_url: %q", "http://"+listen)},
		{`url: "http://127.0.0.1:9090"`, fmt.Sprintf("url: %q", "http://"+backendAddr)},
		{`dsn: "file:bot.db"`, fmt.Sprintf("dsn: %q", "file:"+filepath.Join(dir, "bot.db"))},
		{`features: [approvers]`, `features: []`},
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

var (
	examplePage   = regexp.MustCompile(`(?s)<form (?:id="[^"]*" )?method="post"[^>]*>(.*?)</form>`)
	exampleHidden = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)
)

// pageAction is the hidden fields of the decision page's form that posts
// action (deny, arguments).
func pageAction(t *testing.T, page, action string) url.Values {
	t.Helper()
	for _, f := range examplePage.FindAllStringSubmatch(page, -1) {
		v := url.Values{}
		for _, in := range exampleHidden.FindAllStringSubmatch(f[1], -1) {
			v.Set(html.UnescapeString(in[1]), html.UnescapeString(in[2]))
		}
		if v.Get("check") == "" {
			continue
		}
		if v.Get("action") == action || strings.Contains(f[1], `name="action" value="`+action+`"`) {
			v.Set("action", action)
			return v
		}
	}
	t.Fatalf("the decision page has no form of action %s:\n%s", action, page)
	return nil
}

// TestExampleBackends runs each example backend against the built bot on
// loopback: the example signs and sends an approval.requested; kevin
// opens his decision link from the card, asks for the call's full
// arguments, which the example answers and the bot checks against the
// digest, then denies; the example verifies the bot's signature on each
// call and prints the decision bound to the digest of its arguments.
func TestExampleBackends(t *testing.T) {
	want, err := approval.Digest([]byte(exampleArguments))
	if err != nil {
		t.Fatal(err)
	}
	for _, ex := range []struct {
		name    string
		command func(t *testing.T) []string
	}{
		{"python", func(t *testing.T) []string {
			if _, err := exec.LookPath("python3"); err != nil {
				t.Skip("python3 is not installed: the Python example backend is not run")
			}
			return []string{"python3", filepath.Join("..", "examples", "backend-python", "backend.py")}
		}},
		{"typescript", func(t *testing.T) []string {
			if _, err := exec.LookPath("node"); err != nil {
				t.Skip("node is not installed: the TypeScript example backend is not run")
			}
			dir := filepath.Join("..", "examples", "backend-ts")
			tsc := filepath.Join(dir, "node_modules", "typescript", "bin", "tsc")
			if _, err := os.Stat(tsc); err != nil {
				t.Skip("the TypeScript example's packages are not installed (npm ci in examples/backend-ts): it is not run")
			}
			out := t.TempDir()
			if b, err := exec.Command("node", tsc, "-p", dir, "--outDir", out).CombinedOutput(); err != nil {
				t.Fatalf("tsc: %v\n%s", err, b)
			}
			return []string{"node", filepath.Join(out, "backend.js")}
		}},
	} {
		t.Run(ex.name, func(t *testing.T) {
			command := ex.command(t)
			bin := builtBot(t)
			listen, backendAddr := freeAddr(t), freeAddr(t)
			cfg := exampleConfig(t, listen, backendAddr)
			secrets := []string{"BOT_EVENTS_SECRET=" + exampleEventsSecret, "BOT_CALLS_SECRET=" + exampleCallsSecret,
				"BOT_LINK_SECRET=" + exampleLinkSecret}
			bot := start(t, secrets, bin, "serve", "--config", cfg)
			bot.wait(t, bot.stderr, regexp.MustCompile(`"msg":"bot serving"`))

			example := start(t, append(secrets, "BOT_URL=http://"+listen, "LISTEN="+backendAddr,
				"EXAMPLE_ARGUMENTS="+exampleArguments), command[0], command[1:]...)
			sent := example.wait(t, example.stdout, regexp.MustCompile(`sent approval (\S+) with args_sha256 (\S+): (\d+)`))
			id, digest := sent[1], sent[2]
			if digest != want || sent[3] != "202" {
				t.Fatalf("the example sent %s with args_sha256 %s, answered %s; want the digest %s accepted (202)", id, digest, sent[3], want)
			}

			link := bot.wait(t, bot.stdout, regexp.MustCompile(`\(approval `+regexp.QuoteMeta(id)+`, revision 1\)(?s:.*?)decide as user:kevin \(deny\): (http://\S+)`))[1]
			page := get(t, link)
			shown := postForm(t, link, pageAction(t, page, "arguments"))
			if !strings.Contains(shown, "they match the card&#39;s digest "+want) {
				t.Fatalf("the page did not show the arguments checked against %s:\n%s", want, shown)
			}
			example.wait(t, example.stdout, regexp.MustCompile(`arguments of `+regexp.QuoteMeta(id)+` revision 1 shown to user:kevin`))

			form := pageAction(t, get(t, link), "deny")
			form.Set("reason", "not before the release")
			postForm(t, link, form)
			example.wait(t, example.stdout, regexp.MustCompile(`decision call for `+regexp.QuoteMeta(id)+`: signature verified\n`+
				`denied `+regexp.QuoteMeta(id)+` revision 1 by user:kevin via email bound to `+regexp.QuoteMeta(want)+`\n`))
			bot.wait(t, bot.stdout, regexp.MustCompile(`(?s)edited \(approval `+regexp.QuoteMeta(id)+`\).*?Denied by user:kevin`))
		})
	}
}

func get(t *testing.T, link string) string {
	t.Helper()
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d\n%s", link, resp.StatusCode, b)
	}
	return string(b)
}

func postForm(t *testing.T, link string, form url.Values) string {
	t.Helper()
	resp, err := http.PostForm(link, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST %s (%s): %d\n%s", link, form.Get("action"), resp.StatusCode, b)
	}
	return string(b)
}
