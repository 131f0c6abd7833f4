package templates

import (
	"testing"
)

// TestConcurrentUse: one Renderer serves every worker at once.
func TestConcurrentUse(t *testing.T) {
	r := newRenderer(t)
	c := cardIn(t, loadApproval(t, "mail.json"), "pending")
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
