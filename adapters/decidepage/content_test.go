package decidepage_test

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"approvalsbot/threads/threadstest"
)

var shownField = regexp.MustCompile(`name="shown" value="([^"]+)"`)

// TestDigestOnlyOnAContentHoldersPage: the page answers one member, so
// it shows the digest to a member who holds the content permission and
// never to one who does not; each decides bound to it exactly when they
// hold it.
func TestDigestOnlyOnAContentHoldersPage(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	p.drain()
	digest := p.fake.Digest("a-merge1")
	if body := p.get(p.link("acme", "a-merge1", 1, "user:kevin", "deny")).body; !strings.Contains(body, digest) {
		t.Errorf("kevin (content) does not see the digest:\n%s", body)
	}
	noc := p.link("acme", "a-merge1", 1, "user:noc", "approve")
	if body := p.get(noc).body; strings.Contains(body, digest) || !strings.Contains(body, "acme/api") {
		t.Errorf("noc (no content) sees the digest, or not the card:\n%s", body)
	}
	if a := p.submit(noc, nil); a.status != http.StatusSeeOther {
		t.Fatalf("noc's approve answered %d:\n%s", a.status, a.body)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 1 || got[0].Request.ArgsSHA256 != "" || got[0].Status != http.StatusOK {
		t.Fatalf("decisions %+v: want noc's approval recorded without a digest", got)
	}
}

// TestRestrictedApproveShowsTheCallFirst: a content holder's page of a
// restricted call offers Approve only through Show the call to approve
// it, a POST of the page's form (opening the page asks the backend
// nothing); the call is then shown with the Approve that carries the
// digest shown. An Approve posted without it decides nothing.
func TestRestrictedApproveShowsTheCallFirst(t *testing.T) {
	p := newPage(t)
	p.ingest("private.json")
	p.drain()
	link := p.link("acme", "a-priv1", 1, "user:kevin", "approve")
	page := p.get(link)
	if strings.Contains(page.body, "bea.private@example.com") || shownField.MatchString(page.body) ||
		strings.Contains(page.body, `value="approve"`) || !strings.Contains(page.body, "Show the call to approve it") {
		t.Fatalf("kevin's page shows the call or an Approve before he asked:\n%s", page.body)
	}
	if n := len(p.fake.Lookups()); n != 0 {
		t.Fatalf("opening the page made %d look-ups", n)
	}
	blind := p.submit(link, nil)
	if blind.status == http.StatusSeeOther || !strings.Contains(blind.body, "Show the call to approve it") {
		t.Fatalf("an Approve without the content shown answered %d:\n%s", blind.status, blind.body)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("decided blind: %+v", got)
	}
	shownPage := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"arguments"}})
	m := shownField.FindStringSubmatch(shownPage.body)
	if shownPage.status != http.StatusOK || !strings.Contains(shownPage.body, "bea.private@example.com") || m == nil ||
		htmlUnescape(m[1]) != p.fake.Digest("a-priv1") || !strings.Contains(shownPage.body, `name="action" value="approve"`) {
		t.Fatalf("Show the call to approve it answered %d without the call, its digest or Approve:\n%s", shownPage.status, shownPage.body)
	}
	if a := p.submit(link, url.Values{"shown": {htmlUnescape(m[1])}}); a.status != http.StatusSeeOther {
		t.Fatalf("the Approve with the content shown answered %d:\n%s", a.status, a.body)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 1 || got[0].Request.ArgsSHA256 != p.fake.Digest("a-priv1") {
		t.Fatalf("decisions %+v: want one approval with the digest", got)
	}
}

// TestShownDigestIsNoOracle: the shown field is a content holder's, on a
// restricted call. Posted by a member without the content permission it
// is ignored unread: a wrong guess at the digest is answered as the right
// one is, as a plain Approve, or the page would tell them which guess at
// a hidden value is right.
func TestShownDigestIsNoOracle(t *testing.T) {
	for _, guess := range []string{"sha256:" + strings.Repeat("0", 64), ""} {
		p := newPage(t)
		p.ingest("merge.json")
		p.drain()
		if guess == "" {
			guess = p.fake.Digest("a-merge1")
		}
		res := p.submit(p.link("acme", "a-merge1", 1, "user:noc", "approve"), url.Values{"shown": {guess}})
		if res.status != http.StatusSeeOther || strings.Contains(res.body, "not this call") {
			t.Errorf("noc's Approve with shown=%s answered %d:\n%s", guess, res.status, res.body)
		}
		p.drain()
		if got := p.fake.Decisions(); len(got) != 1 || got[0].Request.ArgsSHA256 != "" {
			t.Errorf("shown=%s: decisions %+v, want one approval without the digest", guess, got)
		}
	}
}

// TestRestrictedApproveWithoutTheCallOffersNoForm: when the look-up does
// not match the digest, the page shows none of it and no Approve.
func TestRestrictedApproveWithoutTheCallOffersNoForm(t *testing.T) {
	p := newPage(t)
	p.ingest("private.json")
	p.fake.TamperArguments("a-priv1", []byte(`{"table":"customers","where":{"email":"mallory@example.com"}}`))
	link := p.link("acme", "a-priv1", 1, "user:kevin", "approve")
	a := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"arguments"}})
	if strings.Contains(a.body, `name="action" value="approve"`) || shownField.MatchString(a.body) || strings.Contains(a.body, "mallory") ||
		!strings.Contains(a.body, "cannot be approved here") {
		t.Fatalf("the page:\n%s", a.body)
	}
}

// TestPrivateChatPageRefusesWithoutContent: a private chat's call is
// decided only by members with the content permission, even when the
// backend left restricted false.
func TestPrivateChatPageRefusesWithoutContent(t *testing.T) {
	p := newPage(t)
	p.ingestWith("private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["content"] = map[string]any{"restricted": false}
	})
	p.drain()
	link := p.link("acme", "a-priv1", 1, "user:noc", "deny")
	page := p.get(link)
	if page.status != http.StatusForbidden || strings.Contains(page.body, "<form") || !strings.Contains(page.body, "private chat") ||
		strings.Contains(page.body, "bea.private@example.com") {
		t.Fatalf("noc's page (%d):\n%s", page.status, page.body)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}

// ingestWith applies a fixture event changed by edit (the envelope as a
// map), with the arguments behind it known to the fake backend.
func (p *page) ingestWith(name string, edit func(ev map[string]any)) {
	p.t.Helper()
	threadstest.Backed(p.t, p.fake, threadstest.Ingest(p.t, p.svc, name, edit))
}
