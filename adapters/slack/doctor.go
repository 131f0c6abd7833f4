package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// RequiredScopes are the bot token scopes of exactly the methods the
// adapter calls: chat:write, im:write (conversations.open), commands,
// channels:read and groups:read (conversations.info in Doctor), as
// deploy/slack-app-manifest.yaml asks.
var RequiredScopes = []string{"chat:write", "im:write", "commands", "channels:read", "groups:read"}

// Doctor checks the Slack side and writes one line per finding, never a
// secret: the token (auth.test), the granted scopes, how interactions
// arrive, and whether the bot can post in each configured channel. It
// returns an error counting the problems found.
func (a *Surface) Doctor(ctx context.Context, w io.Writer) error {
	say := func(format string, args ...any) { fmt.Fprintf(w, "slack: "+format+"\n", args...) }
	problems := 0
	problem := func(format string, args ...any) {
		problems++
		say("PROBLEM: "+format, args...)
	}

	auth, err := a.api.AuthTestContext(ctx)
	if cause := unreachable(err); cause != nil {
		problem("cannot reach Slack's Web API at %s: %v (a network failure, not a token problem: check DNS, a firewall or proxy, and slack.api_url)", a.apiURL, cause)
		return fmt.Errorf("slack: cannot reach the Web API")
	}
	if err != nil {
		problem("the bot token does not work: %s (check SLACK_BOT_TOKEN: the Bot User OAuth Token, xoxb-…)", describe(err))
		return fmt.Errorf("slack: the bot token does not work")
	}
	say("the bot token works: bot %s (%s) in workspace %s (%s) %s", auth.User, auth.UserID, auth.Team, auth.TeamID, auth.URL)

	if raw := auth.Header.Get("X-OAuth-Scopes"); raw == "" {
		say("granted scopes: Slack did not say (no X-OAuth-Scopes header); needed: %s", strings.Join(RequiredScopes, ", "))
	} else {
		granted := strings.Split(strings.ReplaceAll(raw, " ", ""), ",")
		say("granted scopes: %s", strings.Join(granted, ", "))
		for _, s := range RequiredScopes {
			if !slices.Contains(granted, s) {
				problem("scope %s is missing: add it under OAuth & Permissions (or from the manifest) and reinstall the app", s)
			}
		}
	}

	switch {
	case a.socketAPI != nil:
		if _, _, err := a.socketAPI.StartSocketModeContext(ctx); err != nil {
			if cause := unreachable(err); cause != nil {
				problem("Socket Mode: cannot reach Slack at %s: %v (a network failure, not a token problem)", a.apiURL, cause)
				break
			}
			problem("Socket Mode: the app token does not work: %s (check SLACK_APP_TOKEN: an app-level token, xapp-…, with connections:write)", describe(err))
		} else {
			say("interactions: Socket Mode; the app token works")
		}
	case a.secret != "":
		say("interactions: HTTP at POST /slack/interactions and POST /slack/commands, verified with the signing secret")
	default:
		problem("interactions: neither signing_secret nor app_token is set, so buttons and /approvals cannot work")
	}

	for _, c := range configuredChannels(a.tenants()) {
		info, err := a.api.GetConversationInfoContext(ctx, &slackgo.GetConversationInfoInput{ChannelID: c.id})
		switch {
		case err != nil && slackCode(err) == "channel_not_found":
			problem("slack:%s (%s): the bot cannot see this channel: check the id, or invite the bot if it is private", c.id, c.uses)
		case err != nil:
			problem("slack:%s (%s): cannot check: %s", c.id, c.uses, describe(err))
		case info.IsArchived:
			problem("slack:%s #%s (%s): the channel is archived", c.id, info.Name, c.uses)
		case !info.IsMember:
			problem("slack:%s #%s (%s): the bot is not a member: type /invite @%s in #%s", c.id, info.Name, c.uses, auth.User, info.Name)
		default:
			say("slack:%s #%s (%s): the bot is a member and can post", c.id, info.Name, c.uses)
		}
	}
	if problems > 0 {
		return fmt.Errorf("slack: %d problem(s) found", problems)
	}
	return nil
}

type configuredChannel struct {
	id   string
	uses string // "acme post, acme audit"
}

// configuredChannels lists the Slack channels the configuration uses.
func configuredChannels(tenants map[string]*tenant.Tenant) []configuredChannel {
	uses := map[string][]string{}
	add := func(tenant, what string, targets ...ladder.Target) {
		for _, t := range targets {
			if t.Kind == ladder.KindSlackChannel {
				u := tenant + " " + what
				if !slices.Contains(uses[t.ID], u) {
					uses[t.ID] = append(uses[t.ID], u)
				}
			}
		}
	}
	ids := make([]string, 0, len(tenants))
	for id := range tenants {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		t := tenants[id]
		add(id, "post", t.Post...)
		for _, o := range t.Tools {
			add(id, "post for "+o.Glob, o.Post...)
		}
		names := make([]string, 0, len(t.Ladders))
		for name := range t.Ladders {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			for _, s := range t.Ladders[name].Steps {
				add(id, "ladder "+name+" post", s.Post...)
			}
		}
		if t.Audit != nil {
			add(id, "audit", *t.Audit)
		}
		if t.Digest != nil {
			add(id, "digest", t.Digest.To)
		}
	}
	out := make([]configuredChannel, 0, len(uses))
	for id, u := range uses {
		out = append(out, configuredChannel{id: id, uses: strings.Join(u, ", ")})
	}
	slices.SortFunc(out, func(x, y configuredChannel) int { return strings.Compare(x.id, y.id) })
	return out
}

// unreachable is the network's own words for a call Slack never answered,
// without its address; nil otherwise. Doctor must not blame a token.
func unreachable(err error) error {
	var ue *url.Error
	if err == nil || slackCode(err) != "" || !errors.As(err, &ue) {
		return nil
	}
	return ue.Err
}

// describe is an error as a person fixing it reads it.
func describe(err error) string {
	if code := slackCode(err); code != "" {
		return code
	}
	var rl *slackgo.RateLimitedError
	if errors.As(err, &rl) {
		return "rate limited; try again in " + rl.RetryAfter.String()
	}
	return scrub(err).Error()
}
