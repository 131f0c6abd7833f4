package config_test

import (
	"strings"
	"testing"

	"approvalsbot/config"
	"approvalsbot/tenant"
)

// A tenant's passkey rule is read as written; off by default.
func TestPasskeyRule(t *testing.T) {
	t.Parallel()
	const page = "public_url: https://approvals.acme.example\nlink_secrets: [\"${LINK_SECRET}\"]\n"
	c, err := config.Parse("bot.yaml", []byte(base), linkEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Tenants["acme"].Passkeys; got != tenant.PasskeysOff {
		t.Errorf("a tenant that says nothing: %q, want off", got)
	}
	for _, r := range tenant.PasskeyRules() {
		c, err := config.Parse("bot.yaml", []byte(page+base+"    passkeys: "+string(r)+"\n"), linkEnv)
		if err != nil || c.Tenants["acme"].Passkeys != r {
			t.Errorf("passkeys %s: %v", r, err)
		}
	}
	// Off needs no decision page; localhost is a host name.
	if _, err := config.Parse("bot.yaml", []byte(base+"    passkeys: off\n"), linkEnv); err != nil {
		t.Errorf("passkeys off without public_url: %v", err)
	}
	local := "public_url: http://localhost:8080\nlink_secrets: [\"${LINK_SECRET}\"]\n"
	if _, err := config.Parse("bot.yaml", []byte(local+base+"    passkeys: all\n"), linkEnv); err != nil {
		t.Errorf("passkeys with public_url on localhost: %v", err)
	}
}

func TestPasskeyRuleProblems(t *testing.T) {
	t.Parallel()
	secret := "link_secrets: [\"${LINK_SECRET}\"]\n"
	for _, c := range []struct{ name, file, want string }{
		{"unknown rule", base + "    passkeys: always\n",
			`bot.yaml:11: tenants.acme.passkeys: "always" is not one of off, destructive, flagged, typed, all`},
		{"no decision page", base + "    passkeys: destructive\n",
			"bot.yaml:11: tenants.acme.passkeys: destructive needs the decision page, where a passkey's yes is given: set public_url and link_secrets"},
		{"an IPv4 address", "public_url: http://127.0.0.1:8080\n" + secret + base + "    passkeys: typed\n",
			"bot.yaml:1: public_url: host 127.0.0.1 is an IP address, but tenant acme asks for passkeys"},
		{"an IPv6 address", "public_url: http://[::1]:8080\n" + secret + base + "    passkeys: all\n",
			"bot.yaml:1: public_url: host ::1 is an IP address"},
	} {
		_, err := config.Parse("bot.yaml", []byte(c.file), linkEnv)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n got %v\nwant %q", c.name, err, c.want)
		}
	}
	// A broken public_url is said where it is written, once.
	_, err := config.Parse("bot.yaml", []byte("public_url: ftp://x\n"+secret+base+"    passkeys: all\n"), linkEnv)
	if err == nil || strings.Contains(err.Error(), "needs the decision page") {
		t.Errorf("a broken public_url with passkeys: %v", err)
	}
}

// bot check says what a rule other than off asks for.
func TestPasskeyRuleSummary(t *testing.T) {
	t.Parallel()
	const page = "public_url: https://approvals.acme.example\nlink_secrets: [\"${LINK_SECRET}\"]\n"
	c, err := config.Parse("bot.yaml", []byte(page+base+"    passkeys: flagged\n"), linkEnv)
	if err != nil {
		t.Fatal(err)
	}
	want := "  passkeys flagged: approving a destructive or flagged call needs the member's passkey, on the decision page\n"
	if got := c.Summary(); !strings.Contains(got, want) {
		t.Errorf("summary:\n%s\nwant a line %q", got, want)
	}
	c, err = config.Parse("bot.yaml", []byte(page+base), linkEnv)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Summary(); strings.Contains(got, "passkeys") {
		t.Errorf("summary of a tenant without passkeys:\n%s", got)
	}
}
