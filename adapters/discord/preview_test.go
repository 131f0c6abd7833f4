package discord_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// attackerLink is a link the backend's or the agent's text may carry.
const attackerLink = "https://attacker.example/preview"

// ingestResolved feeds the backend's resolution of a-merge1's first
// revision, its message carrying a link.
func (h *harness) ingestResolved(t *testing.T, message string) {
	t.Helper()
	p, err := fixtures.Path("events", "merge-resolved.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(raw, &ev); err != nil {
		t.Fatal(err)
	}
	data := ev["data"].(map[string]any)
	data["revision"], data["message"] = 1, message
	if raw, err = json.Marshal(ev); err != nil {
		t.Fatal(err)
	}
	parsed, err := approval.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	if _, err := h.svc.Ingest(context.Background(), threads.IngestRequest{Event: parsed, BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
}

func noPreview(f discordgo.MessageFlags) bool { return f&discordgo.MessageFlagsSuppressEmbeds != 0 }

// TestTextMessagesShowNoLinkPreview: every message the bot sends that is
// text alone (thread replies, notices, answers to one person) carries
// SUPPRESS_EMBEDS, so a link in the backend's or the agent's text shows
// no preview of the page; a card, which is an embed, keeps its embed.
func TestTextMessagesShowNoLinkPreview(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.ingest(t, "big.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	if noPreview(card.Flags) || len(card.Embeds) != 1 || card.EmbedsDropped {
		t.Fatalf("card %+v: want its embed shown", card)
	}

	// Answers to one person: a refusal at once, the agent's arguments
	// after.
	refused := h.click(t, stranger, chApproval, button(t, card, templates.ActionApprove))
	answeredAtOnce(t, refused, "not a member of tenant acme")
	if !noPreview(refused.Response.Flags) {
		t.Fatalf("the refusal %+v carries no SUPPRESS_EMBEDS", refused.Response)
	}
	h.click(t, kevin, chApproval, button(t, h.card(t, "a-big1", approvalTarget, 1), templates.ActionShowArgs))
	h.told(t, kevin, "Arguments of ")
	for _, f := range h.discord.Followups(kevin) {
		if !noPreview(f.Flags) || !f.Ephemeral() {
			t.Fatalf("follow-up %q flagged %d: want ephemeral with SUPPRESS_EMBEDS", f.Content, f.Flags)
		}
	}

	// The backend's message in the card's thread.
	h.ingestResolved(t, "The call was not made: see "+attackerLink+" for why.")
	h.drain(t)
	replies := h.discord.Messages(card.Thread)
	var linked int
	for _, m := range replies {
		if !noPreview(m.Flags) {
			t.Errorf("thread reply %q flagged %d: want SUPPRESS_EMBEDS", m.Content, m.Flags)
		}
		if strings.Contains(m.Content, attackerLink) {
			linked++
		}
	}
	if linked != 1 {
		t.Fatalf("thread replies %+v: want one with the backend's message", replies)
	}
	if edited := h.card(t, "a-merge1", approvalTarget, 1); noPreview(edited.Flags) || len(edited.Embeds) != 1 {
		t.Fatalf("the resolved card %+v: want its embed shown", edited)
	}

	// A notice, and an answer by DM once no interaction token works.
	ctx := context.Background()
	if err := h.adapter.Notice(ctx, threads.NoticeRequest{Target: "discord:channel:" + chAudit, Tenant: "acme",
		Text: "denied a-merge1: " + attackerLink}); err != nil {
		t.Fatal(err)
	}
	if err := h.adapter.Tell(ctx, threads.TellRequest{Tenant: "acme", User: lee, Text: "The backend says: " + attackerLink}); err != nil {
		t.Fatal(err)
	}
	for _, ch := range []string{chAudit, h.discord.DMChannel(lee)} {
		msgs := h.discord.Messages(ch)
		if len(msgs) == 0 {
			t.Fatalf("nothing in %s", ch)
		}
		for _, m := range msgs {
			if !noPreview(m.Flags) {
				t.Errorf("message %q in %s flagged %d: want SUPPRESS_EMBEDS", m.Content, ch, m.Flags)
			}
		}
	}
}
