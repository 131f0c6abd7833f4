package templates

import (
	"strings"
	"testing"
)

func TestCutText(t *testing.T) {
	code := "intro\n```\n" + strings.Repeat("line of code\n", 50) + "```"
	tests := []struct {
		name, in string
		max      int
		trim     func(string) string
		check    func(t *testing.T, got string)
	}{
		{"fits", "short", 10, trimDiscord, func(t *testing.T, got string) {
			if got != "short" {
				t.Errorf("%q", got)
			}
		}},
		{"closes a fence", code, 120, trimDiscord, func(t *testing.T, got string) {
			if strings.Count(got, "```")%2 != 0 {
				t.Errorf("fence left open:\n%s", got)
			}
		}},
		{"discord backslash", strings.Repeat(`a\*`, 60), 52 + len(discordCutMarker), trimDiscord, func(t *testing.T, got string) { // the cut falls after a backslash
			body := strings.TrimSuffix(got, "\n"+discordCutMarker)
			n := len(body) - len(strings.TrimRight(body, `\`))
			if n%2 == 1 {
				t.Errorf("lone backslash at the cut: %q", body)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := discordCutMarker
			got := cutText(tt.in, tt.max, marker, tt.trim)
			if charLen(got) > tt.max {
				t.Errorf("%d chars, max %d", charLen(got), tt.max)
			}
			if got != tt.in && !strings.HasSuffix(got, "\n"+marker) {
				t.Errorf("cut without the marker: %q", got)
			}
			tt.check(t, got)
		})
	}
}

// TestCharLen counts as JavaScript does: a rune outside the BMP is two.
func TestCharLen(t *testing.T) {
	for s, want := range map[string]int{"abc": 3, "é": 1, "⚠": 1, "😀": 2, "a😀b": 4} {
		if got := charLen(s); got != want {
			t.Errorf("charLen(%q) = %d, want %d", s, got, want)
		}
	}
	if got := prefixChars("a😀b", 2); got != "a" {
		t.Errorf("prefixChars split a surrogate pair: %q", got)
	}
}

// TestDiscordCutsBulkFirst: a card too long for Discord gives up its bulky
// parts (agent text, patch, roles) before the short ones after them.
func TestDiscordCutsBulkFirst(t *testing.T) {
	r := newRenderer(t)
	c := cardIn(t, huge(t, false), "pending")
	desc := r.Discord(c).Embeds[0].Description
	for _, want := range []string{c.Ladder, c.Turn, "to fit Discord"} {
		if !strings.Contains(discordTimeless(desc), discordWant(want)) {
			t.Errorf("description lacks %q", want)
		}
	}
}
