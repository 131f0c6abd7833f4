// Package chunk cuts and splits chat text to fit a platform's character
// limits, counted as Slack and Discord count them (package utf16text);
// escaping is the caller's.
package chunk

import (
	"strings"

	"approvalsbot/internal/utf16text"
)

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
// cutting (with utf16text.Cut) a line longer than a message.
func Lines(text string, max int) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = utf16text.Cut(line, max)
		if cur.Len() > 0 && utf16text.Len(cur.String())+1+utf16text.Len(line) > max {
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

// Code splits text into fenced pieces for ``` blocks, each within max,
// cut at line ends where a line fits and inside one where it does not.
// Fence adds no line break, so the lines are the text's own.
func Code(text string, max int) []string { return Split(Fence(text), max) }

// Split splits text into pieces of at most max characters, cut at line
// ends where a line fits and inside one where it does not; for boxes that
// show text literally (Slack's rich_text_preformatted).
func Split(text string, max int) []string {
	var chunks []string
	var cur strings.Builder
	n := 0
	add := func(piece string) {
		l := utf16text.Len(piece)
		if n+l > max && n > 0 {
			chunks = append(chunks, cur.String())
			cur.Reset()
			n = 0
		}
		cur.WriteString(piece)
		n += l
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		if utf16text.Len(line) <= max {
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
