package discord

import (
	"path/filepath"
	"testing"

	"approvalsbot/internal/golden"
	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestTurnGolden renders each turn case as Discord sends it and compares
// it with testdata/turn (go test ./adapters/discord -run TurnGolden -update).
func TestTurnGolden(t *testing.T) {
	for _, c := range templatestest.TurnCases(t) {
		msg := RenderTurn(templates.BuildTurn(c.Input))
		checkTurnLimits(t, c.Name, msg)
		b, err := templates.MarshalPreview(msg)
		if err != nil {
			t.Fatal(err)
		}
		golden.Check(t, filepath.Join("testdata", "turn", c.Name+".discord.json"), string(b), *update)
	}
}

// TestTurnFitsAtMostRows: the longest turn a card shows stays within
// Discord's limits, every call's two buttons and the turn's two on it.
func TestTurnFitsAtMostRows(t *testing.T) {
	c := templatestest.TurnCases(t)[0].Input
	in := templates.TurnInput{Key: c.Key, Members: templates.MaxTurnRows}
	for i := range templates.MaxTurnRows {
		r := c.Rows[i%len(c.Rows)]
		a := *r.Input.Approval
		a.ID = "t-" + string(rune('a'+i))
		r.Input.Approval = &a
		in.Rows = append(in.Rows, r)
	}
	msg := RenderTurn(templates.BuildTurn(in))
	checkTurnLimits(t, "ten calls", msg)
	n := 0
	for _, row := range msg.Components {
		n += len(row.(ActionRow).Components)
	}
	if n != 2*templates.MaxTurnRows+2 {
		t.Fatalf("%d buttons, want every row's and the turn's", n)
	}
}

func checkTurnLimits(t *testing.T, name string, msg *Message) {
	t.Helper()
	if utf16text.Len(msg.Content) > contentMax || len(msg.Embeds) > maxTurnEmbeds || len(msg.Components) > rowsMax {
		t.Errorf("%s: content %d, %d embeds, %d rows", name, utf16text.Len(msg.Content), len(msg.Embeds), len(msg.Components))
	}
	total := 0
	for _, e := range msg.Embeds {
		total += utf16text.Len(e.Title) + utf16text.Len(e.Description)
		if utf16text.Len(e.Description) > embedDescriptionMax {
			t.Errorf("%s: an embed's description is %d", name, utf16text.Len(e.Description))
		}
	}
	if total > embedTotalMax {
		t.Errorf("%s: embeds hold %d characters", name, total)
	}
}
