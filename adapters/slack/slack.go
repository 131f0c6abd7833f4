package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	slackgo "github.com/slack-go/slack"
	"golang.org/x/time/rate"

	"approvalsbot/adapters/replay"
	"approvalsbot/internal/refusal"
	"approvalsbot/internal/secret"
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
	// Card reads a card as it stands now, to catch the backend's answer
	// crossing a clicked card replaced through the response_url.
	Card(ctx context.Context, approvalID string, revision int) (threads.Card, error)
	// Receive opens the receipt of a click just received, which the
	// adapter ends once the click is answered (threads.Receipt).
	Receive() *threads.Receipt
}

var _ Service = (*threads.Service)(nil)

// surfaceName names Slack in threads.Person and in log lines.
const surfaceName = "slack"

// DefaultAPIURL is Slack's Web API base.
const DefaultAPIURL = "https://slack.com/api/"

// Credentials are the Slack app's secrets. They print as "<secret>"
// however they are printed, logged or encoded.
type Credentials struct {
	BotToken, SigningSecret, AppToken string
}

// Format prints "<secret>".
func (Credentials) Format(f fmt.State, verb rune) { secret.Format(f, verb, "slack.Credentials") }

// LogValue gives "<secret>" to slog.
func (Credentials) LogValue() slog.Value { return secret.LogValue() }

// MarshalJSON gives "<secret>".
func (Credentials) MarshalJSON() ([]byte, error) { return secret.JSON() }

// Options configure NewSurface.
type Options struct {
	// Credentials: BotToken is required; SigningSecret verifies the HTTP
	// endpoints; AppToken selects Socket Mode in Run.
	Credentials Credentials
	// APIURL is the Web API base (default DefaultAPIURL), ending in "/".
	APIURL string
	// Tenants gives the configuration in force (swapped on SIGHUP), for
	// /approvals and Doctor. Required.
	Tenants func() map[string]*tenant.Tenant
	// Passkeys makes members' passkey enrolment links for /approvals
	// passkey; nil: the bot takes no passkeys, and the command says so.
	Passkeys threads.EnrolLinks
	// Store is read, and keeps the signed requests seen. Required.
	Store Store
	// Logger gets refused requests and failed answers; nil discards.
	Logger *slog.Logger
	// IPv6Prefix names the source of a refused request's line, as the
	// connection limits do (0: connlimit.DefaultIPv6Prefix).
	IPv6Prefix int
	// Registry gets bot_slack_requests_refused_total; nil: unregistered.
	Registry prometheus.Registerer
	// HTTPClient calls Slack; nil means a client with a 30 s timeout.
	HTTPClient *http.Client
	// Now is the clock for what /approvals says (how long a card has
	// waited); nil means time.Now. Signatures are checked against the
	// wall clock, as Slack signs them.
	Now func() time.Time
	// PerChannelRate and Burst are chat.postMessage's budget per channel,
	// which the outbox paces rows with; zero means the defaults, rate.Inf
	// switches pacing off.
	PerChannelRate rate.Limit
	Burst          int
	// UpdateRate and UpdateBurst are chat.update's workspace budget (0: defaults).
	UpdateRate  rate.Limit
	UpdateBurst int
}

// Surface is the outbound half of the adapter, what the outbox posts
// through; it exists before the service, which takes it.
type Surface struct {
	api       *slackgo.Client
	socketAPI *slackgo.Client // with the app-level token; nil without one
	apiURL    *url.URL
	secret    string
	appToken  bool
	tenants   func() map[string]*tenant.Tenant
	passkeys  threads.EnrolLinks
	store     Store
	log       *slog.Logger
	refusals  *refusal.Counter // refused requests: counted, and logged at most once a minute per source and reason
	libLog    *log.Logger      // slack-go's own lines, at debug level
	now       func() time.Time

	// The budgets the outbox paces this surface's rows with (pace.go).
	postRate, updateRate   rate.Limit
	postBurst, updateBurst int

	dmMu sync.Mutex
	dms  map[string]string // user id → DM channel id

	teamMu  sync.Mutex
	teamURL string // the workspace URL, from auth.test, for links
}

// Adapter is the whole Slack adapter: the Surface, and the endpoints and
// Socket Mode that take clicks and commands to the service.
type Adapter struct {
	*Surface
	replay  *replay.Guard
	service Service
	work    *threads.Runner // what follows acks; Close waits for it
}

// Compile-time guards: the surface can answer one person privately.
var (
	_ threads.Surface = (*Surface)(nil)
	_ threads.Teller  = (*Surface)(nil)
)

// NewSurface checks o and builds the outbound surface, calling nothing.
func NewSurface(o Options) (*Surface, error) {
	var errs []error
	if o.Credentials.BotToken == "" {
		errs = append(errs, errors.New("slack: a bot token is required"))
	}
	if o.Tenants == nil {
		errs = append(errs, errors.New("slack: Tenants is required"))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("slack: Store is required"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	apiURL := cmp.Or(o.APIURL, DefaultAPIURL)
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || !strings.HasSuffix(u.Path, "/") {
		return nil, fmt.Errorf("slack: api_url %q: want an absolute http(s) URL ending in /", apiURL)
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
	if o.UpdateRate == 0 {
		o.UpdateRate = DefaultUpdateRate
	}
	if o.UpdateBurst <= 0 {
		o.UpdateBurst = DefaultUpdateBurst
	}
	libLog := slog.NewLogLogger(o.Logger.Handler(), slog.LevelDebug)
	opts := []slackgo.Option{slackgo.OptionAPIURL(apiURL), slackgo.OptionHTTPClient(o.HTTPClient), slackgo.OptionLog(libLog)}
	refusals, err := refusal.NewCounter(prometheus.CounterOpts{
		Name: "bot_slack_requests_refused_total",
		Help: "Requests to the Slack endpoints refused, by what the answer says (bad_signature includes replays).",
	}, "slack: requests refused", o.Logger, o.Registry, o.IPv6Prefix)
	if err != nil {
		return nil, err
	}
	a := &Surface{
		api:      slackgo.New(o.Credentials.BotToken, opts...),
		apiURL:   u,
		secret:   o.Credentials.SigningSecret,
		tenants:  o.Tenants,
		passkeys: o.Passkeys,
		store:    o.Store,
		log:      o.Logger,
		refusals: refusals,
		libLog:   libLog,
		now:      o.Now,
		postRate: o.PerChannelRate, postBurst: o.Burst,
		updateRate: o.UpdateRate, updateBurst: o.UpdateBurst,
		dms:      map[string]string{},
		appToken: o.Credentials.AppToken != "",
	}
	if a.appToken {
		a.socketAPI = slackgo.New(o.Credentials.BotToken, append(opts, slackgo.OptionAppLevelToken(o.Credentials.AppToken))...)
	}
	return a, nil
}

// New builds the inbound half on s, taking clicks and commands to svc.
func New(s *Surface, svc Service) (*Adapter, error) {
	if s == nil {
		return nil, errors.New("slack: a Surface is required")
	}
	if svc == nil {
		return nil, errors.New("slack: a Service is required")
	}
	return &Adapter{Surface: s, replay: replay.New(s.store, "slack", signatureWindow), service: svc,
		work: threads.NewRunner(s.log.With("surface", "slack"))}, nil
}

// Routes registers POST /slack/interactions and POST /slack/commands.
// Both refuse every request when no signing secret is configured.
func (a *Adapter) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /slack/interactions", a.serveInteraction)
	mux.HandleFunc("POST /slack/commands", a.serveCommand)
}

// Run takes interactions over Socket Mode when an app token is
// configured, else waits for ctx; then it waits for the work in flight.
// It returns an error when Socket Mode refuses the app token.
func (a *Adapter) Run(ctx context.Context) error {
	defer a.Close()
	if a.socketAPI == nil {
		<-ctx.Done()
		return nil
	}
	return a.runSocket(ctx)
}

// Close stops taking new work after acks and waits for the work in
// flight, each piece within its own timeout. Run calls it on return.
func (a *Adapter) Close() { a.work.Close() }
