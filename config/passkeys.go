package config

import (
	"net"
	"net/url"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"approvalsbot/tenant"
)

// passkeyRule reads tenants.ID.passkeys into t, remembering where it was
// written for passkeysNeedPage.
func (d *decoder) passkeyRule(t *tenant.Tenant, v *yaml.Node, p string) {
	if isNull(v) {
		return
	}
	choices := make([]string, 0, len(tenant.PasskeyRules()))
	for _, r := range tenant.PasskeyRules() {
		choices = append(choices, string(r))
	}
	s, ok := d.oneOf(v, p, choices...)
	if !ok {
		return
	}
	t.Passkeys = tenant.PasskeyRule(s)
	if t.Passkeys != tenant.PasskeysOff {
		if d.passkeys == nil {
			d.passkeys = map[string]passkeyPos{}
		}
		d.passkeys[t.ID] = passkeyPos{node: v, path: p}
	}
}

// passkeyPos is where a tenant's passkey rule other than off was written.
type passkeyPos struct {
	node *yaml.Node
	path string
}

// passkeysNeedPage checks what a passkey rule needs of the whole file: a
// decision page (public_url and link_secrets), since a passkey's yes is
// given only there, whose host is a name: the relying party id of a
// passkey is public_url's host, and WebAuthn takes no IP address.
func (d *decoder) passkeysNeedPage(c *Config, seen map[string]*yaml.Node) {
	if len(d.passkeys) == 0 {
		return
	}
	ids := make([]string, 0, len(d.passkeys))
	for id := range d.passkeys {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	if c.DecisionPage == nil {
		if seen["public_url"] != nil && seen["link_secrets"] != nil {
			return // public_url or link_secrets is wrong, and said so where written
		}
		for _, id := range ids {
			at := d.passkeys[id]
			d.problemf(at.node, at.path, "%s needs the decision page, where a passkey's yes is given: set public_url and link_secrets "+
				"(docs/configuration.md#passkeys)", c.Tenants[id].Passkeys)
		}
		return
	}
	u, err := url.Parse(c.DecisionPage.PublicURL)
	if err != nil {
		return // checked where written
	}
	if host := u.Hostname(); net.ParseIP(strings.Trim(host, "[]")) != nil {
		d.problemf(seen["public_url"], "public_url", "host %s is an IP address, but tenant %s asks for passkeys, whose relying party is a host name: "+
			"give the name people reach the bot at (localhost on this machine)", host, strings.Join(ids, ", "))
	}
}
