package discord_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// grantsHarness serves acme with grants enabled (destructive calls too:
// merge.json's is), the merge's pr and method free, to a backend that
// takes them.
func grantsHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, harnessOptions{pinned: true, features: []string{"grants"}, config: func(y string) string {
		y = strings.Replace(y, `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n", `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n  features: [grants]\n", 1)
		return strings.Replace(y, "    forbid_self_approval: true\n", "    forbid_self_approval: true\n"+
			"    grants: {enabled: true, destructive: true, free: {acme_github.merge: [pr, method]}}\n", 1)
	}})
}

// TestGrantFromDiscord: the card offers Approve and allow…, whose modal
// (string selects under the scopes in words) passes Discord's checks;
// its submission approves with the grant as worded, a crafted choice is
// refused; /approvals grants lists it with a Revoke that reaches the
// backend once.
func TestGrantFromDiscord(t *testing.T) {
	h := grantsHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "discord:channel:"+chApproval, 1)
	grantID := templates.EncodeAction(templates.Action{Kind: templates.ActionGrant, ApprovalID: "a-merge1", Revision: 1})
	if !strings.Contains(string(mustJSON(t, card)), grantID) {
		t.Fatalf("the card offers no grant: %s", mustJSON(t, card))
	}
	res := h.click(t, kevin, chApproval, grantID)
	r := res.Response
	if res.Problem != "" || r.Type != discordgo.InteractionResponseModal || r.Title != "Approve and allow" ||
		len(r.Selects["grant_scope"]) != 2 || strings.Join(r.Selects["grant_ttl"], ",") != "15m0s,1h0m0s,8h0m0s" ||
		len(r.Texts) != 1 || !strings.Contains(plain(r.Texts[0]), "acme_github.merge to acme/api only, method and pr may differ") {
		t.Fatalf("modal %+v (%s)", r, res.Problem)
	}
	crafted := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: r.CustomID,
		Selects: map[string][]string{"grant_scope": {"values"}, "grant_ttl": {"24h0m0s"}, "grant_uses": {"5"}}})
	answeredAtOnce(t, crafted, "not one offered")
	if len(h.backend.Decisions()) != 0 {
		t.Fatal("a crafted grant reached the backend")
	}
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: r.CustomID, MessageID: card.ID,
		Selects: map[string][]string{"grant_scope": {"values"}, "grant_ttl": {"1h0m0s"}, "grant_uses": {"5"}}})
	if !sub.Answered() || sub.Problem != "" {
		t.Fatalf("submission %+v", sub)
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Grant == nil || got[0].Request.Grant.Pins[0].Value != "acme/api" || got[0].Request.Grant.Uses != 5 {
		t.Fatalf("decisions %+v", got)
	}
	id := got[0].Request.Grant.ID
	// /approvals grants, its answer read as the edit of the deferred
	// answer (one message: nothing follows, so the adapter stays open).
	cmd := h.discord.Subcommand(lee, chApproval, "approvals", "grants")
	if !cmd.Answered() || cmd.Response.Type != discordgo.InteractionResponseDeferredChannelMessageWithSource {
		t.Fatalf("/approvals grants answered %+v (%s)", cmd.Response, cmd.Problem)
	}
	var listing string
	threadstest.Eventually(t, "the answer to /approvals grants", func() bool {
		for _, r := range h.discord.Requests() {
			if r.Route == discordtest.RouteOriginalEdit && strings.Contains(r.Path, cmd.Token) && r.Status == 200 {
				listing = string(r.Body)
				return true
			}
		}
		return false
	})
	revoke := templates.EncodeAction(templates.Action{Kind: templates.ActionRevokeGrant, ApprovalID: id, Revision: 1})
	if !strings.Contains(listing, id) || !strings.Contains(listing, "5 uses left") || !strings.Contains(listing, revoke) {
		t.Fatalf("/approvals grants: %s", listing)
	}
	// A viewer sees the grant without a Revoke; one they forge is refused.
	seen := h.discord.Subcommand(vic, chApproval, "approvals", "grants")
	var viewerListing string
	threadstest.Eventually(t, "the viewer's /approvals grants", func() bool {
		for _, r := range h.discord.Requests() {
			if r.Route == discordtest.RouteOriginalEdit && strings.Contains(r.Path, seen.Token) && r.Status == 200 {
				viewerListing = string(r.Body)
				return true
			}
		}
		return false
	})
	if !strings.Contains(viewerListing, id) || strings.Contains(viewerListing, revoke) {
		t.Fatalf("the viewer's listing: %s", viewerListing)
	}
	res = h.discord.ClickButton(discordtest.Click{User: vic, Channel: chApproval, CustomID: revoke, Ephemeral: true})
	answeredAtOnce(t, res, "cannot decide")
	res = h.discord.ClickButton(discordtest.Click{User: lee, Channel: chApproval, CustomID: revoke, Ephemeral: true})
	answeredAtOnce(t, res, "Revoking grant "+id)
	h.drain(t)
	if rv := h.backend.Revokes(); len(rv) != 1 || rv[0].Status != 200 || rv[0].Request.Actor != "user:lee" {
		t.Fatalf("revokes %+v", rv)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
