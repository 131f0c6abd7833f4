package config_test

import (
	"strings"
	"testing"

	"approvalsbot/config"
	"approvalsbot/tenant"
)

// linkEnv is base's environment with a link secret of the shortest
// length accepted, and one too short.
var linkEnv = baseEnv(map[string]string{
	"LINK_SECRET": "link-secret-of-32-bytes-0c9e1f7a",
	"SHORT":       "too-short",
})

func TestDecisionPage(t *testing.T) {
	t.Parallel()
	const page = "public_url: https://approvals.acme.example/\nlink_secrets: [\"${LINK_SECRET}\"]\n"
	c, err := config.Parse("bot.yaml", []byte(page+base), linkEnv)
	if err != nil {
		t.Fatal(err)
	}
	dp := c.DecisionPage
	if dp == nil || dp.PublicURL != "https://approvals.acme.example" || len(dp.LinkSecrets) != 1 ||
		dp.LinkSecrets[0].Reveal() != "link-secret-of-32-bytes-0c9e1f7a" {
		t.Fatalf("decision page %+v", dp)
	}
	if got := c.Tenants["acme"].EmailDecisions; got != tenant.EmailDecisionsDeny {
		t.Errorf("a tenant that says nothing allows %q by mail, want deny", got)
	}
	if strings.Contains(c.Summary(), "link-secret-of-32-bytes") {
		t.Error("bot check's summary shows the link secret")
	}
	// Without public_url, no page and no links.
	if c, err := config.Parse("bot.yaml", []byte(base), linkEnv); err != nil || c.DecisionPage != nil {
		t.Errorf("no public_url: %+v %v", c, err)
	}
	// A browser on this machine may use plain http.
	if c, err := config.Parse("bot.yaml", []byte("public_url: http://127.0.0.1:8080\nlink_secrets: [\"${LINK_SECRET}\"]\n"+base), linkEnv); err != nil ||
		c.DecisionPage.PublicURL != "http://127.0.0.1:8080" {
		t.Errorf("loopback http: %v", err)
	}
	// page_decisions, and email_decisions, its earlier name, still read.
	for _, key := range []string{"page_decisions", "email_decisions"} {
		for _, v := range []string{"off", "deny", "approve"} {
			c, err := config.Parse("bot.yaml", []byte(base+"    "+key+": "+v+"\n"), linkEnv)
			if err != nil || c.Tenants["acme"].EmailDecisions != v {
				t.Errorf("%s %s: %v", key, v, err)
			}
		}
	}
}

func TestDecisionPageProblems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ file, want string }{
		{"public_url: https://approvals.acme.example\n" + base,
			"bot.yaml:1: link_secrets: missing: a list of secrets that sign decision links"},
		{"link_secrets: [\"${LINK_SECRET}\"]\n" + base,
			"bot.yaml:1: link_secrets: has no use without public_url"},
		{"public_url: http://approvals.acme.example\nlink_secrets: [\"${LINK_SECRET}\"]\n" + base,
			"bot.yaml:1: public_url: \"http://approvals.acme.example\" is plain http to a host that is not this machine"},
		{"public_url: https://approvals.acme.example/?x=1\nlink_secrets: [\"${LINK_SECRET}\"]\n" + base,
			"bot.yaml:1: public_url: \"https://approvals.acme.example/?x=1\" has a query or fragment"},
		{"public_url: approvals.acme.example\nlink_secrets: [\"${LINK_SECRET}\"]\n" + base,
			"bot.yaml:1: public_url: \"approvals.acme.example\" is not an absolute http(s) URL"},
		{"public_url: https://approvals.acme.example\nlink_secrets: [\"${SHORT}\"]\n" + base,
			"bot.yaml:2: link_secrets[0]: ${SHORT} is shorter than 32 bytes"},
		{"public_url: https://approvals.acme.example\nlink_secrets: [\"written-in-the-file-0123456789abcdef\"]\n" + base,
			"bot.yaml:2: link_secrets[0]:"},
		{"public_url: https://approvals.acme.example\nlink_secrets: []\n" + base,
			"bot.yaml:2: link_secrets: needs at least one secret"},
		{base + "    email_decisions: always\n",
			`bot.yaml:11: tenants.acme.email_decisions: "always" is not one of off, deny, approve`},
		{base + "    page_decisions: always\n",
			`bot.yaml:11: tenants.acme.page_decisions: "always" is not one of off, deny, approve`},
		{base + "    email_decisions: deny\n    page_decisions: approve\n",
			`bot.yaml:12: tenants.acme.page_decisions: says what the decision page takes, as email_decisions does already: keep one (page_decisions)`},
	} {
		_, err := config.Parse("bot.yaml", []byte(c.file), linkEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q:\n got %v\nwant %q", c.file, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "written-in-the-file") {
			t.Errorf("a problem shows a secret written in the file: %v", err)
		}
	}
}

// One rule says what mail may decide: nothing with off, a denial alone
// by default, both with approve.
func TestMailDecides(t *testing.T) {
	for _, c := range []struct {
		setting       string
		deny, approve bool
	}{
		{tenant.EmailDecisionsOff, false, false},
		{tenant.EmailDecisionsDeny, true, false},
		{"", true, false},
		{tenant.EmailDecisionsApprove, true, true},
	} {
		tn := &tenant.Tenant{EmailDecisions: c.setting}
		if tn.MailDecides(false) != c.deny || tn.MailDecides(true) != c.approve {
			t.Errorf("%q: deny %v approve %v, want %v %v", c.setting, tn.MailDecides(false), tn.MailDecides(true), c.deny, c.approve)
		}
	}
}
