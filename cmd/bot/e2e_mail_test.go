package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/internal/fixtures"
	"approvalsbot/notify/smtptest"
)

// Escalation mail end to end: the built binary mails a list address and
// a member over SMTP (an in-process go-smtp server), the member decides
// on the decision page in a real browser, the backend receives that one
// decision, and everyone mailed hears how it ended in their own thread.

// freeAddr is a loopback address nothing listens on now: the bot's
// public_url must be known before it starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func mailConfig(t *testing.T, dir, listen, backendURL, smtpAddr string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: %q
public_url: "http://%s"
link_secrets: ["${BOT_LINK_SECRET}"]
store:
  driver: sqlite
  dsn: "file:%s"
tick: 1s
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
smtp:
  addr: %q
  tls: none
  from: "Approvals <approvals@acme.example>"
tenants:
  acme:
    deadline: 10m
    post: [slack:C0APPROVALS]
    email_decisions: approve
    ladders:
      default:
        - after: 1s
          email: [leads@acme.example, kevin@acme.example]
    members:
      - {user: user:kevin, role: operator, content: true, slack: U0KEVIN, email: kevin@acme.example}
`, listen, listen, filepath.Join(dir, "bot.db"), backendURL, smtpAddr)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mailsTo are the mails the sink accepted for addr, read as a mail
// client reads them.
func mailsTo(t *testing.T, s *smtptest.Sink, addr string) []smtptest.Message {
	t.Helper()
	var out []smtptest.Message
	for _, m := range s.Mails() {
		if slices.Contains(m.To, addr) {
			pm, err := smtptest.Parse(m.Data)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, pm)
		}
	}
	return out
}

// screenshotDir is where the browser test writes its pictures:
// BOT_SCREENSHOTS, relative to the module root unless absolute, or ""
// when it is unset.
func screenshotDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("BOT_SCREENSHOTS")
	if dir == "" || filepath.IsAbs(dir) {
		return dir
	}
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(root, dir)
}

// phoneScreenshot opens url in a new tab the size of a phone's screen
// (390 x 844 CSS px, at twice the pixels) and writes what that screen
// shows to path as a PNG: the call first, the answers in reach.
func phoneScreenshot(t *testing.T, browserCtx context.Context, url, path string) {
	t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(tab, 30*time.Second)
	defer cancelTimeout()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile),
		chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS("#answers"))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", url, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// screenshot opens url in a new tab 1000 px wide and writes the element
// sel, cropped to its box, to path as a PNG.
func screenshot(t *testing.T, browserCtx context.Context, url, sel, path string) {
	t.Helper()
	tab, cancel := chromedp.NewContext(browserCtx)
	defer cancel()
	ctx, cancelTimeout := context.WithTimeout(tab, 30*time.Second)
	defer cancelTimeout()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1000, 800), chromedp.Navigate(url), chromedp.WaitVisible(chromedp.CSS(sel))); err != nil {
		t.Fatalf("open %s: %v", url, err)
	}
	png, err := chromedp.Run(ctx, chromedp.Screenshot(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("screenshot %s: %v", url, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}

var linkPattern = regexp.MustCompile(`https?://[^\s"<>]+/decide/[A-Za-z0-9_.\-]+`)

// TestMailDecisionPageEndToEnd is the whole loop: mail, a scanner that
// opens every link, a person who decides in a browser, the outcome mail.
func TestMailDecisionPageEndToEnd(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian's chromium package; .ci/run installs it): the browser test cannot run")
	}
	t.Parallel()
	dir := t.TempDir()
	sink := smtptest.Start(t, smtptest.Options{})
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	fake.AddApproval(ladderApproval, 1, readArguments(t, ladderApproval+".json"), false)
	fake.SetFunction(ladderApproval, "acme_github.merge")
	listen := freeAddr(t)
	bot := startBot(t, mailConfig(t, dir, listen, fake.URL(), sink.Addr))
	body, _ := requestedNow(t)
	if a := bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	dump := func() string { return bot.stderr.String() }
	pollUntil(t, 15*time.Second, "the step's mails", func() bool {
		return len(mailsTo(t, sink, "kevin@acme.example")) == 1 && len(mailsTo(t, sink, "leads@acme.example")) == 1
	}, dump)
	kevin, leads := mailsTo(t, sink, "kevin@acme.example")[0], mailsTo(t, sink, "leads@acme.example")[0]
	const subject = "Approval needed: acme_github.merge · a-merge1"
	for _, m := range []smtptest.Message{kevin, leads} {
		if s, _ := m.Header.Subject(); s != subject {
			t.Errorf("subject %q, want %q", s, subject)
		}
		if strings.Contains(m.Parts["text/plain"], "leads@") && strings.Contains(m.Parts["text/plain"], "kevin@") {
			t.Error("a mail names the other recipients")
		}
	}
	links := linkPattern.FindAllString(kevin.Parts["text/plain"], -1)
	if len(links) != 1 || !strings.Contains(kevin.Parts["text/plain"], "Nobody has decided yet; you are on step 1 of the default ladder.") {
		t.Fatalf("kevin's mail: %d links\n%s", len(links), kevin.Parts["text/plain"])
	}
	if n := len(linkPattern.FindAllString(leads.Parts["text/plain"]+leads.Parts["text/html"], -1)); n != 0 {
		t.Errorf("a list address that is no member's got %d decision links", n)
	}

	// A mail scanner opens every link of every mail, following redirects:
	// nothing is decided, and the page still offers its form after.
	var every []string
	for _, m := range append(mailsTo(t, sink, "kevin@acme.example"), mailsTo(t, sink, "leads@acme.example")...) {
		for _, part := range m.Parts {
			every = append(every, linkPattern.FindAllString(part, -1)...)
		}
	}
	for _, l := range every {
		resp, err := http.Get(l)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", l, resp.StatusCode)
		}
	}
	if len(fake.Decisions()) != 0 {
		t.Fatalf("opening links sent decisions: %+v", fake.Decisions())
	}
	approve := links[0]
	if !strings.Contains(kevin.Parts["text/plain"], "Open the decision page (Approve or Deny): "+approve) {
		t.Fatalf("kevin's link does not offer Approve:\n%s", kevin.Parts["text/plain"])
	}

	// A person in a browser: the card, whom they act as, Approve, the
	// outcome.
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	// The first run starts the browser, and lives as long as its context:
	// no timeout on that one.
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	// BOT_SCREENSHOTS=docs/img takes the README's pictures, each in a tab
	// of its own: the page before anyone decides, and kevin's mail.
	if dir := screenshotDir(t); dir != "" {
		phoneScreenshot(t, browserCtx, approve, filepath.Join(dir, "decision-page.png"))
		mail := filepath.Join(t.TempDir(), "card.html")
		if err := os.WriteFile(mail, []byte(kevin.Parts["text/html"]), 0o600); err != nil {
			t.Fatal(err)
		}
		screenshot(t, browserCtx, "file://"+mail, "body > div", filepath.Join(dir, "card.png"))
	}
	ctx, cancel := context.WithTimeout(browserCtx, 90*time.Second)
	defer cancel()
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(approve), chromedp.WaitVisible(chromedp.CSS("#approve"))); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	card, actAs := text("#card"), text("#act-as")
	if !strings.Contains(card, "acme_github.merge") || !strings.Contains(card, "acme/api") || actAs != "You act as user:kevin (kevin@acme.example)." {
		t.Fatalf("the page shows card %q, act as %q", card, actAs)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve"))); err != nil {
		t.Fatalf("press Approve: %v", err)
	}
	// A destructive call's Approve asks again, as chat does.
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#cancel"))); err != nil {
		t.Fatalf("the page did not ask again: %v", err)
	}
	if lead := text("#lead"); !strings.Contains(lead, "acme_github.merge is DESTRUCTIVE") || !strings.Contains(lead, "Approve it?") {
		t.Fatalf("the second question reads %q", lead)
	}
	if n := len(fake.Decisions()); n != 0 {
		t.Fatalf("the first press sent %d decisions", n)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve"))); err != nil {
		t.Fatalf("press Approve again: %v", err)
	}
	// The page goes through the POST's 303, then reloads itself while the
	// decision is on its way: a read may meet a page being replaced, and
	// is then tried again.
	var lead string
	pollUntil(t, 30*time.Second, "the page showing the outcome", func() bool {
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#lead")))
		if err != nil {
			if ctx.Err() != nil {
				t.Fatalf("read the page: %v", err)
			}
			return false
		}
		lead = s
		return strings.HasPrefix(lead, "This call is closed: Approved by user:kevin")
	}, func() string { return lead + "\n" + dump() })

	got := fake.Decisions()
	if len(got) != 1 {
		t.Fatalf("the backend received %d decisions, want the browser's one: %+v", len(got), got)
	}
	r := got[0].Request
	if !got[0].SignatureOK || r.Decision != "approve" || r.Actor != "user:kevin" || r.Via.Surface != "email" ||
		r.Via.User != "kevin@acme.example" || r.Revision != 1 || r.ArgsSHA256 != fake.Digest(ladderApproval) {
		t.Errorf("the backend received %+v (signature ok %v), want kevin's approve of revision 1 via email bound to %s",
			r, got[0].SignatureOK, fake.Digest(ladderApproval))
	}

	// Everyone mailed hears how it ended, in their own thread.
	pollUntil(t, 15*time.Second, "the outcome mails", func() bool {
		return len(mailsTo(t, sink, "kevin@acme.example")) == 2 && len(mailsTo(t, sink, "leads@acme.example")) == 2
	}, dump)
	for _, addr := range []string{"kevin@acme.example", "leads@acme.example"} {
		ms := mailsTo(t, sink, addr)
		first, _ := ms[0].Header.MessageID()
		end := ms[1]
		if s, _ := end.Header.Subject(); s != "Re: "+subject {
			t.Errorf("%s: outcome subject %q", addr, s)
		}
		if ids, _ := end.Header.MsgIDList("In-Reply-To"); len(ids) != 1 || ids[0] != first {
			t.Errorf("%s: the outcome answers %q, want their first mail %s", addr, ids, first)
		}
		if text := end.Parts["text/plain"]; !strings.HasPrefix(text, "Approved by user:kevin") || linkPattern.MatchString(text) {
			t.Errorf("%s: outcome mail\n%s", addr, text)
		}
	}
	// The old links say it is closed, and decide nothing.
	resp, err := http.Get(links[0])
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(fake.Decisions()) != 1 {
		t.Errorf("the backend received %d decisions after the outcome", len(fake.Decisions()))
	}
}
