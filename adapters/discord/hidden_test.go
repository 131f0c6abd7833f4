package discord_test

import (
	"encoding/json"
	"strings"
	"testing"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// unshownIn fails for each invisible character a string of v holds as
// itself.
func unshownIn(t *testing.T, what string, v any) {
	t.Helper()
	switch x := v.(type) {
	case string:
		prev := rune(0)
		for _, r := range x {
			// The templates' own warning sign is written "⚠️": its
			// presentation selector is the bot's, not the call's.
			if r != '\n' && r != '\t' && approval.Invisible(r) && !(r == '\ufe0f' && prev == '⚠') {
				t.Errorf("%s holds U+%04X as is: %q", what, r, x)
			}
			prev = r
		}
	case []any:
		for _, e := range x {
			unshownIn(t, what, e)
		}
	case map[string]any:
		for _, e := range x {
			unshownIn(t, what, e)
		}
	}
}

// TestHiddenCharactersShownOnDiscord: a function name with a zero width
// space reaches Discord nowhere as itself (the card, its thread's name,
// the deny modal, Show all arguments, the list of what waits): each
// shows it as [U+200B] (escaped as markdown where the text is).
func TestHiddenCharactersShownOnDiscord(t *testing.T) {
	const shown = "mail.[U+200B]broadcast"
	h := newHarness(t)
	threadstest.Backed(t, h.backend, threadstest.Ingest(t, h.svc, "big.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["call"].(map[string]any)["function"] = "mail.\u200bbroadcast"
	}))
	h.drain(t)
	card := h.card(t, "a-big1", approvalTarget, 1)

	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: button(t, card, templates.ActionDeny)})
	if !strings.Contains(res.Response.Title, shown) {
		t.Errorf("the modal's title %q does not show the hidden character", res.Response.Title)
	}
	h.click(t, kevin, chApproval, button(t, card, templates.ActionShowArgs))
	if got := h.told(t, kevin, "Arguments of ").Text(); !strings.Contains(plain(got), shown) {
		t.Errorf("Show all arguments does not show the hidden character: %q", got)
	}
	if got := h.command(t, kevin, chApproval, "list"); !strings.Contains(plain(got), shown) {
		t.Errorf("the list does not show the hidden character: %q", got)
	}

	threads := 0
	for _, r := range h.discord.Requests() {
		var v any
		if json.Unmarshal(r.Body, &v) != nil {
			continue
		}
		if m, ok := v.(map[string]any); ok && r.Route == discordtest.RouteThreadStart {
			threads++
			if name, _ := m["name"].(string); !strings.Contains(name, shown) {
				t.Errorf("thread name %q", name)
			}
		}
		unshownIn(t, r.Method+" "+r.Path, v)
	}
	if threads == 0 {
		t.Error("no thread was started")
	}
	unshownIn(t, "the modal's title", res.Response.Title)
}
