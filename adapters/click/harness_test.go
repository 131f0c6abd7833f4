package click_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/click"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

const callsSecret = "calls-secret-0123456789abcdef0123"

// testEnv is the bot's environment in these tests: the configuration
// names each secret, as a real one must.
func testEnv(name string) (string, bool) {
	v, ok := map[string]string{
		"BOT_EVENTS_SECRET": "events-secret-0123456789abcdef012",
		"BOT_CALLS_SECRET":  callsSecret,
	}[name]
	return v, ok
}

const testConfig = `
backend:
  url: "%s"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    forbid_self_approval: true
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
      - {user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA}
      - {user: "user:nocontent", role: admin, content: false, slack: U0NOC}
      - {user: "user:vic", role: viewer, slack: U0VIC}
`

// bot is the click flow for real: threads on SQLite in a temporary
// directory, the real backend client calling the fake job backend, and
// the flow reading that store and calling that service.
type bot struct {
	backend *backendtest.Fake
	svc     *threads.Service
	store   store.Store
	cfg     *config.Config
	opts    click.Options
	flow    *click.Flow
}

func newBot(t *testing.T) *bot {
	t.Helper()
	back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(callsSecret)}})
	cfg, err := config.Parse("bot.yaml", fmt.Appendf(nil, testConfig, back.URL()), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	st := threadstest.OpenSQLite(t)
	svc := threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: cfg, Backend: back, CallsSecret: callsSecret})
	b := &bot{backend: back, svc: svc, store: st, cfg: cfg}
	b.opts = click.Options{Surface: "slack", Store: st, Service: svc,
		Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants },
		Logger:  slog.New(slog.DiscardHandler)}
	b.flow = b.with(t, nil)
	return b
}

// with is a flow on the bot's options changed by edit.
func (b *bot) with(t *testing.T, edit func(*click.Options)) *click.Flow {
	t.Helper()
	o := b.opts
	if edit != nil {
		edit(&o)
	}
	f, err := click.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// ingest feeds a fixture event to threads, as the backend's event handler
// does once it has verified it, with the arguments behind it known to the
// fake job backend.
func (b *bot) ingest(t *testing.T, name string) *approval.Approval {
	t.Helper()
	ev := threadstest.Ingest(t, b.svc, name, nil)
	threadstest.Backed(t, b.backend, ev)
	return ev.Approval
}

// approval reads an approval as the store holds it.
func (b *bot) approval(t *testing.T, id string) *store.Approval {
	t.Helper()
	a, err := b.store.ApprovalGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// committed reports whether a decision on the approval is recorded and in
// flight (threads keeps it on the approval until the backend answers).
func (b *bot) committed(t *testing.T, id string) bool {
	t.Helper()
	return len(b.approval(t, id).Deciding) > 0
}

// action is the action of a button on an approval's first revision.
func action(kind templates.ActionKind, approvalID string) templates.Action {
	return templates.Action{Kind: kind, ApprovalID: approvalID, Revision: 1}
}

// person is a Slack user who clicked in the approvals channel.
func person(user string) threads.Person {
	return threads.Person{User: user, Channel: "C0APPROVALS", Reply: "https://hooks.slack.com/actions/T0/1/" + user}
}
