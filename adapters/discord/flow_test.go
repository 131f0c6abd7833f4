package discord_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

const approvalTarget = "discord:channel:" + chApproval

func TestCardPostedToChannelWithThread(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	p := h.post(t, "a-merge1", approvalTarget, 1)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	if p.Channel != chApproval || p.Ref != card.ID || p.ThreadRef == "" || card.Thread != p.ThreadRef {
		t.Fatalf("recorded post %+v for message %+v: want channel, message id and its thread", p, card)
	}
	if !strings.Contains(card.Text(), "acme_github.merge") || !strings.Contains(card.Text(), "Waiting for a decision") ||
		len(card.Embeds) != 1 || card.EmbedsDropped {
		t.Fatalf("card %q with %d embeds", card.Text(), len(card.Embeds))
	}
	if am := card.AllowedMentions; am == nil || len(am.Parse) != 0 || len(am.Users) != 0 || len(am.Roles) != 0 {
		t.Fatalf("a card may ping nobody: allowed_mentions %+v", am)
	}
	var kinds []string
	for _, b := range card.Buttons {
		a, err := templates.ParseAction(b.CustomID)
		if err != nil || a.ApprovalID != "a-merge1" || a.Revision != 1 || len(b.CustomID) > 100 {
			t.Fatalf("button %+v: %v", b, err)
		}
		kinds = append(kinds, string(a.Kind))
	}
	if strings.Join(kinds, " ") != "deny approve approve_note look escalate" {
		t.Fatalf("buttons %v, want Deny first on a destructive call, then Approve and Approve with comment…, then the ladder's I'm looking and Escalate now", kinds)
	}
	// Every call carried the bot token, and only the routes the adapter
	// documents were called.
	for _, r := range h.discord.Requests() {
		if r.Auth != "Bot "+botToken || !strings.HasPrefix(r.Path, "/api/v9/") {
			t.Fatalf("request %s %s with Authorization %q", r.Method, r.Path, r.Auth)
		}
	}
	if h.discord.Calls(discordtest.RouteMessageCreate) != 1 || h.discord.Calls(discordtest.RouteThreadStart) != 1 {
		t.Fatalf("requests %+v", h.discord.Requests())
	}
}

func TestApproveClickDecidesAtBackendAndEditsCard(t *testing.T) {
	h := newHarness(t)
	ev := h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)

	// A destructive call's Approve asks for confirmation first (a modal,
	// nothing recorded); the confirmation is recorded, then answered:
	// the clicked card itself changes at once, its buttons gone, the
	// decision on its way.
	res := h.approve(t, kevin, chApproval, button(t, card, templates.ActionApprove), card.ID, "")
	if res.Elapsed > time.Second {
		t.Fatalf("answered after %s, want at once", res.Elapsed)
	}
	if m := h.deciding(t, res, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…"); len(m.Buttons) != 0 {
		t.Fatalf("buttons %+v left on the deciding card", m.Buttons)
	}
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions at the backend before the outbox ran: the click records, the outbox sends", n)
	}
	h.drain(t)

	got := h.backend.Decisions()
	if len(got) != 1 {
		t.Fatalf("backend got %d decisions", len(got))
	}
	d := got[0].Request
	if !got[0].SignatureOK || got[0].Status != 200 || d.Decision != "approve" || d.Actor != "user:kevin" || d.Revision != 1 ||
		d.ArgsSHA256 != ev.Approval.Call.ArgsSHA256 || d.Via.Surface != "discord" || d.Via.User != kevin {
		t.Fatalf("decision %+v", got[0])
	}
	edited := h.card(t, "a-merge1", approvalTarget, 1)
	if !strings.Contains(edited.Text(), "Approved by user:kevin") || len(edited.Buttons) != 0 {
		t.Fatalf("card not edited to approved without buttons: %q %+v", edited.Text(), edited.Buttons)
	}
	// Edited exactly three times: by the click's answer (deciding),
	// through the click's webhook to the outcome, and by the outbox's
	// edit of every copy; nothing twice.
	vias := map[string]int{}
	for _, e := range h.discord.EditsOf(card.ID) {
		vias[e.Via]++
	}
	if edited.Edits != 3 || vias[discordtest.EditUpdate] != 1 || vias[discordtest.EditOriginal] != 1 || vias[discordtest.EditREST] != 1 {
		t.Fatalf("%d edits of the card, by way %v", edited.Edits, vias)
	}
	h.outcome(t, res, card.ID, "Approved by user:kevin", "Recorded: your approval reached the job backend")
	replies := h.discord.Messages(card.Thread)
	if len(replies) != 1 || replies[0].Content == "" {
		t.Fatalf("thread replies %+v", replies)
	}
	if am := replies[0].AllowedMentions; am == nil || len(am.Parse)+len(am.Users)+len(am.Roles) != 0 {
		t.Fatalf("the backend's message may ping nobody: %+v", am)
	}

	// A click from a copy that still shows the buttons (a client that
	// has not redrawn) is refused at once, to that person alone: the
	// call is decided, and the card is left as it is.
	late := h.discord.ClickButton(discordtest.Click{User: lee, Channel: chApproval,
		CustomID: button(t, card, templates.ActionApprove), MessageID: card.ID})
	answeredAtOnce(t, late, "This call was already approved by user:kevin")
	if after := h.card(t, "a-merge1", approvalTarget, 1); after.Edits != edited.Edits || after.Content != edited.Content {
		t.Fatalf("a refused click changed the card: %+v", after)
	}
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 1 {
		t.Fatalf("%d decisions", n)
	}
}

func TestDenyModalSubmitDeniesWithComment(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	cardID, deny := card.ID, button(t, card, templates.ActionDeny)

	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: deny})
	m := res.Response
	if !res.Answered() || m.Type != discordgo.InteractionResponseModal {
		t.Fatalf("Deny answered %+v (%s), want the reason modal", m, res.Problem)
	}
	if m.CustomID != deny || len([]rune(m.Title)) > 45 || !strings.Contains(m.Title, "Deny") {
		t.Fatalf("modal %+v: its custom_id must carry the action and its title fit 45", m)
	}
	if len(m.Inputs) != 1 || m.Inputs[0].Style != discordgo.TextInputParagraph || m.Inputs[0].MaxLength != 1000 || m.Inputs[0].Required ||
		m.Inputs[0].Description != "Your reason goes to the job backend and into the card's thread." {
		t.Fatalf("reason input %+v", m.Inputs)
	}
	if len(h.backend.Decisions()) != 0 {
		t.Fatal("a click on Deny sent a decision before the reason")
	}

	// The submission (on the card whose Deny opened the modal) is
	// recorded, then answered with the card as it now stands.
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: m.CustomID,
		Values: map[string]string{m.Inputs[0].CustomID: "not before the release"}})
	deciding := h.deciding(t, sub, cardID, "Recorded: user:kevin's denial is being sent to the job backend…")
	if len(deciding.Buttons) != 0 || !strings.Contains(plain(deciding.Content), "reason: not before the release") {
		t.Fatalf("deciding card %q with buttons %+v: want the reason shown and no buttons", deciding.Content, deciding.Buttons)
	}
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions at the backend before the outbox ran", n)
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Comment != "not before the release" ||
		got[0].Request.Actor != "user:kevin" || got[0].Request.Revision != 1 {
		t.Fatalf("decisions %+v", got)
	}
	if text := h.card(t, "a-merge1", approvalTarget, 1).Text(); !strings.Contains(plain(text), "Denied by user:kevin: not before the release") {
		t.Fatalf("card %q", text)
	}
	h.outcome(t, sub, cardID, "Denied by user:kevin: not before the release", "Recorded: your denial reached the job backend")

	// A forged submission (an action that decides nothing as the modal's
	// custom_id) is refused at once, and nothing is sent.
	forged := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: "ab1|show_args|a-merge1|1",
		Values: map[string]string{"reason": "x"}})
	answeredAtOnce(t, forged, "not one the bot knows")
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 1 {
		t.Fatalf("%d decisions", n)
	}
}

// TestDenyOnARestrictedCallKeepsTheReasonOffTheCard: the deny modal of
// a content-restricted call says the reason stays off its card and
// thread (not that it goes into the thread); the backend gets the
// reason, and no edit of the card, nor any message there, shows it.
func TestDenyOnARestrictedCallKeepsTheReasonOffTheCard(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	h.drain(t)
	card := h.card(t, "a-priv1", approvalTarget, 1)
	deny := button(t, card, templates.ActionDeny)
	res := h.click(t, kevin, chApproval, deny)
	if r := res.Response; r.Type != discordgo.InteractionResponseModal || len(r.Inputs) != 1 ||
		!strings.Contains(r.Inputs[0].Description, "its card and thread will not show it (this call's content is restricted)") ||
		strings.Contains(r.Inputs[0].Description, "into the card's thread") {
		t.Fatalf("answer %+v (%s), want the reason modal saying the reason stays off the card", r, res.Problem)
	}
	const secret = "ledger 4471 is the one"
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: deny,
		Values: map[string]string{res.Response.Inputs[0].CustomID: secret}})
	h.deciding(t, sub, card.ID, "Recorded: user:kevin's denial is being sent to the job backend…")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Comment != secret {
		t.Fatalf("decisions %+v: want the reason sent to the backend", got)
	}
	edits := h.discord.EditsOf(card.ID)
	if len(edits) < 2 || !strings.Contains(plain(edits[len(edits)-1].Message.Text()), "Denied by user:kevin") {
		t.Fatalf("edits %+v: want the deciding card, then the denial", edits)
	}
	for _, e := range edits {
		if strings.Contains(e.Message.Text(), secret) {
			t.Fatalf("an edit (%s) of the card shows the restricted reason: %q", e.Via, e.Message.Text())
		}
	}
	for _, ch := range []string{chApproval, card.Thread} {
		for _, m := range h.discord.Messages(ch) {
			if strings.Contains(m.Text(), secret) {
				t.Fatalf("a shared message shows the restricted reason: %q", m.Text())
			}
		}
	}
}

func TestDenyByNonMemberIsRefusedWithoutModal(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	res := h.click(t, stranger, chApproval, button(t, card, templates.ActionDeny))
	if res.Response.Type == discordgo.InteractionResponseModal {
		t.Fatal("a modal opened for someone who may not decide")
	}
	answeredAtOnce(t, res, "not a member of tenant acme")
	if m, _ := h.discord.Message(card.ID); m.Edits != 0 || decisionButtons(m.Buttons) != 2 {
		t.Fatalf("a refused Deny changed the card: %+v", m)
	}
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
}

func TestRefusalsAreEphemeralAndNothingIsSent(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.ingest(t, "refund.json")
	h.drain(t)
	merge := h.card(t, "a-merge1", approvalTarget, 1)
	approve := button(t, merge, templates.ActionApprove)
	refund := h.card(t, "a-refund1", "discord:channel:"+chFinance, 1)
	if len(refund.Buttons) != 3 || !strings.HasPrefix(refund.Buttons[0].CustomID, "ab1|deny|") ||
		!strings.HasPrefix(refund.Buttons[1].CustomID, "ab1|look|") || !strings.HasPrefix(refund.Buttons[2].CustomID, "ab1|escalate|") {
		t.Fatalf("a call that needs a typed confirmation offers only Deny to decide, and the ladder's buttons: %+v", refund.Buttons)
	}
	// Every refusal is the answer itself (to the click, or to the
	// destructive call's confirmation for someone who may decide), to the
	// person alone, and no card changes: the one clicked keeps its
	// buttons.
	cases := []struct {
		name, user, channel, customID, want string
	}{
		{"unmapped user", stranger, chApproval, approve, "not a member of tenant acme"},
		{"viewer", vic, chApproval, approve, "viewer, which cannot decide"},
		{"self-approval", ada, chApproval, approve, "forbids deciding your own job's calls"},
		// refund needs a typed confirmation: its card has no Approve; a
		// forged one is refused by threads.
		{"forged approve of a typed confirmation", kevin, chFinance, "ab1|approve|a-refund1|1", "needs a typed confirmation of amount"},
		{"unknown approval", kevin, chApproval, "ab1|approve|a-nope|1", "knows no such card"},
		{"unknown approval on Deny", kevin, chApproval, "ab1|deny|a-nope|1", "knows no such card"},
		{"unknown action", kevin, chApproval, "ab1|launch|a-merge1|1", "not one the bot knows"},
		{"another app's custom_id", kevin, chApproval, "approve_button", "not one the bot knows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := h.approve(t, c.user, c.channel, c.customID, "", "")
			answeredAtOnce(t, res, c.want)
			if n := len(h.discord.Followups(c.user)); n != 0 {
				t.Fatalf("%d follow-ups beside the refusal", n)
			}
		})
	}
	// A forged Approve on the refund card's own message: refused, the card
	// as it was.
	forged := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chFinance, CustomID: "ab1|approve|a-refund1|1",
		MessageID: refund.ID})
	answeredAtOnce(t, forged, "needs a typed confirmation of amount")
	for _, m := range []discordtest.Message{merge, refund} {
		if now, _ := h.discord.Message(m.ID); now.Edits != 0 || len(now.Buttons) != len(m.Buttons) || now.Content != m.Content {
			t.Fatalf("a refused click changed a card: %+v, was %+v", now, m)
		}
	}
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
	if !strings.Contains(h.logs.String(), "click on a button the bot does not know") {
		t.Error("the unknown button was not logged")
	}
}

func TestSimultaneousClicksMakeOneDecision(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	approve := button(t, card, templates.ActionApprove)
	users := []string{kevin, lee}
	// Both confirm a destructive call at once (each confirmation opened
	// from the same card).
	for _, u := range users {
		if res := h.click(t, u, chApproval, approve); res.Response.Type != discordgo.InteractionResponseModal {
			t.Fatalf("%s's Approve: %+v, want the confirmation", u, res.Response)
		}
	}
	results := make([]discordtest.Result, len(users))
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Go(func() {
			results[i] = h.discord.SubmitModal(discordtest.Submit{User: u, Channel: chApproval, CustomID: approve,
				Values: map[string]string{"comment": ""}})
		})
	}
	wg.Wait()
	// One click recorded the decision and updated the card; the other
	// was told, at once and alone, that someone is deciding.
	var sent, told []int
	for i, res := range results {
		if !res.Answered() {
			t.Fatalf("%s's click not answered: %+v", users[i], res)
		}
		switch r := res.Response; {
		case r.Type == discordgo.InteractionResponseUpdateMessage:
			sent = append(sent, i)
		case r.Type == discordgo.InteractionResponseChannelMessageWithSource && r.Ephemeral() &&
			strings.Contains(plain(r.Content), "is deciding this call already"):
			told = append(told, i)
		}
	}
	if len(sent) != 1 || len(told) != 1 {
		t.Fatalf("answers %+v / %+v: want one card update, one told someone is deciding", results[0].Response, results[1].Response)
	}
	winner := map[string]string{kevin: "user:kevin", lee: "user:lee"}[users[sent[0]]]
	h.deciding(t, results[sent[0]], card.ID, "Recorded: "+winner+"'s approval is being sent to the job backend…")
	if n := len(h.discord.EditsOf(card.ID)); n != 1 {
		t.Fatalf("%d edits of the card, want the one update", n)
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Actor != winner {
		t.Fatalf("decisions %+v, want one, by %s", got, winner)
	}
	if n := len(h.discord.AllFollowups()); n != 1 {
		t.Fatalf("%d follow-ups, want the winner's outcome only", n)
	}
}

func TestSupersededCardIsRefused(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	old := h.card(t, "a-merge1", approvalTarget, 1)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	// The old card says superseded and has no buttons; the new one is in
	// its thread, with buttons.
	if text := h.card(t, "a-merge1", approvalTarget, 1).Text(); !strings.Contains(text, "Superseded") {
		t.Fatalf("old card %q", text)
	}
	p := h.post(t, "a-merge1", approvalTarget, 2)
	fresh := h.card(t, "a-merge1", approvalTarget, 2)
	if p.Channel != old.Thread || p.ThreadRef != old.Thread || fresh.ChannelID != old.Thread || len(fresh.Buttons) == 0 {
		t.Fatalf("reasked card %+v at %+v, want it in the thread %s with buttons", fresh, p, old.Thread)
	}
	// The old card's Approve (from a client that has not redrawn) is
	// refused at once; the old card stays as it is.
	superseded, _ := h.discord.Message(old.ID)
	stale := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval,
		CustomID: button(t, old, templates.ActionApprove), MessageID: old.ID})
	answeredAtOnce(t, stale, "superseded")
	if now, _ := h.discord.Message(old.ID); now.Edits != superseded.Edits || now.Content != superseded.Content {
		t.Fatalf("the refused click changed the old card: %+v", now)
	}
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions from a superseded card", n)
	}
	// The new card decides, from inside the thread.
	res := h.approve(t, kevin, old.Thread, button(t, fresh, templates.ActionApprove), fresh.ID, "")
	h.deciding(t, res, fresh.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Revision != 2 {
		t.Fatalf("decisions %+v, want one for revision 2", got)
	}
	h.outcome(t, res, fresh.ID, "Approved by user:kevin", "Recorded: your approval reached the job backend")
}

func TestShowAllArgumentsEphemeral(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "big.json")
	h.drain(t)
	show := button(t, h.card(t, "a-big1", approvalTarget, 1), templates.ActionShowArgs)

	h.click(t, kevin, chApproval, show)
	first := h.told(t, kevin, "Arguments of ")
	if !strings.Contains(plain(first.Text()), "only you see this") || !strings.Contains(first.Text(), h.backend.Digest("a-big1")) {
		t.Fatalf("first part %q", first.Text())
	}
	// Every value of the whole arguments reaches the person, across the
	// messages Discord's 2,000 characters need.
	threadstest.Eventually(t, "every part", func() bool {
		var all strings.Builder
		for _, f := range h.discord.Followups(kevin) {
			all.WriteString(f.Text())
		}
		return strings.Contains(all.String(), "user0@acme.example") && strings.Contains(all.String(), "user99@acme.example")
	})
	parts := h.discord.Followups(kevin)
	if len(parts) < 2 {
		t.Fatalf("%d parts: the arguments should need several messages", len(parts))
	}
	for _, f := range parts {
		if len([]rune(f.Content)) > 2000 || !f.Ephemeral() || strings.Count(f.Content, "```") != 2 {
			t.Fatalf("part of %d characters, ephemeral %v: %q", len([]rune(f.Content)), f.Ephemeral(), f.Content)
		}
	}
	for _, m := range h.discord.Messages(chApproval) {
		if strings.Contains(m.Text(), "user99@acme.example") {
			t.Fatal("the whole arguments went to the channel")
		}
	}
	if n := len(h.backend.Lookups()); n != 1 {
		t.Fatalf("%d look-ups", n)
	}

	// Without the content permission: refused, nothing shown.
	h.click(t, noc, chApproval, show)
	h.told(t, noc, "content permission")

	// A look-up whose arguments do not match the card's digest: an error,
	// and not a byte of them.
	h.backend.TamperArguments("a-big1", json.RawMessage(`{"to":["evil@attacker.example"]}`))
	h.click(t, lee, chApproval, show)
	h.told(t, lee, "do not match the digest")
	for _, f := range h.discord.AllFollowups() {
		if strings.Contains(f.Text(), "evil@attacker.example") {
			t.Fatalf("tampered arguments were shown: %+v", f)
		}
	}
	if n := len(h.discord.Followups(lee)); n != 1 {
		t.Fatalf("%d answers to lee, want the one refusal", n)
	}
}

func TestShowDetailsOnRestrictedCard(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	h.drain(t)
	card := h.card(t, "a-priv1", approvalTarget, 1)
	if strings.Contains(card.Text(), h.backend.Digest("a-priv1")) || strings.Contains(card.Text(), "bea.private@example.com") {
		t.Fatalf("a restricted card shows its content in the channel: %q", card.Text())
	}
	h.click(t, kevin, chApproval, button(t, card, templates.ActionShowDetails))
	// The content is never stored: the details are the arguments looked
	// up at the backend, checked against the digest.
	args := h.told(t, kevin, "Arguments of **db.delete")
	if args.Components != 0 {
		t.Fatalf("details %+v: want no buttons", args)
	}
	if !strings.Contains(args.Text(), h.backend.Digest("a-priv1")) || !strings.Contains(args.Text(), "bea.private@example.com") {
		t.Fatalf("arguments %q", args.Text())
	}
	for _, m := range h.discord.Messages(chApproval) {
		if strings.Contains(m.Text(), "bea.private@example.com") {
			t.Fatal("the details reached the channel")
		}
	}
	// Someone without the content permission sees no details at all.
	h.click(t, noc, chApproval, button(t, card, templates.ActionShowDetails))
	h.told(t, noc, "content permission")
	if n := len(h.discord.Followups(noc)); n != 1 {
		t.Fatalf("%d answers to a member without the content permission", n)
	}
}

func TestEscalationMentionsAndDMWithButtons(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)

	// 15m: the mention in the thread pings exactly a user and a role.
	h.clock.Advance(15 * time.Minute)
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	var mention discordtest.Message
	for _, m := range h.discord.Messages(card.Thread) {
		if strings.Contains(m.Content, "waiting") {
			mention = m
		}
	}
	if !strings.Contains(mention.Content, "<@"+kevin+">") || !strings.Contains(mention.Content, "<@&"+roleOncall+">") {
		t.Fatalf("escalation reply %q", mention.Content)
	}
	am := mention.AllowedMentions
	if am == nil || len(am.Parse) != 0 || strings.Join(am.Users, ",") != kevin || strings.Join(am.Roles, ",") != roleOncall {
		t.Fatalf("allowed_mentions %+v, want exactly the user and the role", am)
	}

	// 1h: a DM to lee with working buttons.
	h.clock.Advance(45 * time.Minute)
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	dmTarget := "discord:user:" + lee
	p := h.post(t, "a-merge1", dmTarget, 1)
	if p.Channel != h.discord.DMChannel(lee) || p.ThreadRef != "" {
		t.Fatalf("DM post %+v, want lee's DM channel %s and no thread", p, h.discord.DMChannel(lee))
	}
	dm := h.card(t, "a-merge1", dmTarget, 1)
	res := h.approve(t, lee, p.Channel, button(t, dm, templates.ActionApprove), dm.ID, "")
	h.deciding(t, res, dm.ID, "Recorded: user:lee's approval is being sent to the job backend…")
	h.drain(t)
	h.outcome(t, res, dm.ID, "Approved by user:lee", "Recorded: your approval reached the job backend")
	for _, target := range []string{approvalTarget, dmTarget} {
		if text := h.card(t, "a-merge1", target, 1).Text(); !strings.Contains(text, "Approved by user:lee") {
			t.Errorf("card at %s not edited: %q", target, text)
		}
	}
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Via.User != lee {
		t.Fatalf("decisions %+v", got)
	}
}

func TestAuditNoticePingsNobody(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "auto.json")
	h.drain(t)
	msgs := h.discord.Messages(chAudit)
	if len(msgs) != 1 || !strings.Contains(msgs[0].Content, "Ran unattended") {
		t.Fatalf("audit channel %+v", msgs)
	}
	if am := msgs[0].AllowedMentions; am == nil || len(am.Parse)+len(am.Users)+len(am.Roles) != 0 {
		t.Fatalf("allowed_mentions %+v", am)
	}
}

func TestTellFallsBackToDMWhenTheTokenLapsed(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	res := h.approve(t, kevin, chApproval, button(t, card, templates.ActionApprove), card.ID, "")
	h.deciding(t, res, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
	// The backend answers after the interaction's 15 minutes: the token
	// no longer edits the clicked card nor takes follow-ups, so the
	// answer goes by DM and the card shows the outcome by the outbox's
	// edit.
	h.skew.Store(int64(16 * time.Minute))
	h.drain(t)
	dm := h.discord.DMChannel(kevin)
	msgs := h.discord.Messages(dm)
	if dm == "" || len(msgs) != 1 || !strings.Contains(msgs[0].Content, "Recorded: your approval reached the job backend") {
		t.Fatalf("DM %s: %+v", dm, msgs)
	}
	if n := len(h.discord.Followups(kevin)); n != 0 {
		t.Fatalf("%d follow-ups on a lapsed token", n)
	}
	refused := 0
	for _, r := range h.discord.Requests() {
		if r.Route == discordtest.RouteOriginalEdit && r.Status == 401 {
			refused++
		}
	}
	if refused != 1 {
		t.Fatalf("%d @original edits refused with 401, want the one tried", refused)
	}
	edited := h.card(t, "a-merge1", approvalTarget, 1)
	var vias []string
	for _, e := range h.discord.EditsOf(card.ID) {
		vias = append(vias, e.Via)
	}
	if !strings.Contains(edited.Text(), "Approved by user:kevin") || len(edited.Buttons) != 0 ||
		strings.Join(vias, " ") != discordtest.EditUpdate+" "+discordtest.EditREST {
		t.Fatalf("card %q with buttons %+v, edited by way of %v: want the outcome by the outbox's edit", edited.Text(), edited.Buttons, vias)
	}
}
