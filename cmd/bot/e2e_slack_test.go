package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"
)

const e2eSigningSecret = "e2e-slack-signing-secret"

// fixture event → card in the channel → Approve → decision at the backend
// with the actor, revision and digest of the card → card edited, thread reply.
func TestEndToEndSlack(t *testing.T) { endToEndSlack(t, eventsNow(t)) }

// The same flows with the fixtures written ten years back and ten years
// ahead: nothing in them depends on the fixtures' own dates.
func TestEndToEndOnAnyDate(t *testing.T) {
	for _, years := range []int{-10, 10} {
		t.Run(fmt.Sprintf("%+d years", years), func(t *testing.T) {
			dir := fixturesDated(t, years)
			t.Run("slack", func(t *testing.T) { endToEndSlack(t, eventsNowFrom(t, dir)) })
			t.Run("discord", func(t *testing.T) { endToEndDiscord(t, eventsNowFrom(t, dir)) })
		})
	}
}

func endToEndSlack(t *testing.T, ev *fixtureEvents) {
	dir := t.TempDir()
	sl := slacktest.New(t, slacktest.Options{Token: "xoxb-e2e"})
	sl.AddChannel("C0APPROVALS", "approvals", true)
	sl.AddUser("U0KEVIN")
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}})
	fake.AddApproval("a-merge1", 1, readArguments(t, "a-merge1.json"), false)
	cfg := fmt.Sprintf(`listen: "127.0.0.1:0"
store: {driver: sqlite, dsn: "file:%s"}
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
  api_url: %q
tenants:
  acme:
    post: [slack:C0APPROVALS]
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
`, filepath.Join(dir, "bot.db"), fake.URL(), sl.APIURL())
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-e2e")
	t.Setenv("SLACK_SIGNING_SECRET", e2eSigningSecret)
	bot := startBot(t, path)

	merge := ev.event(t, "merge.json")
	if a := bot.send(t, merge, nil); a.Status != http.StatusAccepted {
		t.Fatalf("event: %+v", a)
	}
	card := waitMessage(t, sl, "chat.postMessage", func(m slacktest.Message) bool { return m.Channel == "C0APPROVALS" && m.ThreadTS == "" })
	approveID := buttonAction(t, card.Blocks, templates.ActionApprove)

	start := time.Now()
	status, err := postSlackInteraction(http.DefaultClient, bot.base, map[string]any{
		"type": "block_actions", "trigger_id": "trig-1", "api_app_id": "A0APP",
		"user":         map[string]any{"id": "U0KEVIN"},
		"channel":      map[string]any{"id": "C0APPROVALS"},
		"container":    map[string]any{"type": "message", "channel_id": "C0APPROVALS", "message_ts": card.TS},
		"response_url": sl.ResponseURL("C0APPROVALS", "U0KEVIN"),
		"actions":      []any{map[string]any{"type": "button", "block_id": "b1", "action_id": approveID, "value": approveID, "action_ts": card.TS}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if status != http.StatusOK || time.Since(start) > 3*time.Second {
		t.Fatalf("the click was answered %d after %s", status, time.Since(start))
	}

	wait, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	got := fake.WaitDecisions(wait, 1)
	if len(got) != 1 {
		t.Fatalf("the backend got %d decisions", len(got))
	}
	d := got[0]
	if !d.SignatureOK || d.Status != 200 || d.Request.Decision != "approve" || d.Request.Actor != "user:kevin" ||
		d.Request.Revision != 1 || d.Request.ArgsSHA256 != eventDigest(t, merge) || d.Request.Via.Surface != "slack" {
		t.Fatalf("decision %+v", d)
	}
	// The card is edited to the outcome (an edit showing the decision
	// being sent may come first, when the click landed while the card's
	// post was being recorded).
	waitMessage(t, sl, "chat.update", func(m slacktest.Message) bool {
		return m.TS == card.TS && strings.Contains(string(m.Blocks)+m.Text, "Approved by user:kevin")
	})
	waitMessage(t, sl, "chat.postMessage", func(m slacktest.Message) bool { return m.ThreadTS == card.TS })
}

// postSlackInteraction signs payload as Slack does (v0, the signing
// secret, now) and posts it to a bot's interactions endpoint, returning
// the status (0 with the error when the bot could not be reached).
func postSlackInteraction(client *http.Client, base string, payload map[string]any) (int, error) {
	status, _, err := postSlackInteractionAnswer(client, base, payload)
	return status, err
}

// postSlackInteractionAnswer is postSlackInteraction with the body of the
// bot's answer (a view_submission's response_action, say).
func postSlackInteractionAnswer(client *http.Client, base string, payload map[string]any) (int, []byte, error) {
	raw, _ := json.Marshal(payload) // plain data
	body := []byte(url.Values{"payload": {string(raw)}}.Encode())
	ts := time.Now().Unix()
	mac := hmac.New(sha256.New, []byte(e2eSigningSecret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	req, err := http.NewRequest(http.MethodPost, base+"/slack/interactions", bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("X-Slack-Signature", "v0="+hex.EncodeToString(mac.Sum(nil)))
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, answer, err
}

// eventDigest is the args_sha256 an approval event carries.
func eventDigest(t *testing.T, body []byte) string {
	t.Helper()
	var ev struct {
		Data struct {
			Call struct {
				ArgsSHA256 string `json:"args_sha256"`
			} `json:"call"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ev); err != nil || ev.Data.Call.ArgsSHA256 == "" {
		t.Fatalf("no args_sha256 in the event: %v", err)
	}
	return ev.Data.Call.ArgsSHA256
}

func waitMessage(t *testing.T, sl *slacktest.Server, method string, ok func(slacktest.Message) bool) slacktest.Message {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		for _, m := range sl.MessagesBy(method) {
			if ok(m) {
				return m
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no %s as wanted; messages: %+v", method, sl.Messages())
	return slacktest.Message{}
}

// buttonAction finds the action_id of the button of one kind in Block Kit JSON.
func buttonAction(t *testing.T, blocks json.RawMessage, kind templates.ActionKind) string {
	t.Helper()
	var bs []struct {
		Elements []struct {
			ActionID string `json:"action_id"`
		} `json:"elements"`
	}
	_ = json.Unmarshal(blocks, &bs)
	for _, b := range bs {
		for _, e := range b.Elements {
			if a, err := templates.ParseAction(e.ActionID); err == nil && a.Kind == kind {
				return e.ActionID
			}
		}
	}
	t.Fatalf("no %s button in %s", kind, blocks)
	return ""
}
