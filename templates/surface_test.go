package templates_test

import (
	"testing"

	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestConcurrentUse: one Renderer serves every worker at once.
func TestConcurrentUse(t *testing.T) {
	r := newRenderer(t)
	c := templatestest.Card(t, templatestest.Approval(t, "mail.json"), "pending")
	want := r.Text(c)
	done := make(chan string)
	for range 8 {
		go func() {
			_, _ = chats.SlackCard(c)
			_ = discordCard(c)
			_ = r.Email(c)
			done <- r.Text(c)
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Error("concurrent renderings differ")
		}
	}
}

// TestZeroCard: a card with nothing in it renders without panicking
// (Slack's: the adapter's TestZeroCard).
func TestZeroCard(t *testing.T) {
	r := newRenderer(t)
	for _, c := range []templates.Card{{}, templates.Build(templates.Input{})} {
		_, _ = chats.SlackCard(c)
		_ = discordCard(c)
		_ = r.Email(c)
		_ = r.Text(c)
	}
}
