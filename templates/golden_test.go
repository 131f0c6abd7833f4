package templates_test

import (
	"flag"
	"testing"

	"approvalsbot/templates/templatestest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// TestGolden renders every golden case (templatestest.Golden: a card per
// approval fixture and state, a thread reply per other event, and the
// cases no fixture carries) as email and text and compares with the files
// under testdata/golden (go test ./templates -update rewrites them). The
// chat adapters' TestGolden render the same cases.
func TestGolden(t *testing.T) {
	r := newRenderer(t)
	templatestest.RunGolden(t, *update, func(t *testing.T, g templatestest.GoldenCase) map[string]string {
		if g.Thread != nil {
			return map[string]string{".text.txt": r.TextThread(*g.Thread)}
		}
		e := r.Email(*g.Card)
		return map[string]string{
			".email.txt":  "Subject: " + e.Subject + "\n\n" + e.Text,
			".email.html": e.HTML,
			".text.txt":   r.Text(*g.Card),
		}
	})
}
