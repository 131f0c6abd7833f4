package slack

import (
	"flag"
	"testing"

	"approvalsbot/templates/templatestest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders every golden case (templatestest.Golden: a card per
// approval fixture and state, a thread reply per other event, and the
// cases no fixture carries) as Block Kit and compares with the files under
// testdata/golden (go test ./adapters/slack -update rewrites them).
func TestGolden(t *testing.T) {
	templatestest.RunChatGolden(t, *update, ".slack.json", CardMessage, ThreadReply)
}
