package templates

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/internal/utf16text"
)

// Everything a card shows passes through cleanText or oneLine first, so
// no character acts on the reader: docs/design.md#cleaning-text.

// invisible reports whether r must be shown as [U+XXXX] rather than act:
// approval.Invisible, except the tab and newline free text keeps.
func invisible(r rune) bool {
	return r != '\n' && r != '\t' && approval.Invisible(r)
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
// and U+2028/U+2029 as newlines, and invisible characters made visible
// (one presentation selector after a symbol kept).
func cleanText(s string) string { return clean(s, true) }

// Visible is cleanText for the adapters: free text with every invisible
// character shown as [U+XXXX] and line breaks kept.
func Visible(s string) string { return cleanText(s) }

// VisibleLine is oneLine for the adapters: an identifier on one line.
func VisibleLine(s string) string { return oneLine(s) }

// Linkable is s as a card links it (an absolute http(s) URL, every byte
// a URL may not hold raw escaped), or "" when a card would not link it.
func Linkable(s string) string { return linkable(s) }

// clean is cleanText, or oneLine's cleaning when prose is false.
func clean(s string, prose bool) string {
	if !needsClean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	prev := rune(-1)
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
		case prose && (r == 0xfe0f || r == 0xfe0e) && prev >= 0x80 && unicode.Is(unicode.So, prev):
			b.WriteRune(r)
		case invisible(r):
			writeCodePoint(&b, r)
		default:
			b.WriteRune(r)
		}
		prev = r
		i += size
	}
	return b.String()
}

// writeCodePoint writes r as [U+XXXX] (four hex digits at least, as
// fmt's %04X, without its cost on text made of such characters).
func writeCodePoint(b *strings.Builder, r rune) {
	const hex = "0123456789ABCDEF"
	var buf [10]byte
	i := len(buf)
	i--
	buf[i] = ']'
	for n := 0; n < 4 || r > 0; n++ {
		i--
		buf[i] = hex[r&0xf]
		r >>= 4
	}
	i -= 3
	copy(buf[i:], "[U+")
	b.Write(buf[i:])
}

// oneLine cleans s for a field shown on one line (names, ids, comments).
func oneLine(s string) string {
	s = clean(s, false)
	if strings.ContainsAny(s, "\n\t") {
		s = strings.Join(strings.Fields(s), " ")
	}
	return s
}

// charLen, prefixChars and cutLine count as the chats do (utf16text).
func charLen(s string) int                 { return utf16text.Len(s) }
func prefixChars(s string, max int) string { return utf16text.Prefix(s, max) }
func cutLine(s string, max int) string     { return utf16text.Cut(s, max) }

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

// visibleJSON makes invisible characters and line separators in JSON's
// strings (its only non-ASCII) \u escapes, a pair past U+FFFF, so the
// text stays valid JSON and a reader sees them.
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
		if r >= 0x80 && (invisible(r) || r == 0x2028 || r == 0x2029) {
			if r > 0xffff {
				hi, lo := utf16.EncodeRune(r)
				fmt.Fprintf(&b, `\u%04x\u%04x`, hi, lo)
				continue
			}
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// VisibleJSON is visibleJSON for the adapters and the decision page.
func VisibleJSON(s string) string { return visibleJSON(s) }

// limitList keeps at most max items, cut to lineMax, and counts the rest.
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

// sentence ends s with a full stop, unless one, a question or exclamation
// mark, or an ellipsis ends it already (a comment often does).
func sentence(s string) string {
	s = strings.TrimRight(s, " ")
	if strings.HasSuffix(s, ".") || strings.HasSuffix(s, "!") || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "…") {
		return s
	}
	return s + "."
}
