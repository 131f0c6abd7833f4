package config_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
	"approvalsbot/tenant"
)

// The push secrets of the tests: a topic URL (the topic is the secret),
// an ntfy access token and a webhook's signing key.
const (
	kevinTopic  = "https://ntfy.sh/kevin-7f3a9c2e1b"
	kevinToken  = "tk_kevin0123456789abcdefghijklmnop"
	adaHookKey  = "ada-webhook-key-of-32-bytes-9c1e"
	otherTopic  = "https://ntfy.sh/other-topic-77"
	loopTopic   = "http://127.0.0.1:8090/kevin-local"
	plainTopic  = "http://ntfy.acme.example/kevin-plain"
	noTopicURL  = "https://ntfy.sh/"
	queryTopic  = "https://ntfy.sh/kevin?x=1"
	credsTopic  = "https://bob:pw@ntfy.sh/kevin"
	badTopic    = "https://ntfy.sh/kevin.with.dots"
	prefixTopic = "https://push.acme.example/ntfy/kevin-9"
)

func pushEnv(more map[string]string) func(string) (string, bool) {
	env := map[string]string{
		"KEVIN_NTFY": kevinTopic, "KEVIN_NTFY_TOKEN": kevinToken, "ADA_PUSH_SECRET": adaHookKey,
		"OTHER_NTFY": otherTopic, "LOOP_NTFY": loopTopic, "PLAIN_NTFY": plainTopic, "NO_TOPIC": noTopicURL,
		"QUERY_NTFY": queryTopic, "CREDS_NTFY": credsTopic, "BAD_NTFY": badTopic, "PREFIX_NTFY": prefixTopic,
		"SHORT_KEY": "short", "EMPTY": "",
	}
	for k, v := range more {
		env[k] = v
	}
	return baseEnv(env)
}

// pushBase is base with members reached by push: kevin at an ntfy topic
// with a token, ada at a webhook, lee at none; a rotation of kevin and
// ada. Its ladder's first step is at line 27.
const pushBase = base + `    members:
      - user: user:kevin
        role: operator
        email: kevin@acme.example
        push: {ntfy: "${KEVIN_NTFY}", token: "${KEVIN_NTFY_TOKEN}"}
      - user: user:ada
        role: owner
        push:
          webhook: https://pager.acme.example/hooks/approvals
          secrets: ["${ADA_PUSH_SECRET}"]
      - {user: user:lee, role: operator, slack: U0LEE}
      - {user: user:vic, role: viewer, push: {ntfy: "${OTHER_NTFY}"}}
    rotations:
      primary: {members: [user:kevin, user:ada], every: 1w, handoff: "mon 09:00", start: 2026-11-30}
    ladders:
      default:
`

func parsePush(t *testing.T, text string) (*config.Config, []string) {
	t.Helper()
	c, err := config.Parse("bot.yaml", []byte(text), pushEnv(nil))
	if err == nil {
		return c, nil
	}
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("Parse error is %T, want *config.Error: %v", err, err)
	}
	return nil, strings.Split(err.Error(), "\n")
}

// TestPushDecode: a member's push address is read from the environment,
// a step's push names members, a rotation and approvers, and bot check
// prints the step and how each member is reached, never the address.
func TestPushDecode(t *testing.T) {
	t.Parallel()
	c, problems := parsePush(t, pushBase+`        - after: 10m
          push: [user:kevin, rotation:primary, approvers]
`)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	step := acme.Ladders["default"].Steps[0]
	if diff := cmp.Diff(targets(t, "user:kevin", "rotation:primary", "approvers"), step.Push); diff != "" {
		t.Errorf("push targets (-want +got):\n%s", diff)
	}
	kevin, _ := acme.MemberByUser("user:kevin")
	ada, _ := acme.MemberByUser("user:ada")
	lee, _ := acme.MemberByUser("user:lee")
	if diff := cmp.Diff(tenant.PushAddress{Kind: tenant.PushNtfy, URL: kevinTopic, Token: kevinToken}, kevin.Push.Reveal()); diff != "" {
		t.Errorf("kevin's push (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(tenant.PushAddress{Kind: tenant.PushWebhook, URL: "https://pager.acme.example/hooks/approvals",
		Secrets: [][]byte{[]byte(adaHookKey)}}, ada.Push.Reveal()); diff != "" {
		t.Errorf("ada's push (-want +got):\n%s", diff)
	}
	if !lee.Push.IsZero() {
		t.Errorf("lee has push %v, want none", lee.Push.Kind())
	}
	var vars []string
	for _, v := range c.SecretVars {
		if strings.Contains(v.Path, ".push.") {
			vars = append(vars, v.Path+" "+v.Var)
		}
	}
	wantVars := []string{
		"tenants.acme.members[0].push.ntfy KEVIN_NTFY",
		"tenants.acme.members[0].push.token KEVIN_NTFY_TOKEN",
		"tenants.acme.members[1].push.secrets[0] ADA_PUSH_SECRET",
		"tenants.acme.members[3].push.ntfy OTHER_NTFY",
	}
	if diff := cmp.Diff(wantVars, vars); diff != "" {
		t.Errorf("secret variables (-want +got):\n%s", diff)
	}

	sum := c.Summary()
	for _, want := range []string{
		"secret tenants.acme.members[0].push.ntfy: <secret> from ${KEVIN_NTFY}\n",
		"  push user:kevin by ntfy\n",
		"  push user:ada by webhook\n",
		"    10m push user:kevin rotation:primary approvers\n",
		"  warning: without public_url, push notices carry no link to the decision page: they say to decide in the console or the chat thread\n",
	} {
		if !strings.Contains(sum, want) {
			t.Errorf("bot check lacks %q:\n%s", want, sum)
		}
	}
	// The secrets never print: not in bot check, not in the tenant, not
	// in a member however it is printed or logged.
	var outputs []string
	outputs = append(outputs, sum)
	for _, v := range []any{acme, *acme, kevin, ada, kevin.Push, ada.Push} {
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x"} {
			outputs = append(outputs, fmt.Sprintf(verb, v))
		}
		var buf bytes.Buffer
		slog.New(slog.NewJSONHandler(&buf, nil)).Info("m", "v", v)
		slog.New(slog.NewTextHandler(&buf, nil)).Info("m", "v", v)
		outputs = append(outputs, buf.String())
	}
	js, err := json.Marshal(kevin)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(js))
	for _, out := range outputs {
		for _, secret := range []string{"kevin-7f3a9c2e1b", kevinToken, adaHookKey, "other-topic-77"} {
			if strings.Contains(out, secret) || strings.Contains(out, fmt.Sprintf("%x", secret)) {
				t.Errorf("a push secret printed:\n%s", out)
			}
		}
	}

	// With a decision page, a member without an email address is told
	// their notices carry no link; the warning goes.
	withPage := strings.Replace(pushBase, "tenants:", "public_url: https://approvals.acme.example\nlink_secrets: [\"${ADA_PUSH_SECRET}\"]\ntenants:", 1)
	c, problems = parsePush(t, withPage+"        - {after: 10m, push: [user:kevin, user:ada]}\n")
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	sum = c.Summary()
	if !strings.Contains(sum, "  push user:ada by webhook (no email address, so the decision page is not theirs: notices carry no link)\n") ||
		!strings.Contains(sum, "  push user:kevin by ntfy\n") || strings.Contains(sum, "warning: without public_url") {
		t.Errorf("bot check with a decision page:\n%s", sum)
	}
}

// TestPushAddresses: an ntfy topic is one URL from the environment, over
// https (or to this machine), ending in a topic; a webhook has its URL
// and secrets; every problem names its field and never the address.
func TestPushAddresses(t *testing.T) {
	t.Parallel()
	member := func(push string) string {
		return base + "    members:\n      - user: user:kevin\n        role: operator\n        push: " + push + "\n"
	}
	const at = "bot.yaml:14: tenants.acme.members[0].push"
	tests := []struct {
		name string
		push string
		want []string // nil: valid
	}{
		{"a topic on this machine over http", `{ntfy: "${LOOP_NTFY}"}`, nil},
		{"a topic behind a path", `{ntfy: "${PREFIX_NTFY}"}`, nil},
		{"a webhook on this machine over http", `{webhook: "http://localhost:9999/push", secrets: ["${ADA_PUSH_SECRET}"]}`, nil},
		{"a topic written in the file", `{ntfy: "https://ntfy.sh/kevin-topic"}`, []string{
			at + ".ntfy: is a secret written in the file: write it as one ${NAME}, nothing around it, and set NAME in the bot's environment"}},
		{"a topic in plain http", `{ntfy: "${PLAIN_NTFY}"}`, []string{
			at + ".ntfy: is plain http to a host that is not this machine: a notice carries the member's decision link, which would cross the network in clear text; use https"}},
		{"no topic", `{ntfy: "${NO_TOPIC}"}`, []string{
			at + ".ntfy: does not end in a topic: write the topic's URL, https://ntfy.sh/TOPIC or your server's (a topic is 1 to 64 of A-Z a-z 0-9 _ -), as one ${NAME}"}},
		{"a topic ntfy would refuse", `{ntfy: "${BAD_NTFY}"}`, []string{
			at + ".ntfy: does not end in a topic: write the topic's URL, https://ntfy.sh/TOPIC or your server's (a topic is 1 to 64 of A-Z a-z 0-9 _ -), as one ${NAME}"}},
		{"a query", `{ntfy: "${QUERY_NTFY}"}`, []string{
			at + ".ntfy: has a query or fragment: write the topic's URL, https://ntfy.sh/TOPIC or your server's (a topic is 1 to 64 of A-Z a-z 0-9 _ -), as one ${NAME}"}},
		{"credentials", `{ntfy: "${CREDS_NTFY}"}`, []string{
			at + ".ntfy: must not carry credentials (user:password@): a protected topic takes token, from the environment"}},
		{"not a URL", `{ntfy: "${SHORT_KEY}"}`, []string{
			at + ".ntfy: is not an ntfy topic's URL: write the topic's URL, https://ntfy.sh/TOPIC or your server's (a topic is 1 to 64 of A-Z a-z 0-9 _ -), as one ${NAME}"}},
		{"empty", `{ntfy: "${EMPTY}"}`, []string{at + ".ntfy: is empty (is its environment variable set to nothing?)"}},
		{"both", `{ntfy: "${KEVIN_NTFY}", webhook: "https://pager.acme.example/x", secrets: ["${ADA_PUSH_SECRET}"]}`, []string{
			at + ": has both ntfy and webhook: a member's notices go one way; give one"}},
		{"neither", `{token: "${KEVIN_NTFY_TOKEN}"}`, []string{
			at + ": says neither ntfy nor webhook: give an ntfy topic's URL (from the environment) or a webhook's URL and secrets"}},
		{"a webhook without secrets", `{webhook: "https://pager.acme.example/x"}`, []string{
			at + ".secrets: missing: a list of secrets that sign the webhook's bodies (at least 32 bytes each, from the environment)"}},
		{"a webhook with an empty list", `{webhook: "https://pager.acme.example/x", secrets: []}`, []string{
			at + ".secrets: needs at least one secret"}},
		{"a webhook with a short key", `{webhook: "https://pager.acme.example/x", secrets: ["${SHORT_KEY}"]}`, []string{
			at + ".secrets[0]: ${SHORT_KEY} is shorter than 32 bytes, the size of an HMAC-SHA256 key: make a new one (openssl rand -hex 32) and give it to both sides"}},
		{"a webhook in plain http", `{webhook: "http://pager.acme.example/x", secrets: ["${ADA_PUSH_SECRET}"]}`, []string{
			at + `.webhook: "http://pager.acme.example/x" is plain http to a host that is not this machine: a notice carries the member's decision link, which would cross the network in clear text; use https`}},
		{"a webhook that is no URL", `{webhook: "pager", secrets: ["${ADA_PUSH_SECRET}"]}`, []string{
			at + `.webhook: "pager" is not an absolute http(s) URL`}},
		{"secrets with ntfy", `{ntfy: "${KEVIN_NTFY}", secrets: ["${ADA_PUSH_SECRET}"]}`, []string{
			at + ".secrets: signs a webhook's bodies: an ntfy topic takes none (its URL is the secret; a protected topic takes token)"}},
		{"a token with a webhook", `{webhook: "https://pager.acme.example/x", secrets: ["${ADA_PUSH_SECRET}"], token: "${KEVIN_NTFY_TOKEN}"}`, []string{
			at + ".token: is an ntfy access token: a webhook's bodies are signed with secrets instead"}},
		{"an unknown key", `{ntfy: "${KEVIN_NTFY}", tokn: "${KEVIN_NTFY_TOKEN}"}`, []string{
			at + ".tokn: unknown key (did you mean token?)"}},
		{"not a mapping", `"${KEVIN_NTFY}"`, []string{at + ": expected a mapping, got a string"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, problems := parsePush(t, member(tt.push))
			if diff := cmp.Diff(tt.want, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
			for _, p := range problems {
				for _, secret := range []string{"kevin-", "127.0.0.1", "ntfy.acme.example", "bob:pw", kevinToken, adaHookKey} {
					if strings.Contains(p, secret) {
						t.Errorf("a problem carries the address: %s", p)
					}
				}
			}
		})
	}
}

// TestPushProblems: a push reaches members who may decide and have a
// push address, a rotation whose members all have one, or approvers;
// no other field takes a member's user id, and no two members share a
// topic.
func TestPushProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		add  string
		base string
		want []string
	}{
		{"a member without a push address", "        - {after: 10m, push: [user:lee]}\n", pushBase, []string{
			"bot.yaml:27: tenants.acme.ladders.default[0].push[0]: user:lee has no push address to be sent a push: give the member one (tenants.acme.members)"}},
		{"no member", "        - {after: 10m, push: [user:bob]}\n", pushBase, []string{
			"bot.yaml:27: tenants.acme.ladders.default[0].push[0]: user:bob is not a member of tenant acme: a push reaches the tenant's members (members[].user)"}},
		{"a viewer", "        - {after: 10m, push: [user:vic]}\n", pushBase, []string{
			"bot.yaml:27: tenants.acme.ladders.default[0].push[0]: user:vic is a viewer and cannot decide: a push would page someone who cannot answer"}},
		{"a rotation with a member without one", "        - {after: 10m, push: [rotation:primary]}\n",
			strings.Replace(pushBase, "members: [user:kevin, user:ada]", "members: [user:kevin, user:lee]", 1), []string{
				"bot.yaml:27: tenants.acme.ladders.default[0].push[0]: rotation primary can put user:lee on duty, who has no push address to be sent a push: give the member one (tenants.acme.members)"}},
		{"a chat user", "        - {after: 10m, push: [slack:U0LEE]}\n", pushBase, []string{
			"bot.yaml:27: tenants.acme.ladders.default[0].push[0]: slack:U0LEE is not a member by user id (user:NAME), a rotation (rotation:NAME) or approvers"}},
		{"a member in a mention", "        - {after: 10m, mention: [user:kevin]}\n", pushBase, []string{
			"bot.yaml:27: tenants.acme.ladders.default[0].mention[0]: user:kevin names a member by user id, which only a ladder step's push takes: want a user or group (slack:U…, slack:W…, slack:S…, discord:user:ID or discord:role:ID)"}},
		{"a member in post", "    audit: user:kevin\n", base, []string{
			"bot.yaml:11: tenants.acme.audit: user:kevin names a member by user id, which only a ladder step's push takes: want a channel (slack:C…, slack:G… or discord:channel:ID)"}},
		{"two members share a topic", "", strings.Replace(pushBase, `"${OTHER_NTFY}"`, `"${KEVIN_NTFY}"`, 1), []string{
			"bot.yaml:22: tenants.acme.members[3].push.ntfy: is the topic of user:kevin too (tenants.acme.members[0].push): a topic is one member's, since whoever reads it reads their decision links"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, problems := parsePush(t, tt.base+tt.add)
			if diff := cmp.Diff(tt.want, problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
