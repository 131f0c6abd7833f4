// Package config reads the bot's one configuration file (README, Configuration) and
// freezes it into plain values the rest of the program takes.
//
// Reading happens in three stages. The YAML is parsed into yaml.Node, so
// every value keeps its line; the nodes are then decoded strictly against
// the schema (an unknown key is an error: a typo must not silently switch a
// ladder off) with ${VAR} replaced from the environment; and everything is
// validated, with every problem collected, so one `bot check` run lists all
// of them as `file:line: field.path: message`. Only a file with no problem
// at all becomes a *Config.
//
// A *Config is never modified after Parse returns it; a reload builds a new
// one. Secrets are of type Secret, which never prints its value.
package config

import (
	"fmt"
	"os"
	"strings"
	"time"

	"approvalsbot/tenant"
)

// Defaults for what the file may leave out.
const (
	// DefaultMaxDeadline is a tenant's max_deadline: 30 days, the longest
	// re-check threshold the platform allows.
	DefaultMaxDeadline = 30 * 24 * time.Hour
	DefaultListen      = ":8080"
	DefaultStoreDriver = DriverSQLite
	DefaultSQLiteDSN   = "file:bot.db"
	DefaultTick        = 10 * time.Second
	// DefaultIPv6SourcePrefix is ipv6_source_prefix: an IPv6 /56, what one
	// customer network is commonly given, counts as one source.
	DefaultIPv6SourcePrefix = 56
	// DefaultLease is how long a replica's claim on work holds: after a
	// replica dies, its claimed outbox rows and due approvals return to
	// the others after this long. MinLease keeps it above one surface call.
	DefaultLease         = 2 * time.Minute
	MinLease             = 5 * time.Second
	DefaultSlackAPIURL   = "https://slack.com/api/"
	DefaultDiscordAPIURL = "https://discord.com/api/v10/"
)

// What the store keeps, and for how long: the retention setting.
const (
	// DefaultRetention is how long a closed approval keeps its content
	// (request bodies, decision, where its cards went) and a finished
	// outbox row is kept. MinRetention leaves time for what still follows
	// a close: an approved call's outcome, a re-check, clicks on old cards.
	DefaultRetention = 30 * 24 * time.Hour
	MinRetention     = 24 * time.Hour
	// TombstoneAge is how long a pruned approval's tombstone (its id,
	// tenant, final state and event ids with their body digests) is kept
	// after its last change and the last event about it, so that a
	// redelivered or re-sent request for it still posts nothing: docs/protocol.md bounds no redelivery, and a
	// backend retrying for a year is past any retry schedule. A retention
	// longer than this keeps the tombstone as long (Config.Tombstones).
	TombstoneAge = 365 * 24 * time.Hour
)

// Store drivers.
const (
	DriverSQLite   = "sqlite"
	DriverPostgres = "postgres"
)

// Config is the whole validated file.
type Config struct {
	// Listen is the HTTP address: interactions, the decision page and
	// health, and events and metrics too unless ListenPrivate is set.
	Listen string
	// ListenPrivate, when set, is a second HTTP address, for the job
	// backend's events and the metrics only (and health): a flood on the
	// public listener then cannot refuse an event. Empty: one listener.
	ListenPrivate string
	// IPv6SourcePrefix is how many leading bits of an IPv6 address name
	// the source a request comes from, 1 to 128: the connection limits,
	// the body budget's fair shares and the refusal lines count per
	// source. An IPv4 address is always a source of its own.
	IPv6SourcePrefix int
	Store            Store
	// Tick is how often ladders and deadlines are checked.
	Tick time.Duration
	// Lease is how long a claim on work holds (outbox rows, due approvals).
	Lease time.Duration
	// Retention is how long a closed approval keeps its content and a
	// finished outbox row is kept; then the approval is pruned to its
	// tombstone (Tombstones) and the row deleted.
	Retention time.Duration
	// Log is how much the bot logs.
	Log Log
	// StopTimeout bounds a stop (SIGTERM): what is still in flight then
	// stays in the outbox for the next start. Always shorter than Lease.
	StopTimeout time.Duration
	Backend     Backend
	// Slack, Discord and SMTP are nil when their section is omitted: the bot
	// then runs without that surface, and tenants' targets on it are
	// skipped (Summary lists them).
	Slack   *Slack
	Discord *Discord
	SMTP    *SMTP
	// DecisionPage, when public_url is set, lets escalation mail carry
	// links to the bot's decision page; nil otherwise.
	DecisionPage *DecisionPage
	// Tenants by id; never empty.
	Tenants map[string]*tenant.Tenant
	// SecretVars names, in file order, the environment variable each
	// secret was read from, so that `bot check` can show where a secret
	// comes from without showing it.
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

// Tombstones is how long a pruned approval's tombstone is kept after its
// last change and the last event about it: TombstoneAge, or Retention
// when that is longer.
func (c *Config) Tombstones() time.Duration { return max(TombstoneAge, c.Retention) }

// Store says where approvals and the outbox live.
type Store struct {
	// Driver is DriverSQLite or DriverPostgres.
	Driver string
	// DSN is a Secret because a Postgres DSN usually carries a password;
	// Summary prints it with the password removed. The file may hold the
	// DSN, but a password in it only as ${NAME}.
	DSN Secret
}

// Backend is the job backend (docs/protocol.md).
type Backend struct {
	// URL is an absolute http(s) URL.
	URL string
	// EventsSecrets verify events in; any of them may match (rotation).
	EventsSecrets []Secret
	// CallsSecrets sign calls out; the first signs, the list allows rotation
	// on the backend's side.
	CallsSecrets []Secret
}

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
	// PublicKey, when set, selects HTTP interactions (POST
	// /discord/interactions); otherwise interactions come over the gateway.
	// It is hex Ed25519 and not confidential, so the file may hold it
	// as written or as ${NAME}; it prints as <secret> all the same, since
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

// Load reads and validates the file at path. Problems name the file by the
// path given, as `bot check` prints them, so a person running it from
// anywhere can open the line. getenv resolves ${VAR}; nil means
// os.LookupEnv.
func Load(path string, getenv func(string) (string, bool)) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	return Parse(path, data, getenv)
}

// Parse validates data as a config file called name. It returns a *Error
// listing every problem, or a Config that has none. getenv resolves
// ${VAR}; nil means os.LookupEnv.
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
	// for problems of the file as a whole (YAML syntax).
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
