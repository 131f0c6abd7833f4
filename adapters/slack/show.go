package slack

import (
	"context"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/adapters/click"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// How the whole arguments are split for one person: each ``` block
// within a section's 3,000 characters, ten blocks a message, at most
// eight messages (the first five through the response_url, the rest with
// chat.postEphemeral). What does not fit is said, not dropped silently.
const (
	codeChunkMax       = sectionTextMax - len("```\n\n```")
	sectionsPerMessage = 10
	maxShowMessages    = 8
)

// show answers Show all arguments and Show details with what package
// click decides to show, to the person who clicked alone.
func (a *Adapter) show(ctx context.Context, act templates.Action, who person) {
	shown := a.clicks.Show(ctx, act, who.threads())
	if shown.Say != "" {
		a.answer(ctx, who, shown.Say)
		return
	}
	var msgs []templates.SlackMessage
	if shown.Details != nil {
		msgs = append(msgs, a.details(*shown.Details))
	}
	msgs = append(msgs, argumentMessages(act, shown.Arguments, maxShowMessages-len(msgs))...)
	if err := a.tell(ctx, who, msgs); err != nil {
		a.log.Warn("slack: could not show the arguments", "tenant", shown.Tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
	}
}

// details renders the card of Show details without its buttons.
func (a *Adapter) details(in templates.Input) templates.SlackMessage {
	msg := a.render.Slack(templates.Build(in))
	kept := msg.Blocks[:0:0]
	for _, b := range msg.Blocks {
		if b.BlockType() != slackgo.MBTAction {
			kept = append(kept, b)
		}
	}
	msg.Blocks = kept
	msg.Text = click.SayDetails + " " + msg.Text
	return msg
}

// argumentMessages lays the arguments out in ``` blocks over as many
// messages as Slack's limits need, at most limit; what does not fit is
// counted in a closing line.
func argumentMessages(act templates.Action, res threads.ShowResult, limit int) []templates.SlackMessage {
	chunks := chunk.Code(string(res.Arguments), codeChunkMax, mrkdwn)
	if len(chunks) == 0 {
		chunks = []string{click.SayNoArguments}
	}
	left := 0
	if capacity := max(limit, 1) * sectionsPerMessage; len(chunks) > capacity {
		for _, c := range chunks[capacity:] {
			left += chunk.Len(c)
		}
		chunks = chunks[:capacity]
	}
	n := (len(chunks) + sectionsPerMessage - 1) / sectionsPerMessage
	function := "*" + mrkdwn(chunk.Cut(res.Function, 200)) + "*"
	meta := click.ArgumentsDigest(mrkdwn(res.Digest), res.Redacted)
	note := func(text string) slackgo.Block {
		return slackgo.NewContextBlock("", slackgo.NewTextBlockObject(slackgo.MarkdownType, text, false, false))
	}
	msgs := make([]templates.SlackMessage, 0, n)
	for part := 1; part <= n; part++ {
		var blocks []slackgo.Block
		if part == 1 {
			blocks = append(blocks,
				note(click.ArgumentsHeading(function, mrkdwn(act.ApprovalID), act.Revision)),
				note(meta))
		} else {
			blocks = append(blocks, note(click.ArgumentsPart(function, part, n)))
		}
		for _, c := range chunks[(part-1)*sectionsPerMessage : min(part*sectionsPerMessage, len(chunks))] {
			text := "```\n" + strings.TrimSuffix(c, "\n") + "\n```"
			blocks = append(blocks, slackgo.NewSectionBlock(slackgo.NewTextBlockObject(slackgo.MarkdownType, text, false, false), nil, nil))
		}
		if part == n && left > 0 {
			blocks = append(blocks, note(click.ArgumentsLeftOut(left)))
		}
		msgs = append(msgs, templates.SlackMessage{Text: click.ArgumentsPart(mrkdwn(chunk.Cut(res.Function, 200)), part, n), Blocks: blocks})
	}
	return msgs
}
