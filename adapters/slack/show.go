package slack

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/approval"
	"approvalsbot/store"
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

// show answers Show all arguments and Show details: threads looks the
// arguments up at the backend as the person who clicked and returns them
// only when they may see them and they match the card's digest; the
// answer goes to that person alone.
func (a *Adapter) show(ctx context.Context, act templates.Action, who person) {
	svc := a.service()
	if svc == nil {
		a.answer(ctx, who, sayStarting)
		return
	}
	row, ok := a.approvalOf(ctx, act, who)
	if !ok {
		return
	}
	res, err := svc.ShowArguments(ctx, threads.ShowRequest{Tenant: row.Tenant, ApprovalID: act.ApprovalID,
		Revision: act.Revision, Person: who.threads()})
	if err != nil {
		a.log.Error("slack: look up arguments", "tenant", row.Tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", err.Error())
		a.answer(ctx, who, sayLookupFailed)
		return
	}
	if res.Refusal != "" {
		a.answer(ctx, who, res.Refusal)
		return
	}
	var msgs []templates.SlackMessage
	if act.Kind == templates.ActionShowDetails {
		// The person holds the content permission (threads checked): the
		// card's hidden parts come first, then the whole arguments.
		if m, ok := a.details(ctx, row, act); ok {
			msgs = append(msgs, m)
		}
	}
	msgs = append(msgs, argumentMessages(act, res, maxShowMessages-len(msgs))...)
	if err := a.tell(ctx, who, msgs); err != nil {
		a.log.Warn("slack: could not show the arguments", "tenant", row.Tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
	}
}

// details renders the clicked revision's card with its restricted parts
// shown and no buttons, for the one person allowed to see them.
func (a *Adapter) details(ctx context.Context, row *store.Approval, act templates.Action) (templates.SlackMessage, bool) {
	rev, err := a.store.RevisionGet(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		a.log.Warn("slack: read the revision for Show details", "approval_id", act.ApprovalID, "err", err.Error())
		return templates.SlackMessage{}, false
	}
	var req approval.Approval
	if err := json.Unmarshal(rev.Body, &req); err != nil {
		return templates.SlackMessage{}, false
	}
	in := templates.Input{Approval: &req, State: approval.State(row.State), Superseded: act.Revision < row.Revision,
		RevealContent: true, Tenant: row.Tenant}
	if len(row.Decision) > 0 {
		var d approval.Decision
		if json.Unmarshal(row.Decision, &d) == nil {
			in.Decision = &d
		}
	}
	msg := a.render.Slack(templates.Build(in))
	kept := msg.Blocks[:0:0]
	for _, b := range msg.Blocks {
		if b.BlockType() != slackgo.MBTAction {
			kept = append(kept, b)
		}
	}
	msg.Blocks = kept
	msg.Text = "Details of " + msg.Text + " (only you see this)"
	return msg, true
}

// argumentMessages lays the arguments out in ``` blocks over as many
// messages as Slack's limits need, at most limit; what does not fit is
// counted in a closing line.
func argumentMessages(act templates.Action, res threads.ShowResult, limit int) []templates.SlackMessage {
	chunks := chunk.Code(string(res.Arguments), codeChunkMax, mrkdwn)
	if len(chunks) == 0 {
		chunks = []string{"(no arguments)"}
	}
	left := 0
	if capacity := max(limit, 1) * sectionsPerMessage; len(chunks) > capacity {
		for _, c := range chunks[capacity:] {
			left += chunk.Len(c)
		}
		chunks = chunks[:capacity]
	}
	n := (len(chunks) + sectionsPerMessage - 1) / sectionsPerMessage
	function := mrkdwn(chunk.Cut(res.Function, 200))
	meta := "digest " + mrkdwn(res.Digest)
	if res.Redacted {
		meta += " · secrets are redacted"
	}
	note := func(text string) slackgo.Block {
		return slackgo.NewContextBlock("", slackgo.NewTextBlockObject(slackgo.MarkdownType, text, false, false))
	}
	msgs := make([]templates.SlackMessage, 0, n)
	for part := 1; part <= n; part++ {
		var blocks []slackgo.Block
		if part == 1 {
			blocks = append(blocks,
				note(fmt.Sprintf("Arguments of *%s* · approval %s, revision %d · only you see this",
					function, mrkdwn(act.ApprovalID), act.Revision)),
				note(meta))
		} else {
			blocks = append(blocks, note(fmt.Sprintf("Arguments of *%s*, part %d of %d", function, part, n)))
		}
		for _, c := range chunks[(part-1)*sectionsPerMessage : min(part*sectionsPerMessage, len(chunks))] {
			text := "```\n" + strings.TrimSuffix(c, "\n") + "\n```"
			blocks = append(blocks, slackgo.NewSectionBlock(slackgo.NewTextBlockObject(slackgo.MarkdownType, text, false, false), nil, nil))
		}
		if part == n && left > 0 {
			blocks = append(blocks, note(fmt.Sprintf("%d more characters are not shown: Slack takes no more in one answer. "+
				"Look at the call in the console for the rest.", left)))
		}
		msgs = append(msgs, templates.SlackMessage{Text: fmt.Sprintf("Arguments of %s (part %d of %d)", function, part, n), Blocks: blocks})
	}
	return msgs
}
