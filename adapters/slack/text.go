package slack

import (
	"strings"

	"approvalsbot/templates"
)

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mrkdwn escapes text for Slack mrkdwn: with &, < and > escaped it cannot
// form a link, a mention or <!channel>
// (https://api.slack.com/reference/surfaces/formatting#escaping); an
// invisible character shows as [U+XXXX] (templates.Visible), as on cards.
func mrkdwn(s string) string { return escaper.Replace(templates.Visible(s)) }

// oneLine folds line breaks into spaces, every invisible character shown.
func oneLine(s string) string {
	return strings.Join(strings.Fields(templates.Visible(s)), " ")
}

// urlEscaper percent-encodes what would end a <url|label> link early,
// should a validated URL still hold it.
var urlEscaper = strings.NewReplacer(
	"|", "%7C", ">", "%3E", "<", "%3C", "(", "%28", ")", "%29",
	" ", "%20", `"`, "%22", "`", "%60", "[", "%5B", "]", "%5D",
)

func linkURL(u string) string { return urlEscaper.Replace(u) }

// cutMarker ends mrkdwn text that was cut (utf16text.Fit).
const cutMarker = "_[cut to fit Slack; the console shows all]_"

// trimMrkdwn drops a cut entity (&amp; → &am) and a link cut open (<http…).
func trimMrkdwn(s string) string {
	if i := strings.LastIndexByte(s, '&'); i >= 0 && !strings.Contains(s[i:], ";") {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '<'); i >= 0 && !strings.Contains(s[i:], ">") {
		s = s[:i]
	}
	return s
}

// noTrim is for plain_text, which has no markup to leave broken.
func noTrim(s string) string { return s }
