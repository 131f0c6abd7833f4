package slack_test

import (
	"strings"
	"testing"

	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// TestApproveWithCommentOpensModalAndApprovesWithIt: Slack's confirm
// dialog takes no text, so Approve with comment… opens a modal (saying
// what the destructive call does), and its submission approves with the
// comment: recorded before the modal closes, sent as the decision's
// comment, and shown on the clicked card, then on every copy.
func TestApproveWithCommentOpensModalAndApprovesWithIt(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApproveNote))
	threadstest.Eventually(t, "the comment modal", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	if v.CallbackID != "ab1-approve" || len([]rune(v.Title)) > 24 || len(v.PrivateMetadata) > 3000 {
		t.Fatalf("view %+v", v)
	}
	raw := string(v.Raw)
	for _, want := range []string{"DESTRUCTIVE · reaches outside the tenant", "acme_github.merge", `"text":"Approve"`,
		"onto the card"} {
		if !strings.Contains(raw, want) {
			t.Errorf("the modal lacks %q: %s", want, raw)
		}
	}
	in := modalInput(t, v)
	if in.Type != "input" || !in.Optional || in.Element.MaxLength != 1000 {
		t.Fatalf("comment input %+v", in)
	}
	if h.committed(t, "a-merge1") {
		t.Fatal("a click on Approve with comment… recorded a decision before the comment")
	}
	h.untouched(t, "C0APPROVALS", card.TS)

	status, body := h.submitModal(t, "U0KEVIN", v, in, "fine once CI is green")
	if status != 200 || body != "" {
		t.Fatalf("submission answered %d %q (an empty 200 closes the modal)", status, body)
	}
	if !h.committed(t, "a-merge1") {
		t.Fatal("the modal closed before the approval was recorded")
	}
	deciding := h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	if !strings.Contains(deciding.AllText(), "comment: fine once CI is green") {
		t.Fatalf("the clicked card lacks the comment: %q", deciding.AllText())
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Comment != "fine once CI is green" {
		t.Fatalf("decisions %+v", got)
	}
	if text := h.card(t, "a-merge1", "C0APPROVALS", 1).AllText(); !strings.Contains(text, ": fine once CI is green") ||
		!strings.Contains(text, "Approved by user:kevin") {
		t.Fatalf("card %q", text)
	}

	// A forged submission (a denial in the comment modal's metadata) is
	// refused in the modal, and nothing more is sent.
	forged := map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0KEVIN"},
		"view": map[string]any{"id": "V2", "type": "modal", "callback_id": "ab1-approve",
			"private_metadata": `{"a":"ab1|deny|a-merge1|1"}`}}
	status, body = h.send(t, signedRequest{path: "/slack/interactions", body: interaction(forged)})
	if status != 200 || !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, "not one the bot knows") {
		t.Fatalf("forged submission answered %d %q", status, body)
	}
}

// TestApproveWithCommentOnARestrictedCall: a member with the content
// permission is first shown the call they approve, to them alone (a
// content holder never approves blind); the comment modal of that
// private answer says the comment stays off the card, and the shared
// card never shows it: not in any edit on the way (the clicked card
// replaced through the response_url while the approval is sent, each
// chat.update of it), nor at the end.
func TestApproveWithCommentOnARestrictedCall(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "a-priv1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionApproveNote))
	shown := h.told(t, "U0KEVIN", "decides the revision shown above")
	if len(h.slack.Views()) != 0 || len(h.backend.Decisions()) != 0 {
		t.Fatal("a content holder's Approve with comment… opened a dialog or decided before the call was shown")
	}
	if args := h.told(t, "U0KEVIN", "bea.private@example.com"); !strings.Contains(args.AllText(), h.backend.Digest("a-priv1")) {
		t.Fatalf("the call shown first: %q", args.AllText())
	}
	h.clickAnswer(t, "U0KEVIN", ch, button(t, shown, templates.ActionApproveNoteSeen))
	threadstest.Eventually(t, "the comment modal", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	if !strings.Contains(string(v.Raw), "the card will not show it") {
		t.Fatalf("the modal does not say the comment stays off the card: %s", v.Raw)
	}
	const secret = "ledger 4471 is the one"
	submission := map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0KEVIN"},
		"view": map[string]any{"id": "V1", "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"state": map[string]any{"values": map[string]any{"comment": map[string]any{"comment": map[string]any{
				"type": "plain_text_input", "value": secret}}}}}}
	if status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(submission)}); status != 200 || body != "" {
		t.Fatalf("submission answered %d %q", status, body)
	}
	h.replaced(t, ch, card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Comment != secret || got[0].Request.ArgsSHA256 != h.backend.Digest("a-priv1") {
		t.Fatalf("decisions %+v: want the comment and the digest sent to the backend", got)
	}
	h.replaced(t, ch, card.TS, "Approved by user:kevin")
	h.noEditShows(t, ch, card.TS, secret)
}
