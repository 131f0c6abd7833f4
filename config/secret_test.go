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

	"github.com/google/go-cmp/cmp"

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
	env := baseEnv(map[string]string{
		"BOT_EVENTS_SECRET": fullEnv["BOT_EVENTS_SECRET"],
		"PUBLIC_KEY":        "not-a-key-but-secret-8e8e",
		"DSN":               "mysql://bot:hunter2-9f9f@db/bot",
	})
	text := strings.Replace(base, `["${EVENTS_SECRET}"]`, `["${BOT_EVENTS_SECRET}", [x]]`, 1) +
		"    deadline: ${BOT_EVENTS_SECRET}\n" +
		"store:\n  driver: postgres\n  dsn: ${DSN}\n" +
		"discord:\n  bot_token: ${SLACK_BOT_TOKEN}\n  application_id: \"1100000000000000000\"\n  public_key: ${PUBLIC_KEY}\n"
	_, err := config.Parse("bot.yaml", []byte(text), env)
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("want problems, got %v", err)
	}
	// One problem for each field the secrets went wrong in, naming it.
	for _, path := range []string{"backend.events_secrets[1]", "tenants.acme.deadline", "store.dsn", "discord.public_key"} {
		if !strings.Contains(err.Error(), " "+path+": ") {
			t.Errorf("no problem names %s:\n%v", path, err)
		}
	}
	for _, secret := range []string{fullEnv["BOT_EVENTS_SECRET"], "not-a-key-but-secret-8e8e", "hunter2-9f9f"} {
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
	file := filepath.Join("testdata", "full.yaml") // problems name the path Load was given
	want := file + ":14: slack.signing_secret: environment variable SLACK_SIGNING_SECRET is not set\n" +
		file + ":28: smtp.password: environment variable SMTP_PASSWORD is not set"
	if err == nil || err.Error() != want {
		t.Errorf("Load with unset variables:\n%v\nwant:\n%s", err, want)
	}
}

// literalProblem is what a secret written in the file gets.
const literalProblem = "is a secret written in the file: write it as one ${NAME}, nothing around it, and set NAME in the bot's environment"

// TestSecretsOnlyFromTheEnvironment writes a literal into each secret
// field and checks it is refused at its field, without the value.
func TestSecretsOnlyFromTheEnvironment(t *testing.T) {
	t.Parallel()
	const signing = "  signing_secret: ${SLACK_SIGNING_SECRET}\n"
	tests := []struct {
		name, text, want string
	}{
		{"events secret", strings.Replace(base, `"${EVENTS_SECRET}"`, `"hunter2-events-secret-of-32-bytes"`, 1),
			"bot.yaml:3: backend.events_secrets[0]"},
		{"second events secret", strings.Replace(base, `"${EVENTS_SECRET}"`, `"${EVENTS_SECRET}", hunter2-events-secret-of-32-bytes`, 1),
			"bot.yaml:3: backend.events_secrets[1]"},
		{"calls secret", strings.Replace(base, `"${CALLS_SECRET}"`, `"hunter2-calls-secret-of-32-bytes!"`, 1),
			"bot.yaml:4: backend.calls_secrets[0]"},
		{"slack bot token", strings.Replace(base, "${SLACK_BOT_TOKEN}", "xoxb-hunter2-1234", 1),
			"bot.yaml:6: slack.bot_token"},
		{"slack signing secret", strings.Replace(base, "${SLACK_SIGNING_SECRET}", "8f742231b10e8888abcd99yyyzzz85a5hunter2", 1),
			"bot.yaml:7: slack.signing_secret"},
		{"slack app token", strings.Replace(base, signing, signing+"  app_token: xapp-1-hunter2\n", 1),
			"bot.yaml:8: slack.app_token"},
		{"discord bot token", base + "discord:\n  bot_token: MTEw.hunter2.abc\n  application_id: \"1100000000000000000\"\n",
			"bot.yaml:12: discord.bot_token"},
		{"smtp password", base + "smtp:\n  addr: smtp.acme.example:587\n  username: bot\n  password: hunter2\n  from: bot@acme.example\n",
			"bot.yaml:14: smtp.password"},

		// Only one ${NAME}, and nothing around it, reads from the environment.
		{"text after a reference", strings.Replace(base, "${SLACK_BOT_TOKEN}", "${SLACK_BOT_TOKEN}hunter2", 1),
			"bot.yaml:6: slack.bot_token"},
		{"text before a reference", strings.Replace(base, "${SLACK_BOT_TOKEN}", "xoxb-hunter2${SLACK_BOT_TOKEN}", 1),
			"bot.yaml:6: slack.bot_token"},
		{"spaces around a reference", strings.Replace(base, "${SLACK_BOT_TOKEN}", `" ${SLACK_BOT_TOKEN} "`, 1),
			"bot.yaml:6: slack.bot_token"},
		{"two references", strings.Replace(base, "${SLACK_BOT_TOKEN}", "${SLACK_BOT_TOKEN}${SET}", 1),
			"bot.yaml:6: slack.bot_token"},
		{"a number", strings.Replace(base, "${SLACK_SIGNING_SECRET}", "27182818284590", 1),
			"bot.yaml:7: slack.signing_secret"},
		// A malformed reference is not echoed either: the text is a literal.
		{"malformed reference in a literal", strings.Replace(base, "${SLACK_BOT_TOKEN}", `"hunter2${x-hunter2}"`, 1),
			"bot.yaml:6: slack.bot_token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := parse(t, tt.text)
			want := []string{tt.want + ": " + literalProblem}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nfile:\n%s", diff, numbered(tt.text))
			}
			for _, leak := range []string{"hunter2", "27182818284590"} {
				if strings.Contains(strings.Join(got, "\n"), leak) {
					t.Errorf("a problem echoes the literal:\n%s", strings.Join(got, "\n"))
				}
			}
		})
	}
}

// TestSecretsNotSecret checks what may be written in the file: the Discord
// public key, an SMTP user name, and empty or null secrets, which hold
// nothing.
func TestSecretsNotSecret(t *testing.T) {
	t.Parallel()
	const key = "5d9c3a0f7be14e2a8c6d1f0b9e7a4c3d2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e"
	text := strings.Replace(base, "  signing_secret: ${SLACK_SIGNING_SECRET}\n", "  signing_secret: ${SLACK_SIGNING_SECRET}\n  app_token: \"\"\n", 1) +
		"discord:\n  bot_token: ${SET}\n  application_id: \"1100000000000000000\"\n  public_key: " + key + "\n" +
		"smtp:\n  addr: smtp.acme.example:587\n  username: mailer@acme.example\n  password: ${SET}\n  from: bot@acme.example\n"
	c, problems := parse(t, text)
	if problems != nil {
		t.Fatalf("want no problems, got:\n%s\nfile:\n%s", strings.Join(problems, "\n"), numbered(text))
	}
	if c.Discord.PublicKey.Reveal() != key || c.SMTP.Username != "mailer@acme.example" || c.Slack.AppToken != "" {
		t.Errorf("public key %q, smtp user %q, app token %q", c.Discord.PublicKey.Reveal(), c.SMTP.Username, c.Slack.AppToken.Reveal())
	}
	for _, v := range c.SecretVars {
		if v.Path == "discord.public_key" || v.Path == "slack.app_token" {
			t.Errorf("%s is listed as a secret from ${%s}", v.Path, v.Var)
		}
	}
	// A key written in the file prints as <secret> all the same.
	if s := fmt.Sprintf("%+v %v", *c.Discord, c) + c.Summary(); strings.Contains(s, key) {
		t.Errorf("the public key is printed:\n%s", s)
	}
}

// TestHMACKeyLength checks the keys shared with the backend are at least
// 32 bytes as read from the environment, and Slack's signing secret,
// which Slack issues, is held to no length.
func TestHMACKeyLength(t *testing.T) {
	t.Parallel()
	const (
		short = "hunter2-only-31-bytes-long-0123" // 31 bytes
		ok32  = "hunter2-exactly-32-bytes-long-01"
	)
	if len(short) != 31 || len(ok32) != 32 {
		t.Fatalf("test keys are %d and %d bytes", len(short), len(ok32))
	}
	tooShort := func(line int, path, ref string) string {
		return fmt.Sprintf("bot.yaml:%d: %s: %s is shorter than 32 bytes, the size of an HMAC-SHA256 key: make a new one (openssl rand -hex 32) and give it to both sides", line, path, ref)
	}
	tests := []struct {
		name string
		env  map[string]string
		text string
		want []string
	}{
		{"32 bytes", map[string]string{"EVENTS_SECRET": ok32, "CALLS_SECRET": ok32}, base, nil},
		{"32 bytes, counted in bytes", map[string]string{"EVENTS_SECRET": strings.Repeat("é", 16)}, base, nil},
		{"short events secret", map[string]string{"EVENTS_SECRET": short}, base, []string{
			tooShort(3, "backend.events_secrets[0]", "${EVENTS_SECRET}"),
		}},
		{"short calls secret", map[string]string{"CALLS_SECRET": short}, base, []string{
			tooShort(4, "backend.calls_secrets[0]", "${CALLS_SECRET}"),
		}},
		{"a short secret beside a good one", map[string]string{"OLD": short},
			strings.Replace(base, `"${CALLS_SECRET}"`, `"${CALLS_SECRET}", "${OLD}"`, 1), []string{
				tooShort(4, "backend.calls_secrets[1]", "${OLD}"),
			}},
		{"one-byte events secret", map[string]string{"EVENTS_SECRET": "x"}, base, []string{
			tooShort(3, "backend.events_secrets[0]", "${EVENTS_SECRET}"),
		}},
		// A secret that spells a word of the problem leaves the words alone.
		{"short secret spelling a word", map[string]string{"EVENTS_SECRET": "shorter"}, base, []string{
			tooShort(3, "backend.events_secrets[0]", "${EVENTS_SECRET}"),
		}},
		{"short signing secret", map[string]string{"SLACK_SIGNING_SECRET": "8f742231b10e8888"}, base, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := config.Parse("bot.yaml", []byte(tt.text), baseEnv(tt.env))
			var got []string
			if err != nil {
				got = strings.Split(err.Error(), "\n")
				if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "31") {
					t.Errorf("a problem tells the value or its length:\n%v", err)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			if err == nil && tt.env["SLACK_SIGNING_SECRET"] != "" && c.Slack.SigningSecret.Reveal() != tt.env["SLACK_SIGNING_SECRET"] {
				t.Errorf("signing secret %q", c.Slack.SigningSecret.Reveal())
			}
		})
	}
}
