package discord

import (
	"flag"
	"testing"

	"approvalsbot/templates/templatestest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders every card and thread reply of package templates'
// golden cases (templatestest.Golden) as Discord sends it and compares
// with the files under testdata/golden (go test ./adapters/discord -run
// Golden -update rewrites them).
func TestGolden(t *testing.T) {
	templatestest.RunChatGolden(t, *update, ".discord.json", RenderCard, RenderThread)
}
