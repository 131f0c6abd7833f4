package decidepage_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"approvalsbot/tenant"
	"approvalsbot/threads/threadstest"
)

// TestGrantFromThePage: where the tenant enables grants, the page offers
// "Approve and allow…" beside a plain Approve, each scope in words; an
// Approve with a scope chosen sends the approval with its grant, one with
// none the approval alone, and a crafted choice is refused by the core
// with nothing sent. A destructive call's page offers no grant (the page
// asks it again, and a grant would not be).
func TestGrantFromThePage(t *testing.T) {
	cfg := strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove)
	cfg = strings.Replace(cfg, `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n", `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n  features: [grants]\n", 1)
	cfg = strings.Replace(cfg, "    forbid_self_approval: true\n", "    forbid_self_approval: true\n"+
		"    grants: {enabled: true, destructive: true, free: {acme_github.merge: [pr, method]}}\n", 1)
	p := newPageSetUp(t, pageSetup{config: cfg, publicURL: "https://approvals.example", grants: true})
	notDestructive := func(ev map[string]any) {
		ann := ev["data"].(map[string]any)["call"].(map[string]any)["annotations"].(map[string]any)
		ann["destructiveHint"] = false
	}
	threadstest.Backed(t, p.fake, threadstest.Ingest(t, p.svc, "merge.json", notDestructive))
	p.drain()
	link := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	page := p.get(link)
	for _, want := range []string{`id="grant"`, "These values: acme_github.merge to acme/api only, method and pr may differ",
		`name="grant_ttl"`, `<option value="8h0m0s">8 h</option>`, `value="" form="answers" checked`} {
		if !strings.Contains(page.body, want) {
			t.Fatalf("the page lacks %q:\n%s", want, page.body)
		}
	}
	crafted := p.submit(link, url.Values{"grant_scope": {"values"}, "grant_ttl": {"24h0m0s"}, "grant_uses": {"5"}})
	if crafted.status != http.StatusConflict || !strings.Contains(crafted.body, "not one offered") {
		t.Fatalf("a crafted grant: %d\n%s", crafted.status, crafted.body)
	}
	if n := len(p.decisions()); n != 0 {
		t.Fatalf("a crafted grant sent %d decisions", n)
	}
	if a := p.submit(link, url.Values{"grant_scope": {"values"}, "grant_ttl": {"1h0m0s"}, "grant_uses": {"5"}}); a.status != http.StatusSeeOther {
		t.Fatalf("approve and allow: %d\n%s", a.status, a.body)
	}
	p.drain()
	got := p.decisions()
	if len(got) != 1 || got[0].Status != http.StatusOK || got[0].Request.Grant == nil || got[0].Request.Grant.Scope != "values" ||
		got[0].Request.Grant.Pins[0].Value != "acme/api" || got[0].Request.Via.Surface != "email" {
		t.Fatalf("the backend received %+v", got)
	}

	// A destructive call: no grant on its page.
	q := newPageSetUp(t, pageSetup{config: cfg, publicURL: "https://approvals.example", grants: true})
	q.ingest("merge.json")
	q.drain()
	if body := q.get(q.link("acme", "a-merge1", 1, "user:kevin", "approve")).body; strings.Contains(body, `id="grant"`) {
		t.Errorf("a destructive call's page offers a grant:\n%s", body)
	}
}
