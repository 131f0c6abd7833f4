package discord_test

import (
	"strings"
	"testing"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/backend"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// chgPatch is the whole patch the fake backend holds for a-chg1.
const chgPatch = "--- a/src/retry.go\n+++ b/src/retry.go\n@@ -10,3 +10,4 @@\n-\tmax := 3\n+\tmax := 5\n"

// TestRestrictedChangesetShownBeforeApproval: a content holder's Approve
// of a restricted changeset records nothing; it shows them, in ephemeral
// follow-ups, the files and the patch checked against patch_sha256, and
// only the Approve of that answer decides, with the digest. Nothing of
// it, nor the digest, reaches the channel.
func TestRestrictedChangesetShownBeforeApproval(t *testing.T) {
	h := newHarness(t)
	ev := threadstest.Ingest(t, h.svc, "changes.json", func(ev map[string]any) {
		data := ev["data"].(map[string]any)
		data["content"] = map[string]any{"restricted": true}
		data["changes"].(map[string]any)["patch_sha256"] = threads.PatchDigest(chgPatch)
	})
	threadstest.Backed(t, h.backend, ev)
	h.backend.SetChanges("a-chg1", []backend.ChangedFileAnswer{{Path: "src/retry.go"}, {Path: "src/retry_test.go"}}, chgPatch)
	h.drain(t)
	card := h.card(t, "a-chg1", approvalTarget, 1)
	first := h.click(t, kevin, chApproval, button(t, card, templates.ActionApprove))
	if first.Response.Type != discordgo.InteractionResponseDeferredMessageUpdate {
		t.Fatalf("first answer %+v: want a deferred update, the content following privately", first.Response)
	}
	patch := h.told(t, kevin, "max := 5")
	if !strings.Contains(plain(patch.Text()), "src/retry_test.go") || !strings.Contains(plain(patch.Text()), threads.PatchDigest(chgPatch)) {
		t.Fatalf("the changeset shown: %q", patch.Text())
	}
	if f := h.told(t, kevin, "decides the revision shown above"); f.Components == 0 {
		t.Fatalf("the private answer offers no Approve: %+v", f)
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("the card's Approve decided before the changeset was shown: %+v", got)
	}
	seen := templates.EncodeAction(templates.Action{Kind: templates.ActionApproveSeen, ApprovalID: "a-chg1", Revision: 1})
	// Pressed anywhere but on the private answer (a click no real
	// Discord client sends: the bot puts the button only there), it
	// decides nothing.
	if res := h.click(t, kevin, chApproval, seen); !strings.Contains(res.Response.Content, "Approve from the private answer") {
		t.Fatalf("the private answer's Approve on the card answered %+v", res.Response)
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("the private answer's Approve from the card decided: %+v", got)
	}
	res := h.approveAnswer(t, kevin, chApproval, seen, "")
	if !res.Answered() {
		t.Fatalf("answer %+v", res)
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Decision != backend.Approve ||
		got[0].Request.ArgsSHA256 != h.backend.Digest("a-chg1") {
		t.Fatalf("decisions %+v: want one approval carrying the digest", got)
	}
	for _, ch := range []string{chApproval, card.Thread} {
		for _, m := range h.discord.Messages(ch) {
			if strings.Contains(m.Text(), "max := 5") || strings.Contains(m.Text(), h.backend.Digest("a-chg1")) {
				t.Fatalf("a shared message shows the changeset or the digest: %q", m.Text())
			}
		}
	}
}

// TestPrivateChatRestrictedWhateverTheFlag: a private chat's call with
// content.restricted false shows nothing of its content in the channel,
// and a member without the content permission cannot decide it.
func TestPrivateChatRestrictedWhateverTheFlag(t *testing.T) {
	h := newHarness(t)
	ev := threadstest.Ingest(t, h.svc, "private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["content"] = map[string]any{"restricted": false}
	})
	threadstest.Backed(t, h.backend, ev)
	h.drain(t)
	card := h.card(t, "a-priv1", approvalTarget, 1)
	for _, hidden := range []string{"bea.private@example.com", "Deleting my old", h.backend.Digest("a-priv1")} {
		if strings.Contains(card.Text(), hidden) {
			t.Errorf("the channel's card shows %q", hidden)
		}
	}
	for _, kind := range []templates.ActionKind{templates.ActionApprove, templates.ActionDeny} {
		res := h.click(t, noc, chApproval, button(t, card, kind))
		answeredAtOnce(t, res, "only members of tenant acme with the content permission")
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}

// TestRevealTooLongForChatPromisesNoApprove: a restricted call whose
// content does not all fit in the follow-ups is decided too large before
// anything is sent: one short answer naming the console, no part of the
// content, and no lead promising an Approve that is not offered.
func TestRevealTooLongForChatPromisesNoApprove(t *testing.T) {
	h := newHarness(t)
	patch := "--- a/src/retry.go\n+++ b/src/retry.go\n" + strings.Repeat("+\tmax := 5 // SECRET-LINE\n", 8000)
	ev := threadstest.Ingest(t, h.svc, "changes.json", func(ev map[string]any) {
		data := ev["data"].(map[string]any)
		data["content"] = map[string]any{"restricted": true}
		data["changes"].(map[string]any)["patch_sha256"] = threads.PatchDigest(patch)
	})
	threadstest.Backed(t, h.backend, ev)
	h.backend.SetChanges("a-chg1", []backend.ChangedFileAnswer{{Path: "src/retry.go"}, {Path: "src/retry_test.go"}}, patch)
	h.drain(t)
	card := h.card(t, "a-chg1", approvalTarget, 1)
	h.click(t, kevin, chApproval, button(t, card, templates.ActionApprove))
	told := h.told(t, kevin, "too large to show in chat")
	if !strings.Contains(plain(told.Text()), "https://console.example/approvals/a-chg1") {
		t.Errorf("the answer names no console: %q", told.Text())
	}
	for _, f := range h.discord.Followups(kevin) {
		if text := plain(f.Text()); text != plain(told.Text()) {
			t.Errorf("told more than the one answer: %q", text)
		}
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}
