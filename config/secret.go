package config

import (
	"fmt"
	"io"
	"log/slog"
	"strings"

	"approvalsbot/internal/secret"
)

// redacted is what a secret prints as, the one word internal/secret keeps.
const redacted = secret.Shown

// Secret is a credential from the environment. Every way of printing it
// (fmt with any verb, JSON, text, slog) gives "<secret>"; the one way to
// the value is Reveal, which makes every use easy to find.
type Secret string

// Reveal returns the value, for the one call that needs it.
func (s Secret) Reveal() string { return string(s) }

// RevealAll is each secret's bytes, in order.
func RevealAll(list []Secret) [][]byte {
	out := make([][]byte, len(list))
	for i, s := range list {
		out[i] = []byte(s.Reveal())
	}
	return out
}

// String prints "<secret>".
func (s Secret) String() string { return redacted }

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return `config.Secret("` + redacted + `")` }

// Format covers every fmt verb, %x and %d included, which would otherwise
// reach the underlying string.
func (s Secret) Format(f fmt.State, verb rune) {
	if verb == 'v' && f.Flag('#') {
		_, _ = io.WriteString(f, s.GoString())
		return
	}
	_, _ = io.WriteString(f, redacted)
}

// MarshalText gives "<secret>" to text encoders.
func (s Secret) MarshalText() ([]byte, error) { return []byte(redacted), nil }

// MarshalJSON gives "<secret>" as a JSON string.
func (s Secret) MarshalJSON() ([]byte, error) { return secret.JSON() }

// LogValue gives "<secret>" to slog.
func (s Secret) LogValue() slog.Value { return secret.LogValue() }

// Compile-time guards: these interfaces are the leak-proofing.
var (
	_ fmt.Formatter  = Secret("")
	_ fmt.Stringer   = Secret("")
	_ fmt.GoStringer = Secret("")
	_ slog.LogValuer = Secret("")
)

// The structs that hold secrets print through method-less copies of
// themselves, or fmt's bad-verb path would print their secrets raw:
// docs/design.md#printing-a-secret.
type (
	configFields  Config
	storeFields   Store
	backendFields Backend
	slackFields   Slack
	discordFields Discord
	smtpFields    SMTP
)

// Format prints the config with every secret as "<secret>".
func (c Config) Format(f fmt.State, verb rune) {
	formatFields(f, verb, configFields(c), "configFields", "Config")
}

// Format prints the store with its DSN as "<secret>".
func (s Store) Format(f fmt.State, verb rune) {
	formatFields(f, verb, storeFields(s), "storeFields", "Store")
}

// Format prints the backend with its secrets as "<secret>".
func (b Backend) Format(f fmt.State, verb rune) {
	formatFields(f, verb, backendFields(b), "backendFields", "Backend")
}

// Format prints the Slack section with its secrets as "<secret>".
func (s Slack) Format(f fmt.State, verb rune) {
	formatFields(f, verb, slackFields(s), "slackFields", "Slack")
}

// Format prints the Discord section with its secrets as "<secret>".
func (d Discord) Format(f fmt.State, verb rune) {
	formatFields(f, verb, discordFields(d), "discordFields", "Discord")
}

// Format prints the SMTP section with its password as "<secret>".
func (s SMTP) Format(f fmt.State, verb rune) {
	formatFields(f, verb, smtpFields(s), "smtpFields", "SMTP")
}

// formatFields prints v, a method-less copy, as asked; %#v names the real type.
func formatFields(f fmt.State, verb rune, v any, copyName, name string) {
	s := fmt.Sprintf(fmt.FormatString(f, verb), v)
	if verb == 'v' && f.Flag('#') {
		s = strings.Replace(s, "config."+copyName, "config."+name, 1)
	}
	_, _ = io.WriteString(f, s)
}
