package slack_test

import (
	"context"
	"strings"
	"testing"

	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
)

func TestDoctor(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{slack: slacktest.Options{Scopes: []string{"chat:write", "im:write", "commands", "channels:read"}}})
	h.slack.AddChannel("C0AUDIT", "audit", false)
	h.slack.ArchiveChannel("C0FINANCE")
	h.slack.RemoveChannel("C0QUIET")
	var out strings.Builder
	err := h.adapter.Doctor(context.Background(), &out)
	text := out.String()
	for _, want := range []string{
		"slack: the bot token works: bot approvals (U0BOT) in workspace Acme (T0ACME) https://acme.slack.test/",
		"slack: granted scopes: chat:write, im:write, commands, channels:read",
		"slack: PROBLEM: scope groups:read is missing",
		"slack: interactions: HTTP at POST /slack/interactions",
		"slack: slack:C0APPROVALS #approvals (acme post): the bot is a member and can post",
		"slack: PROBLEM: slack:C0AUDIT #audit (acme audit): the bot is not a member: type /invite @approvals in #audit",
		"slack: PROBLEM: slack:C0FINANCE #finance (acme post for payments.*): the channel is archived",
		"slack: PROBLEM: slack:C0QUIET (quiet post): the bot cannot see this channel",
	} {
		if !strings.Contains(text, want+"") {
			t.Errorf("doctor lacks %q:\n%s", want, text)
		}
	}
	if err == nil || !strings.Contains(err.Error(), "4 problem(s)") {
		t.Fatalf("Doctor: %v", err)
	}
	for _, secret := range []string{botToken, signingSecret, appToken} {
		if strings.Contains(text, secret) || strings.Contains(err.Error(), secret) {
			t.Fatalf("doctor printed a secret:\n%s", text)
		}
	}
}

func TestDoctorAllGoodInSocketMode(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{socket: true, slack: slacktest.Options{Scopes: slackad.RequiredScopes}})
	var out strings.Builder
	if err := h.adapter.Doctor(context.Background(), &out); err != nil {
		t.Fatalf("Doctor: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "interactions: Socket Mode; the app token works") || strings.Contains(out.String(), "PROBLEM") {
		t.Fatalf("doctor:\n%s", out.String())
	}
}

func TestDoctorBadTokenAndNoScopeHeader(t *testing.T) {
	h := newHarness(t)
	h.slack.Fail("auth.test", 1, "invalid_auth")
	var out strings.Builder
	err := h.adapter.Doctor(context.Background(), &out)
	if err == nil || !strings.Contains(out.String(), "the bot token does not work: invalid_auth") {
		t.Fatalf("Doctor: %v\n%s", err, out.String())
	}
	out.Reset()
	if err := h.adapter.Doctor(context.Background(), &out); err != nil {
		t.Fatalf("Doctor: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "granted scopes: Slack did not say (no X-OAuth-Scopes header)") {
		t.Fatalf("doctor:\n%s", out.String())
	}
}
