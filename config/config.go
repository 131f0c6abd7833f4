// Package config reads the bot's one configuration file
// (docs/configuration.md) into a *Config that is never modified once returned and
// whose secrets never print. How a file is read and checked:
// docs/design.md#reading-the-configuration-file.
package config

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"approvalsbot/tenant"
)

// Defaults for what the file may leave out.
const (
	// DefaultMaxDeadline: the longest re-check threshold the platform allows.
	DefaultMaxDeadline = 30 * 24 * time.Hour
	DefaultListen      = ":8080"
	DefaultStoreDriver = DriverSQLite
	DefaultSQLiteDSN   = "file:bot.db"
	DefaultTick        = 10 * time.Second
	// DefaultIPv6SourcePrefix: one customer network is commonly given a /56.
	DefaultIPv6SourcePrefix = 56
	// DefaultLease is how long a dead replica's claims hold before others
	// take them over. MinLease keeps it above one surface call.
	DefaultLease         = 2 * time.Minute
	MinLease             = 5 * time.Second
	DefaultSlackAPIURL   = "https://slack.com/api/"
	DefaultDiscordAPIURL = "https://discord.com/api/v10/"
)

// What the store keeps, and for how long.
const (
	// DefaultRetention is how long closed approvals keep their content and
	// finished outbox rows are kept. MinRetention leaves time for what
	// follows a close: an approved call's outcome, a re-check, old clicks.
	DefaultRetention = 30 * 24 * time.Hour
	MinRetention     = 24 * time.Hour
	// TombstoneAge keeps a pruned approval's tombstone so that a redelivered
	// request still posts nothing: docs/protocol.md bounds no redelivery.
	TombstoneAge = 365 * 24 * time.Hour
)

// Store drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Config is the whole validated file.
type Config struct {
	// Listen is the HTTP address.
	Listen string
	// ListenPrivate, when set, takes events and metrics off Listen, so a
	// flood on Listen cannot refuse an event.
	ListenPrivate string
	// IPv6SourcePrefix is how many leading bits of an IPv6 address name
	// the source that connection limits and the body budget count.
	IPv6SourcePrefix int
	Store            Store
	// Tick is how often ladders and deadlines are checked.
	Tick time.Duration
	// Lease is how long a claim on work holds (outbox rows, due approvals).
	Lease time.Duration
	// Retention is how long until a closed approval is pruned to its
	// tombstone (Tombstones) and a finished outbox row deleted.
	Retention time.Duration
	// Log is how much the bot logs.
	Log Log
	// StopTimeout bounds a stop (SIGTERM): what is still in flight then
	// stays in the outbox for the next start. Always shorter than Lease.
	StopTimeout time.Duration
	Backend     Backend
	// Slack, Discord and SMTP are nil when their section is omitted; the
	// tenants' targets on a surface that is off are skipped.
	Slack   *Slack
	Discord *Discord
	SMTP    *SMTP
	// DecisionPage is nil unless public_url is set.
	DecisionPage *DecisionPage
	// Tenants by id; never empty.
	Tenants map[string]*tenant.Tenant
	// SecretVars says where each secret came from, so `bot check` can show
	// that without showing the secret.
	SecretVars []SecretVar
}

// SecretVar says which environment variable a secret was read from.
type SecretVar struct {
	// Path is the field, like backend.events_secrets[0]; store.dsn for a
	// DSN from the environment or a DSN's password.
	Path string
	// Var is the variable's name, without ${}.
	Var string
}

// Tombstones is how long tombstones are kept: TombstoneAge, or Retention.
func (c *Config) Tombstones() time.Duration { return max(TombstoneAge, c.Retention) }

// Store says where approvals and the outbox live.
type Store struct {
	// Driver is DriverSQLite or DriverPostgres.
	Driver string
	// DSN is a Secret because a Postgres DSN usually carries a password,
	// which the file may hold only as ${NAME}.
	DSN Secret
}

// Backend is the job backend (docs/protocol.md).
type Backend struct {
	// URL is an absolute http(s) URL.
	URL string
	// EventsSecrets verify events in; any of them may match (rotation).
	EventsSecrets []Secret
	// CallsSecrets sign calls out with the first; the list lets the
	// backend rotate.
	CallsSecrets []Secret
	// Features are the protocol's optional parts the backend supports
	// (backend.features; docs/protocol.md#optional-features), each once.
	Features []string
}

// The backend's optional features (backend.features): parts of the
// protocol the bot uses only with a backend configured as supporting them.
const (
	// FeatureApprovers: the decision sent when a quorum is met carries
	// every approver (docs/protocol.md#optional-features).
	FeatureApprovers = "approvers"
	// FeatureTypedConfirmation: the decision page takes a typed
	// confirmation, and the decision carries the value typed.
	FeatureTypedConfirmation = "typed_confirmation"
	// FeatureGrants: a decision may carry a grant, "Approve and allow…",
	// which the backend applies and reports the uses of; grants are
	// revoked with a signed call (docs/protocol.md#grants).
	FeatureGrants = "grants"
	// FeatureTurns: a turn of several calls is shown on one card, and
	// its Deny all and Approve all N send one batch decision.
	FeatureTurns = "turns"
	// FeatureQuestions: the backend sends its agents' questions
	// (question.asked) and takes their answers with a signed call
	// (docs/protocol.md#questions).
	FeatureQuestions = "questions"
)

// Features lists every feature the bot knows.
func Features() []string {
	return []string{FeatureApprovers, FeatureTypedConfirmation, FeatureGrants, FeatureTurns, FeatureQuestions}
}

// Supports reports whether the backend is configured as supporting feature.
func (b Backend) Supports(feature string) bool { return slices.Contains(b.Features, feature) }

// Slack is the Slack surface.
type Slack struct {
	BotToken Secret
	// SigningSecret verifies HTTP interactions (POST /slack/interactions).
	SigningSecret Secret
	// AppToken, when set, selects Socket Mode (no public URL needed).
	AppToken Secret
	// APIURL is the Web API base, always ending in "/" as slack-go needs.
	APIURL string
}

// Discord is the Discord surface.
type Discord struct {
	BotToken      Secret
	ApplicationID string
	// PublicKey, when set, selects HTTP interactions, not the gateway. It
	// is no secret and may be written in the file, but prints as <secret>:
	// a value from the environment is not known to be only a key.
	PublicKey Secret
	// APIURL is the REST base, always ending in "/".
	APIURL string
}

// SMTP is the email surface. Problems holds the rules its settings must
// meet, which the decoder and notify.NewMailer both apply.
type SMTP struct {
	// Addr is host:port.
	Addr string
	// TLS is smtpconf.TLSStartTLS, smtpconf.TLSImplicit or smtpconf.TLSNone.
	TLS      string
	Username string
	Password Secret
	// From is the From header, display name allowed.
	From string
}

// Load reads and validates the file at path, which problems name as
// given. getenv resolves ${VAR}; nil means os.LookupEnv.
func Load(path string, getenv func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, getenv)
}

// Parse validates data as a config file called name, getenv as for Load.
// It returns a *Error listing every problem, or a Config that has none.
func Parse(name string, data []byte, getenv func(string) (string, bool)) (*Config, error) {
	if getenv == nil {
		getenv = os.LookupEnv
	}
	d := &decoder{file: name, getenv: getenv}
	cfg := d.decodeFile(data)
	if err := d.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// Tenant returns the tenant with the given id.
func (c *Config) Tenant(id string) (*tenant.Tenant, bool) {
	t, ok := c.Tenants[id]
	return t, ok
}

// Problem is one thing wrong with the file.
type Problem struct {
	File string
	// Line is 1-based; 0 when no line applies.
	Line int
	// Path is the field, like tenants.acme.ladders.default[1].after; empty
	// for the file as a whole.
	Path string
	Msg  string
}

// Error formats the problem as `file:line: path: message`.
func (p Problem) Error() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Error is every problem of a file, in line order.
type Error struct {
	Problems []Problem
}

// Error gives one problem per line.
func (e *Error) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}
