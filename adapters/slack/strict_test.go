package slack_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/say"
	"approvalsbot/templates"
)

// withKeyFirst is payload with key:value added in front of its own
// copy of key: encoding/json reads the last copy, the payload's own.
func withKeyFirst(t *testing.T, payload map[string]any, key string, value any) string {
	t.Helper()
	own, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	forged, err := json.Marshal(map[string]any{key: value})
	if err != nil {
		t.Fatal(err)
	}
	return string(forged[:len(forged)-1]) + "," + string(own[1:])
}

// nothingRecorded checks, once every piece of work the adapter started
// has ended, that the click left no trace: no decision in flight or
// sent, the card as it was, nobody answered.
func nothingRecorded(t *testing.T, h *harness, card string) {
	t.Helper()
	h.adapter.Close()
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 || h.committed(t, "a-merge1") {
		t.Fatalf("%d decisions reached the backend", n)
	}
	h.untouched(t, "C0APPROVALS", card)
	for _, m := range h.slack.Messages() {
		if m.User != "" {
			t.Fatalf("%s was answered: %q", m.User, m.AllText())
		}
	}
}

// TestInteractionWithAKeyTwiceIsRefused: a correctly signed click whose
// payload holds "actions" twice, or as "Actions" beside "actions" (a
// forged Approve first, the real Deny after, which encoding/json would
// read), is refused with 400 before it is read, and nothing happens.
func TestInteractionWithAKeyTwiceIsRefused(t *testing.T) {
	for key, want := range map[string]string{"actions": "holds a key twice", "Actions": "differ only in letter case"} {
		t.Run(key, func(t *testing.T) {
			h := newHarness(t)
			h.ingest(t, "merge.json")
			h.drain(t)
			card := h.card(t, "a-merge1", "C0APPROVALS", 1)
			approve := button(t, card, templates.ActionApprove)
			p := h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionDeny))
			forged := []any{map[string]any{"type": "button", "block_id": "b1", "action_id": approve, "value": approve}}
			body := []byte(url.Values{"payload": {withKeyFirst(t, p, key, forged)}}.Encode())
			status, answer := h.send(t, signedRequest{path: "/slack/interactions", body: body})
			if status != http.StatusBadRequest || !strings.Contains(answer, want) {
				t.Fatalf("answered %d %q, want 400 saying it %s", status, answer, want)
			}
			if n := len(h.slack.Views()); n != 0 {
				t.Fatalf("%d dialogs opened", n)
			}
			nothingRecorded(t, h, card.TS)
		})
	}
}

// TestDenyDialogWithMetadataKeyTwiceIsRefused: a signed submission of
// the deny dialog whose private_metadata names the action twice, or in
// another letter case, is answered in the dialog and records nothing.
func TestDenyDialogWithMetadataKeyTwiceIsRefused(t *testing.T) {
	for name, meta := range map[string]func(deny, other, ru string) string{
		"twice": func(deny, other, ru string) string {
			return `{"a":"` + other + `","a":"` + deny + `","c":"C0APPROVALS","r":"` + ru + `"}`
		},
		"other case": func(deny, _, ru string) string {
			return `{"A":"` + deny + `","c":"C0APPROVALS","r":"` + ru + `"}`
		},
	} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t)
			h.ingest(t, "merge.json")
			h.drain(t)
			card := h.card(t, "a-merge1", "C0APPROVALS", 1)
			deny := button(t, card, templates.ActionDeny)
			ru := h.slack.ResponseURLFor("C0APPROVALS", "U0KEVIN", card.TS)
			body := interaction(map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0KEVIN"},
				"view": map[string]any{"id": "V1", "type": "modal", "callback_id": "ab1-deny",
					"private_metadata": meta(deny, strings.Replace(deny, "|deny|", "|show|", 1), ru)}})
			status, answer := h.send(t, signedRequest{path: "/slack/interactions", body: body})
			if errs := errorsView(t, answer); status != http.StatusOK || errs["reason"] != say.UnknownDialog.Text() {
				t.Fatalf("submission answered %d %q, want the errors view %q", status, answer, say.UnknownDialog.Text())
			}
			nothingRecorded(t, h, card.TS)
		})
	}
}

// TestSocketInteractionWithAKeyTwiceIsDropped: over Socket Mode the same
// forged click is acked (so Slack does not send it again), logged and
// dropped.
func TestSocketInteractionWithAKeyTwiceIsDropped(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{socket: true})
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	approve := button(t, card, templates.ActionApprove)
	p := h.clickPayload("U0KEVIN", "C0APPROVALS", approve)
	forged := []any{map[string]any{"type": "button", "block_id": "b1", "action_id": approve, "value": approve}}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- h.adapter.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := h.slack.WaitSocket(wctx); err != nil {
		t.Fatal(err)
	}
	env, err := h.slack.SendInteractive(json.RawMessage(withKeyFirst(t, p, "actions", forged)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.slack.WaitAck(wctx, env); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-ran; err != nil { // Run has closed the adapter: its work has ended
		t.Fatal(err)
	}
	if !strings.Contains(h.logs.String(), "holds a key twice") {
		t.Fatalf("the drop was not logged:\n%s", h.logs.String())
	}
	nothingRecorded(t, h, card.TS)
}

// TestReplayInAnotherCaseOrToAnotherReplicaIsRefused: a captured click
// sent again with its signature's hex upper-cased, or exactly as it was
// to another replica on the same store, is refused; the one decision
// recorded is the first click's.
func TestReplayInAnotherCaseOrToAnotherReplicaIsRefused(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	body := interaction(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)))
	ts := time.Now().Unix()
	sig := sign(signingSecret, ts, body)
	if status, _ := h.send(t, signedRequest{path: "/slack/interactions", body: body, ts: ts, sig: sig}); status != http.StatusOK {
		t.Fatalf("the click answered %d", status)
	}
	upper := "v0=" + strings.ToUpper(strings.TrimPrefix(sig, "v0="))
	if status, answer := h.send(t, signedRequest{path: "/slack/interactions", body: body, ts: ts, sig: upper}); status != http.StatusUnauthorized || !strings.Contains(answer, "sent before") {
		t.Fatalf("the upper-cased replay answered %d %q, want 401", status, answer)
	}

	// Another replica: its own adapter (and memory), the same store.
	other := inProcessAdapterWith(t, h, h.svc, func(*slackad.Options) {})
	mux := http.NewServeMux()
	other.Routes(mux)
	serve := func(ts int64, sig string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/slack/interactions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("X-Slack-Signature", sig)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if status, answer := serve(ts, sig); status != http.StatusUnauthorized || !strings.Contains(answer, "sent before") {
		t.Fatalf("the replay to another replica answered %d %q, want 401", status, answer)
	}
	// The other replica takes what it has not seen: the same click signed
	// a second later is a new request (threads then refuses a second
	// decision).
	if status, _ := serve(ts+1, sign(signingSecret, ts+1, body)); status != http.StatusOK {
		t.Fatalf("a new request to the other replica answered %d", status)
	}
	other.Close()
	h.adapter.Close()
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Actor != "user:kevin" {
		t.Fatalf("decisions %+v, want the first click's alone", got)
	}
}

// TestFormFieldTwiceIsRefused: a correctly signed request whose form
// holds a field twice (a forged payload first, which url.Values.Get
// reads, the real one after) is refused, an interaction or a command.
func TestFormFieldTwiceIsRefused(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)
	own, err := json.Marshal(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionDeny)))
	if err != nil {
		t.Fatal(err)
	}
	forged, err := json.Marshal(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)))
	if err != nil {
		t.Fatal(err)
	}
	body := []byte("payload=" + url.QueryEscape(string(forged)) + "&payload=" + url.QueryEscape(string(own)))
	status, answer := h.send(t, signedRequest{path: "/slack/interactions", body: body})
	if status != http.StatusBadRequest || !strings.Contains(answer, `"payload" twice`) {
		t.Fatalf("interaction answered %d %q, want 400 naming the field held twice", status, answer)
	}
	cmd := []byte(url.Values{"command": {"/approvals"}, "text": {"list", "ladder"}, "user_id": {"U0KEVIN"},
		"channel_id": {"C0APPROVALS"}, "team_id": {"T0ACME"}}.Encode())
	status, answer = h.send(t, signedRequest{path: "/slack/commands", body: cmd})
	if status != http.StatusBadRequest || !strings.Contains(answer, `"text" twice`) {
		t.Fatalf("command answered %d %q, want 400 naming the field held twice", status, answer)
	}
	nothingRecorded(t, h, card.TS)
}
