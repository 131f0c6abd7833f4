package templates

import (
	"testing"

	"github.com/slack-go/slack"
)

// TestSlackMsgOptions: the options carry the blocks and the fallback text
// as rendered (already escaped, so slack-go must not escape again).
func TestSlackMsgOptions(t *testing.T) {
	r := newRenderer(t)
	m := r.Slack(cardIn(t, loadApproval(t, "merge.json"), "pending"))
	_, form, err := slack.UnsafeApplyMsgOptions("xoxb-test", "C1", "https://slack.invalid/api/", m.MsgOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	if form.Get("text") != m.Text || form.Get("unfurl_links") != "false" || form.Get("unfurl_media") != "false" {
		t.Errorf("form %v", form)
	}
	if n := len(m.MsgOptions()); n != 4 {
		t.Errorf("%d options, want text, two unfurl settings and blocks", n)
	}
}

// TestConcurrentUse: one Renderer serves every worker at once.
func TestConcurrentUse(t *testing.T) {
	r := newRenderer(t)
	c := cardIn(t, loadApproval(t, "mail.json"), "pending")
	want := r.Text(c)
	done := make(chan string)
	for range 8 {
		go func() {
			_ = r.Slack(c)
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
