package discord

import (
	"regexp"
	"strings"

	"approvalsbot/templates"
)

// Escaping for Discord markdown. Every value from the backend, the agent
// or a person goes through escape (cards and thread replies) or markdown
// (the adapter's own messages); only the bot's own markup stays live.

// bareURL is an http(s) URL in text: what Discord would link and show a
// preview of.
var bareURL = regexp.MustCompile(`https?://[^\s<>()\[\]` + "`" + `]+`)

// escape escapes s (escapeWith) for a card or a thread reply, each URL
// kept as written inside <…>, which Discord links without a preview
// (https://support.discord.com/hc/en-us/articles/206342858): a card
// carries its own embed, so it cannot suppress embeds as a whole, and a
// link in the backend's message or the agent's text must not make Discord
// fetch the page and show it as if the card said it. Inside the brackets
// Discord reads no markdown; the URL holds no < > or white space to end
// them.
func escape(s string) string { return escapeWith(s, angleLink, true) }

// escapeBare escapes s for a message sent with flagSuppressEmbeds, as
// the adapter's answers, notices and questions are: each URL is kept
// bare, so Discord links it, and the flag keeps its preview away. It is
// escape, with that one difference.
func escapeBare(s string) string { return escapeWith(s, bareLink, true) }

// markdown escapes a sentence for the messages the adapter sends
// (answers, notices, questions), all with embeds suppressed: text from
// the backend or a person can neither format, link, nor look like a
// mention, and an invisible character in it shows as [U+XXXX]
// (templates.Visible), as on cards; the escaper's own zero width spaces
// come after.
func markdown(s string) string { return escapeBare(templates.Visible(s)) }

func angleLink(u string) string { return "<" + u + ">" }
func bareLink(u string) string  { return u }

// escapeWith escapes s for Discord markdown, which honours a backslash
// before any punctuation. Inline markers are escaped everywhere; line
// markers (quote, heading, list, subtext) only where they start a line,
// and s starts one unless lineStart is false (text after a timestamp).
// "@everyone" and "@here" get a zero width space, so they never ping even
// where allowed mentions would let them. Each http(s) URL is kept as
// written and given to link, which writes it: Discord reads no markdown
// inside a URL, so it needs no escape (one would become part of it).
// Punctuation that ends a sentence is not taken into the URL.
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

// linkEscaper percent-encodes what would end a [text](url) link early.
// A card's links come from validated http(s) URLs; this keeps a stray
// character from bending the markup.
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
