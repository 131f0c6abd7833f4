package discord

import (
	"regexp"
	"strings"

	"approvalsbot/templates"
)

// Every value from the backend, the agent or a person goes through escape
// or markdown (docs/design.md#escaping-for-discord).

// bareURL is an http(s) URL in text, which Discord would link and preview.
var bareURL = regexp.MustCompile(`https?://[^\s<>()\[\]` + "`" + `]+`)

// escape escapes s for a card or a thread reply, each URL kept in <…>,
// which Discord links without a preview: a card cannot suppress embeds.
func escape(s string) string { return escapeWith(s, angleLink, true) }

// escapeBare is escape for a message sent with flagSuppressEmbeds: each
// URL bare, the flag keeping its preview away.
func escapeBare(s string) string { return escapeWith(s, bareLink, true) }

// markdown escapes a sentence for the adapter's own messages (embeds
// suppressed), every invisible character shown first (templates.Visible),
// so the escaper's own zero width spaces stay.
func markdown(s string) string { return escapeBare(templates.Visible(s)) }

func angleLink(u string) string { return "<" + u + ">" }
func bareLink(u string) string  { return u }

// escapeWith escapes s for Discord markdown: inline markers everywhere,
// line markers where a line starts (s starts one unless lineStart is
// false), @everyone and @here broken; each URL is kept as written and
// given to link.
func escapeWith(s string, link func(url string) string, lineStart bool) string {
	var b strings.Builder
	last := 0
	for _, loc := range bareURL.FindAllStringIndex(s, -1) {
		end := loc[0] + len(strings.TrimRight(s[loc[0]:loc[1]], ".,;:!?'\""))
		if end-loc[0] <= len("https://") {
			continue
		}
		b.WriteString(escapeRun(s[last:loc[0]], last == 0 && lineStart))
		b.WriteString(link(s[loc[0]:end]))
		last = end
	}
	if last == 0 {
		return escapeRun(s, lineStart)
	}
	b.WriteString(escapeRun(s[last:], false))
	return b.String()
}

// escapeRun escapes text that holds no URL to keep; lineStart says
// whether it starts a line.
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
			// Leading white space keeps a line marker live.
		default:
			lineStart = false
		}
	}
	return b.String()
}

// linkEscaper percent-encodes what would end a [text](url) link early,
// should a validated URL still hold it.
var linkEscaper = strings.NewReplacer(
	"|", "%7C", ">", "%3E", "<", "%3C", "(", "%28", ")", "%29",
	" ", "%20", `"`, "%22", "`", "%60", "[", "%5B", "]", "%5D",
)

// trimCut drops a lone escaping backslash at the end of a cut, which
// would escape the marker's newline, and a link, a <URL> or a timestamp
// cut open.
func trimCut(s string) string {
	n := 0
	for n < len(s) && s[len(s)-1-n] == '\\' {
		n++
	}
	if n%2 == 1 {
		s = s[:len(s)-1]
	}
	// A URL kept in <…> cut before its > would be a bare URL, with a
	// preview, and a timestamp would show as <t:17…: each goes whole.
	for _, open := range []string{"<http", "<t:"} {
		if i := strings.LastIndex(s, open); i >= 0 && (i == 0 || s[i-1] != '\\') && !strings.Contains(s[i:], ">") {
			s = s[:i]
		}
	}
	if i := strings.LastIndex(s, "]("); i >= 0 && !strings.Contains(s[i:], ")") {
		if j := strings.LastIndexByte(s[:i], '['); j >= 0 {
			s = s[:j]
		}
	}
	return s
}
