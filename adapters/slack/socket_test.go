package slack_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/templates"

	"approvalsbot/internal/inprocess"
)

// TestSocketModeFeedsTheSameHandler runs slack-go's Socket Mode client
// against the fake's WebSocket (apps.connections.open answers its ws://
// URL): a click, the deny dialog's submission and a slash command arrive
// as envelopes, each is acked within 3 s (a click only once it is
// recorded), and the work follows as over HTTP.
func TestSocketModeFeedsTheSameHandler(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{socket: true})
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", "C0APPROVALS", 1)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- h.adapter.Run(ctx) }()
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	defer wcancel()
	if err := h.slack.WaitSocket(wctx); err != nil {
		t.Fatal(err)
	}

	env, err := h.slack.SendInteractive(h.clickPayload("U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionApprove)))
	if err != nil {
		t.Fatal(err)
	}
	ack, err := h.slack.WaitAck(wctx, env)
	if err != nil {
		t.Fatal(err)
	}
	if ack.After > 3*time.Second || (len(ack.Payload) > 0 && string(ack.Payload) != "null") {
		t.Fatalf("ack %+v: want a bare ack within 3 s", ack)
	}
	if !h.committed(t, "a-merge1") {
		t.Fatal("the click was acked before its approval was recorded")
	}
	h.replaced(t, "C0APPROVALS", card.TS, "Recorded: user:kevin's approval is being sent to the job backend…")
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 || got[0].Request.Actor != "user:kevin" || got[0].Request.Decision != "approve" {
		t.Fatalf("decisions %+v", got)
	}
	h.replaced(t, "C0APPROVALS", card.TS, "Approved by user:kevin")
	h.told(t, "U0KEVIN", "Recorded: your approval reached the job backend.")
	h.notTold(t, "Sending your approval")

	// A view_submission's ack carries the response: a forged dialog is
	// answered in the dialog.
	env, err = h.slack.SendInteractive(map[string]any{"type": "view_submission", "user": map[string]any{"id": "U0KEVIN"},
		"view": map[string]any{"id": "V9", "type": "modal", "callback_id": "ab1-deny", "private_metadata": `{"a":"nonsense"}`}})
	if err != nil {
		t.Fatal(err)
	}
	if ack, err = h.slack.WaitAck(wctx, env); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(ack.Payload), `"response_action":"errors"`) {
		t.Fatalf("ack payload %s", ack.Payload)
	}

	env, err = h.slack.SendSlashCommand(url.Values{"command": {"/approvals"}, "text": {"ladder"}, "user_id": {"U0LEE"},
		"channel_id": {"C0APPROVALS"}, "response_url": {h.slack.ResponseURL("C0APPROVALS", "U0LEE")}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.slack.WaitAck(wctx, env); err != nil {
		t.Fatal(err)
	}
	h.told(t, "U0LEE", "ladder `default`")

	cancel()
	select {
	case err := <-ran:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
}

func TestSocketModeRefusedAppTokenEndsRun(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{socket: true, slack: slacktest.Options{AppToken: "xapp-another"}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := h.adapter.Run(ctx)
	if err == nil || !strings.Contains(err.Error(), "invalid_auth") || strings.Contains(err.Error(), appToken) {
		t.Fatalf("Run: %v, want invalid_auth without the token", err)
	}
}

// TestRunWithoutAppTokenWaitsForContext: without an app token, Run only
// waits for its context, calling nothing (Socket Mode would start with
// apps.connections.open). Under testing/synctest, once Run is durably
// blocked it has gone as far as it will before its context ends.
func TestRunWithoutAppTokenWaitsForContext(t *testing.T) {
	h := newHarness(t)
	synctest.Test(t, func(t *testing.T) {
		calls := &inprocess.NoCalls{}
		o := h.opts
		o.HTTPClient = &http.Client{Transport: calls}
		surface, err := slackad.NewSurface(o)
		if err != nil {
			t.Fatal(err)
		}
		ad, err := slackad.New(surface, h.svc)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- ad.Run(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Run returned before its context ended: %v", err)
		default:
		}
		if n := calls.Calls(); n != 0 {
			t.Fatalf("Run made %d calls without an app token", n)
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}
