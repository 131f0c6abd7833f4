package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// grantsHarness serves acme with grants enabled (destructive calls too:
// merge.json's is), the merge's pr and method free, to a backend that
// takes them.
func grantsHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, harnessOptions{features: []string{"grants"}, config: func(y string) string {
		y = strings.Replace(y, `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n", `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n  features: [grants]\n", 1)
		return strings.Replace(y, "    forbid_self_approval: true\n", "    forbid_self_approval: true\n"+
			"    grants: {enabled: true, destructive: true, free: {acme_github.merge: [pr, method]}}\n", 1)
	}})
}

// submitGrant submits the grant modal v as user with the three choices.
func (h *harness) submitGrant(t *testing.T, user string, v viewMeta, scope, ttl, uses string) (int, string) {
	t.Helper()
	callback, meta := v.callback, v.private
	choice := func(value string) map[string]any {
		return map[string]any{"choice": map[string]any{"type": "static_select", "selected_option": map[string]any{"value": value}}}
	}
	submission := map[string]any{"type": "view_submission", "user": map[string]any{"id": user},
		"view": map[string]any{"id": "V1", "type": "modal", "callback_id": callback, "private_metadata": meta,
			"state": map[string]any{"values": map[string]any{
				"grant_scope": choice(scope), "grant_ttl": choice(ttl), "grant_uses": choice(uses)}}}}
	return h.send(t, signedRequest{path: "/slack/interactions", body: interaction(submission)})
}

type viewMeta struct{ callback, private string }

// TestGrantFromSlack: the card offers Approve and allow…; the modal words
// each scope and offers the tenant's lifetimes and uses; its submission
// approves with the grant, recorded before the modal closes, the grant
// sent to the backend exactly as worded; /approvals grants lists it with
// a Revoke that reaches the backend once.
func TestGrantFromSlack(t *testing.T) {
	h := grantsHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	if !strings.Contains(card.AllText(), "Approve and allow…") {
		t.Fatalf("the card offers no grant: %q", card.AllText())
	}
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionGrant))
	threadstest.Eventually(t, "the grant modal", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	raw := string(v.Raw)
	for _, want := range []string{"acme_github.merge to acme/api only, method and pr may differ",
		"this exact call of acme_github.merge (the same arguments)", `"15 min"`, `"8 h"`, `"20 uses"`, "Approve and allow"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the modal lacks %q: %s", want, raw)
		}
	}
	if strings.Contains(raw, `"24 h"`) || strings.Contains(raw, `"50 uses"`) {
		t.Errorf("the modal offers more than the tenant's caps: %s", raw)
	}
	if h.committed(t, "a-merge1") {
		t.Fatal("the button recorded a decision before its dialog")
	}
	// A crafted choice is refused in the modal, nothing recorded.
	status, body := h.submitGrant(t, "U0KEVIN", viewMeta{v.CallbackID, v.PrivateMetadata}, "values", "24h0m0s", "5")
	if status != 200 || !strings.Contains(body, `"response_action":"errors"`) && body != "" {
		t.Fatalf("crafted submission answered %d %q", status, body)
	}
	h.told(t, "U0KEVIN", "not one offered")
	if h.committed(t, "a-merge1") {
		t.Fatal("a crafted grant was recorded")
	}

	status, body = h.submitGrant(t, "U0KEVIN", viewMeta{v.CallbackID, v.PrivateMetadata}, "values", "1h0m0s", "5")
	if status != 200 || body != "" {
		t.Fatalf("submission answered %d %q", status, body)
	}
	if !h.committed(t, "a-merge1") {
		t.Fatal("the modal closed before the approval was recorded")
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Grant == nil || got[0].Request.Grant.Pins[0].Value != "acme/api" || got[0].Request.Grant.Uses != 5 {
		t.Fatalf("decisions %+v", got)
	}
	id := got[0].Request.Grant.ID

	h.command(t, "U0LEE", "C0APPROVALS", "grants")
	listing := h.told(t, "U0LEE", id)
	if !strings.Contains(listing.AllText(), "for 1 h: acme_github.merge to acme/api only, method and pr may differ, 5 uses · 5 uses left") {
		t.Fatalf("listing %q", listing.AllText())
	}
	revoke := templates.EncodeAction(templates.Action{Kind: templates.ActionRevokeGrant, ApprovalID: id, Revision: 1})
	if !strings.Contains(listingJSON(t, listing), revoke) {
		t.Fatalf("the listing has no Revoke: %s", listingJSON(t, listing))
	}
	// A viewer sees the grant, without a Revoke; a Revoke they forge is
	// refused by the core.
	h.command(t, "U0VIC", "C0APPROVALS", "grants")
	if seen := h.told(t, "U0VIC", id); strings.Contains(listingJSON(t, seen), revoke) {
		t.Fatalf("a viewer is offered Revoke: %s", listingJSON(t, seen))
	}
	h.clickAnswer(t, "U0VIC", "C0APPROVALS", revoke)
	h.told(t, "U0VIC", "cannot decide")
	h.clickAnswer(t, "U0LEE", "C0APPROVALS", revoke)
	h.told(t, "U0LEE", "Revoking grant "+id)
	h.drain(t)
	if rv := h.backend.Revokes(); len(rv) != 1 || rv[0].Status != 200 || rv[0].Request.Actor != "user:lee" {
		t.Fatalf("revokes %+v", rv)
	}
}

func listingJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
