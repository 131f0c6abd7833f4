package slack_test

import (
	"encoding/json"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// hiddenFunction is mail.broadcast with a zero width space, and how
// every surface shows it.
const (
	hiddenFunction = "mail.\u200bbroadcast"
	shownFunction  = "mail.[U+200B]broadcast"
)

// unshownIn fails for each invisible character raw JSON holds as itself
// in a string.
func unshownIn(t *testing.T, what string, raw []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			for _, r := range x {
				if r != '\n' && r != '\t' && approval.Invisible(r) {
					t.Errorf("%s holds U+%04X as is: %q", what, r, x)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
}

// TestHiddenCharactersShownOnSlack: a function name with a zero width
// space reaches no Slack message or modal as itself (the card, the deny
// modal, Show all arguments, the list of what waits): each shows it as
// [U+200B].
func TestHiddenCharactersShownOnSlack(t *testing.T) {
	h := newHarness(t)
	h.ingestWith(t, "big.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["call"].(map[string]any)["function"] = hiddenFunction
	})
	h.drain(t)
	card := h.card(t, "a-big1", "C0APPROVALS", 1)

	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionDeny))
	threadstest.Eventually(t, "the deny modal", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	if !strings.Contains(string(v.Raw), shownFunction) {
		t.Errorf("the modal does not show the hidden character: %s", v.Raw)
	}
	unshownIn(t, "the deny modal", v.Raw)

	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionShowArgs))
	if shown := h.told(t, "U0KEVIN", "Arguments of "); !strings.Contains(shown.AllText(), shownFunction) {
		t.Errorf("Show all arguments does not show the hidden character: %q", shown.AllText())
	}
	h.command(t, "U0KEVIN", "C0APPROVALS", "")
	if listing := h.told(t, "U0KEVIN", "wait for a decision"); !strings.Contains(listing.AllText(), shownFunction) {
		t.Errorf("the list does not show the hidden character: %q", listing.AllText())
	}

	for _, m := range h.slack.Messages() {
		if strings.ContainsRune(m.Text, '\u200b') {
			t.Errorf("%s to %s%s: text %q holds U+200B", m.Method, m.Channel, m.User, m.Text)
		}
		if m.Blocks != nil {
			unshownIn(t, m.Method+" to "+m.Channel+m.User, m.Blocks)
		}
	}
}
