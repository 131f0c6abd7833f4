package slack

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/adapters/chunk"
	"approvalsbot/internal/utf16text"
	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// The subcommands of /approvals; bare /approvals lists, as
// /approvals list does (Discord's command has list alone: a command with
// subcommands cannot run bare there).
const (
	subList    = "list"
	subLadder  = "ladder"
	subPasskey = "passkey"
	subGrants  = "grants"
	subHelp    = "help"
)

const commandHelp = "*/approvals* or */approvals list* lists what waits for a decision in this channel's tenant, oldest first, " +
	"with links to the cards.\n" +
	"*/approvals ladder* shows the tenant's escalation ladders as timelines.\n" +
	"*/approvals passkey* gives you, and only you, a link to enrol or remove your passkeys, which risky approvals may need.\n" +
	"*/approvals grants* lists the tenant's live grants (Approve and allow…) with a Revoke for each.\n" +
	"*/approvals help* shows this text.\n" +
	"In a channel no tenant posts to, the tenants you are a member of are shown. " +
	"Only a tenant's members see its approvals and ladders."

// serveCommand is POST /slack/commands.
func (a *Adapter) serveCommand(w http.ResponseWriter, r *http.Request) {
	body, ok := a.verified(w, r)
	if !ok {
		return
	}
	form, err := url.ParseQuery(string(body))
	if err != nil {
		a.refuse(w, r, http.StatusBadRequest, "the body is not a form", "command not a form")
		return
	}
	if field, ok := oneValueEach(form); !ok {
		a.refuse(w, r, http.StatusBadRequest, "the body holds the field "+field+" twice", "form field twice")
		return
	}
	cmd := slackgo.SlashCommand{Command: form.Get("command"), Text: form.Get("text"), UserID: form.Get("user_id"),
		ChannelID: form.Get("channel_id"), ResponseURL: form.Get("response_url"), TeamID: form.Get("team_id")}
	if !a.work.Start(a.command(cmd)) {
		a.refuse(w, r, http.StatusServiceUnavailable, say.ShuttingDown.Text(), "shutting down")
		return
	}
	// An empty 200 shows nothing; the answer follows through response_url.
	w.WriteHeader(http.StatusOK)
}

// command handles a slash command: acked empty at once, answered after.
func (a *Adapter) command(cmd slackgo.SlashCommand) threads.Work {
	who := person{user: cmd.UserID, channel: cmd.ChannelID, reply: a.allowedReply(cmd.ResponseURL)}
	return threads.Work{Timeout: commandTimeout, Run: func(ctx context.Context) {
		msgs := a.commandAnswer(ctx, cmd)
		if err := a.tell(ctx, who, msgs); err != nil {
			a.log.Warn("slack: could not answer a command", "slack_user", who.user, "channel", who.channel,
				"err", scrub(err).Error())
		}
	}}
}

func (a *Adapter) commandAnswer(ctx context.Context, cmd slackgo.SlashCommand) []Message {
	args := strings.Fields(cmd.Text)
	sub := ""
	if len(args) > 0 {
		sub = strings.ToLower(args[0])
	}
	tenants := a.tenants()
	switch {
	case sub == subHelp && len(args) == 1:
		return []Message{{Text: commandHelp}}
	case sub == subPasskey && len(args) == 1:
		return []Message{{Text: passkeyAnswer(tenants, a.passkeys, cmd.UserID)}}
	case sub == "":
		sub = subList
	case (sub != subList && sub != subLadder && sub != subGrants) || len(args) > 1:
		return []Message{{Text: fmt.Sprintf("The bot knows no `%s %s`.\n%s",
			mrkdwn(utf16text.Cut(cmd.Command, 40)), mrkdwn(utf16text.Cut(cmd.Text, 80)), commandHelp)}}
	}
	ids, byChannel := tenantsFor(tenants, cmd.ChannelID, cmd.UserID)
	if len(ids) == 0 {
		return []Message{{Text: "No tenant posts to this channel, and you are not a member of any tenant " +
			"in this bot's configuration, so there is nothing to show. An admin can add your Slack id " + mrkdwn(cmd.UserID) + "."}}
	}
	var sections []section
	team, asked := "", false // the workspace URL, asked at most once
	for _, id := range ids {
		t := tenants[id]
		if _, ok := t.MemberOn(ladder.SurfaceSlack, cmd.UserID); !ok {
			// What waits and whom a ladder tells: members only, however
			// public the channel (say.MembersOnly says why).
			sections = append(sections, section{mrkdwn: say.MembersOnly("*" + mrkdwn(id) + "*")})
			continue
		}
		if sub == subGrants {
			m, _ := t.MemberOn(ladder.SurfaceSlack, cmd.UserID)
			sections = append(sections, a.grantsText(ctx, id, t, m.Role.CanDecide()))
			continue
		}
		if sub == subLadder {
			for _, text := range ladderText(id, t) {
				sections = append(sections, section{mrkdwn: text})
			}
			continue
		}
		if !asked {
			team, asked = a.workspaceURL(ctx), true
		}
		sections = append(sections, a.pendingText(ctx, id, t.Location(), byChannel, cmd.ChannelID, team))
	}
	return layout(sections)
}

// passkeyAnswer is /approvals passkey's answer, which only the person
// sees (tell answers through response_url, ephemeral): an enrolment link
// for each tenant they are a member of.
func passkeyAnswer(tenants map[string]*tenant.Tenant, links threads.EnrolLinks, user string) string {
	if links == nil {
		return say.PasskeysOff
	}
	got := threads.PasskeyLinks(tenants, links, ladder.SurfaceSlack, user)
	if len(got) == 0 {
		return say.PasskeyNoMember
	}
	lines := make([]string, 0, len(got)+1)
	for _, l := range got {
		lines = append(lines, say.PasskeyLinkLine("*"+mrkdwn(l.Tenant)+"*", mrkdwn(l.User),
			l.Expires.UTC().Format("15:04 UTC"), "<"+urlEscaper.Replace(l.URL)+"|enrol or remove your passkeys>"))
	}
	return strings.Join(append(lines, say.PasskeyPrivate), "\n")
}

// tenantsFor finds whose /approvals this is: the tenants that post to the
// channel, else those the user is a member of.
func tenantsFor(tenants map[string]*tenant.Tenant, channel, user string) ([]string, bool) {
	return threads.TenantsFor(tenants,
		func(t *tenant.Tenant) bool { return postsTo(t, channel) },
		func(t *tenant.Tenant) bool { _, ok := t.MemberOn(ladder.SurfaceSlack, user); return ok })
}

func postsTo(t *tenant.Tenant, channel string) bool {
	if channel == "" {
		return false
	}
	return threads.PostsTo(t, func(tg ladder.Target) bool { return tg.Kind == ladder.KindSlackChannel && tg.ID == channel })
}

// pendingText lists a tenant's waiting approvals, oldest first, each
// linked to its card, as literal text (the functions and ids are the
// backend's); in a channel, only those with a card in it.
func (a *Adapter) pendingText(ctx context.Context, tenant string, zone *time.Location, byChannel bool, channel, team string) section {
	p := threads.ListPending(ctx, a.store, a.log.With("surface", "slack"), threads.ListParams{Tenant: tenant, Zone: zone, Now: a.now(),
		InChannel: byChannel,
		Card:      func(posts []threads.PostRef) (threads.PostRef, bool) { return cardOf(posts, byChannel, channel) }})
	if p.Failed {
		return section{mrkdwn: fmt.Sprintf("*%s*: the bot cannot read what waits right now; try again in a moment.", mrkdwn(tenant))}
	}
	var lines [][]elem
	for _, w := range p.Items {
		name := utf16text.Cut(w.Function, 80)
		line := []elem{textElem("• "), textElem(name)}
		if w.Card != nil {
			if link := a.permalink(ctx, team, *w.Card); link != "" {
				line[1] = linkElem(link, name)
			}
		}
		rest := fmt.Sprintf(" · %s · waiting %s", utf16text.Cut(w.ID, 120), threads.Waited(w.Waited))
		if w.Due != "" {
			rest += " · deadline " + w.Due
		}
		lines = append(lines, append(line, textElem(rest)))
	}
	where := ""
	if byChannel {
		where = " in this channel"
	}
	if len(lines) == 0 {
		return section{mrkdwn: fmt.Sprintf("*%s*: nothing waits for a decision%s.", mrkdwn(tenant), where)}
	}
	head := []elem{boldElem(tenant),
		textElem(fmt.Sprintf(": %d wait for a decision%s, oldest first:", len(lines)+p.More, where))}
	out := section{lines: append([][]elem{head}, lines...)}
	if p.More > 0 {
		out.lines = append(out.lines, []elem{textElem(fmt.Sprintf("…and %d more.", p.More))})
	}
	return out
}

// cardOf is the card to link for an approval: its first card in the
// channel, or (outside one) its first card in any Slack channel.
func cardOf(posts []threads.PostRef, byChannel bool, channel string) (threads.PostRef, bool) {
	for _, p := range posts {
		if p.Channel == "" || p.Ref == "" || !strings.HasPrefix(p.Target, "slack:") {
			continue
		}
		if byChannel && p.Channel != channel {
			continue
		}
		if !byChannel && !strings.HasPrefix(p.Channel, "C") && !strings.HasPrefix(p.Channel, "G") {
			continue // someone's DM: not a link for everyone
		}
		return p, true
	}
	return threads.PostRef{}, false
}

// workspaceURL is the workspace's address from auth.test, kept; "" unknown.
func (a *Surface) workspaceURL(ctx context.Context) string {
	a.teamMu.Lock()
	defer a.teamMu.Unlock()
	if a.teamURL == "" {
		if res, err := a.api.AuthTestContext(ctx); err == nil && res.URL != "" {
			a.teamURL = strings.TrimSuffix(res.URL, "/") + "/"
		}
	}
	return a.teamURL
}

// permalink links a card: the workspace URL with archives/CHANNEL/pTS,
// else chat.getPermalink; "" when neither works.
func (a *Surface) permalink(ctx context.Context, team string, p threads.PostRef) string {
	if team != "" {
		return team + "archives/" + p.Channel + "/p" + strings.ReplaceAll(p.Ref, ".", "")
	}
	link, err := a.api.GetPermalinkContext(ctx, &slackgo.PermalinkParameters{Channel: p.Channel, Ts: p.Ref})
	if err != nil {
		return ""
	}
	return link
}

// ladderText shows a tenant's ladders and overrides as `bot check` does.
func ladderText(id string, t *tenant.Tenant) []string {
	var out []string
	for _, v := range threads.Ladders(t) {
		head := fmt.Sprintf("*%s* · ladder `%s` (deadline %s):", mrkdwn(id), mrkdwn(v.Ladder), ladder.FormatDuration(v.Deadline))
		if v.Glob != "" {
			head = fmt.Sprintf("*%s* · calls of `%s` take ladder `%s` (deadline %s):", mrkdwn(id), mrkdwn(v.Glob),
				mrkdwn(v.Ladder), ladder.FormatDuration(v.Deadline))
		}
		out = append(out, head+"\n"+codeBlock(v.Lines))
	}
	return out
}

func codeBlock(lines []string) string {
	return "```\n" + chunk.Fence(mrkdwn(strings.Join(lines, "\n"))) + "\n```"
}

// section is one part of a command's answer: the bot's own words as
// verbatim mrkdwn, or literal lines for what the store holds.
type section struct {
	mrkdwn string
	lines  [][]elem
	// revoke, when set, follows the lines: one Revoke button per grant
	// (/approvals grants).
	revoke []slackgo.Block
}

// layout puts sections into messages within Slack's limits: mrkdwn in
// section blocks, literal lines in rich_text blocks, each block within
// 3,000 characters, a message within 50 blocks and 12,000 characters.
func layout(sections []section) []Message {
	var msgs []Message
	var blocks []slackgo.Block
	text := 0
	add := func(b slackgo.Block, n int) {
		if len(blocks) == maxBlocks || (len(blocks) > 0 && text+n > blocksTextMax) {
			msgs = append(msgs, Message{Text: "Approvals", Blocks: blocks})
			blocks, text = nil, 0
		}
		blocks = append(blocks, b)
		text += n
	}
	for _, s := range sections {
		if s.lines == nil {
			for _, piece := range chunk.Lines(s.mrkdwn, sectionTextMax) {
				add(slackgo.NewSectionBlock(slackgo.NewTextBlockObject(slackgo.MarkdownType, piece, false, true), nil, nil), utf16text.Len(piece))
			}
			continue
		}
		var cur []elem
		for _, line := range s.lines {
			n := elemsLen(line)
			if len(cur) > 0 && elemsLen(cur)+1+n > richTextMax {
				add(richText(cur...), elemsLen(cur))
				cur = nil
			}
			if len(cur) > 0 {
				cur = append(cur, breakElem())
			}
			cur = append(cur, line...)
		}
		if len(cur) > 0 {
			add(richText(cur...), elemsLen(cur))
		}
		for _, b := range s.revoke {
			add(b, 0)
		}
	}
	if len(blocks) > 0 {
		msgs = append(msgs, Message{Text: "Approvals", Blocks: blocks})
	}
	return msgs
}
