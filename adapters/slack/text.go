package slack

import (
	"strings"
	"unicode/utf16"
)

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mrkdwn escapes text for Slack mrkdwn: with &, < and > escaped it cannot
// form a link, a mention or <!channel>
// (https://api.slack.com/reference/surfaces/formatting#escaping).
func mrkdwn(s string) string { return escaper.Replace(s) }

// oneLine folds line breaks into spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// fence keeps text inside a ``` block from closing it early: a zero
// width space breaks every run of backticks.
func fence(s string) string {
	if !strings.Contains(s, "``") {
		return s
	}
	return strings.ReplaceAll(s, "``", "`\u200b`")
}

// charLen counts as Slack counts: UTF-16 code units.
func charLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// codeChunks splits text into pieces for ``` blocks: each piece escaped
// and fenced, at most max characters, cut at line ends where a line fits
// and inside a line where it does not, never inside an escape.
func codeChunks(text string, max int) []string {
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
		l := charLen(piece)
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
		esc := fence(mrkdwn(line))
		if charLen(esc) <= max {
			add(esc)
			continue
		}
		// A line longer than a block: cut it by characters, escaping each
		// character on its own so an entity stays whole.
		for _, r := range fence(line) {
			add(mrkdwn(string(r)))
		}
	}
	flush()
	return chunks
}

// cutLine shortens s to at most max characters, marking the cut.
func cutLine(s string, max int) string {
	if charLen(s) <= max {
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
