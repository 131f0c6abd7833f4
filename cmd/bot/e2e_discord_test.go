package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
)

// fixture event → card in the channel → thread → button → decision at the
// backend with the card's actor, revision and digest → card edited.
func TestEndToEndDiscord(t *testing.T) { endToEndDiscord(t, eventsNow(t)) }

func endToEndDiscord(t *testing.T, ev *fixtureEvents) {
	const (
		token   = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.Gx1234.e2e-bot-token"
		appID   = "1100000000000000001"
		guildID = "110000000000000099"
		channel = "112233445566778899"
		kevin   = "223344556677889900"
	)
	dir := t.TempDir()
	dc := discordtest.New(t, discordtest.Options{Token: token, ApplicationID: appID})
	dc.AddGuild(guildID, "acme", discordad.Permissions)
	dc.AddChannel(guildID, channel, "approvals")
	dc.AddUser(kevin)
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	fake.AddApproval("a-merge1", 1, readArguments(t, "a-merge1.json"), false)
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: %q
  public_key: "${DISCORD_PUBLIC_KEY}"
  api_url: %q
tenants:
  acme:
    post: [discord:channel:%s]
    members:
      - {user: "user:kevin", role: operator, content: true, discord: %q}
`, filepath.Join(dir, "bot.db"), fake.URL(), appID, dc.URL(), channel, kevin)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("DISCORD_BOT_TOKEN", token)
	t.Setenv("DISCORD_PUBLIC_KEY", dc.PublicKeyHex())
	bot := startBot(t, path)
	dc.SetInteractionsURL(bot.base + "/discord/interactions")

	merge := ev.event(t, "merge.json")
	if a := bot.send(t, merge, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	var card discordtest.Message
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if ms := dc.Messages(channel); len(ms) > 0 && ms[0].Thread != "" {
			card = ms[0]
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if card.ID == "" {
		t.Fatalf("no card with a thread in the channel: %+v", dc.Messages(channel))
	}
	approve := ""
	for _, b := range card.Buttons {
		if a, err := templates.ParseAction(b.CustomID); err == nil && a.Kind == templates.ActionApprove {
			approve = b.CustomID
		}
	}
	if approve == "" {
		t.Fatalf("no Approve button on %+v", card.Buttons)
	}
	start := time.Now()
	res := dc.ClickButton(discordtest.Click{User: kevin, Channel: channel, CustomID: approve, MessageID: card.ID})
	if res.Status != http.StatusOK || time.Since(start) > 3*time.Second {
		t.Fatalf("the click was answered %d %q after %s", res.Status, res.Body, time.Since(start))
	}
	// Approve on a destructive call asks for confirmation first (a
	// modal): confirming it is the approval.
	if !res.Answered() || res.Response.CustomID != approve || len(res.Response.Inputs) != 1 {
		t.Fatalf("the click was answered %+v (%s), want the destructive call's confirmation", res.Response, res.Problem)
	}
	start = time.Now()
	res = dc.SubmitModal(discordtest.Submit{User: kevin, Channel: channel, CustomID: approve, Values: map[string]string{"comment": ""}})
	if res.Status != http.StatusOK || !res.Answered() || time.Since(start) > 3*time.Second {
		t.Fatalf("the confirmation was answered %d %q (%s) after %s", res.Status, res.Body, res.Problem, time.Since(start))
	}
	wait, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	got := fake.WaitDecisions(wait, 1)
	if len(got) != 1 {
		t.Fatalf("the backend got %d decisions", len(got))
	}
	d := got[0]
	if !d.SignatureOK || d.Status != 200 || d.Request.Decision != "approve" || d.Request.Actor != "user:kevin" ||
		d.Request.Revision != 1 || d.Request.ArgsSHA256 != eventDigest(t, merge) || d.Request.Via.Surface != "discord" {
		t.Fatalf("decision %+v", d)
	}
	for time.Now().Before(deadline) {
		m, _ := dc.Message(card.ID)
		text := m.Content
		for _, e := range m.Embeds {
			text += e.Title + e.Description
		}
		// The click's own answer shows the card being sent at once; the
		// outcome follows once the backend answered.
		if m.Edits > 0 && len(m.Buttons) == 0 && strings.Contains(text, "Approved by user:kevin") {
			// The backend's message follows in the card's thread (a thread
			// reply comes after the edits that change a card's state).
			for len(dc.Messages(card.Thread)) == 0 {
				if time.Now().After(deadline) {
					t.Fatal("nothing was said in the card's thread")
				}
				time.Sleep(20 * time.Millisecond)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	m, _ := dc.Message(card.ID)
	t.Fatalf("the card was not edited to the decision: %+v", m)
}
