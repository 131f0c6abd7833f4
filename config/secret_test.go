package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/config"
)

// TestSecretNeverLeaks prints a whole Config, and each section holding
// secrets, every way the program might (fmt verbs, JSON, slog with both
// handlers), and checks no secret value appears.
func TestSecretNeverLeaks(t *testing.T) {
	t.Parallel()
	c := loadFull(t)
	values := []any{c, *c, c.Store, c.Backend, c.Slack, *c.Slack, c.Discord, *c.Discord, c.SMTP, *c.SMTP, c.Backend.EventsSecrets, c.Slack.BotToken}

	var outputs []string
	for _, v := range values {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("json.Marshal(%T): %v", v, err)
		}
		outputs = append(outputs, string(b))
		for _, h := range []func(*bytes.Buffer) slog.Handler{
			func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
			func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		} {
			var buf bytes.Buffer
			slog.New(h(&buf)).Info("config", "value", v)
			outputs = append(outputs, buf.String())
		}
	}
	outputs = append(outputs, c.Summary())

	for _, name := range secretEnv {
		secret := fullEnv[name]
		for _, out := range outputs {
			if strings.Contains(out, secret) || strings.Contains(out, fmt.Sprintf("%x", secret)) {
				t.Errorf("%s leaked:\n%s", name, out)
			}
		}
	}
	// And the values are there for whoever asks for them.
	if c.Slack.BotToken.Reveal() != fullEnv["SLACK_BOT_TOKEN"] {
		t.Errorf("Reveal() = %q", c.Slack.BotToken.Reveal())
	}
	if got := fmt.Sprint(c.Slack.BotToken); got != "<secret>" {
		t.Errorf("a Secret prints as %q, want <secret>", got)
	}
}

// TestProblemsNeverCarrySecrets breaks a file around its secrets and checks
// the problems name fields, not values.
func TestProblemsNeverCarrySecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{
		"BOT_EVENTS_SECRET": "ev-secret-5f2a77",
		"PUBLIC_KEY":        "not-a-key-but-secret-8e8e",
		"DSN":               "mysql://bot:hunter2-9f9f@db/bot",
	}
	text := strings.Replace(base, "[e]", "[\"${BOT_EVENTS_SECRET}\", [x]]", 1) +
		"    deadline: ${BOT_EVENTS_SECRET}\n" +
		"store:\n  driver: postgres\n  dsn: ${DSN}\n" +
		"discord:\n  bot_token: t\n  application_id: \"1100000000000000000\"\n  public_key: ${PUBLIC_KEY}\n"
	_, err := config.Parse("bot.yaml", []byte(text), envOf(env))
	var ce *config.Error
	if !errors.As(err, &ce) || len(ce.Problems) < 3 {
		t.Fatalf("want several problems, got %v", err)
	}
	for _, secret := range []string{"ev-secret-5f2a77", "not-a-key-but-secret-8e8e", "hunter2-9f9f"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("problems carry a secret:\n%v", err)
		}
	}
}

func TestUnsetVariableNamed(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	for k, v := range fullEnv {
		if k != "SLACK_SIGNING_SECRET" && k != "SMTP_PASSWORD" {
			env[k] = v
		}
	}
	_, err := config.Load(filepath.Join("testdata", "full.yaml"), envOf(env))
	want := "full.yaml:14: slack.signing_secret: environment variable SLACK_SIGNING_SECRET is not set\n" +
		"full.yaml:28: smtp.password: environment variable SMTP_PASSWORD is not set"
	if err == nil || err.Error() != want {
		t.Errorf("Load with unset variables:\n%v\nwant:\n%s", err, want)
	}
}
