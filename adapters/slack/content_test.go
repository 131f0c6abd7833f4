package slack_test

import (
	"strings"
	"testing"

	"approvalsbot/adapters/backend"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// chgPatch is the whole patch the fake backend holds for a-chg1.
const chgPatch = "--- a/src/retry.go\n+++ b/src/retry.go\n@@ -10,3 +10,4 @@\n-\tmax := 3\n+\tmax := 5\n"

// restrictedChangeset ingests changes.json as a content-restricted
// changeset whose patch_sha256 names chgPatch, which the fake backend's
// look-up serves with its files.
func restrictedChangeset(t *testing.T, h *harness) {
	t.Helper()
	h.ingestWith(t, "changes.json", func(ev map[string]any) {
		data := ev["data"].(map[string]any)
		data["content"] = map[string]any{"restricted": true}
		data["changes"].(map[string]any)["patch_sha256"] = threads.PatchDigest(chgPatch)
	})
	h.backend.SetChanges("a-chg1", []backend.ChangedFileAnswer{{Path: "src/retry.go"}, {Path: "src/retry_test.go"}}, chgPatch)
	h.drain(t)
}

// TestDigestNeverInTheChannel: the digest lets a guess at a value be
// checked, so the channel's card and its thread never show it; Show all
// arguments, to the one member who asked, does.
func TestDigestNeverInTheChannel(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	const ch = "C0APPROVALS"
	digest := h.backend.Digest("a-merge1")
	card := h.card(t, "a-merge1", ch, 1)
	if !strings.Contains(card.AllText(), "acme/api") {
		t.Fatalf("the card shows no arguments: %q", card.AllText())
	}
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionApprove))
	h.drain(t)
	for _, m := range h.slack.Messages() {
		if strings.Contains(m.AllText(), digest) {
			t.Fatalf("%s shows the digest: %q", m.Method, m.AllText())
		}
	}
	// The bot still binds the decision to it.
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.ArgsSHA256 != digest {
		t.Fatalf("decisions %+v: want the digest sent", got)
	}
}

// TestRestrictedChangesetShownBeforeApproval: a content holder's Approve
// of a restricted changeset sends nothing; it shows them, alone, the
// files and the patch, checked against patch_sha256, and only the
// Approve of that answer decides, with the digest.
func TestRestrictedChangesetShownBeforeApproval(t *testing.T) {
	h := newHarness(t)
	restrictedChangeset(t, h)
	const ch = "C0APPROVALS"
	card := h.card(t, "a-chg1", ch, 1)
	if strings.Contains(card.AllText(), "max := 5") || strings.Contains(card.AllText(), "src/retry.go") {
		t.Fatalf("the restricted card shows the changeset: %q", card.AllText())
	}
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionApprove))
	shown := h.told(t, "U0KEVIN", "decides the revision shown above")
	patch := h.told(t, "U0KEVIN", "max := 5")
	if !strings.Contains(patch.AllText(), "src/retry_test.go") || !strings.Contains(patch.AllText(), threads.PatchDigest(chgPatch)) {
		t.Fatalf("the changeset shown: %q", patch.AllText())
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("the card's Approve decided before the changeset was shown: %+v", got)
	}
	for _, m := range h.slack.Channel(ch) {
		if strings.Contains(m.AllText(), "max := 5") {
			t.Fatalf("the patch reached the channel: %q", m.AllText())
		}
	}
	// The private answer's Approve pressed anywhere but on that answer
	// (a payload no real Slack client sends: the bot puts the button only
	// there) decides nothing.
	h.click(t, "U0KEVIN", ch, button(t, shown, templates.ActionApproveSeen))
	h.told(t, "U0KEVIN", "Approve from the private answer")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("the private answer's Approve from the channel's card decided: %+v", got)
	}
	h.clickAnswer(t, "U0KEVIN", ch, button(t, shown, templates.ActionApproveSeen))
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Decision != backend.Approve ||
		got[0].Request.ArgsSHA256 != h.backend.Digest("a-chg1") {
		t.Fatalf("decisions %+v: want one approval carrying the digest", got)
	}
}

// TestTamperedPatchShowsNothing: a look-up whose patch does not match
// the approval's patch_sha256 shows none of it, nor the arguments, and
// offers no Approve.
func TestTamperedPatchShowsNothing(t *testing.T) {
	h := newHarness(t)
	restrictedChangeset(t, h)
	h.backend.TamperPatch("a-chg1", chgPatch+"+\tos.Exit(1)\n")
	const ch = "C0APPROVALS"
	card := h.card(t, "a-chg1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionApprove))
	h.told(t, "U0KEVIN", "does not match the patch digest")
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionShowDetails))
	threadstest.Eventually(t, "the second refusal", func() bool {
		n := 0
		for _, m := range h.slack.Messages() {
			if m.User == "U0KEVIN" && strings.Contains(m.AllText(), "does not match the patch digest") {
				n++
			}
		}
		return n == 2
	})
	h.notTold(t, "max := 5")
	h.notTold(t, "agent/fix-retry")
	h.notTold(t, "decides the revision shown above")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}

// TestPrivateChatRestrictedWhateverTheFlag: a private chat's call with
// content.restricted false shows nothing of its content in the channel,
// and a member without the content permission cannot decide it.
func TestPrivateChatRestrictedWhateverTheFlag(t *testing.T) {
	h := newHarness(t)
	h.ingestWith(t, "private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["content"] = map[string]any{"restricted": false}
	})
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "a-priv1", ch, 1)
	for _, hidden := range []string{"bea.private@example.com", "customers", "Deleting my old", h.backend.Digest("a-priv1")} {
		if strings.Contains(card.AllText(), hidden) {
			t.Errorf("the channel's card shows %q", hidden)
		}
	}
	if !strings.Contains(card.AllText(), "content permission") {
		t.Errorf("the card does not say where its details are: %q", card.AllText())
	}
	h.click(t, "U0NOC", ch, button(t, card, templates.ActionApprove))
	h.told(t, "U0NOC", "private chat: only members of tenant acme with the content permission")
	h.click(t, "U0NOC", ch, button(t, card, templates.ActionDeny))
	threadstest.Eventually(t, "the deny refused", func() bool {
		n := 0
		for _, m := range h.slack.Messages() {
			if m.User == "U0NOC" && strings.Contains(m.AllText(), "private chat") {
				n++
			}
		}
		return n == 2
	})
	if len(h.slack.Views()) != 0 {
		t.Fatal("a dialog opened for a member who may not decide")
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}

// TestApproveOnASupersededRestrictedCard: a content holder's Approve on
// a restricted card a reask replaced is told the card was superseded;
// the bot does not look the call up (the backend would answer for the
// new revision), shows nothing of it, and sends nothing.
func TestApproveOnASupersededRestrictedCard(t *testing.T) {
	h := newHarness(t)
	restrict := func(ev map[string]any) {
		ev["data"].(map[string]any)["content"] = map[string]any{"restricted": true}
	}
	h.ingestWith(t, "merge.json", restrict)
	h.drain(t)
	old := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.ingestWith(t, "merge-reasked.json", restrict)
	h.drain(t)
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, old, templates.ActionApprove))
	h.drain(t)
	h.told(t, "U0KEVIN", "superseded")
	h.notTold(t, "Approve below decides it")
	if got := h.backend.Lookups(); len(got) != 0 {
		t.Errorf("the superseded card's Approve looked the call up: %+v", got)
	}
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Errorf("decisions %+v", got)
	}
}

// restrictedChangesetOf is restrictedChangeset with patch as the
// changeset the fake backend serves (and patch_sha256 names).
func restrictedChangesetOf(t *testing.T, h *harness, patch string) {
	t.Helper()
	h.ingestWith(t, "changes.json", func(ev map[string]any) {
		data := ev["data"].(map[string]any)
		data["content"] = map[string]any{"restricted": true}
		data["changes"].(map[string]any)["patch_sha256"] = threads.PatchDigest(patch)
	})
	h.backend.SetChanges("a-chg1", []backend.ChangedFileAnswer{{Path: "src/retry.go"}, {Path: "src/retry_test.go"}}, patch)
	h.drain(t)
}

// TestRevealTooLongForChatPromisesNoApprove: a restricted call whose
// content does not all fit in a chat answer is decided too large before
// anything is sent: one short answer naming the console, no part of the
// content, and no lead promising an Approve that is not offered.
func TestRevealTooLongForChatPromisesNoApprove(t *testing.T) {
	h := newHarness(t)
	patch := "--- a/src/retry.go\n+++ b/src/retry.go\n" + strings.Repeat("+\tmax := 5 // SECRET-LINE\n", 8000)
	restrictedChangesetOf(t, h, patch)
	const ch = "C0APPROVALS"
	card := h.card(t, "a-chg1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionApprove))
	told := h.told(t, "U0KEVIN", "too large to show in chat")
	if !strings.Contains(told.AllText(), "https://console.example/approvals/a-chg1") {
		t.Errorf("the answer names no console: %q", told.AllText())
	}
	if got := h.answersTo("U0KEVIN"); len(got) != 1 {
		t.Errorf("%d answers: want the one", len(got))
	}
	h.notTold(t, "SECRET-LINE")
	h.notTold(t, "Approve below decides it")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}

// TestRevealOverTheCapSaysTooLarge: a look-up answer over the protocol's
// 1 MiB is not read; the person is told the call is too large to show
// and to decide it in the console, not that the answer was broken, and
// offered no Approve.
func TestRevealOverTheCapSaysTooLarge(t *testing.T) {
	h := newHarness(t)
	patch := "--- a/x\n+++ b/x\n" + strings.Repeat("+SECRET-LINE padding padding padding\n", 40000)
	restrictedChangesetOf(t, h, patch)
	const ch = "C0APPROVALS"
	card := h.card(t, "a-chg1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionApprove))
	told := h.told(t, "U0KEVIN", "too large to show here")
	if !strings.Contains(told.AllText(), "decide it in the console (https://console.example/approvals/a-chg1)") {
		t.Errorf("the answer %q does not name the console", told.AllText())
	}
	h.notTold(t, "could not be read")
	h.notTold(t, "SECRET-LINE")
	h.notTold(t, "decides the revision shown above")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
}
