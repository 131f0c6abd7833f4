package slack_test

import (
	"net/url"
	"strings"
	"testing"
	"time"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/threads/threadstest"
)

func commandForm(h *harness, user, channel, text string) []byte {
	return []byte(url.Values{"command": {"/approvals"}, "text": {text}, "user_id": {user}, "channel_id": {channel},
		"team_id": {"T0ACME"}, "response_url": {h.slack.ResponseURL(channel, user)}, "trigger_id": {"trig"}}.Encode())
}

func (h *harness) command(t *testing.T, user, channel, text string) {
	t.Helper()
	status, body := h.send(t, signedRequest{path: "/slack/commands", body: commandForm(h, user, channel, text)})
	if status != 200 || body != "" {
		t.Fatalf("/approvals %s answered %d %q", text, status, body)
	}
}

func TestSlashCommandListsWhatWaitsOldestFirst(t *testing.T) {
	h := newHarness(t)
	// merge waits longest: an hour before the others.
	h.ingestWith(t, "merge.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["requested_at"] = "2026-11-29T17:00:00Z"
	})
	h.ingest(t, "big.json")
	h.ingest(t, "refund.json") // payments.*: posted to C0FINANCE
	h.drain(t)
	merge := h.card(t, "a-merge1", "C0APPROVALS", 1)
	refund := h.card(t, "a-refund1", "C0FINANCE", 1)

	h.command(t, "U0KEVIN", "C0APPROVALS", "")
	listing := h.told(t, "U0KEVIN", "wait for a decision in this channel")
	text := listing.AllText()
	link := "https://acme.slack.test/archives/C0APPROVALS/p" + strings.ReplaceAll(merge.TS, ".", "")
	// The function links to its card: a rich_text link, literal text.
	if !strings.Contains(text, "acme\n: 2 wait") || !strings.Contains(string(listing.Blocks), `{"type":"link","url":"`+link+`","text":"acme_github.merge"}`) ||
		!strings.Contains(text, "waiting 1h") || strings.Contains(text, "a-refund1") {
		t.Fatalf("listing %q %s", text, listing.Blocks)
	}
	if strings.Index(text, "a-merge1") > strings.Index(text, "a-big1") {
		t.Fatalf("not oldest first: %q", text)
	}

	// The finance channel sees the calls whose cards are there.
	h.command(t, "U0KEVIN", "C0FINANCE", "")
	listing = h.told(t, "U0KEVIN", ": 1 wait")
	text = listing.AllText()
	if !strings.Contains(text, "a-refund1") || !strings.Contains(string(listing.Blocks), "/archives/C0FINANCE/p"+strings.ReplaceAll(refund.TS, ".", "")) {
		t.Fatalf("finance listing %q", text)
	}

	// In a channel no tenant posts to, a member sees their tenants.
	h.command(t, "U0LEE", "C0RANDOM", "")
	text = h.told(t, "U0LEE", ": 3 wait for a decision, oldest first").AllText()
	for _, id := range []string{"a-merge1", "a-big1", "a-refund1"} {
		if !strings.Contains(text, id) {
			t.Fatalf("member listing lacks %s: %q", id, text)
		}
	}
	h.command(t, "U0STRANGER", "C0RANDOM", "")
	h.told(t, "U0STRANGER", "nothing to show")

	// A tenant with nothing waiting says so to its member.
	h2 := newHarness(t)
	h2.command(t, "U0KEVIN", "C0APPROVALS", "list")
	h2.told(t, "U0KEVIN", "*acme*: nothing waits for a decision in this channel.")
}

// TestSlashCommandListIsListingToMembersOnly: /approvals list is what
// bare /approvals is (Discord's command, and the help, name it); someone
// in a tenant's channel who is not its member, like a member of another
// tenant there, is told only that members see what waits, as on Discord.
func TestSlashCommandListIsListingToMembersOnly(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	for _, text := range []string{"list", "LIST"} {
		h.command(t, "U0KEVIN", "C0APPROVALS", text)
	}
	threadstest.Eventually(t, "both answers", func() bool { return len(h.answersTo("U0KEVIN")) == 2 })
	for _, m := range h.answersTo("U0KEVIN") {
		if text := m.AllText(); !strings.Contains(text, ": 1 wait for a decision in this channel, oldest first:") ||
			!strings.Contains(text, "a-merge1") {
			t.Fatalf("/approvals list answered %q", text)
		}
	}

	for _, text := range []string{"", "list"} {
		h.command(t, "U0STRANGER", "C0APPROVALS", text)
	}
	// quiet has no members at all: in its channel, nobody sees its list.
	h.command(t, "U0KEVIN", "C0QUIET", "")
	h.told(t, "U0KEVIN", "*quiet*: only the tenant's members see its approvals and ladders.")
	threadstest.Eventually(t, "the stranger's answers", func() bool { return len(h.answersTo("U0STRANGER")) == 2 })
	for _, m := range h.answersTo("U0STRANGER") {
		if text := m.AllText(); !strings.Contains(text, "*acme*: only the tenant's members see its approvals and ladders.") ||
			strings.Contains(text, "a-merge1") || strings.Contains(text, "acme_github.merge") {
			t.Fatalf("a non-member was told %q", text)
		}
	}
}

// TestSlashCommandListsDeadlinesInTheTenantsZone: a deadline is worded
// in the tenant's zone, with its date when it is not today there.
func TestSlashCommandListsDeadlinesInTheTenantsZone(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{config: func(y string) string {
		return strings.Replace(y, "  acme:\n", "  acme:\n    zone: Europe/Berlin\n", 1)
	}})
	h.ingest(t, "merge.json")  // the tenant's 24h: tomorrow, 19:00 in Berlin
	h.ingest(t, "refund.json") // payments.*' 2h: today, 21:00 in Berlin
	h.drain(t)
	h.command(t, "U0LEE", "C0RANDOM", "")
	text := h.told(t, "U0LEE", ": 2 wait for a decision, oldest first").AllText()
	for _, want := range []string{"a-merge1 · waiting 1s · deadline 2026-11-30 19:00 CET", "a-refund1 · waiting 1s · deadline 21:00 CET"} {
		if !strings.Contains(text, want) {
			t.Errorf("listing lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "UTC") {
		t.Errorf("listing words a time in UTC:\n%s", text)
	}
}

// answersTo lists the answers to one person (ephemeral response_url
// posts and chat.postEphemeral), in order.
func (h *harness) answersTo(user string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.slack.Messages() {
		if m.User == user && (m.Method == "chat.postEphemeral" || m.Method == "response_url" && !m.ReplaceOriginal) {
			out = append(out, m)
		}
	}
	return out
}

func TestSlashCommandLadderAndHelp(t *testing.T) {
	h := newHarness(t)
	h.command(t, "U0KEVIN", "C0APPROVALS", "ladder")
	text := h.told(t, "U0KEVIN", "ladder `default`").AllText()
	for _, want := range []string{
		"0s post slack:C0APPROVALS",
		"15m mention slack:U0KEVIN slack:S0ONCALL",
		"1h dm slack:U0LEE",
		"24h deadline: denied, nobody answered",
		"calls of `payments.*` take ladder `default` (deadline 2h)",
		"0s post slack:C0FINANCE",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("ladder answer lacks %q:\n%s", want, text)
		}
	}
	h.command(t, "U0KEVIN", "C0APPROVALS", "launch everything")
	h.told(t, "U0KEVIN", "The bot knows no `/approvals launch everything`")
	h.command(t, "U0ADA", "C0APPROVALS", "help")
	help := h.told(t, "U0ADA", "*/approvals ladder* shows").AllText()
	for _, want := range []string{"*/approvals* or */approvals list* lists", "Only a tenant's members see its approvals and ladders."} {
		if !strings.Contains(help, want) {
			t.Errorf("help lacks %q:\n%s", want, help)
		}
	}
	// Someone in the channel who is no member sees no ladder: it names
	// people and addresses.
	h.command(t, "U0STRANGER", "C0APPROVALS", "ladder")
	text = h.told(t, "U0STRANGER", "only the tenant's members see its approvals and ladders").AllText()
	if strings.Contains(text, "slack:U0LEE") {
		t.Fatalf("a non-member saw the ladder:\n%s", text)
	}
}

// fakeEnrolLinks makes a link naming the tenant and member, as
// passkey.Links would with a signed token.
type fakeEnrolLinks struct{}

func (fakeEnrolLinks) EnrolLink(tenant, user string) (string, time.Time) {
	return "http://localhost:8080/passkey/enrol/" + tenant + "." + strings.TrimPrefix(user, "user:"), threadstest.FixtureNow.Add(15 * time.Minute)
}

// /approvals passkey answers the person alone with their enrolment link
// for each tenant they are a member of; a stranger, and a bot without
// passkeys, are told why there is none.
func TestSlashCommandPasskey(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{adapter: func(o *slackad.Options) { o.Passkeys = fakeEnrolLinks{} }})
	h.command(t, "U0KEVIN", "C0APPROVALS", "passkey")
	got := h.told(t, "U0KEVIN", "enrol or remove your passkeys")
	text := got.AllText()
	if !strings.Contains(text, "*acme* (as user:kevin): <http://localhost:8080/passkey/enrol/acme.kevin|enrol or remove your passkeys>") ||
		!strings.Contains(text, "Only you see these links") {
		t.Errorf("the answer: %q", text)
	}
	for _, m := range h.slack.Messages() {
		if m.Method == "chat.postMessage" && strings.Contains(m.AllText(), "/passkey/enrol/") {
			t.Errorf("an enrolment link was posted for all to see: %+v", m)
		}
	}
	h.command(t, "U0STRANGER", "C0APPROVALS", "passkey")
	h.told(t, "U0STRANGER", "You are not a member of any tenant")

	off := newHarness(t)
	off.command(t, "U0KEVIN", "C0APPROVALS", "passkey")
	off.told(t, "U0KEVIN", "This bot takes no passkeys")
	off.command(t, "U0KEVIN", "C0APPROVALS", "help")
	off.told(t, "U0KEVIN", "*/approvals passkey* gives you, and only you, a link")
}
