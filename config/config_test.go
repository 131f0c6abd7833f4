package config_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// fullEnv supplies the variables testdata/full.yaml names. Values are
// distinctive so the leak test can search for them.
var fullEnv = map[string]string{
	"BOT_EVENTS_SECRET":    "ev-secret-5f2a77-41c9e3b0d8a6f2e7c5b19d04",
	"BOT_CALLS_SECRET":     "calls-secret-9c1d88-e2f4a6b8c0d1e3f5a7b9",
	"SLACK_BOT_TOKEN":      "xoxb-slack-bot-token-4242",
	"SLACK_SIGNING_SECRET": "slack-signing-secret-3131",
	"SLACK_APP_TOKEN":      "xapp-slack-app-token-5353",
	"DISCORD_BOT_TOKEN":    "discord-bot-token-6464",
	"DISCORD_PUBLIC_KEY":   "5d9c3a0f7be14e2a8c6d1f0b9e7a4c3d2b1a0f9e8d7c6b5a4f3e2d1c0b9a8f7e",
	"SMTP_USER":            "mailer@acme.example",
	"SMTP_PASSWORD":        "smtp-password-7575",
}

// secretEnv names the variables whose values are secrets.
var secretEnv = []string{
	"BOT_EVENTS_SECRET", "BOT_CALLS_SECRET", "SLACK_BOT_TOKEN", "SLACK_SIGNING_SECRET",
	"SLACK_APP_TOKEN", "DISCORD_BOT_TOKEN", "DISCORD_PUBLIC_KEY", "SMTP_PASSWORD",
}

func envOf(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

// cmpOpts compares zones by name: *time.Location has unexported fields.
var cmpOpts = cmp.Options{
	cmp.Comparer(func(a, b *time.Location) bool { return a.String() == b.String() }),
}

func targets(t *testing.T, ss ...string) []ladder.Target {
	t.Helper()
	out := make([]ladder.Target, len(ss))
	for i, s := range ss {
		tg, err := ladder.ParseTarget(s)
		if err != nil {
			t.Fatalf("ParseTarget(%q): %v", s, err)
		}
		out[i] = tg
	}
	return out
}

func target(t *testing.T, s string) *ladder.Target {
	t.Helper()
	return &targets(t, s)[0]
}

func loadFull(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.Load(filepath.Join("testdata", "full.yaml"), envOf(fullEnv))
	if err != nil {
		t.Fatalf("Load full.yaml: %v", err)
	}
	return c
}

func TestLoadFull(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	step := func(s ladder.Step, f func(*ladder.Step)) ladder.Step { f(&s); return s }
	want := &config.Config{
		Listen:      ":8080",
		Store:       config.Store{Driver: "sqlite", DSN: "file:bot.db"},
		Tick:        10 * time.Second,
		Lease:       2 * time.Minute,
		Retention:   30 * 24 * time.Hour,
		StopTimeout: 10 * time.Second,
		Backend: config.Backend{
			URL:           "https://jobs.acme.example",
			EventsSecrets: []config.Secret{config.Secret(fullEnv["BOT_EVENTS_SECRET"])},
			CallsSecrets:  []config.Secret{config.Secret(fullEnv["BOT_CALLS_SECRET"])},
		},
		Slack: &config.Slack{
			BotToken:      "xoxb-slack-bot-token-4242",
			SigningSecret: "slack-signing-secret-3131",
			AppToken:      "xapp-slack-app-token-5353",
			APIURL:        "https://slack.com/api/",
		},
		Discord: &config.Discord{
			BotToken:      "discord-bot-token-6464",
			ApplicationID: "1100000000000000000",
			PublicKey:     config.Secret(fullEnv["DISCORD_PUBLIC_KEY"]),
			APIURL:        "https://discord.com/api/v10/",
		},
		SMTP: &config.SMTP{
			Addr:     "smtp.acme.example:587",
			TLS:      "starttls",
			Username: "mailer@acme.example",
			Password: "smtp-password-7575",
			From:     "Approvals <approvals@acme.example>",
		},
		Tenants: map[string]*tenant.Tenant{
			"acme": {
				ID:          "acme",
				Deadline:    24 * time.Hour,
				MaxDeadline: config.DefaultMaxDeadline,
				Post:        targets(t, "slack:C0APPROVALS", "discord:channel:112233445566778899"),
				Audit:       target(t, "slack:C0AUDIT"),
				Digest: &tenant.Digest{
					Cron: "0 9 * * 1-5",
					Zone: berlin,
					To:   *target(t, "slack:C0APPROVALS"),
				},
				ForbidSelfApproval: true,
				Ladders: map[string]ladder.Ladder{
					"default": {Name: "default", Steps: []ladder.Step{
						step(ladder.AfterStep(15*time.Minute), func(s *ladder.Step) {
							s.Mention = targets(t, "slack:U0KEVIN", "slack:S0ONCALL", "discord:role:998877665544332211")
						}),
						step(ladder.AfterStep(time.Hour), func(s *ladder.Step) {
							s.DM = targets(t, "slack:U0LEAD")
							s.Email = targets(t, "leads@acme.example")
						}),
						step(ladder.AfterStep(4*time.Hour), func(s *ladder.Step) {
							s.Email = targets(t, "owner@acme.example")
						}),
						step(ladder.BeforeDeadlineStep(time.Hour), func(s *ladder.Step) {
							s.Mention = targets(t, "slack:S0ONCALL")
						}),
					}, Labels: ladder.Labels{"slack:U0KEVIN": "user:kevin"}}, // a member, by user id
					"payments": {Name: "payments", Steps: []ladder.Step{
						step(ladder.AfterStep(5*time.Minute), func(s *ladder.Step) {
							s.Mention = targets(t, "slack:S0FINANCE")
						}),
						step(ladder.AfterStep(30*time.Minute), func(s *ladder.Step) {
							s.Email = targets(t, "cfo@acme.example")
						}),
					}},
				},
				Tools: []tenant.ToolOverride{{
					Glob: "payments.*", Ladder: "payments", Deadline: 2 * time.Hour,
					Post: targets(t, "slack:C0FINANCE"),
				}},
				Members: []tenant.Member{
					{User: "user:kevin", Role: tenant.RoleOperator, Content: true, Chat: ladder.ChatIDs{"slack": "U0KEVIN", "discord": "223344556677889900"}, Email: "kevin@acme.example"},
					{User: "user:ada", Role: tenant.RoleOwner, Content: true, Governance: true, Chat: ladder.ChatIDs{"slack": "U0ADA"}, Email: "ada@acme.example"},
				},
				EmailDecisions: tenant.EmailDecisionsDeny,
				Passkeys:       tenant.PasskeysOff,
				Grants:         tenant.DefaultGrants(),
			},
		},
		// The public key is no secret: read like any text, not listed.
		SecretVars: []config.SecretVar{
			{Path: "backend.events_secrets[0]", Var: "BOT_EVENTS_SECRET"},
			{Path: "backend.calls_secrets[0]", Var: "BOT_CALLS_SECRET"},
			{Path: "slack.bot_token", Var: "SLACK_BOT_TOKEN"},
			{Path: "slack.signing_secret", Var: "SLACK_SIGNING_SECRET"},
			{Path: "slack.app_token", Var: "SLACK_APP_TOKEN"},
			{Path: "discord.bot_token", Var: "DISCORD_BOT_TOKEN"},
			{Path: "smtp.password", Var: "SMTP_PASSWORD"},
		},
	}
	want.IPv6SourcePrefix = 56 // the default: full.yaml leaves it out
	got := loadFull(t)
	if diff := cmp.Diff(want, got, cmpOpts); diff != "" {
		t.Errorf("full.yaml (-want +got):\n%s", diff)
	}
}

// base is a small valid file; cases append lines to it. Lines appended at
// column 0 are top-level keys, lines indented by four are keys of tenant
// acme. The first appended line is line 11. Its secrets are in baseEnv.
const base = `backend:
  url: https://jobs.acme.example
  events_secrets: ["${EVENTS_SECRET}"]
  calls_secrets: ["${CALLS_SECRET}"]
slack:
  bot_token: ${SLACK_BOT_TOKEN}
  signing_secret: ${SLACK_SIGNING_SECRET}
tenants:
  acme:
    post: [slack:C0APPROVALS]
`

// baseEnv resolves base's secrets, with more variables for a case. The
// HMAC keys are 32 bytes, the shortest accepted; the Slack signing secret
// is shorter, which Slack's secrets may be.
func baseEnv(more map[string]string) func(string) (string, bool) {
	env := map[string]string{
		"EVENTS_SECRET":        "events-secret-of-32-bytes-4a1c9e",
		"CALLS_SECRET":         "calls-secret-of-32-bytes-77b02d5f",
		"SLACK_BOT_TOKEN":      "xoxb-1",
		"SLACK_SIGNING_SECRET": "s",
	}
	for k, v := range more {
		env[k] = v
	}
	return envOf(env)
}

func parse(t *testing.T, text string) (*config.Config, []string) {
	t.Helper()
	c, err := config.Parse("bot.yaml", []byte(text), baseEnv(map[string]string{"SET": "value", "EMPTY": ""}))
	if err == nil {
		return c, nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse error is %T, want *config.Error: %v", err, err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != len(ce.Problems) {
		t.Errorf("Error() has %d lines for %d problems", len(lines), len(ce.Problems))
	}
	return nil, lines
}

func TestBaseIsValid(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, base)
	if problems != nil {
		t.Fatalf("base config has problems:\n%s", strings.Join(problems, "\n"))
	}
	// Defaults fill what the file leaves out.
	acme := c.Tenants["acme"]
	if c.Listen != ":8080" || c.ListenPrivate != "" || c.Store.Driver != "sqlite" || c.Store.DSN.Reveal() != "file:bot.db" || c.Tick != 10*time.Second ||
		acme.Deadline != 24*time.Hour || c.Discord != nil || c.SMTP != nil || c.Slack.APIURL != "https://slack.com/api/" {
		t.Errorf("defaults not applied: %+v, tenant %+v", c, acme)
	}
	if c.IPv6SourcePrefix != 56 {
		t.Errorf("IPv6SourcePrefix = %d, want the default 56", c.IPv6SourcePrefix)
	}
	if l, ok := acme.Ladders["default"]; !ok || l.Name != "default" || len(l.Steps) != 0 {
		t.Errorf("tenant without ladders has default %+v, %v; want an empty default ladder", l, ok)
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// add is appended to base; text, when set, replaces base entirely.
		add, text string
		want      []string
	}{
		// Keys and types.
		{name: "unknown top-level key", add: "tikc: 10s\n", want: []string{
			"bot.yaml:11: tikc: unknown key (did you mean tick?)",
		}},
		{name: "unknown tenant key", add: "    forbid_self_aproval: true\n", want: []string{
			"bot.yaml:11: tenants.acme.forbid_self_aproval: unknown key (did you mean forbid_self_approval?)",
		}},
		{name: "unknown key with no near match", add: "colour: blue\n", want: []string{
			"bot.yaml:11: colour: unknown key",
		}},
		{name: "duplicate key", add: "tick: 10s\ntick: 20s\n", want: []string{
			"bot.yaml:12: tick: duplicate key (first at line 11)",
		}},
		{name: "list where a duration goes", add: "tick: [10s]\n", want: []string{
			"bot.yaml:11: tick: expected a duration, got a list",
		}},
		{name: "list where a mapping goes", add: "    ladders: [default]\n", want: []string{
			"bot.yaml:11: tenants.acme.ladders: expected a mapping of ladder names, got a list",
		}},
		{name: "mapping where a list goes", add: "    ladders:\n      default: {after: 1h}\n", want: []string{
			"bot.yaml:12: tenants.acme.ladders.default: expected a list, got a mapping",
		}},
		{name: "string where a list goes", text: strings.Replace(base, "post: [slack:C0APPROVALS]", "post: slack:C0APPROVALS", 1), want: []string{
			"bot.yaml:10: tenants.acme.post: expected a list, got a string (a list of one is written in brackets: [item])",
		}},
		{name: "boolean as text", add: "    forbid_self_approval: \"yes\"\n", want: []string{
			"bot.yaml:11: tenants.acme.forbid_self_approval: expected true or false, got a string",
		}},
		{name: "boolean where a string goes", add: "listen: true\n", want: []string{
			"bot.yaml:11: listen: expected a string, got a boolean",
		}},
		{name: "bad duration", add: "tick: 10 minutes\n", want: []string{
			`bot.yaml:11: tick: "10 minutes" is not a duration (write it like 10s, 15m or 1h30m)`,
		}},
		{name: "tick too short", add: "tick: 500ms\n", want: []string{
			"bot.yaml:11: tick: 500ms is too short: at least 1s",
		}},
		{name: "negative deadline", add: "    deadline: -1h\n", want: []string{
			"bot.yaml:11: tenants.acme.deadline: -1h is negative",
		}},
		{name: "listen not host:port", add: "listen: 8080\n", want: []string{
			`bot.yaml:11: listen: "8080" is not host:port (like :8080 or 127.0.0.1:8080)`,
		}},
		{name: "listen_private not host:port", add: "listen_private: 9090\n", want: []string{
			`bot.yaml:11: listen_private: "9090" is not host:port (like 127.0.0.1:9090)`,
		}},
		{name: "listen_private on listen's port", add: "listen_private: 127.0.0.1:8080\n", want: []string{
			"bot.yaml:11: listen_private: 127.0.0.1:8080 takes the port of listen (:8080): give it a port of its own",
		}},
		{name: "listen_private the same address", add: "listen: 127.0.0.1:8080\nlisten_private: 127.0.0.1:8080\n", want: []string{
			"bot.yaml:12: listen_private: 127.0.0.1:8080 takes the port of listen (127.0.0.1:8080): give it a port of its own",
		}},
		{name: "ipv6_source_prefix 0", add: "ipv6_source_prefix: 0\n", want: []string{
			"bot.yaml:11: ipv6_source_prefix: 0 is not 1 to 128",
		}},
		{name: "ipv6_source_prefix past 128", add: "ipv6_source_prefix: 129\n", want: []string{
			"bot.yaml:11: ipv6_source_prefix: 129 is not 1 to 128",
		}},
		{name: "ipv6_source_prefix written as a prefix", add: "ipv6_source_prefix: /48\n", want: []string{
			"bot.yaml:11: ipv6_source_prefix: expected a whole number, got a string",
		}},
		{name: "YAML syntax", add: "tick: [10s\n", want: []string{
			"bot.yaml:11: YAML: did not find expected ',' or ']'",
		}},
		{name: "a tab for indentation", add: "store:\n\tdriver: sqlite\n", want: []string{
			"bot.yaml:12: tabs are not allowed for indentation in YAML: indent this line with spaces",
		}},
		{name: "a tab in a nested indentation", add: "store:\n  driver: sqlite\n\tdsn: x\n", want: []string{
			"bot.yaml:13: tabs are not allowed for indentation in YAML: indent this line with spaces",
		}},
		{name: "two documents", add: "---\ntick: 10s\n", want: []string{
			"bot.yaml:11: a second YAML document (after ---): the file holds one",
		}},

		// Store and backend.
		{name: "store driver", add: "store: {driver: mysql}\n", want: []string{
			`bot.yaml:11: store.driver: "mysql" is not one of sqlite, postgres`,
		}},
		{name: "postgres without dsn", add: "store:\n  driver: postgres\n", want: []string{
			"bot.yaml:11: store.dsn: missing: postgres needs a DSN (postgres://user:${PASSWORD}@host/db)",
		}},
		{name: "postgres with a foreign URL", add: "store:\n  driver: postgres\n  dsn: mysql://bot@db/x\n", want: []string{
			"bot.yaml:13: store.dsn: is not a PostgreSQL DSN (postgres://… or key=value pairs)",
		}},
		{name: "backend url relative", text: strings.Replace(base, "https://jobs.acme.example", "/v1", 1), want: []string{
			`bot.yaml:2: backend.url: "/v1" is not an absolute http(s) URL`,
		}},
		{name: "backend url other scheme", text: strings.Replace(base, "https://jobs.acme.example", "ftp://jobs.acme.example", 1), want: []string{
			`bot.yaml:2: backend.url: "ftp://jobs.acme.example" is not an absolute http(s) URL`,
		}},
		{name: "backend url with credentials", text: strings.Replace(base, "https://jobs.acme.example", "https://u:hunter2@jobs.acme.example", 1), want: []string{
			"bot.yaml:2: backend.url: must not carry credentials (user:password@)",
		}},
		{name: "empty secrets lists", text: strings.NewReplacer(`["${EVENTS_SECRET}"]`, "[]", `["${CALLS_SECRET}"]`, "").Replace(base), want: []string{
			"bot.yaml:3: backend.events_secrets: needs at least one secret",
			"bot.yaml:4: backend.calls_secrets: needs at least one secret",
		}},
		{name: "secret set to nothing", text: strings.Replace(base, "${EVENTS_SECRET}", "${EMPTY}", 1), want: []string{
			"bot.yaml:3: backend.events_secrets[0]: is empty (is its environment variable set to nothing?)",
		}},
		{name: "backend missing", text: base[strings.Index(base, "slack:"):], want: []string{
			"bot.yaml:1: backend: missing: the job backend's url and secrets (docs/protocol.md)",
		}},

		// Surfaces.
		{name: "slack without a way to click", text: strings.Replace(base, "  signing_secret: ${SLACK_SIGNING_SECRET}\n", "", 1), want: []string{
			"bot.yaml:5: slack: needs signing_secret (HTTP interactions) or app_token (Socket Mode), or people cannot click",
		}},
		{name: "slack api_url gets its slash", add: "", text: strings.Replace(base, "  signing_secret: ${SLACK_SIGNING_SECRET}\n", "  signing_secret: ${SLACK_SIGNING_SECRET}\n  api_url: ftp://x\n", 1), want: []string{
			`bot.yaml:8: slack.api_url: "ftp://x" is not an absolute http(s) URL`,
		}},
		{name: "discord section checks", add: "discord:\n  application_id: \"123\"\n  public_key: nothex\n", want: []string{
			"bot.yaml:11: discord.bot_token: missing: the bot token, from the environment",
			`bot.yaml:12: discord.application_id: "123" is not a snowflake id (17 to 20 digits)`,
			"bot.yaml:13: discord.public_key: is not an Ed25519 public key (64 hex digits, as the developer portal shows it)",
		}},
		{name: "smtp tls unknown", add: "smtp:\n  addr: smtp.acme.example:587\n  tls: ssl\n  from: approvals@acme.example\n", want: []string{
			`bot.yaml:13: smtp.tls: "ssl" is not one of starttls, tls, none`,
		}},
		{name: "smtp tls none to a remote host", add: "smtp:\n  addr: smtp.acme.example:25\n  tls: none\n  from: approvals@acme.example\n", want: []string{
			"bot.yaml:13: smtp.tls: none is allowed only to a loopback address, not smtp.acme.example",
		}},
		{name: "smtp from and addr", add: "smtp:\n  addr: smtp.acme.example\n  from: not an address\n  username: u\n", want: []string{
			`bot.yaml:12: smtp.addr: "smtp.acme.example" is not host:port (like smtp.acme.example:587)`,
			`bot.yaml:13: smtp.from: "not an address" is not an address (like Approvals <approvals@acme.example>)`,
			"bot.yaml:14: smtp.username: username and password go together: set both or neither",
		}},
		{name: "smtp missing keys", add: "smtp:\n  tls: tls\n", want: []string{
			"bot.yaml:11: smtp.addr: missing: the SMTP server's host:port",
			"bot.yaml:11: smtp.from: missing: the From address",
		}},

		// Tenants.
		{name: "no tenants", text: strings.Replace(base, "  acme:\n    post: [slack:C0APPROVALS]\n", "", 1), want: []string{
			"bot.yaml:8: tenants: needs at least one tenant",
		}},
		{name: "empty tenants mapping", text: strings.Replace(base, "tenants:\n  acme:\n    post: [slack:C0APPROVALS]\n", "tenants: {}\n", 1), want: []string{
			"bot.yaml:8: tenants: needs at least one tenant",
		}},
		{name: "bad tenant id", text: strings.Replace(base, "  acme:", "  acme corp:", 1), want: []string{
			`bot.yaml:9: tenants["acme corp"]: "acme corp" is not a tenant id (1 to 64 of A-Z a-z 0-9 . _ : -)`,
		}},
		{name: "tenant without post", text: strings.Replace(base, "    post: [slack:C0APPROVALS]\n", "    deadline: 2h\n", 1), want: []string{
			"bot.yaml:9: tenants.acme.post: needs at least one channel: where each card goes",
		}},
		{name: "malformed target", add: "    audit: slack:c0audit\n", want: []string{
			`bot.yaml:11: tenants.acme.audit: "slack:c0audit": a Slack id is upper-case letters and digits: want slack:C… or slack:G… (channel), slack:U… or slack:W… (user), slack:S… (user group)`,
		}},
		{name: "audit must be a channel", add: "    audit: slack:U0KEVIN\n", want: []string{
			"bot.yaml:11: tenants.acme.audit: slack:U0KEVIN is not a channel (slack:C…, slack:G… or discord:channel:ID)",
		}},
		{name: "post takes channels", add: "    ladders:\n      default:\n        - after: 1h\n          post: [slack:S0ONCALL]\n", want: []string{
			"bot.yaml:14: tenants.acme.ladders.default[0].post[0]: slack:S0ONCALL is not a channel (slack:C…, slack:G… or discord:channel:ID)",
		}},
		{name: "dm takes users", add: "    ladders:\n      default:\n        - after: 1h\n          dm: [slack:S0ONCALL, slack:U0KEVIN]\n", want: []string{
			"bot.yaml:14: tenants.acme.ladders.default[0].dm[0]: slack:S0ONCALL is not a user (slack:U…, slack:W… or discord:user:ID); groups and channels cannot be sent a DM",
		}},
		{name: "mention takes users and groups", add: "    ladders:\n      default:\n        - after: 1h\n          mention: [slack:C0APPROVALS]\n", want: []string{
			"bot.yaml:14: tenants.acme.ladders.default[0].mention[0]: slack:C0APPROVALS is not a user or group (slack:U…, slack:W…, slack:S…, discord:user:ID or discord:role:ID)",
		}},
		{name: "email takes addresses", add: "    ladders:\n      default:\n        - after: 1h\n          email: [slack:U0KEVIN, \"Ops <ops@acme.example>\"]\n", want: []string{
			"bot.yaml:14: tenants.acme.ladders.default[0].email[0]: slack:U0KEVIN is not an email address",
			`bot.yaml:14: tenants.acme.ladders.default[0].email[1]: "Ops <ops@acme.example>": write the bare address ops@acme.example`,
		}},

		// Ladders.
		{name: "after not increasing", add: "    ladders:\n      default:\n        - after: 15m\n          mention: [slack:U0KEVIN]\n        - after: 10m\n          mention: [slack:S0ONCALL]\n", want: []string{
			"bot.yaml:15: tenants.acme.ladders.default[1].after: 10m is not after step 0 (15m)",
		}},
		{name: "after equal", add: "    ladders:\n      default:\n        - after: 1h\n          mention: [slack:U0KEVIN]\n        - before_deadline: 1h\n          mention: [slack:U0KEVIN]\n        - after: 60m\n          mention: [slack:S0ONCALL]\n", want: []string{
			"bot.yaml:17: tenants.acme.ladders.default[2].after: 1h is not after step 0 (1h)",
		}},
		{name: "before_deadline not closer", add: "    ladders:\n      default:\n        - before_deadline: 1h\n          mention: [slack:U0KEVIN]\n        - before_deadline: 2h\n          mention: [slack:S0ONCALL]\n", want: []string{
			"bot.yaml:15: tenants.acme.ladders.default[1].before_deadline: 2h is not closer to the deadline than step 0 (1h before it)",
		}},
		{name: "both anchors", add: "    ladders:\n      default:\n        - after: 15m\n          before_deadline: 1h\n          mention: [slack:U0KEVIN]\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default[0]: has both after and before_deadline: a step counts from the request or back from the deadline, not both",
		}},
		{name: "no anchor and no targets", add: "    ladders:\n      default:\n        - {}\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default[0]: has neither after nor before_deadline: say when the step fires",
			"bot.yaml:13: tenants.acme.ladders.default[0]: reaches nobody: give it mention, dm, email, push or post",
		}},
		{name: "empty target lists reach nobody", add: "    ladders:\n      default:\n        - after: 15m\n          mention: []\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default[0]: reaches nobody: give it mention, dm, email, push or post",
		}},
		{name: "before_deadline zero", add: "    ladders:\n      default:\n        - before_deadline: 0s\n          mention: [slack:U0KEVIN]\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default[0].before_deadline: must be more than 0s: a step at the deadline never fires",
		}},
		{name: "step after the tenant deadline", add: "    deadline: 2h\n    ladders:\n      default:\n        - after: 15m\n          mention: [slack:U0KEVIN]\n        - after: 4h\n          mention: [slack:S0ONCALL]\n", want: []string{
			"bot.yaml:16: tenants.acme.ladders.default[1].after: 4h is at or after the deadline it runs under (2h), so it would always be skipped",
		}},
		{name: "step exactly at the deadline", add: "    ladders:\n      default:\n        - after: 24h\n          mention: [slack:U0KEVIN]\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default[0].after: 24h is at or after the deadline it runs under (24h), so it would always be skipped",
		}},
		{name: "before_deadline longer than the deadline", add: "    deadline: 2h\n    ladders:\n      default:\n        - before_deadline: 3h\n          mention: [slack:U0KEVIN]\n", want: []string{
			"bot.yaml:14: tenants.acme.ladders.default[0].before_deadline: 3h is longer than the deadline it runs under (2h), so it would always be skipped",
		}},
		{name: "a shorter override does not save a step", add: "    ladders:\n      slow:\n        - after: 30h\n          mention: [slack:U0KEVIN]\n    tools:\n      \"ops.*\": {ladder: slow, deadline: 2h}\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.slow[0].after: 30h is at or after the deadline it runs under (24h), so it would always be skipped",
		}},
		{name: "bad ladder name", add: "    ladders:\n      \"fast lane\": []\n", want: []string{
			`bot.yaml:12: tenants.acme.ladders["fast lane"]: "fast lane" is not a ladder name (1 to 64 of A-Z a-z 0-9 . _ : -)`,
		}},
		{name: "ladder is not a list", add: "    ladders:\n      default:\n        after: 15m\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default: expected a list, got a mapping",
		}},
		{name: "merge keys", add: "    ladders:\n      default:\n        - &s {after: 1h, mention: [slack:U0KEVIN]}\n        - <<: *s\n          after: 2h\n", want: []string{
			"bot.yaml:14: tenants.acme.ladders.default[1]: merge keys (<<) are not supported: write the keys out",
			"bot.yaml:14: tenants.acme.ladders.default[1]: reaches nobody: give it mention, dm, email, push or post",
		}},
		{name: "unknown step key", add: "    ladders:\n      default:\n        - after: 15m\n          mentions: [slack:U0KEVIN]\n", want: []string{
			"bot.yaml:13: tenants.acme.ladders.default[0]: reaches nobody: give it mention, dm, email, push or post",
			"bot.yaml:14: tenants.acme.ladders.default[0].mentions: unknown key (did you mean mention?)",
		}},

		// Tools.
		{name: "tool names an unknown ladder", add: "    tools:\n      \"payments.*\": {ladder: paymnets}\n", want: []string{
			`bot.yaml:12: tenants.acme.tools["payments.*"].ladder: "paymnets" is not a ladder of tenant acme (it has default)`,
		}},
		{name: "bad glob", add: "    tools:\n      \"payments.[\": {deadline: 2h}\n", want: []string{
			`bot.yaml:12: tenants.acme.tools["payments.["]: "payments.[" is not a glob on function names (*, ? and [a-z] as in path.Match)`,
		}},
		{name: "tool that sets nothing", add: "    tools:\n      \"x.*\": {}\n", want: []string{
			`bot.yaml:12: tenants.acme.tools["x.*"]: sets nothing: give it ladder, deadline, post or quorum`,
		}},
		{name: "tool post takes channels", add: "    tools:\n      \"x.*\": {post: [cfo@acme.example]}\n", want: []string{
			`bot.yaml:12: tenants.acme.tools["x.*"].post[0]: cfo@acme.example is not a channel (slack:C…, slack:G… or discord:channel:ID)`,
		}},

		// Members.
		{name: "member problems", add: "    members:\n" +
			"      - user: user:kevin\n" + // 12
			"        role: operator\n" +
			"        slack: U0KEVIN\n" +
			"        discord: \"223344556677889900\"\n" + // 15
			"      - user: user:kevin\n" + // 16
			"        role: approver\n" +
			"        slack: U0KEVIN\n" +
			"        discord: \"223344556677889900\"\n" +
			"        email: kevin@\n" + // 20
			"      - user: user:ada\n" + // 21
			"        role: viewer\n" +
			"        governance: true\n" +
			"        slack: slack:U0ADA\n" + // 24
			"      - role: owner\n" + // 25
			"        discord: discord:user:223344556677889901\n", want: []string{
			"bot.yaml:16: tenants.acme.members[1].user: user:kevin is already tenants.acme.members[0].user",
			`bot.yaml:17: tenants.acme.members[1].role: "approver" is not one of viewer, operator, admin, owner`,
			"bot.yaml:18: tenants.acme.members[1].slack: U0KEVIN is already tenants.acme.members[0].slack",
			"bot.yaml:19: tenants.acme.members[1].discord: 223344556677889900 is already tenants.acme.members[0].discord",
			`bot.yaml:20: tenants.acme.members[1].email: "kevin@" is not an email address`,
			"bot.yaml:23: tenants.acme.members[2].governance: a viewer cannot decide, so governance has no effect",
			"bot.yaml:24: tenants.acme.members[2].slack: write the bare user id U0ADA, without slack:",
			"bot.yaml:25: tenants.acme.members[3].user: missing: the tenant user id the backend knows (like user:kevin)",
			"bot.yaml:26: tenants.acme.members[3].discord: write the bare user id, without discord:user:",
		}},
		{name: "max_deadline zero", add: "    max_deadline: 0s\n", want: []string{
			"bot.yaml:11: tenants.acme.max_deadline: must be more than 0s",
		}},
		{name: "max_deadline not a duration", add: "    max_deadline: 30 days\n", want: []string{
			`bot.yaml:11: tenants.acme.max_deadline: "30 days" is not a duration (write it like 10s, 15m or 1h30m)`,
		}},
		{name: "max_deadline negative", add: "    max_deadline: -1h\n", want: []string{
			"bot.yaml:11: tenants.acme.max_deadline: -1h is negative",
		}},
		{name: "deadline past max_deadline", add: "    max_deadline: 48h\n    deadline: 72h\n", want: []string{
			"bot.yaml:12: tenants.acme.deadline: 72h is longer than max_deadline (48h), the furthest a deadline may lie",
		}},
		{name: "default deadline past max_deadline", add: "    max_deadline: 12h\n", want: []string{
			"bot.yaml:11: tenants.acme.deadline: 24h is longer than max_deadline (12h), the furthest a deadline may lie",
		}},
		{name: "a tool's deadline past max_deadline", add: "    max_deadline: 48h\n    tools:\n      \"payments.*\": {deadline: 72h}\n", want: []string{
			`bot.yaml:13: tenants.acme.tools["payments.*"].deadline: 72h is longer than the tenant's max_deadline (48h), the furthest a deadline may lie`,
		}},
		{name: "member addresses one mailbox", add: "    members:\n" +
			"      - {user: user:sam, role: operator, email: sam@acme.example}\n" + // 12
			"      - {user: user:sam2, role: operator, email: Sam@ACME.example}\n" +
			"      - {user: user:sam3, role: operator, email: \"\u017fam@acme.example\"}\n" +
			"      - {user: user:kim, role: operator, email: \"\u212aim@acme.example\"}\n" + // 15
			"      - {user: user:kim2, role: operator, email: \"\u212aIM@acme.example\"}\n", want: []string{
			"bot.yaml:13: tenants.acme.members[1].email: Sam@ACME.example is already tenants.acme.members[0].email (sam@acme.example, line 12)",
			"bot.yaml:16: tenants.acme.members[4].email: \u212aIM@acme.example is already tenants.acme.members[3].email (\u212aim@acme.example, line 15)",
		}},
		{name: "member slack id form", add: "    members:\n      - {user: u, role: admin, slack: C0CHANNEL, discord: \"12\"}\n", want: []string{
			`bot.yaml:12: tenants.acme.members[0].slack: "C0CHANNEL" is not a Slack user id (U… or W…)`,
			`bot.yaml:12: tenants.acme.members[0].discord: "12" is not a Discord user id (17 to 20 digits)`,
		}},

		// Digest.
		{name: "digest problems", add: "    digest:\n      cron: \"0 9 * *\"\n      zone: Europe/Berlinn\n      to: slack:U0KEVIN\n", want: []string{
			`bot.yaml:12: tenants.acme.digest.cron: "0 9 * *" is not a cron spec (minute hour day-of-month month day-of-week): expected exactly 5 fields, found 4: [0 9 * *]`,
			`bot.yaml:13: tenants.acme.digest.zone: "Europe/Berlinn" is not a time zone (like Europe/Berlin or UTC)`,
			"bot.yaml:14: tenants.acme.digest.to: slack:U0KEVIN is not a channel (slack:C…, slack:G… or discord:channel:ID)",
		}},
		{name: "digest zone in the spec", add: "    digest:\n      cron: \"TZ=Europe/Berlin 0 9 * * *\"\n      to: slack:C0APPROVALS\n", want: []string{
			`bot.yaml:12: tenants.acme.digest.cron: "TZ=Europe/Berlin 0 9 * * *" carries a time zone: put it in zone instead`,
		}},
		{name: "digest zone Local", add: "    digest:\n      cron: \"@daily\"\n      zone: Local\n      to: slack:C0APPROVALS\n", want: []string{
			"bot.yaml:13: tenants.acme.digest.zone: Local depends on the machine: name a zone like Europe/Berlin or UTC",
		}},
		{name: "digest missing keys", add: "    digest:\n      zone: UTC\n", want: []string{
			"bot.yaml:12: tenants.acme.digest.cron: missing: when to post, as a cron spec like \"0 9 * * 1-5\"",
			"bot.yaml:12: tenants.acme.digest.to: missing: the channel the digest goes to",
		}},

		// Variables.
		{name: "unset variable", text: strings.Replace(base, "${SLACK_BOT_TOKEN}", "${SLACK_BOT_TOKN}", 1), want: []string{
			"bot.yaml:6: slack.bot_token: environment variable SLACK_BOT_TOKN is not set",
		}},
		{name: "two unset variables in one value", add: "listen: \"${HOST}:${PORT}\"\n", want: []string{
			"bot.yaml:11: listen: environment variable HOST is not set",
			"bot.yaml:11: listen: environment variable PORT is not set",
		}},
		{name: "malformed variables", add: "listen: \"${HOST-x}:${PORT\"\n", want: []string{
			"bot.yaml:11: listen: ${HOST-x} is not a variable name (letters, digits and _)",
			"bot.yaml:11: listen: unterminated ${ (write ${NAME})",
		}},
		{name: "a value from the environment is shown by its name", add: "listen: ${SET}\n", want: []string{
			`bot.yaml:11: listen: "${SET}" is not host:port (like :8080 or 127.0.0.1:8080)`,
		}},
		{name: "dsn set to nothing", add: "store:\n  driver: postgres\n  dsn: ${EMPTY}\n", want: []string{
			"bot.yaml:13: store.dsn: is empty (is its environment variable set to nothing?)",
		}},
		{name: "an unset signing secret is reported once", text: strings.Replace(base, "signing_secret: ${SLACK_SIGNING_SECRET}", "signing_secret: ${NOPE}", 1), want: []string{
			"bot.yaml:7: slack.signing_secret: environment variable NOPE is not set",
		}},
		{name: "variable where a boolean goes", add: "    forbid_self_approval: ${SET}\n", want: []string{
			"bot.yaml:11: tenants.acme.forbid_self_approval: expected true or false, got a string",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			text := tt.text
			if text == "" {
				text = base + tt.add
			}
			_, got := parse(t, text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nfile:\n%s", diff, numbered(text))
			}
		})
	}
}

func numbered(text string) string {
	var b strings.Builder
	for i, l := range strings.Split(text, "\n") {
		fmt.Fprintf(&b, "%3d  %s\n", i+1, l)
	}
	return b.String()
}

// With listen_private, bot check says which listener serves what; the
// file's listen_private is read as written.
func TestSummaryNamesBothListeners(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, base+"listen_private: 127.0.0.1:9090\n")
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if c.ListenPrivate != "127.0.0.1:9090" {
		t.Errorf("ListenPrivate = %q, want 127.0.0.1:9090", c.ListenPrivate)
	}
	want := "listen :8080: interactions, decision page, health\nlisten_private 127.0.0.1:9090: events, metrics, health\nstore "
	if got := c.Summary(); !strings.HasPrefix(got, want) {
		t.Errorf("summary begins\n%s\nwant\n%s", got[:min(len(got), len(want))], want)
	}
}

// ipv6_source_prefix is read as written, and bot check names it when it
// is not the default.
func TestIPv6SourcePrefix(t *testing.T) {
	t.Parallel()
	c, problems := parse(t, base+"ipv6_source_prefix: 48\n")
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	if c.IPv6SourcePrefix != 48 {
		t.Errorf("IPv6SourcePrefix = %d, want 48", c.IPv6SourcePrefix)
	}
	want := "listen :8080\nipv6_source_prefix 48: connection limits, body budget and refusal lines count per IPv6 /48\nstore "
	if got := c.Summary(); !strings.HasPrefix(got, want) {
		t.Errorf("summary begins\n%s\nwant\n%s", got[:min(len(got), len(want))], want)
	}
	c, _ = parse(t, base)
	if got := c.Summary(); strings.Contains(got, "ipv6_source_prefix") {
		t.Errorf("summary names the default prefix:\n%s", got)
	}
}

func TestValidVariants(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, add string }{
		{"smtp none to loopback", "smtp:\n  addr: 127.0.0.1:2525\n  tls: none\n  from: bot@localhost.example\n"},
		{"smtp none to localhost", "smtp:\n  addr: localhost:25\n  tls: none\n  from: bot@localhost.example\n"},
		{"a longer override keeps a late step", "    deadline: 2h\n    ladders:\n      slow:\n        - after: 4h\n          mention: [slack:U0KEVIN]\n    tools:\n      \"batch.*\": {ladder: slow, deadline: 8h}\n"},
		{"an override without ladder lends its deadline to default", "    deadline: 2h\n    ladders:\n      default:\n        - after: 4h\n          mention: [slack:U0KEVIN]\n    tools:\n      \"batch.*\": {deadline: 8h}\n"},
		{"unquoted listen", "listen: :9090\n"},
		{"ipv6_source_prefix from 1 to 128", "ipv6_source_prefix: 1\n"},
		{"ipv6_source_prefix of one address", "ipv6_source_prefix: 128\n"},
		{"listen_private on a port of its own", "listen_private: 127.0.0.1:9090\n"},
		{"listen_private on listen's port at another host", "listen: 10.0.0.5:8080\nlisten_private: 127.0.0.1:8080\n"},
		{"both on ports the system picks", "listen: 127.0.0.1:0\nlisten_private: 127.0.0.1:0\n"},
		{"after 0s", "    ladders:\n      default:\n        - after: 0s\n          dm: [slack:U0KEVIN]\n"},
		{"null sections are omitted", "discord:\nsmtp: ~\n"},
		{"variable booleans and aliases", "    forbid_self_approval: ${TRUE}\n    ladders:\n      default:\n        - after: 1h\n          mention: &who [slack:U0KEVIN]\n        - after: 2h\n          dm: *who\n"},
		{"postgres keyword DSN", "store:\n  driver: postgres\n  dsn: \"host=db user=bot password=${SET}\"\n"},
		{"discord snowflake as a number", "discord:\n  bot_token: ${SET}\n  application_id: 1100000000000000000\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := config.Parse("bot.yaml", []byte(base+tt.add), baseEnv(map[string]string{"SET": "x", "TRUE": "true"}))
			if err != nil {
				t.Errorf("want no problems, got:\n%v\nfile:\n%s", err, numbered(base+tt.add))
			}
		})
	}
}

// TestManyProblems checks that one run reports every problem of a file, in
// line order, not just the first.
func TestManyProblems(t *testing.T) {
	t.Parallel()
	_, err := config.Load(filepath.Join("testdata", "broken.yaml"), baseEnv(map[string]string{"BOT_EVENTS_SECRET": fullEnv["BOT_EVENTS_SECRET"]}))
	want := []string{
		`broken.yaml:3: tick: "soon" is not a duration (write it like 10s, 15m or 1h30m)`,
		`broken.yaml:5: store.driver: "mysql" is not one of sqlite, postgres`,
		"broken.yaml:9: backend.calls_secrets[0]: environment variable BOT_CALLS_SECRET is not set",
		"broken.yaml:12: smtp.tls: none is allowed only to a loopback address, not smtp.acme.example",
		`broken.yaml:17: tenants.acme.deadline: "a day" is not a duration (write it like 10s, 15m or 1h30m)`,
		"broken.yaml:19: tenants.acme.audit: slack:U0KEVIN is not a channel (slack:C…, slack:G… or discord:channel:ID)",
		"broken.yaml:24: tenants.acme.ladders.default[1].after: 10m is not after step 0 (15m)",
		"broken.yaml:26: tenants.acme.ladders.default[2]: has both after and before_deadline: a step counts from the request or back from the deadline, not both",
		"broken.yaml:29: tenants.acme.ladders.default[3]: reaches nobody: give it mention, dm, email, push or post",
		`broken.yaml:31: tenants.acme.tools["payments.*"].ladder: "payments" is not a ladder of tenant acme (it has default)`,
		`broken.yaml:33: tenants.acme.members[0].role: "boss" is not one of viewer, operator, admin, owner`,
		"broken.yaml:34: tenants.acme.members[1].user: missing: the tenant user id the backend knows (like user:kevin)",
		`broken.yaml:35: tenants.acme.members[1].slack: "kevin" is not a Slack user id (U… or W…)`,
		`broken.yaml:36: tenants["bad/id"]: "bad/id" is not a tenant id (1 to 64 of A-Z a-z 0-9 . _ : -)`,
	}
	// Problems name the file by the path Load was given.
	file := filepath.Join("testdata", "broken.yaml")
	for i := range want {
		want[i] = filepath.Join("testdata", want[i])
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("Load broken.yaml: %v, want *config.Error", err)
	}
	got := make([]string, len(ce.Problems))
	for i, p := range ce.Problems {
		got[i] = p.Error()
		if p.File != file || p.Line == 0 || p.Path == "" {
			t.Errorf("problem %d lacks file, line or path: %+v", i, p)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	_, err := config.Load(filepath.Join(t.TempDir(), "nope.yaml"), nil)
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want os.ErrNotExist", err)
	}
}

func TestEmptyFile(t *testing.T) {
	t.Parallel()
	_, got := parse(t, "# nothing yet\n")
	want := []string{
		"bot.yaml:1: backend: missing: the job backend's url and secrets (docs/protocol.md)",
		"bot.yaml:1: tenants: missing: at least one tenant",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// backendOnly is a valid file with no surface; its secrets are in
// baseEnv.
const backendOnly = "backend:\n  url: https://jobs.example\n  events_secrets: [\"${EVENTS_SECRET}\"]\n  calls_secrets: [\"${CALLS_SECRET}\"]\ntenants:\n  acme:\n    post: [slack:C0A]\n"

func TestLeaseBounds(t *testing.T) {
	base, env := backendOnly, baseEnv(nil)
	cfg, err := config.Parse("bot.yaml", []byte("lease: 30s\n"+base), env)
	if err != nil || cfg.Lease != 30*time.Second {
		t.Fatalf("lease 30s: %v %v", cfg, err)
	}
	_, err = config.Parse("bot.yaml", []byte("lease: 1s\n"+base), env)
	if err == nil || !strings.Contains(err.Error(), "bot.yaml:1: lease: 1s is too short: at least 5s") {
		t.Fatalf("lease 1s: %v", err)
	}
}

func TestRetention(t *testing.T) {
	base, env := backendOnly, baseEnv(nil)
	for _, c := range []struct {
		file             string
		retention, tombs time.Duration
	}{
		{"", 30 * 24 * time.Hour, 365 * 24 * time.Hour}, // the defaults
		{"retention: 168h\n", 7 * 24 * time.Hour, 365 * 24 * time.Hour},
		{"retention: 24h\n", 24 * time.Hour, 365 * 24 * time.Hour},
		// Kept longer than a year: the tombstone is kept as long.
		{"retention: 17520h\n", 730 * 24 * time.Hour, 730 * 24 * time.Hour},
	} {
		cfg, err := config.Parse("bot.yaml", []byte(c.file+base), env)
		if err != nil {
			t.Fatalf("%q: %v", c.file, err)
		}
		if cfg.Retention != c.retention || cfg.Tombstones() != c.tombs {
			t.Errorf("%q: retention %v, tombstones %v; want %v, %v", c.file, cfg.Retention, cfg.Tombstones(), c.retention, c.tombs)
		}
	}
	for file, want := range map[string]string{
		"retention: 12h\n":  "bot.yaml:1: retention: 12h is too short: at least 24h",
		"retention: 30d\n":  `bot.yaml:1: retention: "30d" is not a duration`,
		"retention: -24h\n": "bot.yaml:1: retention: -24h is negative",
	} {
		_, err := config.Parse("bot.yaml", []byte(file+base), env)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", file, err, want)
		}
	}
}
