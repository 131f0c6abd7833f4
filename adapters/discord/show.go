package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/chunk"
	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// How the whole arguments reach one person: ``` blocks of JSON, one a
// message within Discord's 2,000 characters, at most maxShowMessages
// ephemeral follow-ups. What does not fit is said, not dropped silently.
const (
	codeOpen  = "```json\n"
	codeClose = "\n```"
	// leftOutNote is the closing line of the last part when the arguments
	// do not fit; every part keeps room for it.
	leftOutNote = "%d more characters are not shown: Discord takes no more in one answer. Look at the call in the console for the rest."
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
		a.log.Error("discord: look up arguments", "tenant", row.Tenant, "approval_id", act.ApprovalID,
			"discord_user", who.user, "err", err.Error())
		a.answer(ctx, who, sayLookupFailed)
		return
	}
	if res.Refusal != "" {
		a.answer(ctx, who, res.Refusal)
		return
	}
	var msgs []*discordgo.WebhookParams
	if act.Kind == templates.ActionShowDetails {
		// The person holds the content permission (threads checked): the
		// card's hidden parts come first, then the whole arguments.
		if m, ok := a.details(ctx, row, act); ok {
			msgs = append(msgs, m)
		}
	}
	for _, text := range argumentMessages(act, res, maxShowMessages-len(msgs)) {
		msgs = append(msgs, &discordgo.WebhookParams{Content: text, Flags: discordgo.MessageFlagsEphemeral,
			AllowedMentions: noMentions()})
	}
	for _, m := range msgs {
		if err := a.followup(ctx, who.token, m, true); err != nil {
			a.log.Warn("discord: could not show the arguments", "tenant", row.Tenant, "approval_id", act.ApprovalID,
				"discord_user", who.user, "err", scrub(err).Error())
			return
		}
	}
}

// details renders the clicked revision's card with its restricted parts
// shown and no buttons, for the one person allowed to see them.
func (a *Adapter) details(ctx context.Context, row *store.Approval, act templates.Action) (*discordgo.WebhookParams, bool) {
	rev, err := a.store.RevisionGet(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		a.log.Warn("discord: read the revision for Show details", "approval_id", act.ApprovalID, "err", err.Error())
		return nil, false
	}
	var req approval.Approval
	if err := json.Unmarshal(rev.Body, &req); err != nil {
		return nil, false
	}
	in := templates.Input{Approval: &req, State: approval.State(row.State), Superseded: act.Revision < row.Revision,
		RevealContent: true, Tenant: row.Tenant}
	if len(row.Decision) > 0 {
		var d approval.Decision
		if json.Unmarshal(row.Decision, &d) == nil {
			in.Decision = &d
		}
	}
	msg := a.render.Discord(templates.Build(in))
	return &discordgo.WebhookParams{
		Content:         chunk.Cut("Details, only you see this. "+msg.Content, contentMax),
		Embeds:          msg.Embeds,
		Flags:           discordgo.MessageFlagsEphemeral,
		AllowedMentions: noMentions(),
	}, true
}

// argumentMessages lays the arguments out in ``` blocks over as many
// messages as Discord's 2,000 characters need, at most limit; what does
// not fit is counted in a closing line.
func argumentMessages(act templates.Action, res threads.ShowResult, limit int) []string {
	limit = max(limit, 1)
	function := markdown(chunk.Cut(res.Function, 100))
	first := fmt.Sprintf("Arguments of **%s** · approval %s, revision %d · only you see this\ndigest %s",
		function, markdown(act.ApprovalID), act.Revision, markdown(res.Digest))
	if res.Redacted {
		first += " · secrets are redacted"
	}
	later := func(part, of int) string {
		return fmt.Sprintf("Arguments of **%s**, part %d of %d", function, part, of)
	}
	header := max(chunk.Len(first), chunk.Len(later(limit, limit)))
	budget := contentMax - header - 1 - len(codeOpen) - len(codeClose) - 1 - chunk.Len(fmt.Sprintf(leftOutNote, 1<<40))
	chunks := chunk.Code(string(res.Arguments), budget, nil)
	if len(chunks) == 0 {
		chunks = []string{"(no arguments)"}
	}
	left := 0
	if len(chunks) > limit {
		for _, c := range chunks[limit:] {
			left += chunk.Len(c)
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
			text += "\n" + fmt.Sprintf(leftOutNote, left)
		}
		msgs = append(msgs, text)
	}
	return msgs
}
