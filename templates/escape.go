package templates

import (
	"regexp"
	"strings"
)

// Escaping for each surface. Every value that came from the backend or the
// agent goes through the surface's escaper in the templates; only the
// templates' own markup stays live. (Slack's escaper is the Slack
// adapter's, which builds its payload in Go.)

// fence keeps text inside a Discord ``` code block from closing it early:
// a zero width space between backticks breaks the run. (Slack needs no
// such trick: its boxes are rich_text_preformatted, literal text.)
func fence(s string) string {
	if !strings.Contains(s, "``") {
		return s
	}
	return strings.ReplaceAll(s, "``", "`\u200b`")
}

// discordBareURL is an http(s) URL in text: what Discord would link and
// show a preview of.
var discordBareURL = regexp.MustCompile(`https?://[^\s<>()\[\]` + "`" + `]+`)

// discordMarkdown escapes s for a card (discordEscape), each URL kept as
// written inside <…>, which Discord links without a preview
// (https://support.discord.com/hc/en-us/articles/206342858): a card
// carries its own embed, so it cannot suppress embeds as a whole, and a
// link in the backend's message or the agent's text must not make Discord
// fetch the page and show it as if the card said it. Inside the brackets
// Discord reads no markdown; the URL holds no < > or white space to end
// them.
func discordMarkdown(s string) string { return discordEscape(s, angleLink) }

// DiscordText escapes s (discordEscape) for a Discord message sent with
// DiscordFlagSuppressEmbeds, as the adapter's answers, notices and
// questions are: each URL is kept bare, so Discord links it, and the flag
// keeps its preview away. It is the cards' escaper, with that one
// difference.
func DiscordText(s string) string { return discordEscape(s, bareLink) }

func angleLink(u string) string { return "<" + u + ">" }
func bareLink(u string) string  { return u }

// discordEscape escapes s for Discord markdown, which honours a backslash
// before any punctuation. Inline markers are escaped everywhere; line
// markers (quote, heading, list, subtext) only where they start a line.
// "@everyone" and "@here" get a zero width space, so they never ping even
// where allowed mentions would let them. Each http(s) URL is kept as
// written and given to link, which writes it: Discord reads no markdown
// inside a URL, so it needs no escape (one would become part of it).
// Punctuation that ends a sentence is not taken into the URL.
func discordEscape(s string, link func(url string) string) string {
	return discordEscapeFrom(s, link, true)
}

// discordEscapeFrom is discordEscape for s that starts a line, or,
// lineStart false, that goes on one (after a timestamp).
func discordEscapeFrom(s string, link func(url string) string, lineStart bool) string {
	var b strings.Builder
	last := 0
	for _, loc := range discordBareURL.FindAllStringIndex(s, -1) {
		end := loc[0] + len(strings.TrimRight(s[loc[0]:loc[1]], ".,;:!?'\""))
		if end-loc[0] <= len("https://") {
			continue
		}
		b.WriteString(discordEscapeRun(s[last:loc[0]], last == 0 && lineStart))
		b.WriteString(link(s[loc[0]:end]))
		last = end
	}
	if last == 0 {
		return discordEscapeRun(s, lineStart)
	}
	b.WriteString(discordEscapeRun(s[last:], false))
	return b.String()
}

// discordEscapeRun escapes text that holds no URL to keep; lineStart says
// whether it starts a line.
func discordEscapeRun(s string, lineStart bool) string {
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

// discordCode is text for inside a Discord code block, where markdown is
// not read: only the fence needs keeping.
func discordCode(s string) string { return fence(s) }

// urlEscaper percent-encodes what would end a link early in Discord's
// [text](url). Links come from validated http(s) URLs; this keeps a
// stray character from bending the markup.
var urlEscaper = strings.NewReplacer(
	"|", "%7C", ">", "%3E", "<", "%3C", "(", "%28", ")", "%29",
	" ", "%20", `"`, "%22", "`", "%60", "[", "%5B", "]", "%5D",
)

func linkURL(u string) string { return urlEscaper.Replace(u) }

// quoteLines prefixes every line of s with prefix, so a quote box holds
// all of the text and no line of it escapes into the card.
func quoteLines(prefix, s string) string {
	if s == "" {
		return prefix
	}
	return prefix + strings.ReplaceAll(s, "\n", "\n"+prefix)
}
