package discord

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"approvalsbot/adapters/replay"
	"approvalsbot/internal/refusal"
	"approvalsbot/internal/secret"
	"approvalsbot/ladder"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// Store is what the adapter reads of the bot's state (/approvals), and
// where it records the signed requests seen (package replay). store.Store
// satisfies it.
type Store interface {
	replay.Store
	threads.CommandStore
	threads.GrantStore // /approvals grants
}

// Service is where clicks go; *threads.Service satisfies it.
type Service interface {
	// Click takes a click and returns its whole outcome (threads.Click).
	Click(ctx context.Context, req threads.ClickRequest) threads.Clicked
	// Receive opens the receipt of a click just received, which the
	// adapter ends once the click is answered (threads.Receipt).
	Receive() *threads.Receipt
}

var _ Service = (*threads.Service)(nil)

// surfaceName names Discord in threads.Person and in log lines.
const surfaceName = "discord"

// GatewayLocker lets exactly one replica hold the gateway connection
// (docs/design.md#discords-gateway). Acquire blocks until this process
// holds the lock or ctx ends; the lock is held until release is called
// or lost is closed (a nil lost is never lost).
type GatewayLocker interface {
	Acquire(ctx context.Context) (lost <-chan struct{}, release func(), err error)
}

// DefaultAPIURL is Discord's REST base.
const DefaultAPIURL = "https://discord.com/api/v10/"

// Credentials are the Discord application's: PublicKey is hex Ed25519.
// They print as "<secret>" however they are printed, logged or encoded.
type Credentials struct {
	BotToken, ApplicationID, PublicKey string
}

// Format prints "<secret>".
func (Credentials) Format(f fmt.State, verb rune) { secret.Format(f, verb, "discord.Credentials") }

// LogValue gives "<secret>" to slog.
func (Credentials) LogValue() slog.Value { return secret.LogValue() }

// MarshalJSON gives "<secret>".
func (Credentials) MarshalJSON() ([]byte, error) { return secret.JSON() }

// Options configure NewSurface.
type Options struct {
	// Credentials: BotToken and ApplicationID are required; PublicKey
	// selects HTTP interactions over the gateway.
	Credentials Credentials
	// APIURL (default DefaultAPIURL) chooses the scheme and host; discordgo
	// builds every path itself (/api/v9/…).
	APIURL string
	// Tenants gives the configuration in force (swapped on SIGHUP), for
	// /approvals and Doctor. Required.
	Tenants func() map[string]*tenant.Tenant
	// Passkeys makes members' passkey enrolment links for /approvals
	// passkey; nil: the bot takes no passkeys, and the command says so.
	Passkeys threads.EnrolLinks
	// Store is read, and keeps the signed requests seen. Required.
	Store Store
	// Logger gets refusals, failed answers and gateway news; nil discards.
	Logger *slog.Logger
	// IPv6Prefix names the source of a refused request's line, as the
	// connection limits do (0: connlimit.DefaultIPv6Prefix).
	IPv6Prefix int
	// Registry gets bot_discord_requests_refused_total; nil: unregistered.
	Registry prometheus.Registerer
	// HTTPClient calls Discord (nil: a 30 s timeout), copied with a
	// transport that sends discord.com's calls to APIURL's host.
	HTTPClient *http.Client
	// Now is the clock signed timestamps are checked against (nil: time.Now).
	Now func() time.Time
	// PerChannelRate and Burst are the outbox's budget per channel and
	// route; zero means the defaults, rate.Inf switches pacing off.
	PerChannelRate rate.Limit
	Burst          int
	// Locker guards the gateway across replicas; nil: this is the only one.
	Locker GatewayLocker
}

// Surface is the outbound half of the adapter, what the outbox posts
// through; it exists before the service, which takes it.
type Surface struct {
	rest      *discordgo.Session // REST only: never opened
	token     string             // "Bot …", for gateway sessions
	appID     string
	publicKey ed25519.PublicKey // nil: interactions over the gateway
	client    *http.Client
	tenants   func() map[string]*tenant.Tenant
	passkeys  threads.EnrolLinks
	store     Store
	log       *slog.Logger
	refusals  *refusal.Counter // refused requests: counted, and logged at most once a minute per source and reason
	now       func() time.Time
	locker    GatewayLocker
	rate      rate.Limit // the budget the outbox paces this surface's rows with (pace.go)
	burst     int

	dmMu sync.Mutex
	dms  map[string]string // user id → DM channel id
}

// Adapter is the whole Discord adapter: the Surface, and the endpoint or
// gateway that takes clicks and commands to the service.
type Adapter struct {
	*Surface
	replay  *replay.Guard
	service Service
	work    *threads.Runner // what follows answers, and answers over the gateway; Close waits for it
}

// Compile-time guards: the surface can answer one person privately.
var (
	_ threads.Surface = (*Surface)(nil)
	_ threads.Teller  = (*Surface)(nil)
)

// apiPath is the path an api_url may carry: none, or Discord's /api/vN/.
var apiPath = regexp.MustCompile(`^(/|/api/v[0-9]+/)?$`)

// NewSurface checks o and builds the outbound surface, calling nothing.
func NewSurface(o Options) (*Surface, error) {
	var errs []error
	if strings.TrimPrefix(o.Credentials.BotToken, "Bot ") == "" {
		errs = append(errs, errors.New("discord: a bot token is required"))
	} else if !ladder.IsSnowflake(o.Credentials.ApplicationID) {
		errs = append(errs, errors.New("discord: the application id is required (a snowflake)"))
	}
	if o.Tenants == nil {
		errs = append(errs, errors.New("discord: Tenants is required"))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("discord: Store is required"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var pub ed25519.PublicKey
	if k := o.Credentials.PublicKey; k != "" {
		b, err := hex.DecodeString(k)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, errors.New("discord: public_key is not an Ed25519 public key (64 hex digits)")
		}
		pub = b
	}
	apiURL := cmp.Or(o.APIURL, DefaultAPIURL)
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !apiPath.MatchString(u.Path) {
		return nil, fmt.Errorf("discord: api_url %q: want an absolute http(s) URL with no path or /api/vN/", apiURL)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 30 * time.Second}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.PerChannelRate == 0 {
		o.PerChannelRate = DefaultPerChannelRate
	}
	if o.Burst <= 0 {
		o.Burst = DefaultBurst
	}
	client := *o.HTTPClient
	client.Transport = rewrite(o.HTTPClient.Transport, u)

	token := "Bot " + strings.TrimPrefix(o.Credentials.BotToken, "Bot ")
	rest, err := discordgo.New(token)
	if err != nil {
		return nil, fmt.Errorf("discord: %w", err)
	}
	rest.Client = &client
	rest.ShouldRetryOnRateLimit = false // a 429 is the outbox's to wait out, not a sleep without a context
	rest.MaxRestRetries = 0             // a 502 too: the outbox retries with backoff
	rest.StateEnabled = false
	refusals, err := refusal.NewCounter(prometheus.CounterOpts{
		Name: "bot_discord_requests_refused_total",
		Help: "Requests to the Discord endpoints refused, by what the answer says (bad_signature includes replays).",
	}, "discord: requests refused", o.Logger, o.Registry, o.IPv6Prefix)
	if err != nil {
		return nil, err
	}
	a := &Surface{
		rest:      rest,
		token:     token,
		appID:     o.Credentials.ApplicationID,
		publicKey: pub,
		client:    &client,
		tenants:   o.Tenants,
		passkeys:  o.Passkeys,
		store:     o.Store,
		log:       o.Logger,
		refusals:  refusals,
		now:       o.Now,
		locker:    o.Locker,
		rate:      o.PerChannelRate,
		burst:     o.Burst,
		dms:       map[string]string{},
	}
	return a, nil
}

// New builds the inbound half on s, taking clicks and commands to svc.
func New(s *Surface, svc Service) (*Adapter, error) {
	if s == nil {
		return nil, errors.New("discord: a Surface is required")
	}
	if svc == nil {
		return nil, errors.New("discord: a Service is required")
	}
	return &Adapter{Surface: s, replay: replay.New(s.store, "discord", signatureWindow), service: svc,
		work: threads.NewRunner(s.log.With("surface", "discord"))}, nil
}

// discordHost is where discordgo sends every REST call.
var discordHost = func() string {
	u, err := url.Parse(discordgo.EndpointDiscord)
	if err != nil {
		return "discord.com"
	}
	return u.Host
}()

// rewrite sends discordgo's calls to api_url's scheme and host, the path
// as discordgo built it (its endpoints are globals, never changed here).
func rewrite(base http.RoundTripper, to *url.URL) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	if to.Scheme == "https" && to.Host == discordHost {
		return base
	}
	return rewriter{base: base, scheme: to.Scheme, host: to.Host}
}

type rewriter struct {
	base         http.RoundTripper
	scheme, host string
}

func (t rewriter) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.URL.Host != discordHost {
		return t.base.RoundTrip(r)
	}
	r2 := r.Clone(r.Context())
	r2.URL.Scheme, r2.URL.Host, r2.Host = t.scheme, t.host, t.host
	return t.base.RoundTrip(r2)
}

// Routes registers POST /discord/interactions when a public key is
// configured (else interactions come over the gateway).
func (a *Adapter) Routes(mux *http.ServeMux) {
	if a.publicKey == nil {
		return
	}
	mux.HandleFunc("POST /discord/interactions", a.serveInteraction)
}

// Run holds the gateway connection under the GatewayLocker when no public
// key is configured, else waits for ctx; then it waits for the work in
// flight. It returns an error when Discord refuses the token or intents.
func (a *Adapter) Run(ctx context.Context) error {
	defer a.Close()
	a.registerAtStart(ctx)
	if a.publicKey != nil {
		<-ctx.Done()
		return nil
	}
	return a.runGateway(ctx)
}

// registerAtStart registers /approvals as Run starts, briefly: a Discord
// that does not answer is logged, and the last registration still works.
func (a *Adapter) registerAtStart(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, registerTimeout)
	defer cancel()
	if err := a.RegisterCommands(rctx); err != nil {
		a.log.Warn("discord: could not register the /approvals command at start; bot doctor --register registers it too",
			"err", err.Error())
		return
	}
	a.log.Info("discord: /approvals list, ladder and passkey registered")
}

// Close stops taking new work and waits for the work in flight, each
// piece within its own timeout. Run calls it on return.
func (a *Adapter) Close() { a.work.Close() }
