package discord

import (
	"regexp"
	"strings"
)

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

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
