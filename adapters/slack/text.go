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
