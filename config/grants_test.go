package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/tenant"
)

func TestGrants(t *testing.T) {
	t.Parallel()
	withFeature := strings.Replace(base, "  calls_secrets: [\"${CALLS_SECRET}\"]\n", "  calls_secrets: [\"${CALLS_SECRET}\"]\n  features: [grants]\n", 1)
	c, problems := parse(t, withFeature+`    grants:
      enabled: true
      max_ttl: 1h
      max_uses: 10
      free:
        acme_github.comment: [body, body_format]
`)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	g := c.Tenants["acme"].Grants
	want := tenant.Grants{Enabled: true, MaxTTL: time.Hour, MaxUses: 10,
		Free: map[string][]string{"acme_github.comment": {"body", "body_format"}}}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("grants (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]time.Duration{15 * time.Minute, time.Hour}, g.TTLs()); diff != "" {
		t.Errorf("TTLs under max_ttl (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{1, 3, 5, 10}, g.Uses()); diff != "" {
		t.Errorf("uses under max_uses (-want +got):\n%s", diff)
	}
	if w := "  grants: Approve and allow… for 15m, 1h, at most 10 uses; never a destructive call; acme_github.comment may differ in body, body_format\n"; !strings.Contains(c.Summary(), w) {
		t.Errorf("summary lacks %q:\n%s", w, c.Summary())
	}

	// Off by default, with the default caps.
	c, _ = parse(t, base)
	if diff := cmp.Diff(tenant.DefaultGrants(), c.Tenants["acme"].Grants); diff != "" || c.Tenants["acme"].Grants.Enabled {
		t.Errorf("default grants (-want +got):\n%s", diff)
	}
	if strings.Contains(c.Summary(), "grants:") {
		t.Errorf("summary speaks of grants that are off:\n%s", c.Summary())
	}

	for _, tt := range []struct {
		name, text string
		want       []string
	}{
		{"no feature", base + "    grants: {enabled: true}\n", []string{
			`bot.yaml:11: tenants.acme.grants.enabled: grants need a backend that applies them: add "grants" to backend.features (docs/protocol.md#grants), or set enabled: false`,
		}},
		{"ttl too short", withFeature + "    grants: {enabled: true, max_ttl: 5m}\n", []string{
			`bot.yaml:12: tenants.acme.grants.max_ttl: 5m is shorter than the shortest grant offered (15m): give 15m to 24h`,
		}},
		{"ttl too long", withFeature + "    grants: {enabled: true, max_ttl: 48h}\n", []string{
			`bot.yaml:12: tenants.acme.grants.max_ttl: 48h is longer than a grant may live (24h)`,
		}},
		{"uses", withFeature + "    grants: {enabled: true, max_uses: 0}\n", []string{
			`bot.yaml:12: tenants.acme.grants.max_uses: 0 is not 1 to 100`,
		}},
		{"glob", withFeature + "    grants:\n      free: {\"acme.*\": [body]}\n", []string{
			`bot.yaml:13: tenants.acme.grants.free["acme.*"]: a function is named exactly, without globs: a grant leaves an argument free for one function only`,
		}},
		{"twice", withFeature + "    grants:\n      free: {f: [a, a]}\n", []string{
			`bot.yaml:13: tenants.acme.grants.free.f[1]: "a" is listed twice`,
		}},
		{"unknown key", withFeature + "    grants: {enable: true}\n", []string{
			`bot.yaml:12: tenants.acme.grants.enable: unknown key (did you mean enabled?)`,
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, got := parse(t, tt.text)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
