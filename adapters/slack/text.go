package slack

import "strings"

var escaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// mrkdwn escapes text for Slack mrkdwn: with &, < and > escaped it cannot
// form a link, a mention or <!channel>
// (https://api.slack.com/reference/surfaces/formatting#escaping).
func mrkdwn(s string) string { return escaper.Replace(s) }

// oneLine folds line breaks into spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
