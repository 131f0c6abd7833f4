package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

func TestCardPostedToChannelWithButtons(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	if !strings.Contains(card.AllText(), "acme_github.merge") || !strings.Contains(card.AllText(), "Waiting for a decision") {
		t.Fatalf("card text %q", card.AllText())
	}
	if card.ThreadTS != "" || card.Unfurl {
		t.Fatalf("card posted in a thread or with unfurls: %+v", card)
	}
	if !strings.HasPrefix(card.TS, "1700000000.") {
		t.Fatalf("ts %q", card.TS)
	}
	var kinds []string
	for _, b := range card.Buttons() {
		a, err := templates.ParseAction(b.ActionID)
		if err != nil || b.Value != b.ActionID || a.ApprovalID != "a-merge1" || a.Revision != 1 {
			t.Fatalf("button %+v: %v", b, err)
		}
		kinds = append(kinds, string(a.Kind))
		if a.Kind == templates.ActionApprove && !b.Confirm {
			t.Error("Approve of a destructive call does not ask Slack's confirm dialog")
		}
	}
	if strings.Join(kinds, " ") != "deny approve approve_note look escalate" {
		t.Fatalf("buttons %v, want Deny first on a destructive call, then Approve and Approve with comment…, then the ladder's I'm looking and Escalate now", kinds)
	}
	posts, _ := h.store.PostList(context.Background(), "a-merge1")
	if len(posts) != 1 || posts[0].Channel != "C0APPROVALS" || posts[0].Ref != card.TS || posts[0].Target != "slack:C0APPROVALS" {
		t.Fatalf("recorded posts %+v", posts)
	}
}

// TestApproveClickDecidesEditsAndReplies: a click on Approve is recorded
// before it is answered, the clicked card shows at once (through the
// click's response_url) that the approval is on its way, without its
// buttons; once the backend has answered, the clicked card is replaced
// again with the outcome, the person is told privately, the channel's
// copy is edited with chat.update and the backend's message is a thread
// reply.
func TestApproveClickDecidesEditsAndReplies(t *testing.T) {
	h := newHarness(t)
	ev := h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)

	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove))
	if !h.committed(t, "a-merge1") {
		t.Fatal("the click was answered before its approval was recorded")
	}
	deciding := h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	if deciding.ThreadTS != "" || strings.Contains(deciding.AllText(), "Waiting for a decision") {
		t.Fatalf("the clicked card reads %q", deciding.AllText())
	}
	h.drain(t)

	got := h.backend.Decisions()
	if len(got) != 1 {
		t.Fatalf("backend got %d decisions", len(got))
	}
	d := got[0].Request
	if !got[0].SignatureOK || got[0].Status != 200 || d.Decision != "approve" || d.Actor != "user:kevin" || d.Revision != 1 ||
		d.ArgsSHA256 != ev.Approval.Call.ArgsSHA256 || d.Via.Surface != "slack" || d.Via.User != "U0KEVIN" {
		t.Fatalf("decision %+v", got[0])
	}
	final := h.replaced(t, "C0APPROVALS", card.TS, "Approved by user:kevin")
	if len(final.Buttons()) != 0 {
		t.Fatalf("the approved card keeps buttons: %+v", final.Buttons())
	}
	if edited := h.card(t, "a-merge1", "C0APPROVALS", 1); edited.AllText() != final.AllText() {
		t.Fatalf("the card threads recorded reads %q, the channel %q", edited.AllText(), final.AllText())
	}
	if n := len(h.slack.MessagesBy("chat.update")); n != 1 {
		t.Fatalf("%d chat.update calls, want one for the channel's copy", n)
	}
	var replies []slacktest.Message
	for _, m := range h.slack.Channel("C0APPROVALS") {
		if m.ThreadTS == card.TS {
			replies = append(replies, m)
		}
	}
	if len(replies) != 1 || replies[0].Text == "" {
		t.Fatalf("thread replies %+v", replies)
	}
	told := h.told(t, "U0KEVIN", "Recorded: your approval reached the job backend.")
	// The clicked card shows the outcome before the sentence says it.
	shown, said := -1, -1
	for i, m := range h.slack.Messages() {
		switch {
		case m.ReplaceOriginal && m.TS == card.TS && strings.Contains(m.AllText(), "Approved by user:kevin"):
			shown = i
		case m.Method == told.Method && m.TS == told.TS:
			said = i
		}
	}
	if shown < 0 || said < 0 || shown > said {
		t.Fatalf("the card showed the outcome at message %d, the sentence at %d: want the card first", shown, said)
	}
	// The card said it at once: no sentence said it again.
	h.notTold(t, "Sending your approval")
	if n := len(h.replacements("C0APPROVALS", card.TS)); n != 2 {
		t.Fatalf("the clicked card was replaced %d times, want twice (deciding, approved)", n)
	}
}

// TestApproveWithoutResponseURLIsToldPrivately: a click whose
// response_url cannot replace its card (it points elsewhere, or has
// expired) is still recorded; the person is told privately that it is on
// its way, and the card changes when the backend has answered, with
// chat.update.
func TestApproveWithoutResponseURLIsToldPrivately(t *testing.T) {
	for _, c := range []struct {
		name string
		url  func(h *harness) string
	}{
		{"foreign", func(*harness) string { return "https://hooks.attacker.example/actions/1" }},
		{"expired", func(h *harness) string { return h.slack.URL() + "/response/999999" }},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newHarness(t)
			h.ingest(t, "merge.json")
			h.drain(t)
			card := h.card(t, "a-merge1", "C0APPROVALS", 1)
			p := h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove))
			p["response_url"] = c.url(h)
			if status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(p)}); status != 200 || body != "" {
				t.Fatalf("click answered %d %q", status, body)
			}
			if m := h.told(t, "U0KEVIN", "Sending your approval of acme_github.merge"); m.Method != "chat.postEphemeral" {
				t.Fatalf("told through %s, want chat.postEphemeral", m.Method)
			}
			h.drain(t)
			if n := len(h.backend.Decisions()); n != 1 {
				t.Fatalf("%d decisions reached the backend", n)
			}
			if text := h.card(t, "a-merge1", "C0APPROVALS", 1).AllText(); !strings.Contains(text, "Approved by user:kevin") {
				t.Fatalf("card %q", text)
			}
			h.told(t, "U0KEVIN", "Recorded: your approval reached the job backend.")
			if r := h.replacements("C0APPROVALS", card.TS); len(r) != 0 {
				t.Fatalf("replaced through a response_url that does not work: %+v", r)
			}
		})
	}
}

func TestDenyOpensModalAndSubmissionDeniesWithReason(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	deny := button(t, card, templates.ActionDeny)

	h.click(t, "U0KEVIN", "C0APPROVALS", deny)
	threadstest.Eventually(t, "the deny modal", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	if v.TriggerID != "trig-U0KEVIN" || v.CallbackID != "ab1-deny" || len(v.PrivateMetadata) > 3000 || len([]rune(v.Title)) > 24 {
		t.Fatalf("view %+v", v)
	}
	in := modalInput(t, v)
	if in.Type != "input" || !in.Optional || in.Element.Type != "plain_text_input" || in.Element.MaxLength != 1000 {
		t.Fatalf("reason input %+v", in)
	}
	if !strings.Contains(string(v.Raw), "Your reason goes to the job backend and into the card's thread.") {
		t.Fatalf("the modal does not say where the reason goes: %s", v.Raw)
	}
	if len(h.backend.Decisions()) != 0 || h.committed(t, "a-merge1") {
		t.Fatal("a click on Deny recorded a decision before the reason")
	}
	h.untouched(t, "C0APPROVALS", card.TS)

	status, body := h.submitModal(t, "U0KEVIN", v, in, "not before the release")
	if status != 200 || body != "" {
		t.Fatalf("submission answered %d %q (an empty 200 closes the modal)", status, body)
	}
	if !h.committed(t, "a-merge1") {
		t.Fatal("the modal closed before the denial was recorded")
	}
	// The card clicked (its response_url rode in the modal's metadata)
	// shows the denial and its reason on their way.
	deciding := h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's denial is being sent to the job backend…")
	if !strings.Contains(deciding.AllText(), "not before the release") {
		t.Fatalf("the clicked card lacks the reason: %q", deciding.AllText())
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Comment != "not before the release" ||
		got[0].Request.Actor != "user:kevin" {
		t.Fatalf("decisions %+v", got)
	}
	h.replaced(t, "C0APPROVALS", card.TS, "Denied by user:kevin: not before the release")
	if text := h.card(t, "a-merge1", "C0APPROVALS", 1).AllText(); !strings.Contains(text, "Denied by user:kevin: not before the release") {
		t.Fatalf("card %q", text)
	}
	h.told(t, "U0KEVIN", "Recorded: your denial reached the job backend.")
	h.notTold(t, "Sending your denial")

	// A forged submission (an approve in the metadata) is refused in the
	// modal, and nothing is sent.
	forged := map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0KEVIN"},
		"view": map[string]any{"id": "V2", "type": "modal", "callback_id": "ab1-deny",
			"private_metadata": `{"a":"ab1|approve|a-merge1|1"}`}}
	status, body = h.send(t, signedRequest{path: "/slack/interactions", body: interaction(forged)})
	if status != 200 || !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, "not one the bot knows") {
		t.Fatalf("forged submission answered %d %q", status, body)
	}
}

// TestDenyOnARestrictedCallKeepsTheReasonOffTheCard: the deny modal of
// a content-restricted call says the reason stays off its card and
// thread (not that it goes into the thread); the backend gets the
// reason, and no change of the card, nor any message, shows it.
func TestDenyOnARestrictedCallKeepsTheReasonOffTheCard(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "a-priv1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionDeny))
	threadstest.Eventually(t, "the deny modal", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	if raw := string(v.Raw); !strings.Contains(raw, "its card and thread will not show it (this call's content is restricted)") ||
		strings.Contains(raw, "into the card's thread") {
		t.Fatalf("the modal does not say the reason stays off the card: %s", raw)
	}
	const secret = "ledger 4471 is the one"
	if status, body := h.submitModal(t, "U0KEVIN", v, modalInput(t, v), secret); status != 200 || body != "" {
		t.Fatalf("submission answered %d %q", status, body)
	}
	h.replaced(t, ch, card.TS, "Recorded: user:kevin's denial is being sent to the job backend…")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Comment != secret {
		t.Fatalf("decisions %+v: want the reason sent to the backend", got)
	}
	h.replaced(t, ch, card.TS, "Denied by user:kevin")
	h.noEditShows(t, ch, card.TS, secret)
}

// noEditShows checks that no change Slack received of the card (its
// deciding state, its outcome) nor any other message carries text, and
// that both changes were seen.
func (h *harness) noEditShows(t *testing.T, channel, ts, text string) {
	t.Helper()
	var deciding, decided bool
	for _, e := range h.edits(channel, ts) {
		all := e.AllText()
		if strings.Contains(all, text) {
			t.Fatalf("a %s edit of the card shows %q: %q", e.Method, text, all)
		}
		deciding = deciding || strings.Contains(all, "is being sent to the job backend")
		decided = decided || strings.Contains(all, "d by user:kevin")
	}
	if !deciding || !decided {
		t.Fatalf("edits of the card %+v: want its deciding state and its outcome among them", h.edits(channel, ts))
	}
	for _, m := range h.slack.Messages() {
		if strings.Contains(m.AllText(), text) {
			t.Fatalf("a %s message shows %q: %q", m.Method, text, m.AllText())
		}
	}
}

func TestDenyByNonMemberIsRefusedWithoutModal(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.click(t, "U0STRANGER", "C0APPROVALS", button(t, card, templates.ActionDeny))
	h.told(t, "U0STRANGER", "not a member of tenant acme")
	if len(h.slack.Views()) != 0 {
		t.Fatal("a modal opened for someone who may not decide")
	}
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 || h.committed(t, "a-merge1") {
		t.Fatalf("%d decisions reached the backend", n)
	}
	h.untouched(t, "C0APPROVALS", card.TS)
}

func TestRefusalsAreShownAndNothingIsSent(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.ingest(t, "refund.json")
	h.drain(t)
	merge := h.card(t, "a-merge1", "C0APPROVALS", 1)
	approve := button(t, merge, templates.ActionApprove)
	cases := []struct {
		name, user, channel, action, want string
	}{
		{"unmapped user", "U0STRANGER", "C0APPROVALS", approve, "not a member of tenant acme"},
		{"viewer", "U0VIC", "C0APPROVALS", approve, "viewer, which cannot decide"},
		{"self-approval", "U0ADA", "C0APPROVALS", approve, "forbids deciding your own job's calls"},
		// refund needs a typed confirmation: its card has no Approve; a
		// forged one is refused by threads.
		{"forged approve of a typed confirmation", "U0KEVIN", "C0FINANCE", "ab1|approve|a-refund1|1", "needs a typed confirmation of amount"},
		{"unknown approval", "U0KEVIN", "C0APPROVALS", "ab1|approve|a-nope|1", "knows no such card"},
		{"unknown action", "U0KEVIN", "C0APPROVALS", "ab1|launch|a-merge1|1", "not one the bot knows"},
		{"another app's payload", "U0KEVIN", "C0APPROVALS", "approve_button", "not one the bot knows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h.click(t, c.user, c.channel, c.action)
			h.told(t, c.user, c.want)
		})
	}
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
	// No card changed: each keeps its buttons for someone who may decide,
	// and no click's response_url replaced anything.
	h.untouched(t, "C0APPROVALS", merge.TS)
	h.untouched(t, "C0FINANCE", h.card(t, "a-refund1", "C0FINANCE", 1).TS)
	for _, m := range h.slack.MessagesBy("response_url") {
		if m.ReplaceOriginal {
			t.Fatalf("a refused click replaced a message: %+v", m.AllText())
		}
	}
	if !strings.Contains(h.logs.String(), "click on a button the bot does not know") {
		t.Error("the unknown button was not logged")
	}
	if len(h.slack.Views()) != 0 {
		t.Error("a modal opened")
	}
}

func TestSupersededCardIsRefused(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	old := h.card(t, "a-merge1", "C0APPROVALS", 1)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	// The old card says superseded and has no buttons; the new one is in
	// its thread.
	if text := h.card(t, "a-merge1", "C0APPROVALS", 1).AllText(); !strings.Contains(text, "Superseded") {
		t.Fatalf("old card %q", text)
	}
	fresh := h.card(t, "a-merge1", "C0APPROVALS", 2)
	if fresh.ThreadTS != old.TS || len(fresh.Buttons()) == 0 {
		t.Fatalf("reasked card %+v, want it in the thread of %s with buttons", fresh, old.TS)
	}
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, old, templates.ActionApprove))
	h.told(t, "U0KEVIN", "superseded")
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
	if r := h.replacements("C0APPROVALS", old.TS); len(r) != 0 {
		t.Fatalf("the superseded card was replaced: %q", r[0].AllText())
	}
	if text := h.card(t, "a-merge1", "C0APPROVALS", 1).AllText(); !strings.Contains(text, "Superseded") {
		t.Fatalf("old card after the refused click %q", text)
	}
}

func TestShowAllArgumentsAnswersOnlyThatPerson(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "big.json")
	h.drain(t)
	show := button(t, h.card(t, "a-big1", "C0APPROVALS", 1), templates.ActionShowArgs)

	h.click(t, "U0KEVIN", "C0APPROVALS", show)
	first := h.told(t, "U0KEVIN", "Arguments of ")
	if !strings.Contains(first.AllText(), "only you see this") || !strings.Contains(first.AllText(), h.backend.Digest("a-big1")) {
		t.Fatalf("first part %q", first.AllText())
	}
	// Every value of the whole arguments reaches the person, across the
	// parts Slack's limits need.
	threadstest.Eventually(t, "every part", func() bool {
		var all strings.Builder
		for _, m := range h.slack.Messages() {
			if m.User == "U0KEVIN" {
				all.WriteString(m.AllText())
			}
		}
		return strings.Contains(all.String(), "user0@acme.example") && strings.Contains(all.String(), "user99@acme.example")
	})
	for _, m := range h.slack.Messages() {
		if m.Method == "chat.postMessage" && strings.Contains(m.AllText(), "user99@acme.example") {
			t.Fatal("the whole arguments went to the channel")
		}
	}
	if n := len(h.backend.Lookups()); n != 1 {
		t.Fatalf("%d look-ups", n)
	}

	// Without the content permission: refused, nothing shown.
	h.click(t, "U0NOC", "C0APPROVALS", show)
	h.told(t, "U0NOC", "content permission")

	// A look-up whose arguments do not match the card's digest: not a
	// byte of them.
	h.backend.TamperArguments("a-big1", json.RawMessage(`{"to":["evil@attacker.example"]}`))
	h.click(t, "U0LEE", "C0APPROVALS", show)
	h.told(t, "U0LEE", "do not match the digest")
	for _, m := range h.slack.Messages() {
		if strings.Contains(m.AllText(), "evil@attacker.example") {
			t.Fatalf("tampered arguments were shown: %+v", m)
		}
	}
}

func TestShowDetailsOnRestrictedCard(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	h.drain(t)
	card := h.card(t, "a-priv1", "C0APPROVALS", 1)
	if strings.Contains(card.AllText(), h.backend.Digest("a-priv1")) {
		t.Fatalf("a restricted card shows the arguments' digest in the channel: %q", card.AllText())
	}
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionShowDetails))
	// The content is never stored: the details are the arguments looked
	// up at the backend, checked against the digest.
	args := h.told(t, "U0KEVIN", "db.delete_rows\n · approval a-priv1")
	if len(args.Buttons()) != 0 {
		t.Fatal("the details carry buttons")
	}
	if !strings.Contains(args.AllText(), h.backend.Digest("a-priv1")) || !strings.Contains(args.AllText(), "bea.private@example.com") {
		t.Fatalf("arguments %q", args.AllText())
	}
	for _, m := range h.slack.Channel("C0APPROVALS") {
		if strings.Contains(m.AllText(), h.backend.Digest("a-priv1")) {
			t.Fatal("the details reached the channel")
		}
	}
}

func TestStateChangesEditEveryCopyIncludingDMs(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)

	// 15m: the mention in the thread notifies a user and a group.
	h.clock.Advance(15 * time.Minute)
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	var mention slacktest.Message
	for _, m := range h.slack.Channel("C0APPROVALS") {
		if m.ThreadTS == card.TS && strings.Contains(m.Text, "waiting") {
			mention = m
		}
	}
	if !strings.Contains(mention.Text, "<@U0KEVIN>") || !strings.Contains(mention.Text, "<!subteam^S0ONCALL>") {
		t.Fatalf("escalation reply %q", mention.Text)
	}

	// 1h: a DM to lee with working buttons.
	h.clock.Advance(45 * time.Minute)
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	dm := h.card(t, "a-merge1", "DU0LEE", 1)
	approve := button(t, dm, templates.ActionApprove)

	h.click(t, "U0LEE", "DU0LEE", approve)
	// The DM's copy, the one clicked, changes at once through the click.
	h.replaced(t, "DU0LEE", dm.TS, "Recorded: user:lee's approval is being sent to the job backend…")
	h.drain(t)
	for _, ch := range []string{"C0APPROVALS", "DU0LEE"} {
		if text := h.card(t, "a-merge1", ch, 1).AllText(); !strings.Contains(text, "Approved by user:lee") {
			t.Errorf("card in %s not edited: %q", ch, text)
		}
	}
	// The channel's copy, not clicked, is edited with chat.update; the
	// DM's is replaced through the click as well.
	if r := h.replacements("C0APPROVALS", card.TS); len(r) != 0 {
		t.Errorf("the channel's copy was replaced through lee's click: %+v", r)
	}
	updated := map[string]bool{}
	for _, m := range h.slack.MessagesBy("chat.update") {
		updated[m.Channel+" "+m.TS] = strings.Contains(m.AllText(), "Approved by user:lee")
	}
	if !updated["C0APPROVALS "+card.TS] {
		t.Errorf("the channel's copy was not edited with chat.update: %v", updated)
	}
	h.replaced(t, "DU0LEE", dm.TS, "Approved by user:lee")
	h.told(t, "U0LEE", "Recorded: your approval reached the job backend.")
	h.notTold(t, "Sending your approval")
}

func TestAuditNotice(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "auto.json")
	h.drain(t)
	msgs := h.slack.Channel("C0AUDIT")
	if len(msgs) != 1 || !strings.Contains(msgs[0].Text, "Ran unattended") || strings.Contains(msgs[0].Text, "\n") {
		t.Fatalf("audit channel %+v", msgs)
	}
}

// modalBlock is a modal's block as the tests read it.
type modalBlock struct {
	Type     string `json:"type"`
	BlockID  string `json:"block_id"`
	Optional bool   `json:"optional"`
	Element  struct {
		Type      string `json:"type"`
		ActionID  string `json:"action_id"`
		MaxLength int    `json:"max_length"`
	} `json:"element"`
}

// modalInput is the last block of the modal v: its text input.
func modalInput(t *testing.T, v slacktest.View) modalBlock {
	t.Helper()
	var view struct {
		Blocks []modalBlock `json:"blocks"`
	}
	if err := json.Unmarshal(v.Raw, &view); err != nil || len(view.Blocks) == 0 {
		t.Fatalf("view %s: %v", v.Raw, err)
	}
	return view.Blocks[len(view.Blocks)-1]
}

// submitModal submits the modal v as user, with text in its input in,
// as Slack posts a view_submission, and returns the bot's answer.
func (h *harness) submitModal(t *testing.T, user string, v slacktest.View, in modalBlock, text string) (int, string) {
	t.Helper()
	submission := map[string]any{"type": "view_submission", "user": map[string]any{"id": user},
		"view": map[string]any{"id": "V1", "type": "modal", "callback_id": v.CallbackID, "private_metadata": v.PrivateMetadata,
			"state": map[string]any{"values": map[string]any{in.BlockID: map[string]any{in.Element.ActionID: map[string]any{
				"type": "plain_text_input", "value": text}}}}}}
	return h.send(t, signedRequest{path: "/slack/interactions", body: interaction(submission)})
}
