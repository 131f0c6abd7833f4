package decidepage_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"approvalsbot/adapters/passkey"
	"approvalsbot/adapters/passkey/passkeytest"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// passkeyOrigin is the page's origin in the tests that need no browser:
// the software authenticator says it, as a browser on the page would.
const passkeyOrigin = "https://approvals.example"

var bindingAttr = regexp.MustCompile(`data-passkey-binding="([^"]+)"`)

// newPasskeyPage serves acme's page with passkeys required for
// destructive calls, and kevin's passkey enrolled on auth.
func newPasskeyPage(t *testing.T) (*page, *passkeytest.Authenticator, *passkeytest.Credential) {
	t.Helper()
	cfg := strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove)
	cfg = strings.ReplaceAll(cfg, "email: kevin@acme.example}", "email: kevin@acme.example, slack: U0KEVIN}")
	cfg = strings.ReplaceAll(cfg, `{user: "user:lee", role: operator, content: true}`, `{user: "user:lee", role: operator, content: true, slack: U0LEE}`)
	p := newPageSetUp(t, pageSetup{config: cfg, publicURL: passkeyOrigin, passkeys: tenant.PasskeysDestructive})
	auth := passkeytest.New(passkeyOrigin)
	return p, auth, enrolKevin(t, p, auth)
}

func enrolKevin(t *testing.T, p *page, auth *passkeytest.Authenticator) *passkeytest.Credential {
	t.Helper()
	req, err := p.passkeys.BeginEnrol(t.Context(), "acme", "user:kevin")
	if err != nil {
		t.Fatal(err)
	}
	att, cred, err := auth.Create(req.Options, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.passkeys.FinishEnrol(t.Context(), "acme", "user:kevin", req.Ref, "laptop", att); err != nil {
		t.Fatal(err)
	}
	return cred
}

// assertion is what a browser on the page at link would post for the
// Approve: it asks the bot for the challenge with the page's sealed
// binding, as the page's script does, and answers it with cred.
func (p *page) assertion(t *testing.T, link string, auth *passkeytest.Authenticator, cred *passkeytest.Credential,
	spoil passkeytest.Spoil) url.Values {
	t.Helper()
	m := bindingAttr.FindStringSubmatch(p.get(link).body)
	if m == nil {
		t.Fatalf("the page carries no passkey binding:\n%s", p.get(link).body)
	}
	res, err := http.PostForm(p.srv.URL+passkey.OptionsPath, url.Values{"binding": {htmlUnescape(m[1])}})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var req passkey.Request
	if err := json.NewDecoder(res.Body).Decode(&req); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("options: %d %v", res.StatusCode, err)
	}
	answer, err := auth.Get(req.Options, cred, spoil)
	if err != nil {
		t.Fatal(err)
	}
	return url.Values{"check": {p.checkOf(link)}, "action": {"approve"}, "passkey_ref": {req.Ref},
		"passkey_assertion": {string(answer)}}
}

// TestPasskeyApproveOnThePage: where acme's rule asks for a passkey, the
// page's Approve carries the script and the sealed binding, and only a
// good, fresh assertion of the member's own passkey, bound to this
// approval, revision, digest and member, decides; it is sent once, bound
// to the digest. Without one, with another's, replayed, without user
// verification, or for another revision, nothing is sent.
func TestPasskeyApproveOnThePage(t *testing.T) {
	p, auth, cred := newPasskeyPage(t)
	p.ingest("merge.json") // DESTRUCTIVE
	p.drain()
	link := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	page := p.get(link)
	if page.status != http.StatusOK || !strings.Contains(page.body, `<script src="../passkey/passkey.js" defer></script>`) ||
		!strings.Contains(page.body, "Approve with passkey") || page.header.Get("Content-Security-Policy") != passkey.ContentSecurityPolicy {
		t.Fatalf("the page (%d, CSP %q):\n%s", page.status, page.header.Get("Content-Security-Policy"), page.body)
	}
	// A page that needs no passkey stays without script.
	p.ingest("refund.json")
	if plain := p.get(p.link("acme", "a-refund1", 1, "user:kevin", "deny")); strings.Contains(plain.body, "<script") {
		t.Errorf("a page without a passkey Approve carries a script:\n%s", plain.body)
	}

	refused := func(name string, form url.Values, says string) {
		t.Helper()
		a := p.post(link, form)
		if a.status == http.StatusSeeOther || !strings.Contains(a.body, "Nothing was sent") || !strings.Contains(a.body, html.EscapeString(says)) {
			t.Errorf("%s: %d, want a refusal saying %q:\n%s", name, a.status, says, a.body)
		}
		if n := len(p.decisions()); n != 0 {
			t.Fatalf("%s: the backend received %d decisions", name, n)
		}
	}
	refused("no passkey (no script)", url.Values{"check": {p.checkOf(link)}, "action": {"approve"}, "again": {"yes"}},
		passkey.Why(passkey.ErrMissing))
	refused("no user verification", p.assertion(t, link, auth, cred, passkeytest.Spoil{NoUserVerification: true}),
		passkey.Why(passkey.ErrNotVerified))
	refused("another origin", p.assertion(t, link, auth, cred, passkeytest.Spoil{Origin: "https://evil.example"}),
		passkey.Why(passkey.ErrRefused))
	// ada's passkey, on her own authenticator, answering kevin's page.
	adaAuth := passkeytest.New(passkeyOrigin)
	req, err := p.passkeys.BeginEnrol(t.Context(), "acme", "user:ada")
	if err != nil {
		t.Fatal(err)
	}
	att, adaCred, err := adaAuth.Create(req.Options, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.passkeys.FinishEnrol(t.Context(), "acme", "user:ada", req.Ref, "ada's", att); err != nil {
		t.Fatal(err)
	}
	refused("another member's passkey", p.assertion(t, link, adaAuth, adaCred, passkeytest.Spoil{}), "")

	good := p.assertion(t, link, auth, cred, passkeytest.Spoil{})
	if a := p.post(link, good); a.status != http.StatusSeeOther {
		t.Fatalf("kevin's Approve with his passkey: %d\n%s", a.status, a.body)
	}
	got := p.decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Actor != "user:kevin" ||
		got[0].Request.ArgsSHA256 != p.fake.Digest("a-merge1") {
		t.Fatalf("the backend received %+v, want kevin's one approve bound to the digest", got)
	}
	// The same answer again: the page shows the outcome, nothing more
	// is sent.
	if a := p.post(link, good); a.status == http.StatusSeeOther {
		t.Errorf("a replayed assertion answered %d", a.status)
	}
	if n := len(p.decisions()); n != 1 {
		t.Errorf("after a replay the backend received %d decisions", n)
	}
}

// TestPasskeyIsBoundToItsRevision: an assertion made for one revision
// does not approve the next one (a reask between the challenge and the
// answer).
func TestPasskeyIsBoundToItsRevision(t *testing.T) {
	p, auth, cred := newPasskeyPage(t)
	p.ingest("merge.json")
	p.drain()
	old := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	form := p.assertion(t, old, auth, cred, passkeytest.Spoil{})
	p.ingest("merge-reasked.json")
	p.drain()
	current := p.link("acme", "a-merge1", 2, "user:kevin", "approve")
	form.Set("check", p.checkOf(current))
	if a := p.post(current, form); a.status == http.StatusSeeOther || !strings.Contains(a.body, "Nothing was sent") {
		t.Errorf("revision 1's assertion on revision 2's page: %d\n%s", a.status, a.body)
	}
	if a := p.post(old, url.Values{"check": {p.checkOf(current)}}); a.status == http.StatusSeeOther {
		t.Errorf("the old link: %d", a.status)
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("the backend received %d decisions", n)
	}
}

// TestChatApproveOfAPasskeyCallSendsThePage: a chat click cannot carry a
// passkey, so Approve on a card the rule covers answers the clicker
// alone with their own page's link, records nothing, and opens no
// dialog; Deny still works.
func TestChatApproveOfAPasskeyCallSendsThePage(t *testing.T) {
	p, _, _ := newPasskeyPage(t)
	p.ingest("merge.json")
	p.drain()
	kevin := threads.Person{Surface: "slack", User: "U0KEVIN"}
	act := templates.Action{Kind: templates.ActionApprove, ApprovalID: "a-merge1", Revision: 1}
	for _, do := range []threads.ClickDo{threads.ClickRecord, threads.ClickAsk} {
		out := p.svc.Click(t.Context(), threads.ClickRequest{Do: do, Action: act, Person: kevin})
		msg := out.Reason.String()
		if out.Sent || out.Dialog != nil || !strings.Contains(msg, "only with your passkey") || !strings.Contains(msg, "/decide/") {
			t.Fatalf("%v: %+v: %s", do, out, msg)
		}
		link := msg[strings.Index(msg, "https://"):]
		link = link[:strings.Index(link, " ")]
		if a := p.get(p.local(link)); a.status != http.StatusOK || !strings.Contains(a.body, "Approve with passkey") ||
			!strings.Contains(a.body, "You act as user:kevin") {
			t.Errorf("%v: the link in the answer opens %d:\n%s", do, a.status, a.body)
		}
	}
	if n := len(p.decisions()); n != 0 {
		t.Fatalf("the backend received %d decisions", n)
	}
	// lee has no e-mail address: his link is the chat's, and his
	// decision on its page is on the page surface, as himself.
	lee := threads.Person{Surface: "slack", User: "U0LEE"}
	out := p.svc.Click(t.Context(), threads.ClickRequest{Do: threads.ClickRecord, Action: act, Person: lee})
	msg := out.Reason.String()
	if out.Sent || !strings.Contains(msg, "/decide/") {
		t.Fatalf("lee's Approve: %+v: %s", out, msg)
	}
	leeLink := msg[strings.Index(msg, "https://"):]
	leeLink = p.local(leeLink[:strings.Index(leeLink, " ")])
	if a := p.get(leeLink); a.status != http.StatusOK || !strings.Contains(a.body, "You act as user:lee.") ||
		!strings.Contains(a.body, "Approve with passkey") {
		t.Fatalf("lee's page: %d\n%s", a.status, a.body)
	}
	leeAuth := passkeytest.New(passkeyOrigin)
	req, err := p.passkeys.BeginEnrol(t.Context(), "acme", "user:lee")
	if err != nil {
		t.Fatal(err)
	}
	att, leeCred, err := leeAuth.Create(req.Options, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.passkeys.FinishEnrol(t.Context(), "acme", "user:lee", req.Ref, "lee's", att); err != nil {
		t.Fatal(err)
	}
	if a := p.post(leeLink, p.assertion(t, leeLink, leeAuth, leeCred, passkeytest.Spoil{})); a.status != http.StatusSeeOther {
		t.Fatalf("lee's Approve with his passkey: %d\n%s", a.status, a.body)
	}
	got := p.decisions()
	if len(got) != 1 || got[0].Request.Actor != "user:lee" || got[0].Request.Via.Surface != "page" ||
		got[0].Request.Via.User != "user:lee" || got[0].Request.ArgsSHA256 != p.fake.Digest("a-merge1") {
		t.Fatalf("the backend received %+v, want lee's approve via the page", got)
	}
}

// TestChatDenyOfAPasskeyCall: Deny needs no passkey, from chat either.
func TestChatDenyOfAPasskeyCall(t *testing.T) {
	p, _, _ := newPasskeyPage(t)
	p.ingest("merge.json")
	p.drain()
	kevin := threads.Person{Surface: "slack", User: "U0KEVIN"}
	deny := p.svc.Click(t.Context(), threads.ClickRequest{Do: threads.ClickRecord, Person: kevin,
		Action: templates.Action{Kind: templates.ActionDeny, ApprovalID: "a-merge1", Revision: 1}})
	if !deny.Sent {
		t.Fatalf("kevin's Deny: %+v", deny)
	}
}

// TestPasskeyApproveInABrowser: kevin enrols a passkey on the enrolment
// page and approves a destructive call on his decision page in headless
// Chromium, with the CDP WebAuthn domain's virtual authenticator (user
// verification on); the backend receives one approve bound to the
// revision and the digest, via the page.
func TestPasskeyApproveInABrowser(t *testing.T) {
	browserCtx := headless(t)
	// The relying party id must be a host name: the page listens on
	// loopback, and the browser reaches it as localhost.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	publicURL := fmt.Sprintf("http://localhost:%d", ln.Addr().(*net.TCPAddr).Port)
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove),
		publicURL: publicURL, passkeys: tenant.PasskeysDestructive, listener: ln})
	p.ingest("merge.json")
	p.drain()

	ctx, cancel := chromedp.NewContext(browserCtx)
	defer cancel()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	if _, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{Protocol: webauthn.AuthenticatorProtocolCtap2,
			Transport: webauthn.AuthenticatorTransportInternal, HasResidentKey: true, HasUserVerification: true,
			IsUserVerified: true, AutomaticPresenceSimulation: true}}); err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	textOf := func(sel string) string {
		s, _ := chromedp.Run(ctx, chromedp.Evaluate[string](
			fmt.Sprintf(`(function(){var e=document.querySelector(%q);return e?e.textContent:"";})()`, sel)))
		return s
	}

	enrol, _ := p.passkeys.EnrolLink("acme", "user:kevin")
	if err := chromedp.Do(ctx, chromedp.Navigate(enrol), chromedp.WaitVisible(chromedp.CSS("#add")),
		chromedp.SendKeys(chromedp.CSS("#name"), "Virtual phone"), chromedp.Click(chromedp.CSS("#add"))); err != nil {
		t.Fatalf("enrol: %v", err)
	}
	waitFor(t, "the passkey enrolled", func() bool { return strings.Contains(textOf("#passkeys"), "Virtual phone") })

	u, err := url.Parse(p.link("acme", "a-merge1", 1, "user:kevin", "approve"))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(publicURL+u.Path), chromedp.WaitVisible(chromedp.CSS("#approve"))); err != nil {
		t.Fatalf("open the page: %v", err)
	}
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](`typeof window.approveWithPasskey === "function"`)); err != nil {
		t.Fatalf("the script did not load: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve"))); err != nil {
		t.Fatalf("press Approve: %v", err)
	}
	waitFor(t, "the approval on its way or decided", func() bool {
		p.drain()
		return len(p.fake.Decisions()) > 0
	})
	got := p.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Actor != "user:kevin" ||
		got[0].Request.Revision != 1 || got[0].Request.ArgsSHA256 != p.fake.Digest("a-merge1") || got[0].Request.Via.Surface != "email" {
		t.Fatalf("the backend received %+v, want kevin's one approve of revision 1 bound to the digest", got)
	}
}

// waitFor polls cond for up to 30 s of real time (the browser's).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s in 30 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
