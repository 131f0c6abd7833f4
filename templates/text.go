package templates

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Everything a card shows passes through cleanText or oneLine first. They
// keep text from steering the reader: control characters could rewrite a
// terminal (bot preview) and bidirectional overrides could reorder what a
// person reads ("Trojan Source"), so each is shown as a visible [U+XXXX]
// instead of acting. Line separators become newlines, so a quote box's ">"
// reaches every line a reader sees.

// invisible reports whether r must be shown as [U+XXXX] rather than act.
func invisible(r rune) bool {
	switch {
	case r < 0x20 && r != '\n' && r != '\t':
		return true
	case r >= 0x7f && r <= 0x9f: // DEL and C1 controls
		return true
	case r == 0x061c, r == 0x200e, r == 0x200f, // bidi marks
		r >= 0x202a && r <= 0x202e, // bidi embeddings and overrides
		r >= 0x2066 && r <= 0x2069: // bidi isolates
		return true
	}
	return false
}

// needsClean is the fast path: plain ASCII text without controls is common.
func needsClean(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || c == 0x7f || (c < 0x20 && c != '\n' && c != '\t') {
			return true
		}
	}
	return false
}

// cleanText makes multi-line free text safe to show: valid UTF-8, CRLF, CR
// and U+2028/U+2029 as newlines, and invisible characters made visible.
func cleanText(s string) string {
	if !needsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteRune(utf8.RuneError)
		case r == '\r':
			if i+1 >= len(s) || s[i+1] != '\n' {
				b.WriteByte('\n')
			}
		case r == 0x2028 || r == 0x2029:
			b.WriteByte('\n')
		case invisible(r):
			fmt.Fprintf(&b, "[U+%04X]", r)
		default:
			b.WriteRune(r)
		}
		i += size
	}
	return b.String()
}

// oneLine cleans s for a field shown on one line (names, ids, comments).
func oneLine(s string) string {
	s = cleanText(s)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// charLen counts s as Slack and Discord count their limits: as a
// JavaScript string's length (UTF-16 code units), never less than runes.
func charLen(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80 || c >= 0xc0 && c < 0xf0:
			n++ // ASCII, or the lead byte of a 2- or 3-byte rune
		case c >= 0xf0:
			n += 2 // a 4-byte rune is a surrogate pair
		}
	}
	return n
}

// prefixChars returns the longest prefix of s of at most max chars.
func prefixChars(s string, max int) string {
	if max <= 0 {
		return ""
	}
	n := 0
	for i, r := range s {
		w := 1
		if r >= 0x10000 {
			w = 2
		}
		if n+w > max {
			return s[:i]
		}
		n += w
	}
	return s
}

// cutLine cuts a one-line field to max chars, ending with "…" when cut.
func cutLine(s string, max int) string {
	if charLen(s) <= max {
		return s
	}
	return prefixChars(s, max-1) + "…"
}

// cutAtLine returns the longest prefix of s of at most max bytes that ends
// at a line break, or on a rune boundary when the first line alone is
// longer, and whether it cut.
func cutAtLine(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	if i := strings.LastIndexByte(s[:max+1], '\n'); i > 0 {
		return s[:i], true
	}
	k := max
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k], true
}

// visibleJSON prepares pretty-printed projection JSON for display: inside
// its strings (the only place non-ASCII can be) invisible characters and
// line separators become JSON \u escapes, so the text stays valid JSON and
// a reader sees them.
func visibleJSON(s string) string {
	needs := false
	for i := 0; i < len(s) && !needs; i++ {
		if s[i] >= 0x80 {
			r, _ := utf8.DecodeRuneInString(s[i:])
			needs = invisible(r) || r == 0x2028 || r == 0x2029
		}
	}
	if !needs {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if invisible(r) || r == 0x2028 || r == 0x2029 {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// limitList keeps at most max items, each cut to lineMax, and says how
// many it left out.
func limitList(items []string, max int, more func(n int) string) []string {
	out := make([]string, 0, min(len(items), max+1))
	for i, it := range items {
		if i == max {
			out = append(out, more(len(items)-max))
			break
		}
		out = append(out, cutLine(oneLine(it), lineMax))
	}
	return out
}

// plural returns one when n is 1, else many.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
