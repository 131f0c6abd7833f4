package discord

import (
	"strings"
	"testing"

	"approvalsbot/internal/utf16text"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// checkLimits fails t for each of Discord's limits m breaks, and for a
// status not on top, an effect line or flag missing, or a button lost.
func checkLimits(t *testing.T, c templates.Card, m *Message) {
	t.Helper()
	if n := utf16text.Len(m.Content); n > contentMax {
		t.Errorf("content %d chars", n)
	}
	if len(m.Embeds) > 10 {
		t.Errorf("%d embeds", len(m.Embeds))
	}
	total := 0
	var all []string
	for _, e := range m.Embeds {
		for _, lim := range []struct {
			s   string
			max int
			f   string
		}{{e.Title, embedTitleMax, "title"}, {e.Description, embedDescriptionMax, "description"}} {
			if n := utf16text.Len(lim.s); n > lim.max {
				t.Errorf("%s %d chars", lim.f, n)
			}
			total += utf16text.Len(lim.s)
		}
		if e.Footer != nil {
			if n := utf16text.Len(e.Footer.Text); n > embedFooterMax {
				t.Errorf("footer %d chars", n)
			}
			total += utf16text.Len(e.Footer.Text)
		}
		all = append(all, e.Description)
	}
	if total > embedTotalMax {
		t.Errorf("embeds total %d chars", total)
	}
	if len(m.Components) > rowsMax {
		t.Errorf("%d rows", len(m.Components))
	}
	n := 0
	for _, row := range m.Components {
		ar := row.(ActionRow)
		if len(ar.Components) > buttonsPerRow {
			t.Errorf("%d buttons in a row", len(ar.Components))
		}
		for _, comp := range ar.Components {
			switch b := comp.(type) {
			case Button:
				n++
				if len(b.CustomID) > customIDMax || b.CustomID == "" || utf16text.Len(b.Label) > buttonLabelMax {
					t.Errorf("button %q custom_id %d bytes", b.Label, len(b.CustomID))
				}
			case ChoiceMenu:
				// A question's choices with no room as buttons.
				n += len(b.Options)
				if len(ar.Components) != 1 || len(b.Options) == 0 || len(b.Options) > selectOptionsMax ||
					len(b.CustomID) > customIDMax || utf16text.Len(b.Placeholder) > selectPlaceholderMax {
					t.Errorf("menu %+v in a row of %d", b, len(ar.Components))
				}
				for _, o := range b.Options {
					if o.Value == "" || len(o.Value) > selectOptionMax || utf16text.Len(o.Label) > selectOptionMax {
						t.Errorf("menu option %+v", o)
					}
				}
			default:
				t.Errorf("component %T on a card", comp)
			}
		}
	}
	wantButtons := len(c.Buttons)
	if c.Question != nil {
		wantButtons += len(c.Question.Choices)
	}
	if n != wantButtons {
		t.Errorf("%d buttons and menu options, the card has %d", n, wantButtons)
	}
	if !strings.HasPrefix(timeless(m.Content), "**"+want(c.Status)+"**") {
		t.Error("the status is not on top")
	}
	joined := timeless(strings.Join(all, "\n"))
	for _, w := range templatestest.Essentials(c)[1:] {
		if !strings.Contains(joined, want(w)) {
			t.Errorf("lacks %q", w)
		}
	}
}

// TestLimits: every limit holds, for the fixtures and a ~1 MiB approval,
// in every state, and the status line, the effect line, the flags and
// the buttons are all there.
func TestLimits(t *testing.T) {
	for _, tt := range templatestest.LimitCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			checkLimits(t, tt.Card, RenderCard(tt.Card))
		})
	}
}

// TestHugeCutsVisibly: a card too long for Discord says it was cut, and
// gives up its bulky parts (agent text, patch, roles) before the short
// ones after them.
func TestHugeCutsVisibly(t *testing.T) {
	c := templatestest.Card(t, templatestest.Huge(t, false), "pending")
	desc := RenderCard(c).Embeds[0].Description
	for _, w := range []string{c.Ladder, c.Turn, "to fit Discord"} {
		if !strings.Contains(timeless(desc), want(w)) {
			t.Errorf("description lacks %q", w)
		}
	}
}

// TestLongLadderKeepsTheEssentials: a 30-step ladder, each step telling
// dozens of people, never pushes the status, the effect line, the flags,
// the plan line or the buttons out.
func TestLongLadderKeepsTheEssentials(t *testing.T) {
	for _, tt := range templatestest.LongLadderCases(t) {
		t.Run(tt.Name, func(t *testing.T) {
			c := tt.Card
			dm := RenderCard(c)
			checkLimits(t, c, dm)
			if !strings.Contains(timeless(dm.Embeds[0].Description), want(c.Ladder)) {
				t.Error("the plan line gave way")
			}
			// The same controls as under a short ladder.
			if n := len(tt.Short.Buttons); len(buttonsOf(dm)) != n {
				t.Errorf("%d buttons, want %d", len(buttonsOf(dm)), n)
			}
		})
	}
}

// BenchmarkRenderCard builds and lays out one card per iteration:
// go test ./adapters/discord -run '^$' -bench RenderCard -benchmem.
func BenchmarkRenderCard(b *testing.B) {
	for _, name := range []string{"merge", "big", "question"} {
		in := templatestest.Input(b, templatestest.Approval(b, name+".json"), "pending")
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = RenderCard(templates.Build(in))
			}
		})
	}
}
