package discord

import (
	"regexp"
	"strings"
	"unicode/utf16"
)

// charLen counts as Discord counts: UTF-16 code units.
func charLen(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
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

// links are the http(s) URLs in a sentence: they stay as written, so
// Discord still links them (an escape inside would become part of them).
var links = regexp.MustCompile(`https?://[^\s<>()\[\]` + "`" + `]+`)

// markdown escapes a sentence for Discord markdown: a backslash before
// the inline markers everywhere and the line markers where they start a
// line, and a zero width space after @ in @everyone and @here, so text
// from the backend or a person can neither format, link, nor look like a
// mention. Links are kept as they are.
func markdown(s string) string {
	var b strings.Builder
	last := 0
	for _, loc := range links.FindAllStringIndex(s, -1) {
		b.WriteString(escapeRun(s[last:loc[0]], last == 0 || s[loc[0]-1] == '\n'))
		b.WriteString(s[loc[0]:loc[1]])
		last = loc[1]
	}
	b.WriteString(escapeRun(s[last:], last == 0))
	return b.String()
}

func escapeRun(s string, lineStart bool) string {
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '\\', '*', '_', '~', '`', '|', '<', '[', ']':
			b.WriteByte('\\')
		case '>', '#', '-', '+':
			if lineStart {
				b.WriteByte('\\')
			}
		case '@':
			if strings.HasPrefix(s[i+1:], "everyone") || strings.HasPrefix(s[i+1:], "here") {
				b.WriteString("@\u200b")
				lineStart = false
				continue
			}
		}
		b.WriteByte(c)
		switch c {
		case '\n':
			lineStart = true
		case ' ', '\t':
		default:
			lineStart = false
		}
	}
	return b.String()
}

// fence keeps text inside a ``` block from closing it early: a zero width
// space breaks every run of backticks.
func fence(s string) string {
	if !strings.Contains(s, "``") {
		return s
	}
	return strings.ReplaceAll(s, "``", "`\u200b`")
}

// codeChunks splits text into pieces for ``` blocks, each fenced and at
// most max characters, cut at line ends where a line fits and inside a
// line where it does not. Every character of text is in one piece.
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
		line = fence(line)
		if charLen(line) <= max {
			add(line)
			continue
		}
		for _, r := range line {
			add(string(r))
		}
	}
	flush()
	return chunks
}

// lineChunks splits text into messages of at most max characters at line
// ends, cutting a line longer than a message.
func lineChunks(text string, max int) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(text, "\n") {
		line = cutLine(line, max)
		if cur.Len() > 0 && charLen(cur.String())+1+charLen(line) > max {
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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
