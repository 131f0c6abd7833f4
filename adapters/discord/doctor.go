package discord

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// application is what Doctor reads of GET /applications/@me; discordgo's
// Application lacks the interactions endpoint.
type application struct {
	ID                      string `json:"id"`
	Name                    string `json:"name"`
	VerifyKey               string `json:"verify_key"`
	InteractionsEndpointURL string `json:"interactions_endpoint_url"`
}

// Doctor checks the Discord side and writes one line per finding, never a
// secret: the token, the application and its interactions transport, each
// configured channel's permissions, roles' mentionability, /approvals'
// registration, and the invite URL. It returns an error counting the
// problems found.
func (a *Surface) Doctor(ctx context.Context, w io.Writer) error {
	say := func(format string, args ...any) { fmt.Fprintf(w, "discord: "+format+"\n", args...) }
	problems := 0
	problem := func(format string, args ...any) {
		problems++
		say("PROBLEM: "+format, args...)
	}
	opt := discordgo.WithContext(ctx)

	me, err := a.rest.User("@me", opt)
	if cause := unreachable(err); cause != nil {
		problem("cannot reach Discord's API at %s: %v (a network failure, not a token problem: check DNS, a firewall or proxy, and discord.api_url)", a.apiBase(), cause)
		say("invite URL (exactly the permissions used: %s): %s", permissionList(Permissions), InviteURL(a.appID))
		return errors.New("discord: cannot reach the API")
	}
	if err != nil {
		problem("the bot token does not work: %s (check DISCORD_BOT_TOKEN: the token from the Bot page of the developer portal)", a.describe(err))
		say("invite URL (exactly the permissions used: %s): %s", permissionList(Permissions), InviteURL(a.appID))
		return errors.New("discord: the bot token does not work")
	}
	say("the bot token works: bot %s (%s)", me.Username, me.ID)

	var app application
	body, err := a.rest.RequestWithBucketID("GET", discordgo.EndpointApplication("@me"), nil, discordgo.EndpointApplication(""), opt)
	if err == nil {
		err = json.Unmarshal(body, &app)
	}
	switch {
	case err != nil:
		problem("cannot read the application (GET /applications/@me): %s", a.describe(err))
	case app.ID != a.appID:
		problem("the token belongs to application %s, but application_id is %s", app.ID, a.appID)
	default:
		say("application %s (%s)", app.Name, app.ID)
	}
	switch {
	case err != nil:
	case a.publicKey != nil && app.InteractionsEndpointURL == "":
		problem("public_key is set, so the bot waits for interactions at POST /discord/interactions, but the application has no Interactions Endpoint URL: set it to https://<this bot's public address>/discord/interactions, or remove public_key to use the gateway")
	case a.publicKey != nil && !strings.EqualFold(app.VerifyKey, fmt.Sprintf("%x", []byte(a.publicKey))):
		problem("public_key is not the application's public key: copy it from General Information in the developer portal")
	case a.publicKey != nil:
		say("interactions: HTTP at %s, verified with the application's public key; the gateway is not used", app.InteractionsEndpointURL)
	case app.InteractionsEndpointURL != "":
		problem("interactions: public_key is not set, so the bot takes interactions over the gateway, but the application sends them to %s instead (Discord never sends both): clear the Interactions Endpoint URL, or set public_key", app.InteractionsEndpointURL)
	default:
		say("interactions: over the gateway (no intents needed); one replica holds the connection")
	}
	switch ok, err := a.commandsRegistered(ctx); {
	case err != nil:
		problem("cannot read the application's commands (GET /applications/%s/commands): %s", a.appID, a.describe(err))
	case ok:
		say("commands: /approvals list, /approvals ladder and /approvals passkey are registered")
	default:
		// Not a problem before the first start: bot serve registers it.
		say("commands: /approvals is not registered yet; the bot registers it when it starts")
	}

	guilds := map[string]*discordgo.Guild{}
	for _, c := range configuredChannels(a.tenants()) {
		a.checkChannel(ctx, c, me.ID, guilds, say, problem)
	}
	for _, r := range configuredRoles(a.tenants()) {
		found := false
		for _, g := range guilds {
			for _, role := range g.Roles {
				if role.ID == r.id {
					found = true
					if role.Mentionable {
						say("discord:role:%s @%s (%s): mentionable", r.id, role.Name, r.uses)
					} else {
						problem("discord:role:%s @%s (%s): not mentionable, so the escalation shows it without notifying anyone: turn on \"Allow anyone to @mention this role\"", r.id, role.Name, r.uses)
					}
				}
			}
		}
		if !found {
			say("discord:role:%s (%s): not in a server Doctor checked; it must be mentionable to notify", r.id, r.uses)
		}
	}
	say("invite URL (exactly the permissions used: %s): %s", permissionList(Permissions), InviteURL(a.appID))
	if problems > 0 {
		return fmt.Errorf("discord: %d problem(s) found", problems)
	}
	return nil
}

// checkChannel reads a channel, its server and the bot's membership, and
// says whether the bot holds what the channel's use needs.
func (a *Surface) checkChannel(ctx context.Context, c configuredChannel, botID string, guilds map[string]*discordgo.Guild,
	say, problem func(string, ...any)) {
	opt := discordgo.WithContext(ctx)
	ch, err := a.rest.Channel(c.id, opt)
	switch {
	case restCode(err) == 10003:
		problem("discord:channel:%s (%s): no such channel: check the id (Developer Mode, Copy Channel ID)", c.id, c.uses)
		return
	case restCode(err) == 50001:
		problem("discord:channel:%s (%s): the bot cannot see this channel: invite it to the server with the invite URL below, and let it view the channel", c.id, c.uses)
		return
	case err != nil:
		problem("discord:channel:%s (%s): cannot check: %s", c.id, c.uses, a.describe(err))
		return
	}
	if c.cards && ch.Type != discordgo.ChannelTypeGuildText && ch.Type != discordgo.ChannelTypeGuildNews {
		problem("discord:channel:%s #%s (%s): not a text or announcement channel, so cards cannot start threads there", c.id, ch.Name, c.uses)
		return
	}
	g := guilds[ch.GuildID]
	if g == nil && ch.GuildID != "" {
		if g, err = a.rest.Guild(ch.GuildID, opt); err != nil {
			problem("discord:channel:%s #%s (%s): cannot read its server: %s", c.id, ch.Name, c.uses, a.describe(err))
			return
		}
		guilds[ch.GuildID] = g
	}
	m, err := a.rest.GuildMember(ch.GuildID, botID, opt)
	if err != nil {
		problem("discord:channel:%s #%s (%s): cannot read the bot's membership: %s", c.id, ch.Name, c.uses, a.describe(err))
		return
	}
	st := discordgo.NewState()
	m.GuildID = ch.GuildID
	if m.User == nil {
		m.User = &discordgo.User{ID: botID}
	}
	perms, err := func() (int64, error) {
		if err := st.GuildAdd(&discordgo.Guild{ID: g.ID, OwnerID: g.OwnerID, Roles: g.Roles}); err != nil {
			return 0, err
		}
		if err := st.ChannelAdd(ch); err != nil {
			return 0, err
		}
		if err := st.MemberAdd(m); err != nil {
			return 0, err
		}
		return st.UserChannelPermissions(botID, ch.ID)
	}()
	if err != nil {
		problem("discord:channel:%s #%s (%s): cannot work out the bot's permissions: %s", c.id, ch.Name, c.uses, err)
		return
	}
	need := int64(discordgo.PermissionViewChannel | discordgo.PermissionSendMessages)
	does := "can post notices"
	if c.cards {
		need, does = Permissions, "can post cards, start their threads and reply in them"
	}
	if missing := need &^ perms; missing != 0 {
		problem("discord:channel:%s #%s (%s): the bot lacks %s: grant them to its role, or on the channel", c.id, ch.Name, c.uses, permissionList(missing))
		return
	}
	say("discord:channel:%s #%s (%s): the bot %s", c.id, ch.Name, c.uses, does)
}

// apiBase is where the REST calls go (api_url's scheme and host, which
// the transport puts in place of discord.com), for lines a person reads.
func (a *Surface) apiBase() string {
	if rw, ok := a.client.Transport.(rewriter); ok {
		return rw.scheme + "://" + rw.host
	}
	return "https://" + discordHost
}

// unreachable is the network's own words for a call never answered,
// without its address (which names discord.com whatever api_url says).
func unreachable(err error) error {
	var (
		ue *url.Error
		re *discordgo.RESTError
	)
	if err == nil || errors.As(err, &re) || !errors.As(err, &ue) {
		return nil
	}
	return ue.Err
}

// describe is an error as a person checking the configuration reads it.
func (a *Surface) describe(err error) string {
	if cause := unreachable(err); cause != nil {
		return fmt.Sprintf("cannot reach %s: %v", a.apiBase(), cause)
	}
	return scrub(err).Error()
}

func permissionList(bits int64) string {
	var names []string
	for _, p := range permissionNames {
		if bits&p.bit != 0 {
			names = append(names, p.name)
		}
	}
	return strings.Join(names, ", ")
}

type configuredChannel struct {
	id    string
	uses  string // "acme post, acme audit"
	cards bool   // cards go there (threads needed), not only notices
}

type configuredRole struct {
	id   string
	uses string
}

// configuredChannels lists the Discord channels the configuration uses.
func configuredChannels(tenants map[string]*tenant.Tenant) []configuredChannel {
	uses := map[string][]string{}
	cards := map[string]bool{}
	forEachTarget(tenants, func(tenant, what string, card bool, t ladder.Target) {
		if t.Kind != ladder.KindDiscordChannel {
			return
		}
		if u := tenant + " " + what; !slices.Contains(uses[t.ID], u) {
			uses[t.ID] = append(uses[t.ID], u)
		}
		cards[t.ID] = cards[t.ID] || card
	})
	out := make([]configuredChannel, 0, len(uses))
	for id, u := range uses {
		out = append(out, configuredChannel{id: id, uses: strings.Join(u, ", "), cards: cards[id]})
	}
	slices.SortFunc(out, func(x, y configuredChannel) int { return strings.Compare(x.id, y.id) })
	return out
}

// configuredRoles lists every Discord role a ladder mentions.
func configuredRoles(tenants map[string]*tenant.Tenant) []configuredRole {
	uses := map[string][]string{}
	forEachTarget(tenants, func(tenant, what string, _ bool, t ladder.Target) {
		if t.Kind != ladder.KindDiscordRole {
			return
		}
		if u := tenant + " " + what; !slices.Contains(uses[t.ID], u) {
			uses[t.ID] = append(uses[t.ID], u)
		}
	})
	out := make([]configuredRole, 0, len(uses))
	for id, u := range uses {
		out = append(out, configuredRole{id: id, uses: strings.Join(u, ", ")})
	}
	slices.SortFunc(out, func(x, y configuredRole) int { return strings.Compare(x.id, y.id) })
	return out
}

// forEachTarget calls fn for every target the configuration names, in a
// stable order, saying what it is for and whether cards go there.
func forEachTarget(tenants map[string]*tenant.Tenant, fn func(tenant, what string, cards bool, t ladder.Target)) {
	ids := make([]string, 0, len(tenants))
	for id := range tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	each := func(tenant, what string, cards bool, ts []ladder.Target) {
		for _, t := range ts {
			fn(tenant, what, cards, t)
		}
	}
	for _, id := range ids {
		t := tenants[id]
		each(id, "post", true, t.Post)
		for _, o := range t.Tools {
			each(id, "post for "+o.Glob, true, o.Post)
		}
		names := make([]string, 0, len(t.Ladders))
		for name := range t.Ladders {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			for i, s := range t.Ladders[name].Steps {
				what := fmt.Sprintf("ladder %s step %d", name, i+1)
				each(id, what+" post", true, s.Post)
				each(id, what+" mention", false, s.Mention)
			}
		}
		if t.Audit != nil {
			each(id, "audit", false, []ladder.Target{*t.Audit})
		}
		if t.Digest != nil {
			each(id, "digest", false, []ladder.Target{t.Digest.To})
		}
	}
}
