package decidepage_test

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/decidepage"
	"approvalsbot/adapters/logsurface"
	"approvalsbot/adapters/passkey"
	"approvalsbot/config"
	"approvalsbot/internal/golden"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

var update = flag.Bool("update", false, "rewrite the golden pages under testdata")

const (
	testCallsSecret = "calls-secret-of-the-page-tests-0123456789"
	testLinkSecret  = "link-secret-of-the-page-tests-0123456789ab"
	otherSecret     = "another-bot-s-link-secret-0123456789abcdef"
)

var testSecrets = map[string]string{
	"BOT_EVENTS_SECRET": "events-secret-of-the-page-tests-0123456789",
	"BOT_CALLS_SECRET":  testCallsSecret,
}

const pageConfig = `
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    forbid_self_approval: true
    email_decisions: EMAIL_DECISIONS
    members:
      - {user: "user:kevin", role: operator, content: true, email: kevin@acme.example}
      - {user: "user:ada", role: owner, content: true, email: ada@acme.example}
      - {user: "user:vic", role: viewer, email: vic@acme.example}
      - {user: "user:lee", role: operator, content: true}
      - {user: "user:noc", role: operator, content: false, email: noc@acme.example}
  denyonly:
    post: [slack:C0OTHER]
    members:
      - {user: "user:kevin", role: operator, content: true, email: kevin@acme.example}
`

// page is a decision page served by a real threads service on SQLite,
// deciding at a fake job backend that checks signatures and digests.
type page struct {
	t     *testing.T
	srv   *httptest.Server
	svc   *threads.Service
	fake  *backendtest.Fake
	clock *clockwork.FakeClock
	links *decidepage.Links
	store store.Store
	// answers is the answer submit presses on each link's page.
	answers map[string]string
	// passkeys is the passkey service beside the page (pageSetup.passkeys).
	passkeys *passkey.Service
	handler  *decidepage.Handler
}

// The fixtures' instant: the service runs on a fake clock set to it, so
// their requests, deadlines and links are live on any date.
var fixtureNow = time.Date(2026, 11, 29, 18, 0, 1, 0, time.UTC)

func newPage(t *testing.T) *page {
	t.Helper()
	return newPageWith(t, tenant.EmailDecisionsApprove)
}

// newPageWith serves a page for tenant acme allowing emailDecisions.
func newPageWith(t *testing.T, emailDecisions string) *page {
	t.Helper()
	return newPageFrom(t, strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", emailDecisions), "https://approvals.example", nil)
}

// newPageFrom serves a page on a configuration and public URL of the
// test's own; logOut, when set, is where the fallback (log) surface
// writes, with decision links as cmd/bot wires it for a page on this
// machine.
func newPageFrom(t *testing.T, configText, publicURL string, logOut io.Writer) *page {
	t.Helper()
	return newPageSetUp(t, pageSetup{config: configText, publicURL: publicURL, logOut: logOut})
}

// pageSetup is what newPageSetUp serves a page with.
type pageSetup struct {
	config, publicURL string
	logOut            io.Writer
	// alone opens the store as the bot serves it, the process's alone.
	alone bool
	// service, when set, is what the page decides through, in front of
	// threads.
	service func(*threads.Service) decidepage.Service
	// surfaces perform the outbox rows of the chat surfaces they name;
	// the log surface takes the rest.
	surfaces map[string]threads.Surface
	// passkeys is acme's passkey rule; set, the page takes passkeys from
	// a passkey service on the same store, served beside it.
	passkeys tenant.PasskeyRule
	// listener, when set, is where the page is served (publicURL's
	// host must reach it).
	listener net.Listener
	// typed: the backend takes typed confirmations
	// (backend.features: typed_confirmation).
	typed bool
	// grants: the backend takes grants (backend.features: grants).
	grants bool
	// registry and logger, when set, are the handler's.
	registry *prometheus.Registry
	logger   *slog.Logger
	// questions: the backend takes questions (backend.features:
	// questions).
	questions bool
}

func newPageSetUp(t *testing.T, ps pageSetup) *page {
	t.Helper()
	configText, publicURL, logOut := ps.config, ps.publicURL, ps.logOut
	cfg, err := config.Parse("bot.yaml", []byte(configText), func(n string) (string, bool) {
		v, ok := testSecrets[n]
		return v, ok
	})
	if err != nil {
		t.Fatal(err)
	}
	open := threadstest.OpenSQLite
	if ps.alone {
		open = threadstest.OpenExclusiveSQLite
	}
	st := open(t)
	clock := clockwork.NewFakeClockAt(fixtureNow)
	secret := [][]byte{[]byte(testCallsSecret)}
	fake := backendtest.New(t, standin.Options{Secrets: secret, Now: clock.Now})
	var features []string
	if ps.typed {
		features = []string{backend.FeatureTypedConfirmation}
	}
	if ps.grants {
		features = append(features, backend.FeatureGrants)
	}
	if ps.questions {
		features = append(features, backend.FeatureQuestions)
	}
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: fake.URL(), Secrets: secret, Now: clock.Now,
		MaxElapsed: time.Second, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }, Features: features})
	if err != nil {
		t.Fatal(err)
	}
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	links, err := decidepage.NewLinks(publicURL, []string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	lo := logsurface.Options{Out: io.Discard, Renderer: r}
	if logOut != nil {
		lo = logsurface.Options{Out: logOut, Renderer: r, Links: links,
			Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants }}
	}
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clock, Surfaces: ps.surfaces,
		Fallback: logsurface.New(lo), Backend: client.ForThreads(), Links: links, TypedConfirm: ps.typed, Grants: ps.grants, Questions: ps.questions})
	if err != nil {
		t.Fatal(err)
	}
	var service decidepage.Service = svc
	if ps.service != nil {
		service = ps.service(svc)
	}
	mux := http.NewServeMux()
	o := decidepage.Options{Links: links, Service: service, Renderer: r, Now: clock.Now, Logger: ps.logger}
	if ps.registry != nil {
		o.Registry = ps.registry
	}
	var keys *passkey.Service
	if ps.passkeys != "" {
		cfg.Tenants["acme"].Passkeys = ps.passkeys
		if keys, err = passkey.New(passkey.Options{PublicURL: publicURL, Secrets: []string{testLinkSecret}, Store: st,
			Tenants: cfg, Now: clock.Now}); err != nil {
			t.Fatal(err)
		}
		o.Passkeys = keys
		mux.Handle(passkey.Path, keys.Handler())
	}
	h, err := decidepage.New(o)
	if err != nil {
		t.Fatal(err)
	}
	mux.Handle(decidepage.Path, h)
	srv := httptest.NewUnstartedServer(mux)
	if ps.listener != nil {
		srv.Listener.Close()
		srv.Listener = ps.listener
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return &page{t: t, srv: srv, svc: svc, fake: fake, clock: clock, links: links, store: st, passkeys: keys, handler: h}
}

// ingest applies a fixture event (and tells the fake backend of a
// request's approval, with its full arguments).
func (p *page) ingest(name string) {
	p.t.Helper()
	threadstest.Backed(p.t, p.fake, threadstest.Ingest(p.t, p.svc, name, nil))
}

func (p *page) drain() {
	p.t.Helper()
	if _, err := p.svc.DrainOutbox(context.Background()); err != nil {
		p.t.Fatal(err)
	}
}

// link is the URL of a member's link as threads would mail it; submit
// presses answer ("approve" or "deny") on its page.
func (p *page) link(tenant, id string, revision int, member, answer string) string {
	p.t.Helper()
	l := p.links.Link(threads.LinkRequest{Tenant: tenant, ApprovalID: id, Revision: revision, Member: member,
		Expires: fixtureNow.Add(24 * time.Hour)})
	u := p.local(l.URL)
	if p.answers == nil {
		p.answers = map[string]string{}
	}
	p.answers[u] = answer
	return u
}

// local points a link's path at the test server.
func (p *page) local(link string) string {
	u, err := url.Parse(link)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.srv.URL + u.Path
}

type answer struct {
	status int
	header http.Header
	body   string
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func (p *page) do(method, link, contentType, form string) answer {
	p.t.Helper()
	req, err := http.NewRequest(method, link, strings.NewReader(form))
	if err != nil {
		p.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (p *page) get(link string) answer { return p.do(http.MethodGet, link, "", "") }

var checkField = regexp.MustCompile(`name="check" value="([^"]+)"`)

// submit opens the page and presses the link's answer (p.link), as a
// browser does; an Approve the page asks again (a destructive call's) it
// presses again.
func (p *page) submit(link string, extra url.Values) answer {
	p.t.Helper()
	a := p.get(link)
	m := checkField.FindStringSubmatch(a.body)
	if m == nil {
		p.t.Fatalf("the page has no form (%d):\n%s", a.status, a.body)
	}
	form := url.Values{"check": {htmlUnescape(m[1])}}
	form.Set("action", cmp.Or(p.answers[link], "deny"))
	for k, v := range extra {
		form[k] = v
	}
	out := p.do(http.MethodPost, link, "application/x-www-form-urlencoded", form.Encode())
	if out.status == http.StatusOK && strings.Contains(out.body, `name="again" value="yes"`) {
		form.Set("again", "yes")
		out = p.do(http.MethodPost, link, "application/x-www-form-urlencoded", form.Encode())
	}
	return out
}

func htmlUnescape(s string) string {
	return strings.NewReplacer("&#43;", "+", "&#61;", "=", "&amp;", "&").Replace(s)
}

// checkSecure: every answer carries the decision page's headers.
func checkSecure(t *testing.T, a answer) {
	t.Helper()
	want := map[string]string{
		"Cache-Control":           "no-store",
		"Referrer-Policy":         "no-referrer",
		"X-Frame-Options":         "DENY",
		"X-Content-Type-Options":  "nosniff",
		"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
	}
	for k, v := range want {
		if got := a.header.Get(k); got != v {
			t.Errorf("%s: %q, want %q", k, got, v)
		}
	}
	if a.status != http.StatusSeeOther && !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
		t.Errorf("Content-Type %q", a.header.Get("Content-Type"))
	}
	if strings.Contains(strings.ToLower(a.body), "<script") {
		t.Error("the page carries a script")
	}
}

// TestOpeningDecidesNothing: GET and HEAD, however often, show the card,
// the state and whom the person acts as, and send nothing.
func TestOpeningDecidesNothing(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	p.drain()
	link := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	for range 3 {
		a := p.get(link)
		checkSecure(t, a)
		if a.status != http.StatusOK {
			t.Fatalf("GET %d:\n%s", a.status, a.body)
		}
		for _, want := range []string{"acme_github.merge", "You act as user:kevin (kevin@acme.example).", `<form method="post"`,
			"Opening this page decided nothing", "DESTRUCTIVE", "acme/api"} {
			if !strings.Contains(a.body, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if a := p.do(http.MethodHead, link, "", ""); a.status != http.StatusOK || a.body != "" {
			t.Errorf("HEAD %d %q", a.status, a.body)
		}
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("opening the page sent %d decisions", len(got))
	}
}

// TestApproveFromThePage: the POST records the decision before it
// answers, the backend receives it bound to the revision and digest via
// email, and the page shows it on its way and then the outcome.
func TestApproveFromThePage(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	p.drain()
	link := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	a := p.submit(link, nil)
	checkSecure(t, a)
	if a.status != http.StatusSeeOther || a.header.Get("Location") != strings.TrimPrefix(link, p.srv.URL+decidepage.Path) {
		t.Fatalf("POST %d to %q:\n%s", a.status, a.header.Get("Location"), a.body)
	}
	// Recorded before the answer: the decision is in flight, the page
	// says so and looks again shortly.
	inFlight := p.get(link)
	if !strings.Contains(inFlight.body, `http-equiv="refresh"`) || strings.Contains(inFlight.body, "<form") ||
		!strings.Contains(inFlight.body, "user:kevin") {
		t.Errorf("the page after the POST:\n%s", inFlight.body)
	}
	p.drain()
	got := p.fake.Decisions()
	if len(got) != 1 {
		t.Fatalf("the backend received %d decisions", len(got))
	}
	r := got[0].Request
	if !got[0].SignatureOK || r.Decision != "approve" || r.Actor != "user:kevin" || r.Via.Surface != "email" ||
		r.Via.User != "kevin@acme.example" || r.Revision != 1 || r.ArgsSHA256 != p.fake.Digest("a-merge1") {
		t.Errorf("the backend received %+v (signature ok %v), want kevin's approve of revision 1 via email with the digest %s",
			r, got[0].SignatureOK, p.fake.Digest("a-merge1"))
	}
	closed := p.get(link)
	if closed.status != http.StatusOK || !strings.Contains(closed.body, "This call is closed: Approved by user:kevin") ||
		strings.Contains(closed.body, "<form") {
		t.Errorf("the page after the outcome (%d):\n%s", closed.status, closed.body)
	}
}

// TestSecondPostSendsNothing: the same form posted again, while the
// first is on its way and after it landed, sends nothing more.
func TestSecondPostSendsNothing(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	link := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	form := url.Values{"check": {htmlUnescape(checkField.FindStringSubmatch(p.get(link).body)[1])}, "action": {"approve"}, "again": {"yes"}}
	post := func() answer { return p.do(http.MethodPost, link, "application/x-www-form-urlencoded", form.Encode()) }
	if a := post(); a.status != http.StatusSeeOther {
		t.Fatalf("first POST %d:\n%s", a.status, a.body)
	}
	if a := post(); a.status != http.StatusOK || !strings.Contains(a.body, "user:kevin") || strings.Contains(a.body, "<form") {
		t.Errorf("a POST while the first is on its way: %d\n%s", a.status, a.body)
	}
	p.drain()
	if a := post(); a.status != http.StatusOK || !strings.Contains(a.body, "This call is closed") {
		t.Errorf("a POST after the outcome: %d\n%s", a.status, a.body)
	}
	p.drain()
	if n := len(p.fake.Decisions()); n != 1 {
		t.Errorf("the backend received %d decisions, want 1", n)
	}
}

// TestDenyWithReason: Deny asks an optional reason, which the backend
// receives as the comment.
func TestDenyWithReason(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	if body := p.get(link).body; !strings.Contains(body, `<textarea id="reason" name="reason"`) {
		t.Fatalf("the deny page asks no reason:\n%s", body)
	}
	if a := p.submit(link, url.Values{"reason": {"  not before the release  "}}); a.status != http.StatusSeeOther {
		t.Fatalf("POST %d:\n%s", a.status, a.body)
	}
	p.drain()
	got := p.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Comment != "not before the release" {
		t.Fatalf("the backend received %+v", got)
	}
}

// TestRefusalsSendNothing: each way a link or a form can be wrong gets
// a clear page, and the backend receives nothing.
func TestRefusalsSendNothing(t *testing.T) {
	type tc struct {
		name   string
		setup  func(p *page) // before the request
		do     func(p *page) answer
		status int
		says   string
		// emailDecisions is acme's setting; empty allows approvals.
		emailDecisions string
		// keepsForm: the page offers the form again, the person's text
		// in it, to send once corrected.
		keepsForm bool
	}
	post := func(p *page, link string, form url.Values) answer {
		return p.do(http.MethodPost, link, "application/x-www-form-urlencoded", form.Encode())
	}
	kevinApprove := func(p *page) string { return p.link("acme", "a-merge1", 1, "user:kevin", "approve") }
	cases := []tc{
		{name: "tampered token", do: func(p *page) answer {
			l := kevinApprove(p)
			return p.get(l[:len(l)-3] + flip(l[len(l)-3:]))
		}, status: http.StatusForbidden, says: "not one this bot made"},
		{name: "a foreign bot's token", do: func(p *page) answer {
			other, _ := decidepage.NewLinks("https://approvals.example", []string{otherSecret})
			l := []threads.MailLink{other.Link(threads.LinkRequest{Tenant: "acme", ApprovalID: "a-merge1", Revision: 1, Member: "user:kevin",
				Expires: fixtureNow.Add(time.Hour)})}
			return p.get(p.local(l[0].URL))
		}, status: http.StatusForbidden, says: "not one this bot made"},
		{name: "expired", do: func(p *page) answer {
			l := kevinApprove(p)
			p.clock.Advance(25 * time.Hour)
			return p.get(l)
		}, status: http.StatusGone, says: "expired at the deadline"},
		{name: "expired, posted", do: func(p *page) answer {
			l := kevinApprove(p)
			form := p.get(l).body
			p.clock.Advance(25 * time.Hour)
			return post(p, l, url.Values{"check": {htmlUnescape(checkField.FindStringSubmatch(form)[1])}, "action": {"approve"}})
		}, status: http.StatusGone, says: "expired at the deadline"},
		{name: "superseded", setup: func(p *page) { p.ingest("merge-reasked.json") }, do: func(p *page) answer {
			return p.get(kevinApprove(p))
		}, status: http.StatusGone, says: "it is now revision 2"},
		{name: "superseded between open and post", do: func(p *page) answer {
			l := kevinApprove(p)
			form := p.get(l).body
			p.ingest("merge-reasked.json")
			return post(p, l, url.Values{"check": {htmlUnescape(checkField.FindStringSubmatch(form)[1])}, "action": {"approve"}})
		}, status: http.StatusGone, says: "it is now revision 2"},
		{name: "no form check", do: func(p *page) answer {
			return post(p, kevinApprove(p), url.Values{"action": {"approve"}})
		}, status: http.StatusForbidden, says: "did not come from the page"},
		{name: "an answer the page lacks", do: func(p *page) answer {
			l := kevinApprove(p)
			m := checkField.FindStringSubmatch(p.get(l).body)
			return post(p, l, url.Values{"check": {htmlUnescape(m[1])}, "action": {"approve_all"}})
		}, status: http.StatusForbidden, says: "did not come from the page"},
		{name: "a viewer", do: func(p *page) answer {
			return p.get(p.link("acme", "a-merge1", 1, "user:vic", "deny"))
		}, status: http.StatusForbidden, says: "may no longer decide"},
		{name: "no longer a member", do: func(p *page) answer {
			return p.get(p.link("acme", "a-merge1", 1, "user:gone", "deny"))
		}, status: http.StatusForbidden, says: "may no longer decide"},
		{name: "self-approval", do: func(p *page) answer {
			return p.get(p.link("acme", "a-merge1", 1, "user:ada", "approve"))
		}, status: http.StatusForbidden, says: "forbids deciding your own job"},
		{name: "self-approval, a form forged", do: func(p *page) answer {
			l := p.link("acme", "a-merge1", 1, "user:ada", "approve")
			return post(p, l, url.Values{"check": {formCheck(t, l)}, "action": {"approve"}, "again": {"yes"}})
		}, status: http.StatusConflict, says: "forbids deciding your own job"},
		{name: "typed confirmation: only Deny", setup: func(p *page) { p.ingest("refund.json") }, do: func(p *page) answer {
			return p.submit(p.link("acme", "a-refund1", 1, "user:kevin", "approve"), nil)
		}, status: http.StatusConflict, says: "typed confirmation"},
		{name: "another tenant's approval", do: func(p *page) answer {
			return p.get(p.link("denyonly", "a-merge1", 1, "user:kevin", "deny"))
		}, status: http.StatusNotFound, says: "no longer holds"},
		{name: "not a form", do: func(p *page) answer {
			return p.do(http.MethodPost, kevinApprove(p), "application/json", `{"action":"approve"}`)
		}, status: http.StatusUnsupportedMediaType, says: "own form"},
		{name: "an oversize form", do: func(p *page) answer {
			return post(p, kevinApprove(p), url.Values{"reason": {strings.Repeat("x", 20<<10)}})
		}, status: http.StatusRequestEntityTooLarge, says: "too large"},
		{name: "a reason too long", do: func(p *page) answer {
			return p.submit(p.link("acme", "a-merge1", 1, "user:kevin", "deny"), url.Values{"reason": {strings.Repeat("é", 1001)}})
		}, status: http.StatusUnprocessableEntity, says: "longer than 1000 characters", keepsForm: true},
		{name: "another method", do: func(p *page) answer {
			return p.do(http.MethodDelete, kevinApprove(p), "", "")
		}, status: http.StatusMethodNotAllowed, says: "decided with its own form"},
		{name: "no token", do: func(p *page) answer {
			return p.get(p.srv.URL + decidepage.Path)
		}, status: http.StatusNotFound, says: "No such page"},
	}
	// The tenant's setting as configured now rules, not the one the
	// mail was sent under.
	cases = append(cases, tc{name: "the page where the tenant now takes only denials", emailDecisions: tenant.EmailDecisionsDeny,
		do: func(p *page) answer { return p.get(kevinApprove(p)) }, status: http.StatusOK, says: "takes only denials on this page",
		keepsForm: true})
	cases = append(cases, tc{name: "an approve where the tenant now takes only denials", emailDecisions: tenant.EmailDecisionsDeny,
		do: func(p *page) answer {
			l := kevinApprove(p)
			return post(p, l, url.Values{"check": {p.checkOf(l)}, "action": {"approve"}, "again": {"yes"}})
		}, status: http.StatusForbidden, says: "takes only denials on this page"})
	cases = append(cases, tc{name: "the page where the tenant now takes none", emailDecisions: tenant.EmailDecisionsOff,
		do:     func(p *page) answer { return p.get(p.link("acme", "a-merge1", 1, "user:kevin", "deny")) },
		status: http.StatusForbidden, says: "no longer takes decisions on this page"})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPageWith(t, cmp.Or(c.emailDecisions, tenant.EmailDecisionsApprove))
			p.ingest("merge.json")
			if c.setup != nil {
				c.setup(p)
			}
			a := c.do(p)
			checkSecure(t, a)
			if a.status != c.status || !strings.Contains(a.body, c.says) {
				t.Errorf("%d, want %d saying %q:\n%s", a.status, c.status, c.says, a.body)
			}
			if strings.Contains(a.body, "<form") != c.keepsForm {
				t.Errorf("the refusal offers the form: %v, want %v", !c.keepsForm, c.keepsForm)
			}
			p.drain()
			if got := p.fake.Decisions(); len(got) != 0 {
				t.Errorf("the backend received %+v", got)
			}
		})
	}
}

// flip changes a token's characters to other valid base64url ones.
func flip(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
	}
	return string(b)
}

// TestRestrictedPageShowsNoContent: a content-restricted call's page
// shows what its mail shows, none of its arguments.
func TestRestrictedPageShowsNoContent(t *testing.T) {
	p := newPage(t)
	p.ingest("private.json")
	body := p.get(p.link("acme", "a-priv1", 1, "user:kevin", "deny")).body
	if !strings.Contains(body, "db.delete_rows") || !strings.Contains(body, "<form") {
		t.Fatalf("the page:\n%s", body)
	}
	var args map[string]any
	if err := json.Unmarshal(threadstest.Arguments(t, "a-priv1", 1), &args); err != nil {
		t.Fatal(err)
	}
	for k, v := range args {
		if s, ok := v.(string); ok && len(s) > 3 && strings.Contains(body, s) {
			t.Errorf("the page shows argument %s = %q of a restricted call", k, s)
		}
	}
}

// TestGoldenPages compares the pages a person reads with the files under
// testdata (go test ./adapters/decidepage -update rewrites them).
func TestGoldenPages(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	approve := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	check := p.checkOf(approve)
	pages := map[string]string{
		"waiting.html":   p.get(approve).body,
		"ask-again.html": p.post(approve, url.Values{"check": {check}, "action": {"approve"}, "reason": {"release is out"}}).body,
		"bad-link.html":  p.get(p.srv.URL + decidepage.Path + "1e30." + strings.Repeat("A", 43)).body,
	}
	p.submit(approve, nil)
	p.drain()
	pages["closed.html"] = p.get(approve).body
	for name, got := range pages {
		golden.Check(t, filepath.Join("testdata", name), checkField.ReplaceAllString(got, `name="check" value="…"`), *update)
	}
}

// TestArgumentsOnlyWithTheContentPermission: a member with the content
// permission may see a restricted call's arguments on the page (looked up
// at the backend as them) by a POST of the page's own form; a GET, even
// with ?arguments, looks nothing up; one without the permission never
// sees them, whatever they ask.
func TestArgumentsOnlyWithTheContentPermission(t *testing.T) {
	p := newPage(t)
	p.ingest("private.json")
	var args map[string]any
	if err := json.Unmarshal(threadstest.Arguments(t, "a-priv1", 1), &args); err != nil {
		t.Fatal(err)
	}
	var value string
	for _, v := range args {
		if s, ok := v.(string); ok && len(s) > 3 {
			value = s
			break
		}
	}
	if value == "" {
		t.Fatal("the fixture has no string argument to look for")
	}
	kevin := p.link("acme", "a-priv1", 1, "user:kevin", "deny")
	// A restricted call: kevin's look-up is Show the call to approve it,
	// the same POST.
	if body := p.get(kevin).body; !strings.Contains(body, `id="show-to-approve"`) || strings.Contains(body, value) {
		t.Fatalf("kevin's page before he asks:\n%s", body)
	}
	if body := p.get(kevin + "?arguments").body; strings.Contains(body, value) {
		t.Errorf("a GET with ?arguments shows the arguments:\n%s", body)
	}
	if got := p.fake.Lookups(); len(got) != 0 {
		t.Fatalf("a GET looked the arguments up: %+v", got)
	}
	if a := p.post(kevin, url.Values{"check": {p.checkOf(kevin)}, "action": {"arguments"}}); a.status != http.StatusOK ||
		!strings.Contains(a.body, value) || !strings.Contains(a.body, "match the card") {
		t.Errorf("kevin asked for the arguments (%d):\n%s", a.status, a.body)
	}
	noc := p.link("acme", "a-priv1", 1, "user:noc", "deny")
	for _, l := range []string{noc, noc + "?arguments"} {
		if body := p.get(l).body; strings.Contains(body, value) || strings.Contains(body, "show-arguments") ||
			strings.Contains(body, "show-to-approve") {
			t.Errorf("a member without the content permission sees the arguments at %s:\n%s", l, body)
		}
	}
	// noc's page offers no form (a private chat's call); the check is
	// made as the bot would.
	signer, err := decidepage.NewSigner([]string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	nocCheck := signer.FormCheck(noc[strings.LastIndex(noc, "/")+1:])
	if a := p.post(noc, url.Values{"check": {nocCheck}, "action": {"arguments"}}); a.status != http.StatusForbidden ||
		strings.Contains(a.body, value) {
		t.Errorf("noc posted for the arguments (%d):\n%s", a.status, a.body)
	}
	if got := p.fake.Lookups(); len(got) != 1 || got[0].Request.Actor != "user:kevin" {
		t.Errorf("the backend was asked %+v, want one look-up as user:kevin", got)
	}
	p.drain()
	if len(p.fake.Decisions()) != 0 {
		t.Error("showing the arguments sent a decision")
	}
}
