// Package slack is the bot's Slack surface, on slack-go: it posts each
// card (Block Kit built in Go from the platform-neutral templates.Card,
// with its buttons) to the tenant's channels and, for
// slack:U… targets, into a DM; edits every copy when the approval moves;
// replies in the card's thread; posts audit notices; and answers one
// person privately (ephemeral messages, or the interaction's
// response_url).
//
// It takes clicks, the deny reason modal, the comment modal of Approve
// with comment… (Slack's confirm dialog takes no text) and the
// /approvals command over
// either transport, into one handler: the signed HTTP endpoints
// (POST /slack/interactions, POST /slack/commands; verified with the
// signing secret on the raw body before anything is parsed) or Socket
// Mode when an app-level token is configured. Every interaction is
// acknowledged at once; the work (threads.Click, views.open, the argument
// look-up, the command's answer) runs after the ack in a goroutine that
// Run and Close wait for, with its own timeout.
//
// The adapter decides nothing about approvals: threads.Service does (who
// may decide, superseded cards, forged approvals, digests); the adapter
// shows its sentences. Like alertmanager's integrations it classifies its
// own failures for the outbox: a 429 becomes threads.RetryAfter, an error
// no retry can fix (channel_not_found, not_in_channel, invalid_auth, …)
// threads.Permanent, and network errors and 5xx stay plain (retried).
// Posts are paced per channel with golang.org/x/time/rate so a burst of
// cards drains at Slack's pace instead of in a storm of 429s.
//
// Package slacktest holds a fake Slack Web API for tests.
package slack
