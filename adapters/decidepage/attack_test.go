package decidepage_test

// Adversarial tests of the decision page: what an attacker holding a
// link, a forged request, a scanner or a hostile backend value can make
// the page do. A test that fails names a weakness; one that passes shows
// that an attack was tried and held.

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/mail"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/notify"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// attackPage is newPageFrom.
func attackPage(t *testing.T, configText, publicURL string, logOut io.Writer) *page {
	t.Helper()
	return newPageFrom(t, configText, publicURL, logOut)
}

// ingestBody applies an event of the test's own making.
func (p *page) ingestBody(body []byte) {
	p.t.Helper()
	ev, err := approval.Parse(body)
	if err != nil {
		p.t.Fatal(err)
	}
	if a := ev.Approval; a != nil {
		p.fake.AddApproval(a.ID, a.Revision, a.Call.Arguments, a.Content.Restricted)
		p.fake.SetFunction(a.ID, a.Call.Function)
	}
	sum := sha256.Sum256(body)
	if _, err := p.svc.Ingest(context.Background(), threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
		p.t.Fatal(err)
	}
}

func (p *page) post(link string, form url.Values) answer {
	return p.do(http.MethodPost, link, "application/x-www-form-urlencoded", form.Encode())
}

// checkOf is the form check the page for link carries.
func (p *page) checkOf(link string) string {
	p.t.Helper()
	m := checkField.FindStringSubmatch(p.get(link).body)
	if m == nil {
		p.t.Fatalf("no form on %s", link)
	}
	return htmlUnescape(m[1])
}

func (p *page) decisions() []standin.ReceivedDecision {
	p.t.Helper()
	p.drain()
	return p.fake.Decisions()
}

// forge signs claims as the bot would, with the key derivation of
// token.go, so the checks behind the MAC can be probed directly.
func forge(body string) string {
	k := hmac.New(sha256.New, []byte(testLinkSecret))
	k.Write([]byte("approvalsbot decision link v1"))
	key := k.Sum(nil)
	enc := "1" + base64.RawURLEncoding.EncodeToString([]byte(body))
	m := hmac.New(sha256.New, key)
	m.Write([]byte(enc))
	return enc + "." + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// TestAttackTokenMalleability: the same signature written another way
// must not make another working link. base64.RawURLEncoding (not
// Strict) accepts non-zero trailing bits in the last character, and
// every decoder of encoding/base64 skips '\r' and '\n', so a link
// altered on the way still verifies, and the 303 after a decision on
// it points at a link that no longer does (net/http turns the newline
// in Location into a space).
func TestAttackTokenMalleability(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	tok := strings.TrimPrefix(link, p.srv.URL+decidepage.Path)
	// The signature is 32 bytes in 43 characters: the last one's low
	// two bits are padding. Set them.
	last := tok[len(tok)-1]
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	i := strings.IndexByte(alphabet, last)
	twin := tok[:len(tok)-1] + string(alphabet[i|3])
	if i|3 == i {
		twin = tok[:len(tok)-1] + string(alphabet[i&^3])
	}
	variants := map[string]string{
		"trailing bits set":    twin,
		"a newline in the MAC": tok[:len(tok)-5] + "%0A" + tok[len(tok)-5:],
		"a CR in the MAC":      tok[:len(tok)-5] + "%0D" + tok[len(tok)-5:],
	}
	for name, v := range variants {
		a := p.get(p.srv.URL + decidepage.Path + v)
		if a.status != http.StatusForbidden {
			t.Errorf("LOW: token malleability (%s): a non-canonical spelling of kevin's link is accepted (%d); "+
				"Verify should decode with base64.RawURLEncoding.Strict() and refuse '\\r'/'\\n' "+
				"(or compare the re-encoded MAC with the text)", name, a.status)
		}
	}
	if n := len(p.decisions()); n > 1 {
		t.Errorf("%d decisions", n)
	}
}

// TestAttackClaimsBehindTheMAC: even a token whose MAC matches is read
// strictly: the fields that bind it must all be there and sane.
func TestAttackClaimsBehindTheMAC(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	exp := fixtureNow.Add(time.Hour).Format(time.RFC3339)
	bad := map[string]string{
		"revision 0":        `{"t":"acme","a":"a-merge1","r":0,"u":"user:kevin","x":"deny","e":"` + exp + `"}`,
		"revision negative": `{"t":"acme","a":"a-merge1","r":-1,"u":"user:kevin","x":"deny","e":"` + exp + `"}`,
		"revision huge":     `{"t":"acme","a":"a-merge1","r":1e30,"u":"user:kevin","x":"deny","e":"` + exp + `"}`,
		"no expiry":         `{"t":"acme","a":"a-merge1","r":1,"u":"user:kevin","x":"deny"}`,
		"another action":    `{"t":"acme","a":"a-merge1","r":1,"u":"user:kevin","x":"APPROVE","e":"` + exp + `"}`,
		"no tenant":         `{"a":"a-merge1","r":1,"u":"user:kevin","x":"deny","e":"` + exp + `"}`,
		"not JSON":          `{"t":"acme"`,
		"an array":          `[]`,
	}
	for name, body := range bad {
		if a := p.get(p.srv.URL + decidepage.Path + forge(body)); a.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, a.status)
		}
	}
	// Trailing data, padding, the other alphabet, a second dot: refused.
	tok := strings.TrimPrefix(p.link("acme", "a-merge1", 1, "user:kevin", "deny"), p.srv.URL+decidepage.Path)
	enc, sig, _ := strings.Cut(tok, ".")
	for name, v := range map[string]string{
		"trailing data": tok + "AAAA", "padding": tok + "=", "second dot": tok + ".x",
		"std alphabet": enc + "." + strings.NewReplacer("-", "+", "_", "/").Replace(sig) + "+/",
		"no version":   tok[1:], "empty MAC": enc + ".",
		"huge": tok + strings.Repeat("A", 4096),
	} {
		if a := p.get(p.srv.URL + decidepage.Path + v); a.status != http.StatusForbidden && a.status != http.StatusNotFound {
			t.Errorf("%s: %d, want a refusal", name, a.status)
		}
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("%d decisions", n)
	}
}

// TestAttackExpiryEdges: a link works up to, not at, the deadline, and a
// deadline with a fraction of a second expires its link at the whole
// second before (never after).
func TestAttackExpiryEdges(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	deadline := fixtureNow.Add(time.Hour + 700*time.Millisecond)
	ls := []threads.MailLink{p.links.Link(threads.LinkRequest{Tenant: "acme", ApprovalID: "a-merge1", Revision: 1, Member: "user:kevin",
		Expires: deadline})}
	link := p.local(ls[0].URL)
	check := p.checkOf(link)
	p.clock.Advance(time.Hour - time.Nanosecond)
	if a := p.get(link); a.status != http.StatusOK {
		t.Fatalf("a nanosecond before the whole second: %d", a.status)
	}
	p.clock.Advance(time.Nanosecond)
	if a := p.get(link); a.status != http.StatusGone {
		t.Errorf("at the link's expiry (the deadline's whole second): %d, want 410", a.status)
	}
	if a := p.post(link, url.Values{"check": {check}, "action": {"deny"}}); a.status != http.StatusGone {
		t.Errorf("a POST at the expiry: %d, want 410", a.status)
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("%d decisions", n)
	}
}

// TestAttackFormCheckIsBoundToItsLink: the check of one link does not
// open another: another member's, another approval's, another
// revision's; nor does it send an answer the page does not have. Nor
// does a check in the query string count.
func TestAttackFormCheckIsBoundToItsLink(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	p.ingest("refund.json")
	kevinDeny := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	check := p.checkOf(kevinDeny)
	for name, other := range map[string]string{
		"another member":    p.link("acme", "a-merge1", 1, "user:ada", "deny"),
		"an unknown answer": kevinDeny,
		"another approval":  p.link("acme", "a-refund1", 1, "user:kevin", "deny"),
	} {
		action := "deny"
		if name == "an unknown answer" {
			action = "approve_all"
		}
		if a := p.post(other, url.Values{"check": {check}, "action": {action}}); a.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, a.status)
		}
	}
	// The check in the URL rather than the body.
	if a := p.do(http.MethodPost, kevinDeny+"?check="+url.QueryEscape(check)+"&action=deny",
		"application/x-www-form-urlencoded", ""); a.status != http.StatusForbidden {
		t.Errorf("a check in the query string: %d, want 403", a.status)
	}
	// A cross-site form is text/plain or multipart as often as not.
	for _, ct := range []string{"text/plain", "multipart/form-data; boundary=x", "application/x-www-form-urlencodedX"} {
		a := p.do(http.MethodPost, kevinDeny, ct, url.Values{"check": {check}, "action": {"deny"}}.Encode())
		if a.status == http.StatusSeeOther {
			t.Errorf("a POST as %s decided", ct)
		}
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("%d decisions", n)
	}
}

// TestAttackMethods: no method but POST decides, and each answer still
// carries the page's headers.
func TestAttackMethods(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	check := p.checkOf(link)
	body := url.Values{"check": {check}, "action": {"deny"}}.Encode()
	for _, m := range []string{http.MethodOptions, http.MethodPut, http.MethodPatch, http.MethodDelete, "PROPFIND", "TRACE"} {
		a := p.do(m, link, "application/x-www-form-urlencoded", body)
		checkSecure(t, a)
		if a.status != http.StatusMethodNotAllowed {
			t.Errorf("%s: %d, want 405", m, a.status)
		}
	}
	for _, m := range []string{http.MethodGet, http.MethodHead} {
		if a := p.do(m, link, "application/x-www-form-urlencoded", body); a.status != http.StatusOK {
			t.Errorf("%s with a form body: %d", m, a.status)
		}
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("%d decisions from other methods", n)
	}
}

// TestAttackDoubleSubmit: many POSTs at once, of one link and of two
// members' links, send one decision.
func TestAttackDoubleSubmit(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	kevin := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	lee := p.link("acme", "a-merge1", 1, "user:kevin", "deny") // the other action of the same member
	forms := map[string]url.Values{
		kevin: {"check": {p.checkOf(kevin)}, "action": {"approve"}},
		lee:   {"check": {p.checkOf(lee)}, "action": {"deny"}},
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	statuses := map[int]int{}
	for i := range 12 {
		link := kevin
		if i%2 == 1 {
			link = lee
		}
		wg.Go(func() {
			req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(forms[link].Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
			resp, err := noRedirect.Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			mu.Lock()
			statuses[resp.StatusCode]++
			mu.Unlock()
		})
	}
	wg.Wait()
	t.Logf("answers: %v", statuses)
	if statuses[http.StatusSeeOther] != 1 {
		t.Errorf("answers %v: want exactly one 303", statuses)
	}
	if n := len(p.decisions()); n != 1 {
		t.Errorf("the backend received %d decisions, want 1", n)
	}
}

// sharedMailbox: two members share an address (a team mailbox, one
// person with two user ids). The configuration accepts it.
const sharedMailbox = `
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    email_decisions: approve
    members:
      - {user: "user:lee", role: operator, content: true, email: ops@acme.example}
      - {user: "user:kevin", role: operator, content: true, email: ops@acme.example}
`

// TestAttackLinkActsAsItsMember: the link binds a member, and the page
// says "You act as" that member; the backend must receive that member
// as the actor. The page hands threads the member's address instead,
// and threads maps the address back to the first member that has it,
// so the decision is recorded under another person's name (and that
// person's role and self-approval are what get checked).
func TestAttackLinkActsAsItsMember(t *testing.T) {
	// The fix: one address is one member's, so the configuration that
	// would make the page act as another is refused at load.
	_, err := config.Parse("bot.yaml", []byte(sharedMailbox), func(n string) (string, bool) {
		v, ok := testSecrets[n]
		return v, ok
	})
	if err == nil || !strings.Contains(err.Error(), "tenants.acme.members[1].email: ops@acme.example is already tenants.acme.members[0].email") {
		t.Errorf("MEDIUM: two members with one address load (%v): a link for one would act as the other", err)
	}
}

// TestAttackRedirectStaysUnderPublicURL: the 303 after a decision must
// lead back to the link as the person's browser reaches it. With a
// public_url that has a path (the bot behind a proxy at
// https://tools.example/approvals, which the configuration accepts),
// the absolute "/decide/…" Location leaves that path.
func TestAttackRedirectStaysUnderPublicURL(t *testing.T) {
	p := attackPage(t, strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", "deny"), "https://tools.example/approvals", nil)
	p.ingest("merge.json")
	ls := []threads.MailLink{p.links.Link(threads.LinkRequest{Tenant: "acme", ApprovalID: "a-merge1", Revision: 1, Member: "user:kevin",
		Expires: fixtureNow.Add(time.Hour)})}
	public := ls[0].URL
	if !strings.HasPrefix(public, "https://tools.example/approvals/decide/") {
		t.Fatalf("link %s", public)
	}
	// The proxy strips /approvals: the bot sees /decide/….
	a := p.submit(p.srv.URL+strings.TrimPrefix(public, "https://tools.example/approvals"), nil)
	if a.status != http.StatusSeeOther {
		t.Fatalf("POST %d", a.status)
	}
	// No open redirect: always a path on the bot itself.
	loc := a.header.Get("Location")
	if strings.HasPrefix(loc, "//") || strings.ContainsAny(loc, `\:`) {
		t.Fatalf("Location %q leaves the bot", loc)
	}
	base, _ := url.Parse(public)
	next, err := base.Parse(loc)
	if err != nil {
		t.Fatal(err)
	}
	if next.String() != public {
		t.Errorf("LOW: after the decision the browser is sent to %s, outside public_url %s (404 at the proxy); "+
			"answer with a Location relative to the link (the token alone) or built from public_url", next, "https://tools.example/approvals")
	}
}

// hostile is merge.json with hostile text in every free field the page
// and the mail show.
func hostile(t *testing.T) []byte {
	t.Helper()
	body := mustRead(t, "merge.json")
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	const x = `<script>alert(1)</script><img src=x onerror=alert(2)>"'` + "\r\nBcc: evil@attacker.example\r\n\r\n"
	d := ev["data"].(map[string]any)
	d["agent_says"] = x
	d["level"] = x
	job := d["job"].(map[string]any)
	job["id"], job["started_by"], job["agent"] = x, x, x
	call := d["call"].(map[string]any)
	call["function"] = "acme.merge" + x
	call["arguments"] = map[string]any{"repo": x, "pr": 1}
	d["turn"] = map[string]any{"waiting": []any{x}}
	out, _ := json.Marshal(ev)
	return out
}

func mustRead(t *testing.T, name string) []byte {
	t.Helper()
	path, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAttackInjection: hostile text from the backend reaches the page,
// the mail's HTML and the mail's headers only as text.
func TestAttackInjection(t *testing.T) {
	p := newPage(t)
	body := hostile(t)
	// The digest must match the hostile arguments for Parse.
	var ev map[string]any
	_ = json.Unmarshal(body, &ev)
	args, _ := json.Marshal(ev["data"].(map[string]any)["call"].(map[string]any)["arguments"])
	digest, err := approval.Digest(args)
	if err != nil {
		t.Fatal(err)
	}
	ev["data"].(map[string]any)["call"].(map[string]any)["args_sha256"] = digest
	body, _ = json.Marshal(ev)
	p.ingestBody(body)
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	a := p.get(link)
	checkSecure(t, a)
	if a.status != http.StatusOK || !strings.Contains(a.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("the hostile card is not shown escaped (%d):\n%s", a.status, a.body)
	}
	for _, bad := range []string{"<script", "<img", "onerror=alert(2)>"} {
		if strings.Contains(strings.ToLower(a.body), bad) {
			t.Errorf("the page carries %q unescaped", bad)
		}
	}
	// A deny reason with markup, shown on the page while in flight.
	if r := p.submit(link, url.Values{"reason": {`<img src=x onerror=alert(3)>`}}); r.status != http.StatusSeeOther {
		t.Fatalf("POST %d:\n%s", r.status, r.body)
	}
	if b := p.get(link).body; strings.Contains(b, "<img") {
		t.Error("the in-flight page carries the reason's markup")
	}
	p.drain()
	if b := p.get(link).body; strings.Contains(b, "<img") {
		t.Error("the closed page carries the reason's markup")
	}

	// The mail of this card: HTML escaped, headers intact.
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	card, err := p.svc.Card(context.Background(), "a-merge1", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{threads.MailEscalation, threads.MailOutcome} {
		l := p.links.Link(threads.LinkRequest{Tenant: "acme", ApprovalID: "a-merge1", Revision: 1, Member: "user:kevin",
			Expires: fixtureNow.Add(time.Hour)})
		req := threads.MailRequest{To: "kevin@acme.example", Kind: kind, Card: card, Member: "user:kevin", Link: &l}
		e := r.Mail(req.Render())
		for _, bad := range []string{"<script", "<img"} {
			if strings.Contains(strings.ToLower(e.HTML), bad) {
				t.Errorf("%q mail HTML carries %q unescaped", kind, bad)
			}
		}
		raw, err := notify.Build(notify.Message{From: "Bot <bot@acme.example>", To: []string{"kevin@acme.example"},
			Subject: e.Subject, Text: e.Text, HTML: e.HTML, Date: fixtureNow, MessageID: "x.1.0.ab@acme.example",
			References: []string{"root@acme.example"}})
		if err != nil {
			t.Fatal(err)
		}
		m, err := mail.ReadMessage(bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		if m.Header.Get("Bcc") != "" || len(m.Header["To"]) != 1 {
			t.Errorf("%q mail: header injection: Bcc %q To %v", kind, m.Header.Get("Bcc"), m.Header["To"])
		}
		subj, _ := new(mime.WordDecoder).DecodeHeader(m.Header.Get("Subject"))
		if strings.ContainsAny(subj, "\r\n") {
			t.Errorf("%q mail: subject spans lines: %q", kind, subj)
		}
	}
}

// TestAttackScanners: a scanner that fetches every link with GET and
// HEAD, follows redirects and re-fetches what it finds decides nothing.
// A scanner that also submits the page's form decides: nothing on the
// page tells a person from a robot that posts forms.
func TestAttackScanners(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	links := []string{p.link("acme", "a-merge1", 1, "user:kevin", "approve"), p.link("acme", "a-merge1", 1, "user:kevin", "deny")}
	for _, l := range links {
		for range 3 {
			for _, m := range []string{http.MethodGet, http.MethodHead} {
				resp, err := http.DefaultClient.Do(mustReq(t, m, l+"?utm=scan"))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		}
	}
	if n := len(p.decisions()); n != 0 {
		t.Fatalf("a GET/HEAD scanner made %d decisions", n)
	}
	// The residual risk, shown rather than asserted against: a robot that
	// submits the form (some sandboxes "click through") denies the call.
	if a := p.submit(links[1], nil); a.status == http.StatusSeeOther {
		t.Logf("DESIGN: a scanner that submits forms denies the call (the default email_decisions: deny); " +
			"the form check is a pure function of the link, readable by anyone who GETs it")
	}
}

func mustReq(t *testing.T, method, link string) *http.Request {
	t.Helper()
	r, err := http.NewRequest(method, link, nil)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAttackOldLinkOfAClosedCallSaysHowItEnded: a revision-1 link opened
// after a reask and the close must say how the call ended, not what
// became of revision 1.
func TestAttackOldLinkOfAClosedCallSaysHowItEnded(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	old := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	p.ingest("merge-reasked.json")
	p.ingest("merge-resolved.json") // denied by kevin in the console
	p.drain()
	a := p.get(old)
	lead := a.body[strings.Index(a.body, `<p id="lead"`):]
	lead = lead[:strings.Index(lead, "</p>")]
	if strings.Contains(a.body, "<form") || !strings.Contains(lead, "Denied") {
		t.Errorf("LOW: the old link's page (%d) leads with %q: the closed call's outcome is not said", a.status, lead)
	}
}
