package slack

import (
	"strings"

	"approvalsbot/adapters/chunk"
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

// urlEscaper percent-encodes what would end a <url|label> link early.
// Links come from validated http(s) URLs; this keeps a stray character
// from bending the markup.
var urlEscaper = strings.NewReplacer(
	"|", "%7C", ">", "%3E", "<", "%3C", "(", "%28", ")", "%29",
	" ", "%20", `"`, "%22", "`", "%60", "[", "%5B", "]", "%5D",
)

func linkURL(u string) string { return urlEscaper.Replace(u) }

// cutMarker ends mrkdwn text that was cut.
const cutMarker = "_[cut to fit Slack; the console shows all]_"

const fenceClose = "\n```"

// cutText fits s into max characters: as much as fits, preferring a line
// boundary, a closing fence if a code block was left open, and marker on a
// line of its own. trim removes a partial escape at the cut.
func cutText(s string, max int, marker string, trim func(string) string) string {
	if chunk.Len(s) <= max {
		return s
	}
	budget := max - chunk.Len(marker) - 1 - len(fenceClose)
	if budget <= 0 {
		return chunk.Prefix(marker, max)
	}
	kept := chunk.Prefix(s, budget)
	if i := strings.LastIndexByte(kept, '\n'); i > 0 && chunk.Len(kept[:i]) > budget/2 {
		kept = kept[:i]
	}
	kept = trim(strings.TrimRight(kept, " \t"))
	if strings.Count(kept, "```")%2 == 1 {
		kept += fenceClose
	}
	return kept + "\n" + marker
}

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

func noTrim(s string) string { return s }
