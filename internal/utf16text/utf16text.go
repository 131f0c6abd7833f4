// Package utf16text measures and cuts text as Slack and Discord count
// their limits: in UTF-16 code units, a JavaScript string's length. It is
// the one home of that count and of the cuts made by it, for the card
// model (templates) and the chat adapters, which both keep text within a
// platform's limits; templates may not import the adapters.
package utf16text

import (
	"strings"
	"unicode/utf8"
)

// Len counts s in UTF-16 code units: one per rune, two for a rune past
// U+FFFF (a surrogate pair), one per byte of invalid UTF-8 (which JSON
// sends as U+FFFD).
func Len(s string) int {
	n := 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			n++
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		n += units(r)
		i += size
	}
	return n
}

// Prefix returns the longest prefix of s of at most max code units; it
// never splits a rune.
func Prefix(s string, max int) string {
	if max <= 0 {
		return ""
	}
	n := 0
	for i, r := range s {
		w := units(r)
		if n+w > max {
			return s[:i]
		}
		n += w
	}
	return s
}

// Cut shortens s to at most max code units, ending it with "…" when cut.
func Cut(s string, max int) string {
	if Len(s) <= max {
		return s
	}
	return Prefix(s, max-1) + "…"
}

// fenceClose closes a ``` block a cut left open.
const fenceClose = "\n```"

// Fit fits s into max code units, visibly: as much as fits, preferring
// a line boundary, a closing fence when a ``` block was left open (both
// platforms write code blocks so), and marker on a line of its own. trim
// drops what the cut left broken at its end (half an escape, a link cut
// open), as the caller's markup defines it.
func Fit(s string, max int, marker string, trim func(string) string) string {
	if Len(s) <= max {
		return s
	}
	budget := max - Len(marker) - 1 - len(fenceClose)
	if budget <= 0 {
		return Prefix(marker, max)
	}
	kept := Prefix(s, budget)
	if i := strings.LastIndexByte(kept, '\n'); i > 0 && Len(kept[:i]) > budget/2 {
		kept = kept[:i]
	}
	kept = trim(strings.TrimRight(kept, " \t"))
	if strings.Count(kept, "```")%2 == 1 {
		kept += fenceClose
	}
	return kept + "\n" + marker
}

func units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}
