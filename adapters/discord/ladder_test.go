package discord_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
)

// I'm looking is recorded before the interaction is answered, and the
// answer is the clicked card itself (UPDATE_MESSAGE) showing who is
// looking, Approve and Deny still there; no follow-up says it again.
func TestLookingClickAnswersWithTheCard(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)

	res := h.click(t, kevin, chApproval, button(t, card, templates.ActionLook))
	r := res.Response
	if r.Type != discordgo.InteractionResponseUpdateMessage || r.Ephemeral() || !r.Components ||
		!strings.Contains(plain(r.Content), "user:kevin is looking since") || decisionButtons(r.Buttons) != 2 {
		t.Fatalf("answer %+v (%s), want the card showing who is looking, with its buttons", r, res.Problem)
	}
	if a, err := h.store.ApprovalGet(t.Context(), "a-merge1"); err != nil || a.LadderState == nil {
		t.Fatalf("answered, but nothing recorded (%v)", err)
	}
	for _, f := range h.discord.AllFollowups() {
		if f.Token == res.Token {
			t.Fatalf("a follow-up %q beside the answer", f.Content)
		}
	}
}

// Escalate now fires the next step at once, its reply in the card's
// thread pinging exactly whom the step mentions; the card pressed again
// as it was fires nothing, and says so to the person alone.
func TestEscalateNowClickFiresTheStepOnce(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	press := button(t, card, templates.ActionEscalate)

	res := h.click(t, kevin, chApproval, press)
	if r := res.Response; r.Type != discordgo.InteractionResponseUpdateMessage || !strings.Contains(plain(r.Content), "Escalated now by user:kevin") {
		t.Fatalf("answer %+v (%s)", r, res.Problem)
	}
	h.drain(t)
	replies := h.discord.Messages(card.Thread)
	if len(replies) != 1 || !strings.Contains(replies[0].Content, "<@"+kevin+">") || !strings.Contains(plain(replies[0].Content), "escalated now by user:kevin") {
		t.Fatalf("thread replies %+v", replies)
	}
	if am := replies[0].AllowedMentions; am == nil || len(am.Users) != 1 || am.Users[0] != kevin || len(am.Roles) != 1 {
		t.Fatalf("the reply may ping %+v", am)
	}

	// Lee's client still showed the card as it was when Kevin pressed.
	again := h.discord.ClickButton(discordtest.Click{User: lee, Channel: chApproval, CustomID: press, MessageID: card.ID})
	answeredAtOnce(t, again, "user:kevin escalated this call at")
	if a, err := h.store.ApprovalGet(t.Context(), "a-merge1"); err != nil || a.StepsDone != 1 {
		t.Fatalf("a second press of the same card fired another step (%v)", err)
	}
}
