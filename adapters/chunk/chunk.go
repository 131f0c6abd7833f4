// Package chunk cuts and splits chat text to fit a platform's character
// limits, counted as Slack and Discord count them: UTF-16 code units, as
// a JavaScript string's length. Both adapters split long text the same
// way; only how each escapes it differs, and that the caller passes in.
package chunk

import (
	"strings"
	"unicode/utf16"
)

// Len counts s as Slack and Discord count their limits: UTF-16 code units.
func Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// Cut shortens s to at most max characters, ending it with "…" when cut.
func Cut(s string, max int) string {
	if Len(s) <= max {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		l := utf16.RuneLen(r)
		if n+l > max-1 {
			break
		}
		b.WriteRune(r)
		n += l
	}
	return b.String() + "…"
}

// Prefix is the longest prefix of s of at most max characters; it never
// splits a surrogate pair.
func Prefix(s string, max int) string {
	n := 0
	for i, r := range s {
		if n += utf16.RuneLen(r); n > max {
			return s[:i]
		}
	}
	return s
}

// Fence keeps text inside a ``` block from closing it early: a zero width
// space between backticks breaks the run, so no ``` is left, on both
// platforms.
func Fence(s string) string {
	if !strings.Contains(s, "``") {
		return s
	}
	return strings.ReplaceAll(s, "``", "`\u200b`")
}

// Lines splits text into messages of at most max characters at line ends,
// cutting (with Cut) a line longer than a message.
func Lines(text string, max int) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = Cut(line, max)
		if cur.Len() > 0 && Len(cur.String())+1+Len(line) > max {
			out = append(out, cur.String())
			cur.Reset()
		}
		if cur.Len() > 0 {
			cur.WriteByte('\n')
		}
		cur.WriteString(line)
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// Code splits text into pieces for ``` blocks (Discord's, which need no
// escaping inside): each piece fenced, and at most max characters, cut
// at line ends where a line fits and inside a line where it does not.
// Every character of text is in one piece.
func Code(text string, max int) []string {
	var chunks []string
	var cur strings.Builder
	n := 0
	flush := func() {
		if n > 0 {
			chunks = append(chunks, cur.String())
			cur.Reset()
			n = 0
		}
	}
	add := func(piece string) {
		l := Len(piece)
		if n+l > max {
			flush()
		}
		cur.WriteString(piece)
		n += l
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if line == "" {
			continue
		}
		fenced := Fence(line)
		if Len(fenced) <= max {
			add(fenced)
			continue
		}
		for _, r := range fenced {
			add(string(r))
		}
	}
	flush()
	return chunks
}

// Split splits text into pieces of at most max characters, cut at line
// ends where a line fits and inside a line where it does not; every
// character of text is in one piece, and nothing is added or escaped.
// It serves boxes that show text literally (Slack's
// rich_text_preformatted), which need neither escaping nor a fence.
func Split(text string, max int) []string {
	var chunks []string
	var cur strings.Builder
	n := 0
	add := func(piece string) {
		if l := Len(piece); n+l > max && n > 0 {
			chunks = append(chunks, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteString(piece)
		n += Len(piece)
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if Len(line) <= max {
			if line != "" {
				add(line)
			}
			continue
		}
		for _, r := range line {
			add(string(r))
		}
	}
	if n > 0 {
		chunks = append(chunks, cur.String())
	}
	return chunks
}
