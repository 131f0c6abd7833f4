package slack

import (
	"context"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// The whole arguments go to one person in literal preformatted boxes
// within Slack's 3,000 characters, a message's within its 12,000 with room
// for the headings, in at most eight messages; what does not fit is said.
const (
	codeChunkMax       = richTextMax
	headingsReserve    = 1000
	sectionsPerMessage = (blocksTextMax - headingsReserve) / codeChunkMax
	maxShowMessages    = 8
)

// show answers Show all arguments and Show details, to the clicker alone.
func (a *Adapter) show(ctx context.Context, act templates.Action, who person) {
	out := a.click(ctx, threads.ClickShow, act, who, "", time.Time{})
	shown := out.Shown
	if shown == nil {
		a.answer(ctx, who, out.Reason.String())
		return
	}
	if shown.Question != nil {
		// Show question on a restricted question's card.
		a.showQuestion(ctx, act, who, out.Tenant, shown.Question)
		return
	}
	var msgs []Message
	if shown.Details != nil {
		msgs = append(msgs, a.details(*shown.Details))
	}
	msgs = append(msgs, argumentMessages(act, shown.Arguments, maxShowMessages-len(msgs))...)
	if err := a.tell(ctx, who, msgs); err != nil {
		a.log.Warn("slack: could not show the arguments", "tenant", out.Tenant, "approval_id", act.ApprovalID,
			"slack_user", who.user, "err", scrub(err).Error())
	}
}

// reveal answers a content holder's Approve of a restricted call they
// were not shown: its content, checked against its digests, to them
// alone, then the Approve that decides it. Nothing is recorded here.
func (a *Adapter) reveal(ctx context.Context, act templates.Action, who person) {
	out := a.click(ctx, threads.ClickReveal, act, who, "", time.Time{})
	shown := out.Shown
	if shown == nil {
		a.answer(ctx, who, out.Reason.String())
		return
	}
	body, left := laidOut(act, shown.Arguments, maxShowMessages-2)
	if left > 0 {
		// Decided before a part is sent: the lead would promise an
		// Approve that is not offered.
		a.answer(ctx, who, shown.TooLarge.String())
		return
	}
	msgs := append([]Message{literal(shown.Lead.String())}, body...)
	approve := slackgo.NewButtonBlockElement(templates.EncodeAction(*shown.Approve), templates.EncodeAction(*shown.Approve),
		slackgo.NewTextBlockObject(slackgo.PlainTextType, say.ApproveShown, false, false))
	approve.Style = slackgo.StylePrimary
	note := slackgo.NewButtonBlockElement(templates.EncodeAction(*shown.ApproveNote), templates.EncodeAction(*shown.ApproveNote),
		slackgo.NewTextBlockObject(slackgo.PlainTextType, say.ApproveNoteShown, false, false))
	msgs = append(msgs, Message{Text: say.ApproveShownLine, Blocks: []slackgo.Block{
		richText(textElem(say.ApproveShownLine)),
		slackgo.NewActionBlock("", approve, note)}})
	if err := a.tell(ctx, who, msgs); err != nil {
		a.log.Warn("slack: could not show a restricted call before its approval", "tenant", out.Tenant,
			"approval_id", act.ApprovalID, "slack_user", who.user, "err", scrub(err).Error())
	}
}

// details renders the card of Show details without its buttons.
func (a *Adapter) details(in templates.Input) Message {
	msg := CardMessage(templates.Build(in))
	kept := msg.Blocks[:0:0]
	for _, b := range msg.Blocks {
		if b.BlockType() != slackgo.MBTAction {
			kept = append(kept, b)
		}
	}
	msg.Blocks = kept
	msg.Text = say.Details + " " + msg.Text
	return msg
}

// argumentMessages lays the arguments out over at most limit messages,
// counting what does not fit in a closing line.
func argumentMessages(act templates.Action, res threads.ShowResult, limit int) []Message {
	msgs, _ := laidOut(act, res, limit)
	return msgs
}

// laidOut is argumentMessages, and how many characters it left out.
func laidOut(act templates.Action, res threads.ShowResult, limit int) ([]Message, int) {
	chunks := chunk.Split(res.Text(), codeChunkMax)
	if len(chunks) == 0 {
		chunks = []string{say.NoArguments}
	}
	left := 0
	if capacity := max(limit, 1) * sectionsPerMessage; len(chunks) > capacity {
		for _, c := range chunks[capacity:] {
			left += utf16text.Len(c)
		}
		chunks = chunks[:capacity]
	}
	n := (len(chunks) + sectionsPerMessage - 1) / sectionsPerMessage
	function := utf16text.Cut(res.Function, 200)
	msgs := make([]Message, 0, n)
	for part := 1; part <= n; part++ {
		var blocks []slackgo.Block
		if part == 1 {
			blocks = append(blocks,
				richText(withBold(say.ArgumentsHeading(placeholder, act.ApprovalID, act.Revision), function)...),
				contextText(say.ArgumentsDigest(res.Digest, res.Redacted)))
		} else {
			blocks = append(blocks, richText(withBold(say.ArgumentsPart(placeholder, part, n), function)...))
		}
		for _, c := range chunks[(part-1)*sectionsPerMessage : min(part*sectionsPerMessage, len(chunks))] {
			blocks = append(blocks, richText(preElem(strings.TrimSuffix(c, "\n"))))
		}
		if part == n && left > 0 {
			blocks = append(blocks, contextText(say.ArgumentsLeftOut(left)))
		}
		msgs = append(msgs, Message{Text: say.ArgumentsPart(mrkdwn(function), part, n), Blocks: blocks})
	}
	return msgs, left
}

// placeholder stands for a value in one of package say's sentences,
// so withBold can show the sentence with that value in bold.
const placeholder = "\x00"

// withBold is sentence as literal text, its placeholder value in bold.
func withBold(sentence, value string) []elem {
	before, after, ok := strings.Cut(sentence, placeholder)
	if !ok {
		return []elem{textElem(sentence)}
	}
	var out []elem
	if before != "" {
		out = append(out, textElem(before))
	}
	out = append(out, boldElem(value))
	if after != "" {
		out = append(out, textElem(after))
	}
	return out
}
