package config

import (
	"net/url"
	"strings"

	"go.yaml.in/yaml/v3"

	"approvalsbot/notify/smtpconf"
)

// DecisionPage is where people reach the bot's decision page from an
// escalation mail (the public_url and link_secrets keys).
type DecisionPage struct {
	// PublicURL is the bot's address as a mail reader's browser reaches
	// it, without a trailing "/": links are PublicURL + "/decide/…".
	PublicURL string
	// LinkSecrets sign decision links (HMAC-SHA256); the first signs, any
	// verifies, so a secret can rotate. Each is at least MinHMACKey bytes.
	LinkSecrets []Secret
}

// publicURL checks the bot's public address: https, or http to a
// loopback host (a browser on the same machine); no credentials, query
// or fragment, since links are built by appending to it.
func (d *decoder) publicURL(n *yaml.Node, p string) (string, bool) {
	s, ok := d.str(n, p)
	if !ok || !d.httpURL(n, p, s) {
		return "", false
	}
	u, _ := url.Parse(s) // httpURL parsed it
	switch {
	case u.RawQuery != "" || u.Fragment != "" || strings.HasSuffix(s, "?") || strings.HasSuffix(s, "#"):
		d.problemf(n, p, "%q has a query or fragment: give the address links start with, like https://approvals.example.com", s)
		return "", false
	case u.Scheme == "http" && !LoopbackHost(u.Hostname()):
		d.problemf(n, p, "%q is plain http to a host that is not this machine: decision links would cross the network in clear text; use https", s)
		return "", false
	}
	return strings.TrimRight(s, "/"), true
}

func (d *decoder) linkSecrets(k, v *yaml.Node, p string) []Secret {
	var out []Secret
	n, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
		s, ok := d.hmacKey(item, p)
		switch {
		case ok && s == "":
			d.problemf(deref(item), p, "is empty (is its environment variable set to nothing?)")
		case ok:
			out = append(out, s)
		case isNull(item):
			d.problemf(deref(item), p, "is empty")
		}
	})
	if ok && n == 0 {
		d.problemf(k, p, "needs at least one secret")
	}
	return out
}

// decisionPage puts public_url and link_secrets together.
func (d *decoder) decisionPage(seen map[string]*yaml.Node, publicURL string, secrets []Secret) *DecisionPage {
	switch {
	case seen["public_url"] == nil && seen["link_secrets"] == nil:
		return nil
	case seen["public_url"] == nil:
		d.problemf(seen["link_secrets"], "link_secrets", "has no use without public_url: decision links need the address people reach the bot at")
		return nil
	case seen["link_secrets"] == nil:
		d.problemf(seen["public_url"], "link_secrets", "missing: a list of secrets that sign decision links (at least %d bytes each, from the environment)", MinHMACKey)
		return nil
	case publicURL == "" || len(secrets) == 0:
		return nil // reported where written
	}
	return &DecisionPage{PublicURL: publicURL, LinkSecrets: secrets}
}

// LoopbackHost reports whether host never leaves the machine (localhost
// or a loopback IP): smtpconf.Loopback, the one rule for where clear text
// may go, a decision page over plain http or SMTP without TLS.
func LoopbackHost(host string) bool { return smtpconf.Loopback(host) }
