package decidepage_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
)

// restricted marks a fixture request's content restricted.
func restricted(ev map[string]any) {
	ev["data"].(map[string]any)["content"] = map[string]any{"restricted": true}
}

// formCheck is the check the page's form would carry for link, made as
// the bot makes it: a page that offers no form still gets posted to.
func formCheck(t *testing.T, link string) string {
	t.Helper()
	s, err := decidepage.NewSigner([]string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	return s.FormCheck(link[strings.LastIndex(link, "/")+1:])
}

// TestLinksExpireWithTheirApproval: once the approval is closed, past
// its deadline (the link's, or the approval's own before the tick closes
// it), or asked again, a content holder's links show only the outcome:
// no card, no form, no arguments. Whatever is asked of them (GET, HEAD,
// ?arguments, a POST of each form the page had, with its check), none
// reaches the job backend: no look-up, no decision.
func TestLinksExpireWithTheirApproval(t *testing.T) {
	cases := []struct {
		name   string
		id     string
		setup  func(p *page) // the approval's life; the links were mailed before
		status int
		says   string
	}{
		{name: "closed", id: "a-priv1", setup: func(p *page) {
			if a := p.submit(p.link("acme", "a-priv1", 1, "user:ada", "deny"), nil); a.status != http.StatusSeeOther {
				p.t.Fatalf("ada's deny answered %d:\n%s", a.status, a.body)
			}
			p.drain()
		}, status: http.StatusOK, says: "This call is closed: Denied by user:ada"},
		{name: "past the link's deadline", id: "a-priv1", setup: func(p *page) {
			p.clock.Advance(25 * time.Hour)
		}, status: http.StatusGone, says: "expired at the deadline"},
		{name: "at the approval's own deadline, before the tick closes it", id: "a-priv1", setup: func(p *page) {
			row, err := p.store.ApprovalGet(context.Background(), "a-priv1")
			if err != nil {
				p.t.Fatal(err)
			}
			// The test's links expire a second after the approval's
			// deadline: the approval's own rules.
			p.clock.Advance(row.DeadlineAt.Sub(p.clock.Now()))
		}, status: http.StatusGone, says: "expired at the deadline (2026-11-30 18:00:00 UTC)"},
		{name: "superseded", id: "a-merge1", setup: func(p *page) {
			p.ingestWith("merge-reasked.json", restricted)
		}, status: http.StatusGone, says: "it is now revision 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := newPage(t)
			if c.id == "a-merge1" {
				p.ingestWith("merge.json", restricted)
			} else {
				p.ingest("private.json")
			}
			p.drain()
			links := []string{p.link("acme", c.id, 1, "user:kevin", "approve"), p.link("acme", c.id, 1, "user:kevin", "deny")}
			c.setup(p)
			decisions := len(p.fake.Decisions())
			for _, l := range links {
				check := formCheck(t, l)
				answers := map[string]answer{
					"GET":            p.get(l),
					"GET ?arguments": p.get(l + "?arguments"),
					"HEAD":           p.do(http.MethodHead, l, "", ""),
					"POST arguments": p.post(l, url.Values{"check": {check}, "action": {"arguments"}}),
					"POST look":      p.post(l, url.Values{"check": {check}, "action": {"look"}}),
				}
				for _, action := range []string{"approve", "deny"} {
					answers["POST "+action] = p.post(l, url.Values{"check": {check}, "action": {action}, "shown": {p.fake.Digest(c.id)}})
				}
				for what, a := range answers {
					checkSecure(t, a)
					if what == "HEAD" {
						if a.status != c.status {
							t.Errorf("%s %s: %d, want %d", what, l, a.status, c.status)
						}
						continue
					}
					if (a.status != c.status && !(what == "POST "+otherAction(l, p) && a.status == http.StatusForbidden)) ||
						(a.status == c.status && !strings.Contains(a.body, c.says)) {
						t.Errorf("%s: %d, want %d saying %q:\n%s", what, a.status, c.status, c.says, a.body)
					}
					for _, not := range []string{"<form", `id="card"`, "show-arguments", `id="arguments"`, "sha256:", "customers"} {
						if strings.Contains(a.body, not) {
							t.Errorf("%s: the page of a link no longer live carries %q:\n%s", what, not, a.body)
						}
					}
				}
			}
			if got := p.fake.Lookups(); len(got) != 0 {
				t.Errorf("links no longer live looked the arguments up: %+v", got)
			}
			p.drain()
			if got := p.fake.Decisions(); len(got) != decisions {
				t.Errorf("links no longer live sent decisions: %+v", got[decisions:])
			}
		})
	}
}

// otherAction is the action link does not carry: its POST is refused
// as not from the page's form, before anything is read.
func otherAction(link string, p *page) string {
	if link == p.link("acme", "a-priv1", 1, "user:kevin", "approve") || link == p.link("acme", "a-merge1", 1, "user:kevin", "approve") {
		return "deny"
	}
	return "approve"
}

// TestArgumentLookupsAreLimitedPerMember: each POST of the page's Show
// the call's full arguments makes one look-up at the backend; past
// LookupBurst a member's next look-up waits LookupEvery, answered 429
// with Retry-After and no look-up, on every page that would look up
// (a content holder's Approve of a restricted call shows the call on
// load); another member keeps their own allowance.
func TestArgumentLookupsAreLimitedPerMember(t *testing.T) {
	p := newPage(t)
	p.ingest("private.json")
	p.drain()
	deny := p.link("acme", "a-priv1", 1, "user:kevin", "deny")
	ask := url.Values{"check": {p.checkOf(deny)}, "action": {"arguments"}}
	for i := 1; i <= decidepage.LookupBurst; i++ {
		a := p.post(deny, ask)
		if a.status != http.StatusOK || !strings.Contains(a.body, "bea.private@example.com") {
			t.Fatalf("look-up %d: %d:\n%s", i, a.status, a.body)
		}
		if got := p.fake.Lookups(); len(got) != i || got[i-1].Request.Actor != "user:kevin" {
			t.Fatalf("after %d POSTs the backend was asked %+v", i, got)
		}
	}
	wait := strconv.Itoa(int(decidepage.LookupEvery / time.Second))
	over := p.post(deny, ask)
	checkSecure(t, over)
	if over.status != http.StatusTooManyRequests || over.header.Get("Retry-After") != wait ||
		strings.Contains(over.body, "bea.private@example.com") || !strings.Contains(over.body, "try again in "+wait+" s") {
		t.Fatalf("over the limit: %d, Retry-After %q:\n%s", over.status, over.header.Get("Retry-After"), over.body)
	}
	// Show the call to approve it is the same look-up, within the same
	// limit.
	approveLink := p.link("acme", "a-priv1", 1, "user:kevin", "approve")
	approve := p.post(approveLink, url.Values{"check": {p.checkOf(approveLink)}, "action": {"arguments"}})
	if approve.status != http.StatusTooManyRequests || approve.header.Get("Retry-After") != wait ||
		strings.Contains(approve.body, `value="approve"`) || strings.Contains(approve.body, "bea.private@example.com") {
		t.Fatalf("Show the call to approve it over the limit: %d, Retry-After %q:\n%s", approve.status, approve.header.Get("Retry-After"), approve.body)
	}
	if got := p.fake.Lookups(); len(got) != decidepage.LookupBurst {
		t.Fatalf("over the limit the backend was asked %d times, want %d", len(got), decidepage.LookupBurst)
	}
	ada := p.link("acme", "a-priv1", 1, "user:ada", "deny")
	if a := p.post(ada, url.Values{"check": {p.checkOf(ada)}, "action": {"arguments"}}); a.status != http.StatusOK {
		t.Fatalf("another member's look-up: %d:\n%s", a.status, a.body)
	}
	p.clock.Advance(decidepage.LookupEvery)
	if a := p.post(deny, ask); a.status != http.StatusOK || !strings.Contains(a.body, "bea.private@example.com") {
		t.Fatalf("after %v: %d:\n%s", decidepage.LookupEvery, a.status, a.body)
	}
	if got := p.fake.Lookups(); len(got) != decidepage.LookupBurst+2 {
		t.Fatalf("the backend was asked %d times, want %d", len(got), decidepage.LookupBurst+2)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("look-ups sent decisions: %+v", got)
	}
}

// TestDocSaysLinksExpire: docs/email.md's section on the decision page
// says links expire with their approval and states the look-up limit
// the page enforces.
func TestDocSaysLinksExpire(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "email.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "## Escalation mail and the decision page")
	if start < 0 {
		t.Fatal("docs/email.md has no section on the decision page")
	}
	section := doc[start:]
	if end := strings.Index(section[3:], "\n## "); end >= 0 {
		section = section[:end+3]
	}
	section = strings.Join(strings.Fields(section), " ")
	for _, want := range []string{
		"**Links expire with their approval.**",
		"no card, no form, no arguments, and nothing is asked of the job backend",
		fmt.Sprintf("%d at once, then one every %d seconds (%d a minute)", decidepage.LookupBurst,
			int(decidepage.LookupEvery/time.Second), int(time.Minute/decidepage.LookupEvery)),
		"`429` with `Retry-After`",
		"in memory by each process",
	} {
		if !strings.Contains(section, want) {
			t.Errorf("docs/email.md's decision page section does not say %q", want)
		}
	}
}
