package discord_test

import (
	"strings"
	"testing"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// A yes that the platform's re-check refused reaches the member who gave
// it as more than an edit of the card: the card is posted to their direct
// messages (as a ladder step's DM), showing the refusal.
func TestRecheckRefusalReachesTheApprover(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	res := h.approve(t, kevin, chApproval, button(t, card, templates.ActionApprove), card.ID, "")
	h.deciding(t, res, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.drain(t)
	if text := h.card(t, "a-merge1", approvalTarget, 1).Text(); !strings.Contains(text, "Approved by user:kevin") {
		t.Fatalf("card after the approval: %q", text)
	}
	threadstest.Ingest(t, h.svc, "refund-recheck.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["approval_id"] = "a-merge1"
	})
	h.drain(t)
	p := h.post(t, "a-merge1", "discord:user:"+kevin, 1)
	if p.Channel != h.discord.DMChannel(kevin) {
		t.Fatalf("post %+v, want kevin's DM channel %s", p, h.discord.DMChannel(kevin))
	}
	dm := h.card(t, "a-merge1", "discord:user:"+kevin, 1)
	if text := dm.Text(); !strings.Contains(text, "The platform refused the call after user:kevin approved it") || len(dm.Buttons) != 0 {
		t.Errorf("the card in kevin's messages reads %q with buttons %+v, want the refusal and none", text, dm.Buttons)
	}
	// The channel thread's reply mentions kevin, and lets that mention,
	// and no other, ping.
	var reply *discordtest.Message
	for _, m := range h.discord.Messages(card.Thread) {
		if strings.Contains(m.Content, "refused") {
			reply = &m
		}
	}
	switch {
	case reply == nil:
		t.Errorf("no refusal reply in the card's thread")
	case !strings.HasPrefix(reply.Content, "<@"+kevin+"> "):
		t.Errorf("the refusal reply %q does not mention kevin first", reply.Content)
	case reply.AllowedMentions == nil || len(reply.AllowedMentions.Users) != 1 || reply.AllowedMentions.Users[0] != kevin ||
		len(reply.AllowedMentions.Roles) != 0 || len(reply.AllowedMentions.Parse) != 0:
		t.Errorf("the refusal reply may ping %+v, want kevin alone", reply.AllowedMentions)
	}
	for _, u := range []string{lee, ada} {
		if msgs := h.discord.Messages(h.discord.DMChannel(u)); len(msgs) != 0 {
			t.Errorf("%s, who did not approve, was told: %+v", u, msgs)
		}
	}
}
