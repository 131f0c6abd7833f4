package approval

import (
	"encoding/json"
	"testing"

	"approvalsbot/internal/costtest"
)

// A signed event's arguments and free text are shaped by whoever steers
// the agent, and every pass the bot makes over them must cost what their
// bytes cost: a redactor once read again from every start, and one event
// of "https://a:" held the store's write lock for 90 s.
// BenchmarkRedactAdversarial shows the cost from 1 KiB to 1 MiB;
// TestRedactionCostPerByteFlat is what CI runs to keep it linear.

// Sizes the cost test compares, and the growth of the cost per byte it
// allows between them: linear stays near 1, quadratic is 16 (the ratio
// of the sizes).
const (
	costSmall    = 64 << 10
	costLarge    = 1 << 20
	costMaxRatio = 4
)

// costPieces are the shapes the cost test repeats: those that were
// quadratic once, and deep JSON (an empty piece), which Project and
// Reveal walk many levels of many times.
var costPieces = []struct{ name, piece string }{
	{"url-password", "https://a:"},
	{"named-value", "a="},
	{"bearer", "Bearer "},
	{"deep-json", ""},
}

// costInput is piece repeated to n bytes, as free text (text) and as the
// one string of an arguments object (args); deep JSON is both.
func costInput(piece string, n int) (text string, args []byte) {
	if piece == "" {
		d := deepJSON(n)
		return string(d), d
	}
	text = repeatTo(piece, n)
	args, err := json.Marshal(map[string]string{"url": text})
	if err != nil {
		panic(err)
	}
	return text, args
}

// costPasses are the passes over call data the cost test times, each
// given its input in the form it takes.
var costPasses = []struct {
	name string
	text bool // the pass reads free text, not arguments
	do   func(text string, args []byte) error
}{
	{"RedactText", true, func(text string, _ []byte) error { _ = RedactText(text); return nil }},
	{"Project", false, func(_ string, args []byte) error { _, err := Project(args); return err }},
	{"Reveal", false, func(_ string, args []byte) error { _, _, err := Reveal(args); return err }},
}

// TestRedactionCostPerByteFlat: RedactText, Project and Reveal cost as
// much per byte on 1 MiB of an adversarial shape as on 64 KiB of it, to
// within costMaxRatio, timed in the same run (costtest.Compare), so that
// a loaded machine does not fail it and a quadratic pass (16×) does.
func TestRedactionCostPerByteFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the cost test times 1 MiB inputs")
	}
	if costtest.Race {
		t.Skip("-race: the race detector slows every pass about tenfold, so the cost test runs only without it (go test ./approval -run CostPerByte)")
	}
	for _, pc := range costPieces {
		for _, pass := range costPasses {
			t.Run(pc.name+"/"+pass.name, func(t *testing.T) {
				var sizes [2]costtest.Input
				for i, n := range []int{costSmall, costLarge} {
					text, args := costInput(pc.piece, n)
					size := len(args)
					if pass.text {
						size = len(text)
					}
					sizes[i] = costtest.Input{Bytes: size, Do: func() error { return pass.do(text, args) }}
				}
				g, err := costtest.Compare(sizes[0], sizes[1], costMaxRatio)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("%d KiB against %d KiB: %v", costSmall>>10, costLarge>>10, g)
				if g.Ratio() > costMaxRatio {
					t.Errorf("%s of %s costs %.2f ns/byte at %d KiB but %.2f at %d KiB (×%.1f, more than ×%d): the pass is not linear in its input",
						pass.name, pc.name, g.Small, costSmall>>10, g.Large, costLarge>>10, g.Ratio(), costMaxRatio)
				}
			})
		}
	}
}
