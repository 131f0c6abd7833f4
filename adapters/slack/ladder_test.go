package slack_test

import (
	"strings"
	"testing"

	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// replacedWith waits until the card at ts in channel was replaced through
// the click's response_url with a card that reads want, and returns the
// replacement.
func (h *harness) replacedWith(t *testing.T, channel, ts, want string) slacktest.Message {
	t.Helper()
	var got slacktest.Message
	threadstest.Eventually(t, "the card "+ts+" replaced with "+want, func() bool {
		for _, m := range h.replacements(channel, ts) {
			if strings.Contains(m.AllText(), want) {
				got = m
				return true
			}
		}
		return false
	})
	return got
}

// I'm looking is recorded before Slack gets its 200; the clicked card
// then shows who is looking at once, through the click's response_url,
// keeping its buttons (nothing was decided); the channel's copy follows
// with chat.update. Nobody is told a sentence: the card says it.
func TestLookingClickIsRecordedThenShownOnTheCard(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)

	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionLook))
	if h.approval(t, "a-merge1").LadderState == nil {
		t.Fatal("the click was answered before the acknowledgement was recorded")
	}
	shown := h.replacedWith(t, "C0APPROVALS", card.TS, "user:kevin is looking since")
	if len(decisionButtons(shown)) != 2 {
		t.Fatalf("the clicked card lost Approve or Deny: %+v", shown.Buttons())
	}
	h.drain(t)
	if edited := h.card(t, "a-merge1", "C0APPROVALS", 1); !strings.Contains(edited.AllText(), "user:kevin is looking since") {
		t.Fatalf("the channel's copy reads %q", edited.AllText())
	}
	h.notTold(t, "You are looking")
}

// Escalate now fires the next step at once: its reply goes into the
// card's thread naming who escalated, and the clicked card says so. The
// same card pressed again fires nothing, and the person alone is told
// what the first press fired.
func TestEscalateNowClickFiresTheStepOnce(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	press := button(t, card, templates.ActionEscalate)

	h.click(t, "U0KEVIN", "C0APPROVALS", press)
	if a := h.approval(t, "a-merge1"); a.StepsDone != 1 {
		t.Fatalf("the click was answered before the step was recorded (steps done %d)", a.StepsDone)
	}
	h.replacedWith(t, "C0APPROVALS", card.TS, "Escalated now by user:kevin")
	h.drain(t)
	var replies []string
	for _, m := range h.slack.Channel("C0APPROVALS") {
		if m.ThreadTS == card.TS {
			replies = append(replies, m.Text)
		}
	}
	if len(replies) != 1 || !strings.Contains(replies[0], "<@U0KEVIN> <!subteam^S0ONCALL>") || !strings.Contains(replies[0], "escalated now by user:kevin") {
		t.Fatalf("thread replies %q", replies)
	}

	h.click(t, "U0LEE", "C0APPROVALS", press) // the card as it was before the first press
	h.told(t, "U0LEE", "user:kevin escalated this call at")
	if a := h.approval(t, "a-merge1"); a.StepsDone != 1 {
		t.Fatalf("a second press of the same card fired another step (steps done %d)", a.StepsDone)
	}
}
