package discord

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/chunk"
	"approvalsbot/internal/utf16text"
	"approvalsbot/ladder"
	"approvalsbot/say"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// The bot's one application command, /approvals, with two subcommands
// (a command with subcommands cannot be run bare):
// https://discord.com/developers/docs/interactions/application-commands#subcommands-and-subcommand-groups
const (
	commandName   = "approvals"
	subList       = "list"
	subLadder     = "ladder"
	subPasskey    = "passkey"
	subGrants     = "grants"
	chatInput     = 1 // APPLICATION_COMMAND type CHAT_INPUT
	optSubcommand = 1 // option type SUB_COMMAND
	// commandTimeout bounds the work of one command's answer.
	commandTimeout = 30 * time.Second
)

const commandHelp = "`/approvals list` lists what waits for a decision in this channel's tenant, oldest first, with links to the cards.\n" +
	"`/approvals ladder` shows the tenant's escalation ladders as timelines.\n" +
	"`/approvals passkey` gives you, and only you, a link to enrol or remove your passkeys, which risky approvals may need.\n" +
	"`/approvals grants` lists the tenant's live grants (Approve and allow…) with a Revoke for each.\n" +
	"In a channel no tenant posts to, the tenants you are a member of are shown. Only a tenant's members see its approvals and ladders."

// commandOptionDef is a subcommand as registered.
type commandOptionDef struct {
	Type        int    `json:"type"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// commands are the commands the bot registers: /approvals list,
// /approvals ladder and /approvals passkey, in servers and in the bot's
// DMs.
func commands() []json.RawMessage {
	cmd := struct {
		Name        string             `json:"name"`
		Type        int                `json:"type"`
		Description string             `json:"description"`
		Options     []commandOptionDef `json:"options"`
		Contexts    []int              `json:"contexts"`
	}{
		Name: commandName, Type: chatInput, Description: "What waits for a decision, and the escalation ladders",
		Options: []commandOptionDef{
			{Type: optSubcommand, Name: subList, Description: "What waits for a decision in this channel's tenant, oldest first"},
			{Type: optSubcommand, Name: subLadder, Description: "The tenant's escalation ladders as timelines"},
			{Type: optSubcommand, Name: subPasskey, Description: "A link, for you alone, to enrol or remove your passkeys"},
			{Type: optSubcommand, Name: subGrants, Description: "The tenant's live grants, with Revoke"},
		},
		// A server's channels and the bot's DMs.
		Contexts: []int{int(discordgo.InteractionContextGuild), int(discordgo.InteractionContextBotDM)},
	}
	b, _ := json.Marshal(cmd) // plain data: cannot fail
	return []json.RawMessage{b}
}

// RegisterCommands registers /approvals (list, ladder) as the
// application's global commands, replacing any it had; Run calls it at
// start, bot doctor --register too.
func (a *Surface) RegisterCommands(ctx context.Context) error {
	url := discordgo.EndpointApplicationGlobalCommands(a.appID)
	if _, err := a.call(ctx, "PUT", url, commands(), url); err != nil {
		return fmt.Errorf("discord: register the /approvals command: %w", scrub(err))
	}
	return nil
}

// registeredCommand is what Doctor reads of a registered command.
type registeredCommand struct {
	Name    string `json:"name"`
	Options []struct {
		Name string `json:"name"`
	} `json:"options"`
}

// commandsRegistered reports whether /approvals list, ladder and passkey
// are registered.
func (a *Surface) commandsRegistered(ctx context.Context) (bool, error) {
	url := discordgo.EndpointApplicationGlobalCommands(a.appID)
	body, err := a.call(ctx, "GET", url, nil, url)
	if err != nil {
		return false, err
	}
	var got []registeredCommand
	if err := json.Unmarshal(body, &got); err != nil {
		return false, err
	}
	for _, c := range got {
		if c.Name != commandName {
			continue
		}
		subs := map[string]bool{}
		for _, o := range c.Options {
			subs[o.Name] = true
		}
		return subs[subList] && subs[subLadder] && subs[subPasskey], nil
	}
	return false, nil
}

// command answers /approvals to the person alone, after a deferred
// ephemeral answer (reading what waits takes longer), through the webhook.
func (a *Adapter) command(in *inbound, who person) (*answer, threads.Work) {
	var data commandData
	if err := in.data(&data); err != nil || data.Name != commandName {
		a.log.Info("discord: a command the bot does not have", "discord_user", who.user)
		return ephemeral("The bot knows no such command.\n" + commandHelp), threads.Work{}
	}
	sub := ""
	if len(data.Options) == 1 && data.Options[0].Type == optSubcommand {
		sub = data.Options[0].Name
	}
	if sub == subPasskey {
		return messageAnswer(passkeyMessage(a.tenants(), a.passkeys, who.user)), threads.Work{}
	}
	if sub != subList && sub != subLadder && sub != subGrants {
		return ephemeral(commandHelp), threads.Work{}
	}
	return &answer{Type: answerDeferredMessage, Data: flagsOnly{Flags: ephemeralText}}, threads.Work{Timeout: commandTimeout,
		Run: func(ctx context.Context) {
			msgs := a.commandAnswer(ctx, sub, who)
			if err := a.editOriginal(ctx, who.token, msgs[0].Edit(), true); err != nil {
				a.log.Warn("discord: could not answer a command", "discord_user", who.user, "err", scrub(err).Error())
				return
			}
			for _, m := range msgs[1:] {
				if err := a.followup(ctx, who.token, m, false); err != nil {
					a.log.Warn("discord: could not answer a command", "discord_user", who.user, "err", scrub(err).Error())
					return
				}
			}
		}}
}

// passkeyMessage is /approvals passkey's answer, to the person alone
// (ephemeral): an enrolment link for each tenant they are a member of.
func passkeyMessage(tenants map[string]*tenant.Tenant, links threads.EnrolLinks, user string) *Message {
	text := say.PasskeysOff
	if links != nil {
		text = say.PasskeyNoMember
		if got := threads.PasskeyLinks(tenants, links, ladder.SurfaceDiscord, user); len(got) > 0 {
			lines := make([]string, 0, len(got)+1)
			for _, l := range got {
				// <URL>: a link without a preview, which would fetch it.
				lines = append(lines, say.PasskeyLinkLine("**"+markdown(l.Tenant)+"**", markdown(l.User),
					l.Expires.UTC().Format("15:04 UTC"), angleLink(l.URL)))
			}
			text = strings.Join(append(lines, say.PasskeyPrivate), "\n")
		}
	}
	return &Message{Content: utf16text.Cut(text, contentMax), Flags: ephemeralText, AllowedMentions: noMentions()}
}

// commandAnswer is the answer to /approvals list or ladder, for the
// tenants threads.TenantsFor finds, in at least one message.
func (a *Adapter) commandAnswer(ctx context.Context, sub string, who person) []*Message {
	tenants := a.tenants()
	member := func(t *tenant.Tenant) bool { _, ok := t.MemberOn(ladder.SurfaceDiscord, who.user); return ok }
	ids, byChannel := threads.TenantsFor(tenants, func(t *tenant.Tenant) bool { return postsTo(t, who.channel) }, member)
	if len(ids) == 0 {
		return textMessages([]string{"No tenant posts to this channel, and you are not a member of any tenant in this bot's " +
			"configuration, so there is nothing to show. An admin can add your Discord id `" + markdown(who.user) + "`."})
	}
	if sub == subGrants {
		return a.grantsMessages(ctx, ids, tenants, member, who.user)
	}
	var sections []string
	for _, id := range ids {
		t := tenants[id]
		if !member(t) {
			// What waits and whom a ladder tells: members only, however
			// public the channel (say.MembersOnly says why).
			sections = append(sections, say.MembersOnly("**"+markdown(id)+"**"))
			continue
		}
		if sub == subLadder {
			sections = append(sections, ladderSections(id, t)...)
			continue
		}
		sections = append(sections, a.pendingSection(ctx, id, t.Location(), byChannel, who))
	}
	return textMessages(sections)
}

// postsTo reports whether a tenant posts to a Discord channel.
func postsTo(t *tenant.Tenant, channel string) bool {
	if channel == "" {
		return false
	}
	return threads.PostsTo(t, func(tg ladder.Target) bool { return tg.Kind == ladder.KindDiscordChannel && tg.ID == channel })
}

// pendingSection lists a tenant's waiting approvals, oldest first: in a
// channel, those with a card there, linked; elsewhere each with its card's
// channel. The functions and ids are the backend's, escaped.
func (a *Adapter) pendingSection(ctx context.Context, tenant string, zone *time.Location, byChannel bool, who person) string {
	p := threads.ListPending(ctx, a.store, a.log.With("surface", "discord"), threads.ListParams{Tenant: tenant, Zone: zone, Now: a.now(),
		InChannel: byChannel,
		Card:      func(posts []threads.PostRef) (threads.PostRef, bool) { return cardIn(posts, byChannel, who.channel) }})
	if p.Failed {
		return fmt.Sprintf("**%s**: the bot cannot read what waits right now; try again in a moment.", markdown(tenant))
	}
	where := ""
	if byChannel {
		where = " in this channel"
	}
	if len(p.Items) == 0 {
		return fmt.Sprintf("**%s**: nothing waits for a decision%s.", markdown(tenant), where)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "**%s**: %d wait for a decision%s, oldest first:", markdown(tenant), len(p.Items)+p.More, where)
	for _, w := range p.Items {
		name := markdown(utf16text.Cut(w.Function, 80))
		switch {
		case w.Card != nil && byChannel && who.guild != "":
			name = "[" + name + "](https://discord.com/channels/" + who.guild + "/" + w.Card.Channel + "/" + w.Card.Ref + ")"
		case w.Card != nil && !byChannel:
			// A channel mention links it in any server and pings nobody.
			name += " in <#" + w.Card.Channel + ">"
		}
		fmt.Fprintf(&b, "\n• %s · %s · waiting %s", name, markdown(utf16text.Cut(w.ID, 120)), threads.Waited(w.Waited))
		if w.Due != "" {
			b.WriteString(" · deadline " + w.Due)
		}
	}
	if p.More > 0 {
		fmt.Fprintf(&b, "\n…and %d more.", p.More)
	}
	return b.String()
}

// cardIn is the card to name for an approval: its first in the channel,
// or (outside one) in any server channel (a DM is someone's own).
func cardIn(posts []threads.PostRef, byChannel bool, channel string) (threads.PostRef, bool) {
	for _, p := range posts {
		t, err := ladder.ParseTarget(p.Target)
		if err != nil || t.Kind != ladder.KindDiscordChannel || p.Channel == "" || p.Ref == "" {
			continue
		}
		if byChannel && p.Channel != channel {
			continue
		}
		return p, true
	}
	return threads.PostRef{}, false
}

// ladderSections shows a tenant's ladders, and its tool overrides', as
// `bot check` prints them, in code blocks.
func ladderSections(id string, t *tenant.Tenant) []string {
	var out []string
	for _, v := range threads.Ladders(t) {
		head := fmt.Sprintf("**%s** · ladder %s (deadline %s):", markdown(id), markdown(v.Ladder), ladder.FormatDuration(v.Deadline))
		if v.Glob != "" {
			head = fmt.Sprintf("**%s** · calls of %s take ladder %s (deadline %s):", markdown(id), markdown(v.Glob),
				markdown(v.Ladder), ladder.FormatDuration(v.Deadline))
		}
		budget := contentMax - utf16text.Len(head) - len("\n```\n\n```")
		for i, code := range chunk.Code(strings.Join(v.Lines, "\n"), budget) {
			h := head
			if i > 0 {
				h = fmt.Sprintf("**%s** · ladder %s, continued:", markdown(id), markdown(v.Ladder))
			}
			out = append(out, h+"\n```\n"+strings.TrimSuffix(code, "\n")+"\n```")
		}
	}
	return out
}

// textMessages packs sections into at least one ephemeral message within
// contentMax, a longer section split at lines.
func textMessages(sections []string) []*Message {
	var texts []string
	cur := ""
	for _, s := range sections {
		pieces := []string{s}
		if utf16text.Len(s) > contentMax {
			pieces = chunk.Lines(s, contentMax)
		}
		for _, p := range pieces {
			if cur != "" && utf16text.Len(cur)+2+utf16text.Len(p) > contentMax {
				texts = append(texts, cur)
				cur = ""
			}
			if cur != "" {
				cur += "\n\n"
			}
			cur += p
		}
	}
	if cur != "" || len(texts) == 0 {
		texts = append(texts, cur)
	}
	msgs := make([]*Message, len(texts))
	for i, t := range texts {
		msgs[i] = &Message{Content: t, Flags: ephemeralText, AllowedMentions: noMentions()}
	}
	return msgs
}
