package decidepage_test

import (
	"encoding/json"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/adapters/passkey/passkeytest"
	"approvalsbot/tenant"
)

// TestTypedConfirmationOnThePage: with a backend that takes typed
// confirmations, a content holder approves a call that needs one on the
// page: the page shows the call's full arguments, asks for the value,
// sends nothing when it differs from the argument as the platform
// compares them, and sends the approve with the value typed when it
// matches. A member without the content permission is told to use the
// console.
func TestTypedConfirmationOnThePage(t *testing.T) {
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove),
		publicURL: "https://approvals.example", typed: true})
	p.ingest("refund.json") // confirm: amount, {"sum":250,"currency":"EUR"}
	p.drain()
	// noc holds no content permission: typing needs the value.
	noc := p.get(p.link("acme", "a-refund1", 1, "user:noc", "approve"))
	if strings.Contains(noc.body, `value="approve"`) || !strings.Contains(noc.body, "only members of tenant acme with the content permission can type") {
		t.Errorf("noc's page:\n%s", noc.body)
	}
	link := p.link("acme", "a-refund1", 1, "user:kevin", "approve")
	first := p.get(link)
	if !strings.Contains(first.body, "Show the call to approve it") || strings.Contains(first.body, `id="typed"`) ||
		!strings.Contains(first.body, "approve it on the decision page your escalation mail links to") {
		t.Fatalf("kevin's page before the call is shown:\n%s", first.body)
	}
	shown := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"arguments"}})
	if shown.status != http.StatusOK || !strings.Contains(shown.body, `id="typed"`) ||
		!strings.Contains(shown.body, "type the value of amount") || !strings.Contains(shown.body, `name="action" value="approve"`) {
		t.Fatalf("the page with the call shown (%d):\n%s", shown.status, shown.body)
	}
	approve := func(typed string) answer {
		return p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"approve"}, "typed": {typed}, "again": {"yes"}})
	}
	for _, wrong := range []string{``, `{"sum":250,"currency":"EUR"}`, `{"currency": "EUR", "sum": 250}`, `250`} {
		a := approve(wrong)
		if a.status != http.StatusUnprocessableEntity || !strings.Contains(a.body, "not the value of amount") ||
			!strings.Contains(a.body, `value="`+html.EscapeString(wrong)+`"`) {
			t.Errorf("typed %q: %d\n%s", wrong, a.status, a.body)
		}
	}
	if n := len(p.decisions()); n != 0 {
		t.Fatalf("wrong values sent %d decisions", n)
	}
	// Each try looks the arguments up again, within the member's limit:
	// past five, one every LookupEvery.
	if a := approve(`{"currency":"EUR","sum":250}`); a.status != http.StatusTooManyRequests {
		t.Fatalf("a sixth look-up at once: %d", a.status)
	}
	p.clock.Advance(decidepage.LookupEvery)
	if a := approve(`{"currency":"EUR","sum":250}`); a.status != http.StatusSeeOther {
		t.Fatalf("the right value: %d\n%s", a.status, a.body)
	}
	got := p.decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Status != http.StatusOK {
		t.Fatalf("the backend received %+v", got)
	}
	var body struct {
		Confirmation struct{ Argument, Value string }
	}
	if err := json.Unmarshal(got[0].Body, &body); err != nil || body.Confirmation.Argument != "amount" ||
		body.Confirmation.Value != `{"currency":"EUR","sum":250}` {
		t.Errorf("the decision's confirmation: %+v (%v)\n%s", body.Confirmation, err, got[0].Body)
	}

}

// TestTypedConfirmationNeedsTheBackend: without typed_confirmation the
// page offers no Approve of such a call and says where to approve it,
// and a forged one is refused.
func TestTypedConfirmationNeedsTheBackend(t *testing.T) {
	p := newPage(t)
	p.ingest("refund.json")
	p.drain()
	link := p.link("acme", "a-refund1", 1, "user:kevin", "approve")
	if a := p.get(link); strings.Contains(a.body, `value="approve"`) || strings.Contains(a.body, "Show the call to approve it") ||
		!strings.Contains(a.body, "needs a typed confirmation of amount: approve it in the console") {
		t.Errorf("the page:\n%s", a.body)
	}
	a := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"approve"}, "typed": {`{"currency":"EUR","sum":250}`}})
	if a.status == http.StatusSeeOther {
		t.Errorf("a forged typed approve: %d", a.status)
	}
	if n := len(p.decisions()); n != 0 {
		t.Errorf("the backend received %d decisions", n)
	}
}

// TestDestructiveTypedApproveWithAPasskey: the whole case: a
// DESTRUCTIVE call that needs a typed confirmation, under a rule that
// wants a passkey for it, is approved on the page with the value typed
// and the member's passkey, and the backend receives one approve that
// carries both the digest and the value; the same form replayed, or the
// right value with no passkey, decides nothing more.
func TestDestructiveTypedApproveWithAPasskey(t *testing.T) {
	cfg := strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove)
	p := newPageSetUp(t, pageSetup{config: cfg, publicURL: passkeyOrigin, typed: true, passkeys: tenant.PasskeysDestructive})
	auth := passkeytest.New(passkeyOrigin)
	cred := enrolKevin(t, p, auth)
	p.ingestWith("refund.json", func(ev map[string]any) {
		call := ev["data"].(map[string]any)["call"].(map[string]any)
		call["annotations"] = map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true}
	})
	p.drain()
	link := p.link("acme", "a-refund1", 1, "user:kevin", "approve")
	shown := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"arguments"}})
	if !strings.Contains(shown.body, "DESTRUCTIVE") || !strings.Contains(shown.body, `id="typed"`) ||
		!strings.Contains(shown.body, "Approve with passkey") || !bindingAttr.MatchString(shown.body) {
		t.Fatalf("the page with the call shown:\n%s", shown.body)
	}
	const value = `{"currency":"EUR","sum":250}`
	noKey := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"approve"}, "typed": {value}})
	if noKey.status == http.StatusSeeOther || !strings.Contains(noKey.body, "Nothing was sent") {
		t.Fatalf("the right value without a passkey: %d\n%s", noKey.status, noKey.body)
	}
	p.clock.Advance(decidepage.LookupEvery)
	form := p.assertion(t, link, auth, cred, passkeytest.Spoil{})
	form.Set("typed", value)
	if a := p.post(link, form); a.status != http.StatusSeeOther {
		t.Fatalf("the value and the passkey: %d\n%s", a.status, a.body)
	}
	got := p.decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.ArgsSHA256 != p.fake.Digest("a-refund1") ||
		!strings.Contains(string(got[0].Body), `"confirmation":{"argument":"amount","value":"{\"currency\":\"EUR\",\"sum\":250}"}`) {
		t.Fatalf("the backend received %+v", got)
	}
	p.clock.Advance(decidepage.LookupEvery)
	if a := p.post(link, form); a.status == http.StatusSeeOther {
		t.Errorf("the same form replayed: %d", a.status)
	}
	if n := len(p.decisions()); n != 1 {
		t.Errorf("after a replay the backend received %d decisions", n)
	}
}

// TestDestructiveTypedApproveAsksOnce: typing the value is the second
// question of a destructive call's Approve: the page does not ask again
// (and so never drops the value typed on the way).
func TestDestructiveTypedApproveAsksOnce(t *testing.T) {
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", tenant.EmailDecisionsApprove),
		publicURL: "https://approvals.example", typed: true})
	p.ingestWith("refund.json", func(ev map[string]any) {
		call := ev["data"].(map[string]any)["call"].(map[string]any)
		call["annotations"] = map[string]any{"readOnlyHint": false, "destructiveHint": true, "openWorldHint": true}
	})
	p.drain()
	link := p.link("acme", "a-refund1", 1, "user:kevin", "approve")
	p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"arguments"}})
	a := p.post(link, url.Values{"check": {p.checkOf(link)}, "action": {"approve"}, "typed": {`{"currency":"EUR","sum":250}`}})
	if a.status != http.StatusSeeOther {
		t.Fatalf("a destructive call's typed Approve: %d\n%s", a.status, a.body)
	}
	if got := p.decisions(); len(got) != 1 || got[0].Request.Decision != "approve" {
		t.Fatalf("the backend received %+v", got)
	}
}
