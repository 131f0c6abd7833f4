package templates_test

import (
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/templates"
)

// The Slack adapter renders the cards and thread replies whose content
// this package's tests check on every surface (templates.SlackCard).
func init() {
	templates.SlackCard = func(c templates.Card) (string, string) {
		m := slackad.CardMessage(c)
		return marshal(m), m.Text
	}
	templates.SlackThread = func(msg templates.ThreadMessage) (string, string) {
		m := slackad.ThreadReply(msg)
		return marshal(m), m.Text
	}
}

func marshal(v any) string {
	b, err := templates.MarshalPreview(v)
	if err != nil {
		panic(err) // slack-go's blocks always marshal
	}
	return string(b)
}
