package discord_test

import (
	"strings"
	"testing"
	"time"

	discordad "approvalsbot/adapters/discord"
	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/internal/utf16text"
	"approvalsbot/store"
	"approvalsbot/templates/templatestest"
	"approvalsbot/tenant"
	"approvalsbot/threads"
	"approvalsbot/threads/surfacetest"
	"approvalsbot/threads/threadstest"
)

func TestConformance(t *testing.T) {
	surfacetest.Run(t, discordConformance{store: threadstest.OpenSQLite(t)})
}

// discordConformance is the Discord surface over a fresh fake Discord.
type discordConformance struct {
	store store.Store
}

func (discordConformance) Traits() surfacetest.Traits {
	return surfacetest.Traits{Buttons: true, MessageMax: 2000, Notice: surfacetest.Split}
}

func (discordConformance) Skip(string) string { return "" }

func (c discordConformance) New(t *testing.T) (threads.Surface, surfacetest.Fake) {
	fake := discordtest.New(t, discordtest.Options{Token: botToken, ApplicationID: appID})
	fake.AddGuild(guildID, "acme", discordad.Permissions)
	fake.AddChannel(guildID, chApproval, "approvals")
	s, err := discordad.NewSurface(discordad.Options{Credentials: discordad.Credentials{BotToken: botToken, ApplicationID: appID}, APIURL: fake.URL(),
		Tenants: func() map[string]*tenant.Tenant { return nil },
		Store:   c.store, PerChannelRate: 1000, Burst: 50})
	if err != nil {
		t.Fatal(err)
	}
	return s, discordFake{fake}
}

type discordFake struct{ d *discordtest.Server }

func (discordFake) Target() string { return approvalTarget }

func (f discordFake) Card(post threads.PostRef) (surfacetest.Message, bool) {
	m, ok := f.d.Message(post.Ref)
	return discordMessage(m), ok
}

func (f discordFake) Thread(root threads.PostRef) []surfacetest.Message {
	thread := root.ThreadRef
	if card, ok := f.d.Message(root.Ref); ok && thread == "" {
		thread = card.Thread
	}
	if thread == "" {
		return nil
	}
	return discordMessages(f.d.Messages(thread))
}

func (f discordFake) Channel(target string) []surfacetest.Message {
	return discordMessages(f.d.Messages(strings.TrimPrefix(target, "discord:channel:")))
}

func (f discordFake) Fail(op surfacetest.Op, fl surfacetest.Failure, card threads.PostRef) time.Duration {
	route := discordtest.RouteMessageCreate
	if op == surfacetest.OpEdit {
		route = discordtest.RouteMessageEdit
	}
	switch fl {
	case surfacetest.RateLimited:
		f.d.RateLimit(route, 1, 7500*time.Millisecond, false)
		return 7500 * time.Millisecond
	case surfacetest.Unavailable:
		f.d.Fail(route, 1, 503, 0)
	case surfacetest.Refused:
		f.d.Fail(route, 1, 401, 0)
	case surfacetest.ChannelGone:
		f.d.RemoveChannel(card.Channel)
	case surfacetest.MessageGone:
		f.d.DeleteMessage(card.Ref)
	}
	return 0
}

func (discordFake) Secrets() []string { return []string{botToken} }

func discordMessages(ms []discordtest.Message) []surfacetest.Message {
	out := make([]surfacetest.Message, len(ms))
	for i, m := range ms {
		out[i] = discordMessage(m)
	}
	return out
}

// discordMessage is m as a person reads it; its size is its content's,
// which Discord limits (a card's embed has limits of its own, which the
// fake enforces).
func discordMessage(m discordtest.Message) surfacetest.Message {
	out := surfacetest.Message{Text: plain(m.Text()), Size: utf16text.Len(m.Content)}
	var ids []string
	for _, b := range m.Buttons {
		ids = append(ids, b.CustomID)
	}
	out.Approval, out.Decidable = templatestest.Decides(ids...)
	return out
}
