package app

import (
	"context"
	"sync/atomic"

	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/slack"
	"approvalsbot/config"
	"approvalsbot/tenant"
)

// liveConfig holds the configuration in force; a reload swaps it, which
// changes only later approvals (each keeps what it was given).
type liveConfig struct{ p atomic.Pointer[config.Config] }

func (l *liveConfig) Tenant(id string) (*tenant.Tenant, bool) {
	t, ok := l.p.Load().Tenants[id]
	return t, ok
}

func (l *liveConfig) tenants() map[string]*tenant.Tenant { return l.p.Load().Tenants }

// reload serves Options.Reloads until ctx ends.
func (a *App) reload(ctx context.Context) error {
	reloads := a.reloads
	for {
		select {
		case <-ctx.Done():
			return nil
		case _, ok := <-reloads:
			if !ok {
				reloads = nil // closed: no more reloads, but no failure either
				continue
			}
			cfg, err := a.load()
			if err != nil {
				a.log.Error("configuration not reloaded; keeping the one in force", "err", err.Error())
				continue
			}
			a.live.p.Store(cfg)
			a.svc.StartFigures(cfg.Tenants)
			a.log.Info("configuration reloaded: tenants, members, ladders and targets for later approvals; "+
				"secrets, tokens, listen, listen_private, store, tick, lease, retention and digest schedules take effect at restart", "tenants", len(cfg.Tenants))
		}
	}
}

// SlackCredentials are the slack section's secrets, as the adapter takes them.
func SlackCredentials(c *config.Slack) slack.Credentials {
	return slack.Credentials{BotToken: c.BotToken.Reveal(), SigningSecret: c.SigningSecret.Reveal(), AppToken: c.AppToken.Reveal()}
}

// DiscordCredentials are the discord section's, as the adapter takes them.
func DiscordCredentials(c *config.Discord) discord.Credentials {
	return discord.Credentials{BotToken: c.BotToken.Reveal(), ApplicationID: c.ApplicationID, PublicKey: c.PublicKey.Reveal()}
}
