package slack

import (
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/internal/golden"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestTurnGolden renders each turn case as Block Kit and compares it with
// testdata/turn (go test ./adapters/slack -run TurnGolden -update).
func TestTurnGolden(t *testing.T) {
	for _, c := range templatestest.TurnCases(t) {
		tc := templates.BuildTurn(c.Input)
		msg := TurnMessage(tc)
		if len(msg.Blocks) > maxBlocks {
			t.Errorf("%s: %d blocks", c.Name, len(msg.Blocks))
		}
		b, err := templates.MarshalPreview(msg)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "turn", c.Name+".slack.json"), string(b), *update)
	}
}

// TestTurnMessageFitsAtMostRows: the longest turn a card shows, each
// call's arguments as long as a row allows, stays within Slack's limits.
func TestTurnMessageFitsAtMostRows(t *testing.T) {
	c := templatestest.TurnCases(t)[0].Input
	in := templates.TurnInput{Key: c.Key, Members: templates.MaxTurnRows}
	for i := range templates.MaxTurnRows {
		r := c.Rows[i%len(c.Rows)]
		r.Input.Approval = ptr(*r.Input.Approval)
		r.Input.Approval.ID = "t-" + strings.Repeat("x", 50) + string(rune('a'+i))
		in.Rows = append(in.Rows, r)
	}
	msg := TurnMessage(templates.BuildTurn(in))
	if len(msg.Blocks) > maxBlocks {
		t.Fatalf("%d blocks", len(msg.Blocks))
	}
	b, err := templates.MarshalPreview(msg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "Approve all 10") {
		t.Fatalf("no Approve all 10 in %d bytes", len(b))
	}
}

func ptr[T any](v T) *T { return &v }
