package templates

import "strings"

// Escaping for each surface. Every value that came from the backend or the
// agent goes through the surface's escaper in the templates; only the
// templates' own markup stays live.

var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mrkdwn escapes s for Slack mrkdwn. Slack asks for exactly these three
// (https://api.slack.com/reference/surfaces/formatting#escaping): with
// them escaped, text cannot form a link, a mention or <!channel>.
func mrkdwn(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	return slackEscaper.Replace(s)
}

// urlEscaper percent-encodes what would end a link early in Slack's
// <url|text> (a context block's link). Links come from validated http(s)
// URLs; this keeps a stray character from bending the markup.
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
