package slack_test

import (
	"strings"
	"testing"

	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

// A yes that the platform's re-check refused reaches the member who gave
// it as more than an edit of the card: the card is posted to them
// directly (as a ladder step's DM), showing the refusal.
func TestRecheckRefusalReachesTheApprover(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove))
	h.drain(t)
	if text := h.card(t, "a-merge1", "C0APPROVALS", 1).AllText(); !strings.Contains(text, "Approved by user:kevin") {
		t.Fatalf("card after the approval: %q", text)
	}
	h.ingestWith(t, "refund-recheck.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["approval_id"] = "a-merge1"
	})
	h.drain(t)
	dm := h.card(t, "a-merge1", "DU0KEVIN", 1)
	if text := dm.AllText(); !strings.Contains(text, "The platform refused the call after user:kevin approved it") {
		t.Errorf("the card in kevin's messages reads %q, want the refusal", text)
	}
	if len(dm.Buttons()) != 0 {
		t.Errorf("the refused card offers buttons: %+v", dm.Buttons())
	}
	// The channel thread's reply names kevin in a way that notifies him:
	// a user element inside the rich text (a mention only in the
	// fallback text of a message with blocks notifies nobody), and the
	// same mention in the fallback.
	var reply *slacktest.Message
	for _, m := range h.slack.Channel("C0APPROVALS") {
		if m.ThreadTS == card.TS && strings.Contains(m.Text, "refused") {
			reply = &m
		}
	}
	switch {
	case reply == nil:
		t.Errorf("no refusal reply in the channel's thread")
	case !strings.HasPrefix(reply.Text, "<@U0KEVIN> "):
		t.Errorf("the refusal reply's text %q does not mention kevin first", reply.Text)
	case !strings.Contains(string(reply.Blocks), `{"type":"user","user_id":"U0KEVIN"}`):
		t.Errorf("the refusal reply's blocks hold no user element for kevin: %s", reply.Blocks)
	}
	for _, ch := range []string{"DU0LEE", "DU0ADA"} {
		if msgs := h.slack.Channel(ch); len(msgs) != 0 {
			t.Errorf("%s, who did not approve, was told: %+v", ch, msgs)
		}
	}
}
