// Package slack is the bot's Slack surface, on slack-go: it posts each
// card (Block Kit built here from templates.Card) to channels and DMs,
// edits every copy as the approval moves, replies in the card's thread,
// posts audit notices and answers one person privately. It takes clicks,
// dialogs and /approvals over the signed HTTP endpoints or Socket Mode,
// into one handler, and decides nothing about approvals (threads.Service
// does). The why: docs/design.md#cards-and-the-chat-platforms.
//
// Package slacktest holds a fake Slack Web API for tests.
package slack
