package tenant

import (
	"bytes"
	"fmt"
	"log/slog"
	"slices"

	"approvalsbot/internal/secret"
)

// How a member's push notices go (Push.Kind).
const (
	// PushNtfy publishes to an ntfy topic (https://ntfy.sh/TOPIC or a
	// server of the tenant's own). Whoever knows the topic reads it.
	PushNtfy = "ntfy"
	// PushWebhook posts a signed JSON body to a URL the tenant runs
	// (Pushover, a pager, a gateway of its own).
	PushWebhook = "webhook"
)

// Push is where a member's push notices go: an ntfy topic, or a webhook
// whose bodies are signed. A notice carries the member's decision link,
// so the address is a secret: every way of printing a Push (fmt with any
// verb, slog, JSON) gives "<secret>", and the one way to the values is
// Reveal. The zero Push is none.
type Push struct {
	kind    string
	url     string
	token   string
	secrets [][]byte
}

// NtfyPush is an ntfy topic, by its URL (https://ntfy.sh/TOPIC), with
// the access token a protected topic needs ("" for none).
func NtfyPush(topicURL, token string) Push {
	return Push{kind: PushNtfy, url: topicURL, token: token}
}

// WebhookPush is a webhook at url whose bodies are signed with secrets
// (the first signs, each is one v1 of the signature, so a secret can
// rotate).
func WebhookPush(url string, secrets [][]byte) Push {
	out := make([][]byte, len(secrets))
	for i, s := range secrets {
		out[i] = bytes.Clone(s)
	}
	return Push{kind: PushWebhook, url: url, secrets: out}
}

// Kind is PushNtfy or PushWebhook; "" for none. It is no secret.
func (p Push) Kind() string { return p.kind }

// IsZero reports whether the member has no push address.
func (p Push) IsZero() bool { return p.kind == "" }

// PushAddress is a Push revealed, for the one sender that needs it.
type PushAddress struct {
	Kind string
	// URL is the ntfy topic's URL, or the webhook's.
	URL string
	// Token is an ntfy access token; "" for none.
	Token string
	// Secrets sign a webhook's bodies.
	Secrets [][]byte
}

// Reveal returns the address and its secrets, copied.
func (p Push) Reveal() PushAddress {
	out := PushAddress{Kind: p.kind, URL: p.url, Token: p.token}
	for _, s := range p.secrets {
		out.Secrets = append(out.Secrets, bytes.Clone(s))
	}
	return out
}

// Equal reports whether two pushes go to the same place the same way.
func (p Push) Equal(o Push) bool {
	return p.kind == o.kind && p.url == o.url && p.token == o.token &&
		slices.EqualFunc(p.secrets, o.secrets, bytes.Equal)
}

// Format prints "<secret>" for every verb, and tenant.Push{<secret>} for %#v.
func (p Push) Format(f fmt.State, verb rune) { secret.Format(f, verb, "tenant.Push") }

// LogValue gives "<secret>" to slog.
func (p Push) LogValue() slog.Value { return secret.LogValue() }

// MarshalJSON gives "<secret>" as a JSON string.
func (p Push) MarshalJSON() ([]byte, error) { return secret.JSON() }

// Compile-time guards: these interfaces are the leak-proofing.
var (
	_ fmt.Formatter  = Push{}
	_ slog.LogValuer = Push{}
)
