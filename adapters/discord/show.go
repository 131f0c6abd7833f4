package discord

import (
	"context"
	"strings"

	"approvalsbot/adapters/chunk"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// The whole arguments reach one person as ``` blocks of JSON, one a
// message, at most maxShowMessages; what does not fit is said.
const (
	codeOpen  = "```json\n"
	codeClose = "\n```"
)

// show answers Show all arguments, Show details and Show question in
// ephemeral follow-ups.
func (a *Adapter) show(ctx context.Context, act templates.Action, who person) {
	out := a.click(ctx, threads.ClickShow, act, who, "")
	shown := out.Shown
	if shown == nil {
		a.answer(ctx, who, out.Reason.String())
		return
	}
	if shown.Question != nil {
		a.showQuestion(ctx, act, who, out.Tenant, *shown.Question) // answer.go
		return
	}
	var msgs []*Message
	if shown.Details != nil {
		msgs = append(msgs, a.details(*shown.Details))
	}
	for _, text := range argumentMessages(act, shown.Arguments, maxShowMessages-len(msgs)) {
		msgs = append(msgs, &Message{Content: text, Flags: ephemeralText,
			AllowedMentions: noMentions()})
	}
	for _, m := range msgs {
		if err := a.followup(ctx, who.token, m, true); err != nil {
			a.log.Warn("discord: could not show the arguments", "tenant", out.Tenant, "approval_id", act.ApprovalID,
				"discord_user", who.user, "err", scrub(err).Error())
			return
		}
	}
}

// reveal answers a content holder's Approve of a restricted call they
// were not shown: its content, checked against its digests, to them
// alone, then the Approve that decides it. Nothing is recorded here.
func (a *Adapter) reveal(ctx context.Context, act templates.Action, who person) {
	out := a.click(ctx, threads.ClickReveal, act, who, "")
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
	msgs := []*Message{ephemeralMessage(shown.Lead.String())}
	for _, text := range body {
		msgs = append(msgs, &Message{Content: text, Flags: ephemeralText,
			AllowedMentions: noMentions()})
	}
	last := ephemeralMessage(say.ApproveShownLine)
	last.Components = []Component{ActionRow{Components: []Component{
		Button{Style: buttonSuccess, Label: say.ApproveShown, CustomID: templates.EncodeAction(*shown.Approve)},
		Button{Style: buttonSecondary, Label: say.ApproveNoteShown, CustomID: templates.EncodeAction(*shown.ApproveNote)}}}}
	msgs = append(msgs, last)
	for _, m := range msgs {
		if err := a.followup(ctx, who.token, m, true); err != nil {
			a.log.Warn("discord: could not show a restricted call before its approval", "tenant", out.Tenant,
				"approval_id", act.ApprovalID, "discord_user", who.user, "err", scrub(err).Error())
			return
		}
	}
}

// details renders the card of Show details as a follow-up, without its
// buttons. It carries the card's embed, so it cannot suppress embeds.
func (a *Surface) details(in templates.Input) *Message {
	msg := RenderCard(templates.Build(in))
	return &Message{
		Content:         utf16text.Cut(say.Details+" "+msg.Content, contentMax),
		Embeds:          msg.Embeds,
		Flags:           flagEphemeral,
		AllowedMentions: noMentions(),
	}
}

// argumentMessages lays the arguments out in ``` blocks over at most
// limit messages, counting what does not fit in a closing line.
func argumentMessages(act templates.Action, res threads.ShowResult, limit int) []string {
	msgs, _ := laidOut(act, res, limit)
	return msgs
}

// laidOut is argumentMessages, and how many characters it left out.
func laidOut(act templates.Action, res threads.ShowResult, limit int) ([]string, int) {
	limit = max(limit, 1)
	function := "**" + markdown(utf16text.Cut(res.Function, 100)) + "**"
	first := say.ArgumentsHeading(function, markdown(act.ApprovalID), act.Revision) + "\n" +
		say.ArgumentsDigest(markdown(res.Digest), res.Redacted)
	later := func(part, of int) string { return say.ArgumentsPart(function, part, of) }
	header := max(utf16text.Len(first), utf16text.Len(later(limit, limit)))
	// Every part keeps room for the closing line of the last one, when
	// the arguments do not fit.
	budget := contentMax - header - 1 - len(codeOpen) - len(codeClose) - 1 - utf16text.Len(say.ArgumentsLeftOut(1<<40))
	chunks := chunk.Code(res.Text(), budget)
	if len(chunks) == 0 {
		chunks = []string{say.NoArguments}
	}
	left := 0
	if len(chunks) > limit {
		for _, c := range chunks[limit:] {
			left += utf16text.Len(c)
		}
		chunks = chunks[:limit]
	}
	msgs := make([]string, 0, len(chunks))
	for i, c := range chunks {
		head := first
		if i > 0 {
			head = later(i+1, len(chunks))
		}
		text := head + "\n" + codeOpen + strings.TrimSuffix(c, "\n") + codeClose
		if i == len(chunks)-1 && left > 0 {
			text += "\n" + say.ArgumentsLeftOut(left)
		}
		msgs = append(msgs, text)
	}
	return msgs, left
}
