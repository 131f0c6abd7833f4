package decidepage_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// I'm looking on the decision page: a POST from the page's own form,
// with its form check, records the acknowledgement before the page
// answers (then the page again, POST then GET); the card on it, and on
// every chat copy, says who is looking. Opening the page, however often,
// records nothing, and a POST without the page's check records nothing
// either.
func TestLookingFromThePage(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	p.drain()
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	for range 3 {
		if a := p.get(link); a.status != http.StatusOK || !strings.Contains(a.body, `name="action" value="look"`) {
			t.Fatalf("GET %d: no I'm looking on the page:\n%s", a.status, a.body)
		}
	}
	if st := p.ladderState(t, "a-merge1"); st != "" {
		t.Fatalf("opening the page recorded %s", st)
	}
	for name, form := range map[string]url.Values{
		"no check":         {"action": {"look"}},
		"another's check":  {"check": {p.checkOf(p.link("acme", "a-merge1", 1, "user:noc", "deny"))}, "action": {"look"}},
		"a check altered":  {"check": {flip(p.checkOf(link))}, "action": {"look"}},
		"the check in URL": nil,
	} {
		var a answer
		if form == nil {
			a = p.do(http.MethodPost, link+"?check="+url.QueryEscape(p.checkOf(link))+"&action=look", "application/x-www-form-urlencoded", "")
		} else {
			a = p.post(link, form)
		}
		checkSecure(t, a)
		if a.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", name, a.status)
		}
		if st := p.ladderState(t, "a-merge1"); st != "" {
			t.Fatalf("%s recorded %s", name, st)
		}
	}

	a := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"look"}})
	checkSecure(t, a)
	if a.status != http.StatusSeeOther || a.header.Get("Location") == "" {
		t.Fatalf("I'm looking: %d %q:\n%s", a.status, a.header.Get("Location"), a.body)
	}
	if st := p.ladderState(t, "a-merge1"); !strings.Contains(st, `"actor":"user:kevin"`) || !strings.Contains(st, `"surface":"email"`) {
		t.Fatalf("recorded %s", st)
	}
	shown := p.get(link)
	if !strings.Contains(shown.body, "user:kevin is looking since 18:00 UTC; the ladder&#39;s next steps wait until 18:30 UTC") {
		t.Fatalf("the page's card does not say who is looking:\n%s", shown.body)
	}
	c, err := p.svc.Card(context.Background(), "a-merge1", 1)
	if err != nil {
		t.Fatal(err)
	}
	if in := c.Input(); in.Looking == nil || in.Looking.Actor != "user:kevin" || !in.Looking.Until.Equal(fixtureNow.Add(30*time.Minute)) {
		t.Fatalf("the chat copies show %+v", in.Looking)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("I'm looking sent a decision: %+v", got)
	}
}

// Where the page offers no decision (closed, changed, expired, decided
// on its way), it offers no I'm looking, and a POST of one records
// nothing.
func TestLookingOnlyWhereThePageDecides(t *testing.T) {
	p := newPage(t)
	p.ingest("merge.json")
	link := p.link("acme", "a-merge1", 1, "user:kevin", "deny")
	check := p.checkOf(link)
	p.submit(link, nil) // Deny: on its way
	if a := p.get(link); strings.Contains(a.body, `value="look"`) {
		t.Fatalf("I'm looking offered with a decision on its way:\n%s", a.body)
	}
	if a := p.post(link, url.Values{"check": {check}, "action": {"look"}}); a.status == http.StatusSeeOther {
		t.Fatalf("I'm looking taken with a decision on its way: %d", a.status)
	}
	if st := p.ladderState(t, "a-merge1"); st != "" {
		t.Fatalf("recorded %s", st)
	}
}

// ladderState is what the store keeps of what people did to the
// approval's ladder ("" for nothing).
func (p *page) ladderState(t *testing.T, id string) string {
	t.Helper()
	a, err := p.store.ApprovalGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return string(a.LadderState)
}
