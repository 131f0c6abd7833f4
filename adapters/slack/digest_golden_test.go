package slack

import (
	"encoding/json"
	"os"
	"testing"

	"approvalsbot/internal/golden"
	"approvalsbot/threads"
)

// TestDigestGolden renders the digest that package threads' golden
// (threads/testdata/digest/acme.txt) holds as Slack posts it: each of its
// lines kept, every value from a request on its one line (go test
// ./adapters/slack -update rewrites it; rewrite threads' first).
func TestDigestGolden(t *testing.T) {
	text, err := os.ReadFile("../../threads/testdata/digest/acme.txt")
	if err != nil {
		t.Fatal(err)
	}
	msg := noticeMessage(threads.NoticeRequest{Target: "slack:C0APPROVALS", Tenant: "acme", Text: string(text), Lines: true})
	b, err := json.MarshalIndent(msg, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/digest/acme.slack.json", string(b)+"\n", *update)
	// An audit notice stays on one line whatever its text holds.
	if one := noticeMessage(threads.NoticeRequest{Text: string(text)}); one.Text != oneLine(one.Text) {
		t.Errorf("a notice of lines not marked as the bot's kept them: %q", one.Text)
	}
}
