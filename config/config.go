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
	"path"
	"slices"
	"strings"
	"time"

	"approvalsbot/ladder"
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
	// DefaultLadder is the ladder every tenant has, empty when the file
	// configures none.
	DefaultLadder = "default"
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

// SMTP transport security: STARTTLS after connecting, TLS from the first
// byte, or none (allowed only to a loopback address, since credentials and
// approval content would otherwise cross the network in clear).
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "tls"
	TLSNone     = "none"
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
	Tenants map[string]*Tenant
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
	// TLS is TLSStartTLS, TLSImplicit or TLSNone.
	TLS      string
	Username string
	Password Secret
	// From is the From header, display name allowed.
	From string
}

// Tenant is one tenant's people, places and ladders.
type Tenant struct {
	ID string
	// Deadline applies when neither the request nor a tool override sets
	// one.
	Deadline time.Duration
	// MaxDeadline is how far past the bot's clock a request's own
	// deadline may lie when it arrives (DefaultMaxDeadline); one further
	// away is refused, so that no link stays valid and no ladder waits
	// without end.
	MaxDeadline time.Duration
	// Post is where each card goes (step 0).
	Post []ladder.Target
	// Audit, when set, is the channel approval.auto_granted notices go to.
	Audit *ladder.Target
	// Digest, when set, posts what still waits on a schedule.
	Digest             *Digest
	ForbidSelfApproval bool
	// Zone is the tenant's time zone: working hours (a step's during),
	// rotations and the digest that name no zone of their own are read in
	// it. nil means UTC (Location).
	Zone *time.Location
	// Rotations by name, for steps that name rotation:NAME; each ladder
	// carries the ones its steps name (ladder.Ladder.Rotations).
	Rotations map[string]ladder.Rotation
	// Ladders by name; always holds DefaultLadder.
	Ladders map[string]ladder.Ladder
	// Tools are per-function overrides in file order: the first whose glob
	// matches wins.
	Tools   []ToolOverride
	Members []Member
	// EmailDecisions is what a member may decide from escalation mail on
	// the decision page: EmailDecisionsOff, EmailDecisionsDeny (the
	// default) or EmailDecisionsApprove.
	EmailDecisions string
}

// Digest posts a summary of what still waits.
type Digest struct {
	// Cron is a standard 5-field spec (or a descriptor such as @daily), read
	// in Zone.
	Cron string
	Zone *time.Location
	// To is a channel.
	To ladder.Target
}

// ToolOverride changes how calls of matching functions are handled. Zero
// fields leave the tenant's setting in place.
type ToolOverride struct {
	// Glob matches function names with path.Match; "*" also matches dots,
	// so "payments.*" matches "payments.refund".
	Glob     string
	Ladder   string
	Deadline time.Duration
	// Post, when set, replaces the tenant's Post.
	Post []ladder.Target
}

// Member maps a tenant user to their chat identities and permissions.
type Member struct {
	// User is the tenant user id the backend knows ("user:kevin").
	User string
	Role Role
	// Content lets the member see arguments and digests.
	Content bool
	// Governance lets the member give the second approval of protected
	// paths.
	Governance bool
	// Chat holds the member's bare user id on each chat surface they are
	// on (ladder.ChatSurfaces), keyed by the surface's name, as the file
	// writes them (members[].slack: U…, members[].discord: a snowflake).
	// Email is a bare address and may be empty.
	Chat  ladder.ChatIDs
	Email string
}

// ChatID is the member's bare user id on the chat surface called surface
// ("slack", "discord"), or "" when they are not on it.
func (m Member) ChatID(surface string) string { return m.Chat[surface] }

// Role is what a member may do.
type Role string

// Roles from least to most powerful.
const (
	RoleViewer   Role = "viewer"
	RoleOperator Role = "operator"
	RoleAdmin    Role = "admin"
	RoleOwner    Role = "owner"
)

// Roles lists every role, least powerful first.
func Roles() []Role { return []Role{RoleViewer, RoleOperator, RoleAdmin, RoleOwner} }

// Valid reports whether r is one of Roles.
func (r Role) Valid() bool { return slices.Contains(Roles(), r) }

// CanDecide reports whether a member with this role may approve or deny.
// A viewer only watches.
func (r Role) CanDecide() bool {
	return r == RoleOperator || r == RoleAdmin || r == RoleOwner
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
func (c *Config) Tenant(id string) (*Tenant, bool) {
	t, ok := c.Tenants[id]
	return t, ok
}

// Tool returns the first override, in file order, whose glob matches the
// function name.
func (t *Tenant) Tool(function string) (ToolOverride, bool) {
	for _, o := range t.Tools {
		if ok, _ := path.Match(o.Glob, function); ok {
			return o, true
		}
	}
	return ToolOverride{}, false
}

// LadderFor picks the ladder for a call of function whose request named
// requested (may be ""): the requested ladder when the tenant has it, else
// the tool override's, else the default.
func (t *Tenant) LadderFor(function, requested string) ladder.Ladder {
	if l, ok := t.Ladders[requested]; ok && requested != "" {
		return l
	}
	if o, ok := t.Tool(function); ok && o.Ladder != "" {
		if l, ok := t.Ladders[o.Ladder]; ok {
			return l
		}
	}
	if l, ok := t.Ladders[DefaultLadder]; ok {
		return l
	}
	return ladder.Ladder{Name: DefaultLadder}
}

// PostFor is where cards for function go: the tool override's post when it
// has one (it replaces the tenant's), else the tenant's.
func (t *Tenant) PostFor(function string) []ladder.Target {
	if o, ok := t.Tool(function); ok && len(o.Post) > 0 {
		return o.Post
	}
	return t.Post
}

// DeadlineFor is the deadline a call of function gets when its request
// sets none: the tool override's, else the tenant's, else
// ladder.DefaultDeadline. ladder.Deadline applies the request's own first.
func (t *Tenant) DeadlineFor(function string) time.Duration {
	if o, ok := t.Tool(function); ok && o.Deadline > 0 {
		return o.Deadline
	}
	if t.Deadline > 0 {
		return t.Deadline
	}
	return ladder.DefaultDeadline
}

// MemberOn finds the member who is id on surface: on a chat surface
// (ladder.ChatSurfaces) the member with that bare user id, on
// ladder.SurfaceEmail the member whose address has id's AddressKey (how a
// ladder step that mails a member's address reaches someone who may
// decide). It is the one lookup of a person by where they clicked or were
// reached, so it names no platform; an empty id and a surface no member is
// on match nobody.
func (t *Tenant) MemberOn(surface, id string) (Member, bool) {
	if surface == ladder.SurfaceEmail {
		key := AddressKey(id)
		return t.member(func(m Member) bool { return m.Email != "" && AddressKey(m.Email) == key }, id)
	}
	return t.member(func(m Member) bool { return m.Chat[surface] == id }, id)
}

// AddressKey is the one form in which two e-mail addresses are compared:
// the address with the ASCII letters A to Z lowered and every other
// character kept as written. Two addresses are one mailbox to the bot
// exactly when their keys are equal: a member is looked up by it, the
// members' addresses must differ by it (bot check), and one recipient's
// mails are recorded under it.
//
// Only ASCII is folded because every mail system treats Sam@ and sam@ as
// one mailbox, while none folds the rest of Unicode in a local part: ſam@
// (long s), Kim@ with the Kelvin sign, ıan@ (dotless i) and ｓam@
// (full-width) are other mailboxes than sam@, kim@, ian@ and sam@. A
// Unicode fold (strings.EqualFold, strings.ToLower) would merge them, so
// whoever holds the look-alike mailbox would be taken for the member and
// receive their decision links.
func AddressKey(addr string) string {
	for i := 0; i < len(addr); i++ {
		if c := addr[i]; 'A' <= c && c <= 'Z' {
			b := []byte(addr)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return addr
}

// MemberByUser finds the member with a tenant user id.
func (t *Tenant) MemberByUser(user string) (Member, bool) {
	return t.member(func(m Member) bool { return m.User == user }, user)
}

// member scans linearly: member lists are short, and keeping Tenant free of
// hidden indexes keeps it a plain value.
func (t *Tenant) member(match func(Member) bool, key string) (Member, bool) {
	if key == "" {
		return Member{}, false
	}
	for _, m := range t.Members {
		if match(m) {
			return m, true
		}
	}
	return Member{}, false
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
