package slack_test

import (
	"strings"
	"testing"

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

// turnCards are the channel's messages that show the turn.
func (h *harness) turnCards(channel string) []int {
	var out []int
	for i, m := range h.slack.Channel(channel) {
		if strings.Contains(m.AllText(), "Turn of 3 calls") {
			out = append(out, i)
		}
	}
	return out
}

func turnButton(t *testing.T, h *harness, label string) string {
	t.Helper()
	msgs := h.slack.Channel("C0APPROVALS")
	idx := h.turnCards("C0APPROVALS")
	if len(idx) != 1 {
		t.Fatalf("%d turn cards in the channel, want one", len(idx))
	}
	for _, b := range msgs[idx[0]].Buttons() {
		if b.Text == label {
			return b.ActionID
		}
	}
	t.Fatalf("no %q on the turn card: %+v", label, msgs[idx[0]].Buttons())
	return ""
}

// TestSlackTurnOnOneCard: three calls of a turn are one card in one
// thread, each a row with its own buttons; Approve all decides them in
// one batch that reaches the backend once, each call bound to its own
// revision and digest, and the card shows every row approved.
func TestSlackTurnOnOneCard(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{turns: true})
	for _, id := range turnIDs {
		h.ingestMember(t, id, 1)
		h.drain(t)
	}
	if n := len(h.slack.MessagesBy("chat.postMessage")); n != 1 {
		t.Fatalf("%d messages posted, want the one turn card", n)
	}
	approveAll := turnButton(t, h, "Approve all 3")
	msgs := h.slack.Channel("C0APPROVALS")
	card := msgs[h.turnCards("C0APPROVALS")[0]]
	for _, id := range turnIDs {
		for _, k := range []string{"approve", "deny"} {
			want := "ab1|" + k + "|" + id + "|1"
			found := false
			for _, b := range card.Buttons() {
				found = found || b.ActionID == want
			}
			if !found {
				t.Fatalf("no row button %s on the turn card", want)
			}
		}
	}
	h.click(t, "U0KEVIN", "C0APPROVALS", approveAll)
	h.drain(t)
	got := h.backend.TurnDecisions()
	if len(got) != 1 || got[0].Status != 200 || len(got[0].Request.Decisions) != 3 {
		t.Fatalf("batches %+v", got)
	}
	for i, d := range got[0].Request.Decisions {
		if d.ApprovalID != turnIDs[i] || d.Revision != 1 || d.ArgsSHA256 != h.backend.Digest(turnIDs[i]) {
			t.Errorf("decisions[%d] %+v", i, d)
		}
	}
	threadstest.Eventually(t, "the turn card shows every call approved", func() bool {
		msgs := h.slack.Channel("C0APPROVALS")
		idx := h.turnCards("C0APPROVALS")
		return len(idx) == 1 && strings.Count(msgs[idx[0]].AllText(), "Approved by user:kevin") == 3 && len(msgs[idx[0]].Buttons()) == 0
	})
}

// TestSlackTurnStaleBatchRefused: a reask of one call edits its row and
// the card says which call changed; the Approve all shown before it is
// refused whole, the person told which call changed, and nothing sent.
func TestSlackTurnStaleBatchRefused(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{turns: true})
	for _, id := range turnIDs {
		h.ingestMember(t, id, 1)
	}
	h.drain(t)
	stale := turnButton(t, h, "Approve all 3")
	h.ingestMember(t, "t-comment", 2)
	h.drain(t)
	msgs := h.slack.Channel("C0APPROVALS")
	if txt := msgs[h.turnCards("C0APPROVALS")[0]].AllText(); !strings.Contains(txt, "acme_github.comment (call 2) was asked again") {
		t.Fatalf("the card does not say which call changed:\n%s", txt)
	}
	h.click(t, "U0KEVIN", "C0APPROVALS", stale)
	h.told(t, "U0KEVIN", "acme_github.comment was asked again")
	forged, err := templates.ParseTurnAction(stale)
	if err != nil {
		t.Fatal(err)
	}
	forged.Check = "0123456789abcdef"
	h.click(t, "U0KEVIN", "C0APPROVALS", templates.EncodeTurnAction(forged))
	h.told(t, "U0KEVIN", "Calls of this turn changed")
	h.drain(t)
	if n := len(h.backend.TurnDecisions()) + len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d requests reached the backend", n)
	}
	if fresh := turnButton(t, h, "Approve all 3"); fresh == stale {
		t.Fatal("the edited card kept the stale Approve all")
	}
}
