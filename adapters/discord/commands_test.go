package discord_test

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// TestCommandsAreRegistered: the adapter registers /approvals with its
// three subcommands when it runs (the fake refusing any body the API does
// not take), and RegisterCommands does the same for bot doctor; doctor
// then says so.
func TestCommandsAreRegistered(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{gateway: true})
	threadstest.Eventually(t, "the registration", func() bool { return len(h.discord.Commands()) == 1 })
	var cmd struct {
		Name    string `json:"name"`
		Type    int    `json:"type"`
		Options []struct {
			Name string `json:"name"`
			Type int    `json:"type"`
		} `json:"options"`
		Contexts []int `json:"contexts"`
	}
	if err := json.Unmarshal(h.discord.Commands()[0], &cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.Name != "approvals" || cmd.Type != 1 || len(cmd.Options) != 4 || cmd.Options[0].Name != "list" ||
		cmd.Options[1].Name != "ladder" || cmd.Options[2].Name != "passkey" || cmd.Options[3].Name != "grants" ||
		cmd.Options[0].Type != 1 || cmd.Options[1].Type != 1 || cmd.Options[2].Type != 1 || cmd.Options[3].Type != 1 {
		t.Fatalf("registered %s", h.discord.Commands()[0])
	}
	if err := h.adapter.RegisterCommands(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(h.discord.Commands()); n != 1 || h.discord.Calls(discordtest.RouteCommandsPut) != 2 {
		t.Fatalf("%d commands after %d registrations", n, h.discord.Calls(discordtest.RouteCommandsPut))
	}
	var out strings.Builder
	_ = h.adapter.Doctor(context.Background(), &out)
	if !strings.Contains(out.String(), "commands: /approvals list, /approvals ladder and /approvals passkey are registered") {
		t.Fatalf("doctor says:\n%s", out.String())
	}
}

// command runs /approvals sub and returns what the person was told: the
// first answer must be a deferred ephemeral message, the answer its
// @original edit and follow-ups, all ephemeral.
func (h *harness) command(t *testing.T, user, channel, sub string) string {
	t.Helper()
	res := h.discord.Subcommand(user, channel, "approvals", sub)
	if !res.Answered() || res.Response.Type != discordgo.InteractionResponseDeferredChannelMessageWithSource || !res.Response.Ephemeral() {
		t.Fatalf("/approvals %s answered %+v (%s), want a deferred ephemeral message", sub, res.Response, res.Problem)
	}
	var text string
	threadstest.Eventually(t, "the answer to /approvals "+sub, func() bool {
		for _, r := range h.discord.Requests() {
			if r.Route == discordtest.RouteOriginalEdit && strings.Contains(r.Path, res.Token) && r.Status == 200 {
				var body struct {
					Content string `json:"content"`
				}
				_ = json.Unmarshal(r.Body, &body)
				text = body.Content
				return true
			}
		}
		return false
	})
	h.adapter.Close() // the follow-ups, if any, are sent
	for _, f := range h.discord.AllFollowups() {
		if f.Token == res.Token {
			if !f.Ephemeral() {
				t.Fatalf("a follow-up to /approvals %s is not ephemeral", sub)
			}
			text += "\n\n" + f.Content
		}
	}
	// Read as a person reads it: no markdown.
	return strings.ReplaceAll(plain(text), "**", "")
}

// TestApprovalsListAnswersMembersOnly: /approvals list in a channel a
// tenant posts to lists what waits there, oldest first, each linked to
// its card; to someone who is not the tenant's member it says only that
// members see it; outside the tenant's channels a member sees each of
// their tenants' waiting calls with the channel their card is in.
func TestApprovalsListAnswersMembersOnly(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.ingest(t, "search.json")
	h.ingest(t, "refund.json") // payments.*: its card goes to the finance channel
	h.drain(t)
	merge := h.card(t, "a-merge1", approvalTarget, 1)

	got := h.command(t, kevin, chApproval, "list")
	link := "(https://discord.com/channels/" + guildID + "/" + chApproval + "/" + merge.ID + ")"
	if !strings.Contains(got, "acme: 2 wait for a decision in this channel, oldest first:") ||
		!strings.Contains(got, "[acme_github.merge]"+link) || !strings.Contains(got, "a-search1") ||
		strings.Contains(got, "a-refund1") || !strings.Contains(got, "deadline 2026-11-30 18:00 UTC") {
		t.Fatalf("listing:\n%s", got)
	}

	h2 := newHarness(t)
	h2.ingest(t, "merge.json")
	h2.drain(t)
	if got := h2.command(t, stranger, chApproval, "list"); !strings.Contains(got, "acme: only the tenant's members see") ||
		strings.Contains(got, "a-merge1") || strings.Contains(got, "acme_github.merge") {
		t.Fatalf("a stranger was told:\n%s", got)
	}

	h3 := newHarness(t)
	h3.ingest(t, "merge.json")
	h3.ingest(t, "refund.json")
	h3.drain(t)
	got = h3.command(t, lee, "999999999999999000", "list")
	if !strings.Contains(got, "acme: 2 wait for a decision, oldest first:") || !strings.Contains(got, "in <#"+chApproval+">") ||
		!strings.Contains(got, "in <#"+chFinance+">") {
		t.Fatalf("a member elsewhere was told:\n%s", got)
	}
	h4 := newHarness(t)
	if got := h4.command(t, stranger, "999999999999999000", "list"); !strings.Contains(got, "not a member of any tenant") {
		t.Fatalf("a stranger elsewhere was told:\n%s", got)
	}
}

// TestApprovalsListWordsDeadlinesInTheTenantsZone: a deadline is worded
// in the tenant's zone, with its date when it is not today there.
func TestApprovalsListWordsDeadlinesInTheTenantsZone(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{pinned: true, config: func(y string) string {
		return strings.Replace(y, "  acme:\n", "  acme:\n    zone: Europe/Berlin\n", 1)
	}})
	h.ingest(t, "merge.json")  // the tenant's 24h: tomorrow, 19:00 in Berlin
	h.ingest(t, "refund.json") // payments.*' 2h: today, 21:00 in Berlin
	h.drain(t)
	got := h.command(t, lee, "999999999999999000", "list")
	for _, want := range []string{"a-merge1 · waiting 1s · deadline 2026-11-30 19:00 CET", "a-refund1 · waiting 1s · deadline 21:00 CET"} {
		if !strings.Contains(got, want) {
			t.Errorf("listing lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "UTC") {
		t.Errorf("listing words a time in UTC:\n%s", got)
	}
}

// TestApprovalsLadderAnswersMembersOnly: /approvals ladder shows the
// tenant's ladders as bot check prints them, to members only.
func TestApprovalsLadderAnswersMembersOnly(t *testing.T) {
	h := newHarness(t)
	got := h.command(t, kevin, chApproval, "ladder")
	for _, want := range []string{"acme · ladder default (deadline 24h):", "15m", "mention discord:user:" + kevin,
		"calls of payments.* take ladder default (deadline 2h):", "```"} {
		if !strings.Contains(got, want) {
			t.Fatalf("ladder answer lacks %q:\n%s", want, got)
		}
	}
	h2 := newHarness(t)
	if got := h2.command(t, stranger, chApproval, "ladder"); !strings.Contains(got, "only the tenant's members") ||
		strings.Contains(got, kevin) {
		t.Fatalf("a stranger was told:\n%s", got)
	}
}

// TestApproveWithCommentOpensModalAndApprovesWithIt: Approve with
// comment… opens a modal of a label (no action rows) saying what the call
// does; its submission is recorded, then answered with the card as it
// now stands, the comment on it; the backend gets the comment with the
// approval.
func TestApproveWithCommentOpensModalAndApprovesWithIt(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	note := button(t, card, templates.ActionApproveNote)
	res := h.click(t, kevin, chApproval, note)
	r := res.Response
	if r.Type != discordgo.InteractionResponseModal || r.CustomID != note || len(r.Inputs) != 1 || r.Inputs[0].CustomID != "comment" ||
		r.Inputs[0].Required || r.Inputs[0].MaxLength != 1000 || !strings.Contains(r.Inputs[0].Description, "onto the card") ||
		len(r.Texts) != 1 || !strings.Contains(plain(r.Texts[0]), "acme_github.merge** is DESTRUCTIVE · reaches outside the tenant") {
		t.Fatalf("answer %+v, want the comment modal", r)
	}
	if a, _ := h.store.ApprovalGet(context.Background(), "a-merge1"); len(a.Deciding) != 0 {
		t.Fatal("the modal opened with a decision in flight")
	}
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: note,
		Values: map[string]string{"comment": "fine once CI is green"}})
	m := h.deciding(t, sub, card.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
	if !strings.Contains(plain(m.Content), "comment: fine once CI is green") {
		t.Fatalf("the deciding card lacks the comment: %q", m.Content)
	}
	h.drain(t)
	got := h.backend.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Comment != "fine once CI is green" {
		t.Fatalf("decisions %+v", got)
	}
	// The time is a timestamp each reader sees in their own zone, of the
	// moment the approval was recorded (on the harness's clock).
	text := plain(h.card(t, "a-merge1", approvalTarget, 1).Text())
	when := regexp.MustCompile(`Approved by user:kevin at <t:(\d+):f>: fine once CI is green`).FindStringSubmatch(text)
	if when == nil {
		t.Fatalf("card %q", text)
	}
	if at, _ := strconv.ParseInt(when[1], 10, 64); at < threadstest.FixtureNow.Unix() || at > h.clock.Now().Unix() {
		t.Fatalf("approved at %s, not while the test ran (%s to %s)", time.Unix(at, 0).UTC(), threadstest.FixtureNow, h.clock.Now())
	}

	// A modal of an older release (the comment in an action row) is read
	// the same way.
	h2 := newHarness(t)
	h2.ingest(t, "search.json")
	h2.drain(t)
	c2 := h2.card(t, "a-search1", approvalTarget, 1)
	n2 := button(t, c2, templates.ActionApproveNote)
	h2.click(t, kevin, chApproval, n2)
	old := h2.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: n2, Rows: true,
		Values: map[string]string{"comment": "ok"}})
	h2.deciding(t, old, c2.ID, "Recorded: user:kevin's approval is being sent to the job backend…")
	h2.drain(t)
	if got := h2.backend.Decisions(); len(got) != 1 || got[0].Request.Comment != "ok" {
		t.Fatalf("decisions %+v", got)
	}
}

// TestApproveWithCommentOnARestrictedCall: a member with the content
// permission is first shown the call they approve, to them alone (a
// content holder never approves blind); the modal of that private
// answer's Approve with comment… says the comment stays off the card,
// the backend gets it with the digest, and no shared message shows it.
func TestApproveWithCommentOnARestrictedCall(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "private.json")
	h.drain(t)
	card := h.card(t, "a-priv1", approvalTarget, 1)
	first := h.click(t, kevin, chApproval, button(t, card, templates.ActionApproveNote))
	if first.Response.Type == discordgo.InteractionResponseModal {
		t.Fatal("a content holder's Approve with comment… opened its dialog before the call was shown")
	}
	if args := h.told(t, kevin, "bea.private@example.com"); !strings.Contains(args.Text(), h.backend.Digest("a-priv1")) {
		t.Fatalf("the call shown first: %q", args.Text())
	}
	if f := h.told(t, kevin, "decides the revision shown above"); f.Components == 0 {
		t.Fatalf("the private answer offers no Approve: %+v", f)
	}
	if len(h.backend.Decisions()) != 0 {
		t.Fatal("decided before the call was shown")
	}
	note := templates.EncodeAction(templates.Action{Kind: templates.ActionApproveNoteSeen, ApprovalID: "a-priv1", Revision: 1})
	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: note, Ephemeral: true})
	if !res.Answered() || len(res.Response.Inputs) != 1 || !strings.Contains(res.Response.Inputs[0].Description, "the card will not show it") {
		t.Fatalf("modal %+v", res.Response)
	}
	const secret = "ledger 4471 is the one"
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: note, MessageID: card.ID,
		Values: map[string]string{"comment": secret}})
	if !sub.Answered() || strings.Contains(sub.Body+sub.Response.Content, secret) {
		t.Fatalf("answer %+v", sub.Response)
	}
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Comment != secret || got[0].Request.ArgsSHA256 != h.backend.Digest("a-priv1") {
		t.Fatalf("decisions %+v", got)
	}
	for _, ch := range []string{chApproval, card.Thread} {
		for _, m := range h.discord.Messages(ch) {
			if strings.Contains(m.Text(), secret) {
				t.Fatalf("a shared message shows the restricted comment: %q", m.Text())
			}
		}
	}
	for _, e := range h.discord.EditsOf(card.ID) {
		if strings.Contains(e.Message.Text(), secret) {
			t.Fatalf("an edit of the card shows the restricted comment: %q", e.Message.Text())
		}
	}
}

// fakeEnrolLinks makes a link naming the tenant and member, as
// passkey.Links would with a signed token.
type fakeEnrolLinks struct{}

func (fakeEnrolLinks) EnrolLink(tenant, user string) (string, time.Time) {
	return "http://localhost:8080/passkey/enrol/" + tenant + "." + strings.TrimPrefix(user, "user:"), threadstest.FixtureNow.Add(15 * time.Minute)
}

// /approvals passkey answers at once, to the person alone, with their
// enrolment link for each tenant they are a member of; a stranger, and a
// bot without passkeys, are told why there is none.
func TestCommandPasskey(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{adapter: func(o *discordad.Options) { o.Passkeys = fakeEnrolLinks{} }})
	passkey := func(h *harness, user string) string {
		t.Helper()
		res := h.discord.Subcommand(user, chApproval, "approvals", "passkey")
		if !res.Answered() || res.Response.Type != discordgo.InteractionResponseChannelMessageWithSource || !res.Response.Ephemeral() {
			t.Fatalf("/approvals passkey answered %+v (%s), want an ephemeral message", res.Response, res.Problem)
		}
		return res.Response.Content
	}
	got := passkey(h, kevin)
	if !strings.Contains(got, "**acme** (as user:kevin): <http://localhost:8080/passkey/enrol/acme.kevin> (valid until ") ||
		!strings.Contains(got, "Only you see these links") {
		t.Errorf("the answer: %q", got)
	}
	if got := passkey(h, stranger); !strings.Contains(got, "You are not a member of any tenant") {
		t.Errorf("a stranger: %q", got)
	}
	if got := passkey(newHarness(t), kevin); !strings.Contains(got, "This bot takes no passkeys") {
		t.Errorf("without passkeys: %q", got)
	}
}
