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

// TestRestrictedApproveShowsTheCallFirst: a content holder's Approve
// link of a restricted call shows them its arguments above the form, and
// the form carries the digest shown; a post without it decides nothing
// and shows the call again.
func TestRestrictedApproveShowsTheCallFirst(t *testing.T) {
	p := newPage(t)
	p.ingest("private.json")
	p.drain()
	link := p.link("acme", "a-priv1", 1, "user:kevin", "approve")
	page := p.get(link)
	m := shownField.FindStringSubmatch(page.body)
	if !strings.Contains(page.body, "bea.private@example.com") || m == nil || htmlUnescape(m[1]) != p.fake.Digest("a-priv1") {
		t.Fatalf("kevin's Approve page does not show the call with its digest:\n%s", page.body)
	}
	blind := p.submit(link, nil)
	if blind.status == http.StatusSeeOther || !strings.Contains(blind.body, "bea.private@example.com") {
		t.Fatalf("an Approve without the content shown answered %d:\n%s", blind.status, blind.body)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("decided blind: %+v", got)
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
	body := p.get(p.link("acme", "a-priv1", 1, "user:kevin", "approve")).body
	if strings.Contains(body, "<form method=\"post\" style=\"margin:0 0 24px 0;padding") || strings.Contains(body, "mallory") ||
		!strings.Contains(body, "cannot be approved here") {
		t.Fatalf("the page:\n%s", body)
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
