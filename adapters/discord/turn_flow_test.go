package discord_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

var turnIDs = []string{"t-merge", "t-comment", "t-label"}

var turnFunctions = map[string]string{"t-merge": "acme_github.merge", "t-comment": "acme_github.comment", "t-label": "acme_github.label"}

// ingestMember ingests one call of a three-call turn at rev, derived from
// the merge fixture, and tells the fake backend its arguments.
func (h *harness) ingestMember(t *testing.T, id string, rev int) {
	t.Helper()
	ev := threadstest.Ingest(t, h.svc, "merge.json", func(ev map[string]any) {
		ev["id"] = "evt-" + id + "-" + string(rune('0'+rev))
		data := ev["data"].(map[string]any)
		if rev > 1 {
			ev["type"], data["why"] = "approval.reasked", "policy_changed"
		}
		data["id"], data["revision"] = id, rev
		call := data["call"].(map[string]any)
		call["function"] = turnFunctions[id]
		call["annotations"].(map[string]any)["destructiveHint"] = false
		data["turn"] = map[string]any{"id": "turn-7", "members": []any{turnIDs[0], turnIDs[1], turnIDs[2]}}
	})
	args, err := fixtures.Arguments("a-merge1.json")
	if err != nil {
		t.Fatal(err)
	}
	h.backend.AddApproval(id, rev, args, ev.Approval.ContentRestricted())
	h.backend.SetFunction(id, turnFunctions[id])
}

// turnCard is the channel's one message that shows the turn.
func (h *harness) turnCard(t *testing.T) (text string, buttons map[string]string) {
	t.Helper()
	var found []string
	buttons = map[string]string{}
	for _, m := range h.discord.Messages(chApproval) {
		if strings.Contains(m.Text(), "Turn of 3 calls") {
			found = append(found, m.Text())
			for _, b := range m.Buttons {
				buttons[b.Label] = b.CustomID
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d turn cards in the channel, want one", len(found))
	}
	return found[0], buttons
}

// TestDiscordTurnOnOneCard: three calls of a turn are one message, each a
// row with its own numbered buttons; Approve all decides them in one
// batch, each call bound to its own revision and digest.
func TestDiscordTurnOnOneCard(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{turns: true})
	for _, id := range turnIDs {
		h.ingestMember(t, id, 1)
		h.drain(t)
	}
	if n := len(h.discord.Messages(chApproval)); n != 1 {
		t.Fatalf("%d messages in the channel, want the one turn card", n)
	}
	_, buttons := h.turnCard(t)
	for _, l := range []string{"1 · Approve", "1 · Deny", "2 · Approve", "2 · Deny", "3 · Approve", "3 · Deny", "Deny all", "Approve all 3"} {
		if buttons[l] == "" {
			t.Fatalf("no %q on the turn card: %v", l, buttons)
		}
	}
	if buttons["2 · Deny"] != templates.EncodeAction(templates.Action{Kind: templates.ActionDeny, ApprovalID: "t-comment", Revision: 1}) {
		t.Fatalf("row 2's Deny is %q", buttons["2 · Deny"])
	}
	h.click(t, kevin, chApproval, buttons["Approve all 3"])
	h.drain(t)
	got := h.backend.TurnDecisions()
	if len(got) != 1 || got[0].Status != 200 || len(got[0].Request.Decisions) != 3 || got[0].Request.Via.Surface != "discord" {
		t.Fatalf("batches %+v", got)
	}
	for i, d := range got[0].Request.Decisions {
		if d.ApprovalID != turnIDs[i] || d.Revision != 1 || d.ArgsSHA256 != h.backend.Digest(turnIDs[i]) {
			t.Errorf("decisions[%d] %+v", i, d)
		}
	}
	threadstest.Eventually(t, "the turn card shows every call approved", func() bool {
		for _, m := range h.discord.Messages(chApproval) {
			if strings.Count(m.Text(), "Approved by user:kevin") == 3 && len(m.Buttons) == 0 {
				return true
			}
		}
		return false
	})
}

// TestDiscordTurnStaleBatchRefused: a reask of one call refuses the
// Approve all shown before it, whole, naming the call; nothing is sent.
func TestDiscordTurnStaleBatchRefused(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{turns: true})
	for _, id := range turnIDs {
		h.ingestMember(t, id, 1)
	}
	h.drain(t)
	_, before := h.turnCard(t)
	h.ingestMember(t, "t-comment", 2)
	h.drain(t)
	text, after := h.turnCard(t)
	if !strings.Contains(plain(text), "acme_github.comment (call 2) was asked again") || after["Approve all 3"] == before["Approve all 3"] {
		t.Fatalf("the card was not edited to say which call changed:\n%s", text)
	}
	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: before["Approve all 3"]})
	answeredAtOnce(t, res, "acme_github.comment was asked again")
	h.drain(t)
	if n := len(h.backend.TurnDecisions()) + len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d requests reached the backend", n)
	}
}

// TestDiscordDenyAllAsksFirst: Discord's buttons cannot ask again, so
// Deny all opens a dialog; its submission, with a reason, denies every
// call in one batch.
func TestDiscordDenyAllAsksFirst(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{turns: true})
	for _, id := range turnIDs {
		h.ingestMember(t, id, 1)
	}
	h.drain(t)
	_, buttons := h.turnCard(t)
	res := h.click(t, kevin, chApproval, buttons["Deny all"])
	if res.Response == nil || res.Response.Type != discordgo.InteractionResponseModal {
		t.Fatalf("Deny all answered %+v, want its dialog", res.Response)
	}
	h.drain(t)
	if n := len(h.backend.TurnDecisions()); n != 0 {
		t.Fatalf("the click alone sent %d batches", n)
	}
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: buttons["Deny all"],
		Values: map[string]string{"reason": "wrong repository"}})
	if !sub.Answered() {
		t.Fatalf("submission not answered: %+v", sub)
	}
	h.drain(t)
	got := h.backend.TurnDecisions()
	if len(got) != 1 || got[0].Status != 200 || got[0].Request.Decision != "deny" || got[0].Request.Comment != "wrong repository" ||
		len(got[0].Request.Decisions) != 3 {
		t.Fatalf("batches %+v", got)
	}
}
