package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

// Four eyes end to end: a tenant requires two people of its finance
// rotation for payments.*; the card on Slack and on Discord shows the
// count as it rises; one person, on two chat accounts, cannot approve
// alone, and someone outside finance is not counted; the second person's
// Approve sends one decision that names both.

const (
	quorumChannel   = "C0APPROVALS"
	quorumKevin     = "U0KEVIN"
	quorumLee       = "U0LEE"
	quorumMax       = "U0MAX"
	quorumDCToken   = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.e2e-bot-token"
	quorumDCApp     = "1100000000000000001"
	quorumDCGuild   = "110000000000000099"
	quorumDCChannel = "112233445566778899"
	quorumDCKevin   = "223344556677889900"
	quorumPayment   = "a-pay1"
)

// quorumBot is a bot whose tenant posts to one Slack and one Discord
// channel, with a stand-in backend that supports approvers.
type quorumBot struct {
	bot  *botProc
	sl   *slacktest.Server
	dc   *discordtest.Server
	fake *backendtest.Fake
	ev   *fixtureEvents
}

func startQuorumBot(t *testing.T) *quorumBot {
	t.Helper()
	dir := t.TempDir()
	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e"})
	sl.AddChannel(quorumChannel, "approvals", true)
	for _, u := range []string{quorumKevin, quorumLee, quorumMax} {
		sl.AddUser(u)
	}
	dc := discordtest.New(t, discordtest.Options{Token: quorumDCToken, ApplicationID: quorumDCApp})
	dc.AddGuild(quorumDCGuild, "acme", discordad.Permissions)
	dc.AddChannel(quorumDCGuild, quorumDCChannel, "approvals")
	dc.AddUser(quorumDCKevin)
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
  features: [approvers]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
  api_url: %q
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: %q
  public_key: "${DISCORD_PUBLIC_KEY}"
  api_url: %q
tenants:
  acme:
    post: [slack:%s, discord:channel:%s]
    members:
      - {user: "user:kevin", role: operator, content: true, slack: %s, discord: %q}
      - {user: "user:lee", role: operator, content: true, slack: %s}
      - {user: "user:max", role: admin, content: true, slack: %s}
    rotations:
      finance:
        members: [user:kevin, user:lee]
        every: 1w
        handoff: "mon 09:00"
        start: 2020-01-06
    tools:
      "payments.*":
        quorum: {approvals: 2, from: [rotation:finance]}
`, filepath.Join(dir, "bot.db"), fake.URL(), sl.APIURL(), quorumDCApp, dc.URL(),
		quorumChannel, quorumDCChannel, quorumKevin, quorumDCKevin, quorumLee, quorumMax)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)
	t.Setenv("DISCORD_BOT_TOKEN", quorumDCToken)
	t.Setenv("DISCORD_PUBLIC_KEY", dc.PublicKeyHex())
	bot := startBot(t, path)
	dc.SetInteractionsURL(bot.base + "/discord/interactions")
	return &quorumBot{bot: bot, sl: sl, dc: dc, fake: fake, ev: eventsNow(t)}
}

// payment is the fixture event name made a payments call: the approval
// a-pay1, its function payments.transfer, nothing else changed. The
// fixture must need no typed confirmation (a call that needs one is
// approved only in the console, quorum or not).
func (q *quorumBot) payment(t *testing.T, name string) []byte {
	t.Helper()
	return q.ev.eventWith(t, name, func(e map[string]any) {
		e["id"] = e["id"].(string) + "-pay"
		data := e["data"].(map[string]any)
		if _, ok := data["confirm"]; ok {
			t.Fatalf("%s asks for a typed confirmation: chat offers only Deny for it", name)
		}
		data["id"] = quorumPayment
		data["call"].(map[string]any)["function"] = "payments.transfer"
	})
}

// send sends an event the bot must accept.
func (q *quorumBot) send(t *testing.T, body []byte) {
	t.Helper()
	if a := q.bot.send(t, body, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
}

// quorumCard is one revision's card: its Slack message's ts and its
// Discord message's id.
type quorumCard struct {
	slackTS   string
	discordID string
}

// waitCard waits for the card of revision rev on both surfaces: in the
// channel, with its thread started, or, for a call asked again, in the
// thread of the card before.
func (q *quorumBot) waitCard(t *testing.T, rev int) quorumCard {
	t.Helper()
	// The card of a waiting call is the one with its Approve button.
	approve := templates.EncodeAction(templates.Action{Kind: templates.ActionApprove, ApprovalID: quorumPayment, Revision: rev})
	var c quorumCard
	deadline := time.Now().Add(20 * time.Second)
	for (c.slackTS == "" || c.discordID == "") && time.Now().Before(deadline) {
		for _, m := range q.sl.Channel(quorumChannel) {
			if strings.Contains(string(m.Blocks), strconv.Quote(approve)) {
				c.slackTS = m.TS
			}
		}
		for _, m := range q.dc.Messages(quorumDCChannel) {
			if m.Thread == "" {
				continue
			}
			for _, in := range append([]discordtest.Message{m}, q.dc.Messages(m.Thread)...) {
				for _, b := range in.Buttons {
					if b.CustomID == approve {
						c.discordID = in.ID
					}
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	if c.slackTS == "" || c.discordID == "" {
		t.Fatalf("no card of revision %d on both surfaces: slack %q, discord %q", rev, c.slackTS, c.discordID)
	}
	return c
}

// copyState is what one copy of a card shows: its status line and its
// quorum line, each time written <t:UNIX>.
type copyState struct{ status, quorum string }

// slackCopy is the card as the Slack channel holds it now.
func (q *quorumBot) slackCopy(t *testing.T, c quorumCard) copyState {
	t.Helper()
	for _, m := range q.sl.Channel(quorumChannel) {
		if m.TS == c.slackTS {
			return stateOf(slackLines(m.Blocks))
		}
	}
	t.Fatalf("the Slack card %s is gone", c.slackTS)
	return copyState{}
}

// discordCopy is the card as the Discord channel holds it now.
func (q *quorumBot) discordCopy(t *testing.T, c quorumCard) copyState {
	t.Helper()
	m, ok := q.dc.Message(c.discordID)
	if !ok {
		t.Fatalf("the Discord card %s is gone", c.discordID)
	}
	text := discordTime.ReplaceAllString(m.Text(), "<t:$1>")
	return stateOf(strings.Split(strings.ReplaceAll(text, "**", ""), "\n"))
}

var (
	discordTime = regexp.MustCompile(`<t:(\d+):[a-zA-Z]>`)
	quorumCount = regexp.MustCompile(`^\d+ of \d+ approvals`)
)

// stateOf picks the status (the first line) and the quorum line out of
// a card's lines.
func stateOf(lines []string) copyState {
	var s copyState
	for _, l := range lines {
		l = strings.TrimSpace(l)
		if s.status == "" && l != "" {
			s.status = l
		}
		if quorumCount.MatchString(l) {
			s.quorum = l
			break
		}
	}
	return s
}

// slackLines is the text of each block of a Slack message, a date as
// <t:UNIX>.
func slackLines(raw json.RawMessage) []string {
	var blocks []any
	_ = json.Unmarshal(raw, &blocks) // a message with no blocks has no lines
	var lines []string
	for _, b := range blocks {
		lines = append(lines, strings.Split(slackRuns(b), "\n")...)
	}
	return lines
}

func slackRuns(v any) string {
	switch x := v.(type) {
	case []any:
		var b strings.Builder
		for _, e := range x {
			b.WriteString(slackRuns(e))
		}
		return b.String()
	case map[string]any:
		if x["type"] == "date" {
			ts, _ := x["timestamp"].(float64)
			return "<t:" + strconv.FormatInt(int64(ts), 10) + ">"
		}
		switch text := x["text"].(type) {
		case string:
			return text
		case map[string]any:
			return slackRuns(text)
		}
		return slackRuns(x["elements"])
	}
	return ""
}

// waitCopies waits until both copies of c show what ok accepts, and
// returns them.
func (q *quorumBot) waitCopies(t *testing.T, c quorumCard, what string, ok func(copyState) bool) (slack, discord copyState) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		slack, discord = q.slackCopy(t, c), q.discordCopy(t, c)
		if ok(slack) && ok(discord) {
			return slack, discord
		}
		if time.Now().After(deadline) {
			t.Fatalf("the copies never showed %s:\nslack   %+v\ndiscord %+v", what, slack, discord)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// clickSlack presses a button of the Slack card as user, through the
// fake's signed interaction, and checks the bot answered within 3 s.
func (q *quorumBot) clickSlack(t *testing.T, c quorumCard, user string, kind templates.ActionKind) {
	t.Helper()
	var blocks json.RawMessage
	for _, m := range q.sl.Channel(quorumChannel) {
		if m.TS == c.slackTS {
			blocks = m.Blocks
		}
	}
	action := buttonAction(t, blocks, kind)
	start := time.Now()
	status, err := postSlackInteraction(http.DefaultClient, q.bot.base, map[string]any{
		"type": "block_actions", "trigger_id": "trig-" + user, "api_app_id": "A0APP",
		"user":         map[string]any{"id": user},
		"channel":      map[string]any{"id": quorumChannel},
		"container":    map[string]any{"type": "message", "channel_id": quorumChannel, "message_ts": c.slackTS},
		"response_url": q.sl.ResponseURLFor(quorumChannel, user, c.slackTS),
		"actions":      []any{map[string]any{"type": "button", "block_id": "b1", "action_id": action, "value": action, "action_ts": c.slackTS}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || time.Since(start) > 3*time.Second {
		t.Fatalf("%s's click was answered %d after %s", user, status, time.Since(start))
	}
}

// privateSlack waits for what the bot told user alone through a
// response_url, containing want.
func (q *quorumBot) privateSlack(t *testing.T, user, want string) {
	t.Helper()
	waitMessage(t, q.sl, "response_url", func(m slacktest.Message) bool {
		return m.User == user && !m.ReplaceOriginal && m.ResponseType == "ephemeral" && strings.Contains(m.Text, want)
	})
}

// noDecision fails when the backend got any decision.
func (q *quorumBot) noDecision(t *testing.T, when string) {
	t.Helper()
	if got := q.fake.Decisions(); len(got) != 0 {
		t.Fatalf("%s: the backend got %d decisions, want none: %+v", when, len(got), got)
	}
}

// unix reads the n-th <t:UNIX> of a line.
func unix(t *testing.T, line string, n int) time.Time {
	t.Helper()
	ms := regexp.MustCompile(`<t:(\d+)>`).FindAllStringSubmatch(line, -1)
	if len(ms) <= n {
		t.Fatalf("no time %d in %q", n, line)
	}
	s, _ := strconv.ParseInt(ms[n][1], 10, 64)
	return time.Unix(s, 0)
}

func TestQuorumEndToEnd(t *testing.T) {
	q := startQuorumBot(t)
	event := q.payment(t, "merge.json")
	q.fake.AddApproval(quorumPayment, 1, readArguments(t, "a-merge1.json"), false)
	q.fake.SetFunction(quorumPayment, "payments.transfer")
	q.send(t, event)
	card := q.waitCard(t, 1)

	// 1. Nobody has approved: both copies say what it needs.
	const none = "0 of 2 approvals; needs 2 from rotation finance"
	q.waitCopies(t, card, "no approvals", func(s copyState) bool { return s.quorum == none })

	// 2. kevin approves on Slack (its confirm dialog is Slack's own, in
	// the client): recorded, shown on both copies, nothing sent.
	before := time.Now().Truncate(time.Second)
	q.clickSlack(t, card, quorumKevin, templates.ActionApprove)
	oneKevin := regexp.MustCompile(`^1 of 2 approvals: user:kevin at <t:\d+>; needs 1 more from rotation finance$`)
	sc, dcc := q.waitCopies(t, card, "kevin's approval", func(s copyState) bool { return oneKevin.MatchString(s.quorum) })
	kevinAt := unix(t, sc.quorum, 0)
	if sc.quorum != dcc.quorum || kevinAt.Before(before) || kevinAt.After(time.Now()) {
		t.Errorf("kevin's approval: slack %q, discord %q, want one time since the click", sc.quorum, dcc.quorum)
	}
	q.noDecision(t, "after kevin's approval")

	// 3. kevin again, on Discord: the same person, counted once. A
	// destructive call's Approve asks in a modal first; whether or not it
	// asks, he is told privately that he approved already.
	approve := templates.EncodeAction(templates.Action{Kind: templates.ActionApprove, ApprovalID: quorumPayment, Revision: 1})
	start := time.Now()
	res := q.dc.ClickButton(discordtest.Click{User: quorumDCKevin, Channel: quorumDCChannel, CustomID: approve, MessageID: card.discordID})
	if res.Status != http.StatusOK || !res.Answered() || time.Since(start) > 3*time.Second {
		t.Fatalf("kevin's Discord click was answered %d %q (%s) after %s", res.Status, res.Body, res.Problem, time.Since(start))
	}
	if res.Response.CustomID == approve && len(res.Response.Inputs) > 0 {
		start = time.Now()
		res = q.dc.SubmitModal(discordtest.Submit{User: quorumDCKevin, Channel: quorumDCChannel, CustomID: approve,
			Values: map[string]string{"comment": ""}})
		if res.Status != http.StatusOK || !res.Answered() || time.Since(start) > 3*time.Second {
			t.Fatalf("kevin's Discord confirmation was answered %d %q (%s) after %s", res.Status, res.Body, res.Problem, time.Since(start))
		}
	}
	if !res.Response.Ephemeral() || !strings.Contains(res.Response.Content, "You approved this call already") {
		t.Fatalf("kevin's second approval was answered %+v, want privately that he approved already", res.Response)
	}
	q.noDecision(t, "after kevin's second approval")
	if sc, dcc := q.slackCopy(t, card), q.discordCopy(t, card); !oneKevin.MatchString(sc.quorum) || dcc.quorum != sc.quorum {
		t.Errorf("after kevin's second approval: slack %q, discord %q, want still 1 of 2", sc.quorum, dcc.quorum)
	}

	// 4. max is no one of finance: refused to him alone, not counted.
	q.clickSlack(t, card, quorumMax, templates.ActionApprove)
	q.privateSlack(t, quorumMax, "yours is not counted: you are not among them")
	q.noDecision(t, "after max's approval")
	if sc := q.slackCopy(t, card); sc.quorum != dcc.quorum {
		t.Errorf("after max's approval the Slack card shows %q, want %q", sc.quorum, dcc.quorum)
	}

	// 5. lee completes the quorum: one decision, naming both approvers.
	q.clickSlack(t, card, quorumLee, templates.ActionApprove)
	wait, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if got := q.fake.WaitDecisions(wait, 1); len(got) != 1 {
		t.Fatalf("the backend got %d decisions after lee's approval", len(got))
	}
	two := regexp.MustCompile(`^2 of 2 approvals: user:kevin at <t:\d+>, user:lee at <t:\d+>$`)
	sc, dcc = q.waitCopies(t, card, "the approval", func(s copyState) bool {
		return strings.HasPrefix(s.status, "Approved by user:lee at ") && two.MatchString(s.quorum)
	})
	if sc.quorum != dcc.quorum || !unix(t, sc.quorum, 0).Equal(kevinAt) {
		t.Errorf("approved: slack %q, discord %q, want kevin at %d on both", sc.quorum, dcc.quorum, kevinAt.Unix())
	}
	got := q.fake.Decisions()
	if len(got) != 1 {
		t.Fatalf("the backend got %d decisions, want 1: %+v", len(got), got)
	}
	d := got[0]
	digest := eventDigest(t, event)
	if !d.SignatureOK || d.Status != http.StatusOK || d.ApprovalID != quorumPayment || d.Request.Decision != "approve" ||
		d.Request.Actor != "user:lee" || d.Request.Revision != 1 || d.Request.ArgsSHA256 != digest ||
		d.Request.Via != (standin.Via{Surface: "slack", User: quorumLee}) {
		t.Fatalf("decision %+v", d)
	}
	want := []standin.Approver{
		{Actor: "user:kevin", Via: standin.Via{Surface: "slack", User: quorumKevin}, ArgsSHA256: digest},
		{Actor: "user:lee", Via: standin.Via{Surface: "slack", User: quorumLee}, ArgsSHA256: digest},
	}
	ats := make([]time.Time, len(d.Request.Approvers))
	for i, a := range d.Request.Approvers {
		at, err := time.Parse(time.RFC3339, a.At)
		if err != nil {
			t.Fatalf("approvers[%d].at %q: %v", i, a.At, err)
		}
		ats[i] = at
		d.Request.Approvers[i].At = ""
	}
	if diff := cmp.Diff(want, d.Request.Approvers); diff != "" {
		t.Fatalf("approvers (-want +got):\n%s", diff)
	}
	// The times sent are those the card shows.
	for i, at := range ats {
		if shown := unix(t, sc.quorum, i); !at.Truncate(time.Second).Equal(shown) {
			t.Errorf("approvers[%d] at %s, the card shows %s", i, at, shown)
		}
	}
	if status, actor := q.fake.Status(quorumPayment); status != "approved" || actor != "user:lee" {
		t.Errorf("the backend holds %s by %s", status, actor)
	}
}

// A reask between two approvals voids the first: the second, on the new
// card, is one of two again, and nothing is sent.
func TestQuorumReaskVoids(t *testing.T) {
	q := startQuorumBot(t)
	q.fake.AddApproval(quorumPayment, 1, readArguments(t, "a-merge1.json"), false)
	q.fake.SetFunction(quorumPayment, "payments.transfer")
	q.send(t, q.payment(t, "merge.json"))
	first := q.waitCard(t, 1)

	q.clickSlack(t, first, quorumKevin, templates.ActionApprove)
	oneKevin := regexp.MustCompile(`^1 of 2 approvals: user:kevin at <t:\d+>; needs 1 more from rotation finance$`)
	q.waitCopies(t, first, "kevin's approval", func(s copyState) bool { return oneKevin.MatchString(s.quorum) })

	q.fake.AddApproval(quorumPayment, 2, readArguments(t, "a-merge1.r2.json"), false)
	q.send(t, q.payment(t, "merge-reasked.json"))
	second := q.waitCard(t, 2)
	const voided = "0 of 2 approvals (the change voided 1 given before); needs 2 from rotation finance"
	q.waitCopies(t, second, "the voided approval", func(s copyState) bool { return s.quorum == voided })

	q.clickSlack(t, second, quorumLee, templates.ActionApprove)
	oneLee := regexp.MustCompile(`^1 of 2 approvals \(the change voided 1 given before\): user:lee at <t:\d+>; needs 1 more from rotation finance$`)
	q.waitCopies(t, second, "lee's approval", func(s copyState) bool { return oneLee.MatchString(s.quorum) })
	q.noDecision(t, "after lee's approval of the new revision")
	if status, _ := q.fake.Status(quorumPayment); status != "pending" {
		t.Errorf("the backend holds %s, want pending", status)
	}
}
