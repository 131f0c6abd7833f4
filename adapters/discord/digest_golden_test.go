package discord

import (
	"encoding/json"
	"os"
	"testing"

	"approvalsbot/internal/golden"
	"approvalsbot/threads"
)

// TestDigestGolden renders the digest that package threads' golden
// (threads/testdata/digest/acme.txt) holds as Discord is sent it,
// mentioning nobody (go test ./adapters/discord -run Golden -update
// rewrites it; rewrite threads' first).
func TestDigestGolden(t *testing.T) {
	text, err := os.ReadFile("../../threads/testdata/digest/acme.txt")
	if err != nil {
		t.Fatal(err)
	}
	msgs := noticeMessages(threads.NoticeRequest{Target: "discord:channel:112233445566778899", Tenant: "acme", Text: string(text), Lines: true})
	b, err := json.MarshalIndent(msgs, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/digest/acme.discord.json", string(b)+"\n", *update)
}
