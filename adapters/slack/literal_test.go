package slack_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// hostileTexts are texts Slack's mrkdwn would turn into formatting, a
// mention or a link.
var hostileTexts = []string{
	"*Approved by user:ada*", "_x_", "~x~", "`x`", "<!here>", "@here", "<https://evil.example|click>",
}

// literalOnly checks blocks as Slack received them: every text holding
// hostile is literal (plain_text, a rich_text run or a link's label),
// every mrkdwn object is verbatim and holds none of it; it returns how
// many texts hold it.
func literalOnly(t *testing.T, what string, blocks json.RawMessage, hostile string) int {
	t.Helper()
	var v any
	if err := json.Unmarshal(blocks, &v); err != nil {
		t.Fatalf("%s: blocks %s: %v", what, blocks, err)
	}
	found := 0
	slackad.EachObject(v, func(x map[string]any) {
		typ, _ := x["type"].(string)
		if s, ok := x["text"].(string); ok {
			if typ == "mrkdwn" && x["verbatim"] != true {
				t.Errorf("%s: mrkdwn %q is not verbatim", what, s)
			}
			if strings.Contains(s, hostile) {
				found++
				if typ != "plain_text" && typ != "text" && typ != "link" {
					t.Errorf("%s: %q shown in a %s object: %q", what, hostile, typ, s)
				}
			}
		}
	})
	return found
}

// TestUntrustedTextIsLiteralInEveryAnswer sends hostile text through
// every path of the adapter that shows the backend's, the agent's or a
// person's words outside a card: Show all arguments (the function and
// the arguments), the deny dialog's question, /approvals' list, an
// audit notice and a private answer. Slack (the fake) receives it only
// as literal text, and the notification text escaped.
func TestUntrustedTextIsLiteralInEveryAnswer(t *testing.T) {
	for _, hostile := range hostileTexts {
		t.Run(hostile, func(t *testing.T) {
			h := newHarness(t)
			function := "fn " + hostile
			args := json.RawMessage(`{"method":"squash","note":` + mustJSON(t, hostile) + `,"pr":1234,"repo":"acme/api"}`)
			digest, err := approval.Digest(args)
			if err != nil {
				t.Fatal(err)
			}
			h.ingestWith(t, "merge.json", func(ev map[string]any) {
				call := ev["data"].(map[string]any)["call"].(map[string]any)
				call["function"], call["arguments"], call["args_sha256"] = function, args, digest
			})
			h.backend.AddApproval("a-merge1", 1, args, false)
			h.backend.SetFunction("a-merge1", function)
			h.drain(t)
			card := h.card(t, "a-merge1", "C0APPROVALS", 1)
			ctx := context.Background()

			checkMessage := func(what string, want int, pick func() (string, json.RawMessage, bool)) {
				t.Helper()
				var text string
				var blocks json.RawMessage
				threadstest.Eventually(t, what, func() bool {
					var ok bool
					text, blocks, ok = pick()
					return ok
				})
				if got := literalOnly(t, what, blocks, hostile); got < want {
					t.Errorf("%s: %q shown %d times, want at least %d: %s", what, hostile, got, want, blocks)
				}
				if strings.ContainsAny(text, "<>") {
					t.Errorf("%s: notification text %q is not escaped", what, text)
				}
			}
			toKevin := func(has string) func() (string, json.RawMessage, bool) {
				return func() (string, json.RawMessage, bool) {
					for _, m := range h.slack.Messages() {
						if m.User == "U0KEVIN" && !m.ReplaceOriginal && strings.Contains(m.AllText(), has) {
							return m.Text, m.Blocks, true
						}
					}
					return "", nil, false
				}
			}

			// Show all arguments: the function in its heading, the
			// arguments in their box.
			show := templates.EncodeAction(templates.Action{Kind: templates.ActionShowArgs, ApprovalID: "a-merge1", Revision: 1})
			h.click(t, "U0KEVIN", "C0APPROVALS", show)
			checkMessage("Show all arguments", 1, toKevin("only you see this"))

			// The deny dialog names the function.
			h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionDeny))
			checkMessage("deny dialog", 1, func() (string, json.RawMessage, bool) {
				for _, v := range h.slack.Views() {
					var view struct {
						Blocks json.RawMessage `json:"blocks"`
					}
					if err := json.Unmarshal(v.Raw, &view); err == nil && strings.Contains(string(view.Blocks), "Deny ") {
						return "", view.Blocks, true
					}
				}
				return "", nil, false
			})

			// /approvals lists the function, from the store.
			h.command(t, "U0KEVIN", "C0APPROVALS", "")
			checkMessage("/approvals", 1, toKevin("wait for a decision"))

			// An audit notice and a private answer carry the backend's or
			// a person's words.
			if err := h.adapter.Notice(ctx, threads.NoticeRequest{Target: "slack:C0AUDIT", Tenant: "acme", Text: "notice " + hostile}); err != nil {
				t.Fatal(err)
			}
			checkMessage("notice", 1, func() (string, json.RawMessage, bool) {
				for _, m := range h.slack.Channel("C0AUDIT") {
					return m.Text, m.Blocks, true
				}
				return "", nil, false
			})
			if err := h.adapter.Tell(ctx, threads.TellRequest{Tenant: "acme", User: "U0KEVIN", Channel: "C0APPROVALS", Text: "told " + hostile}); err != nil {
				t.Fatal(err)
			}
			checkMessage("private answer", 1, toKevin("told "))
		})
	}
}

func mustJSON(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
