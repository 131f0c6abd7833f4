// Package app is the bot as one running process: New builds it, Run runs
// its parts as one group, Stop ends it; `bot serve` and the in-process
// tests use it alike (docs/design.md#the-process-and-its-commands).
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/logsurface"
	"approvalsbot/adapters/passkey"
	"approvalsbot/adapters/slack"
	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/notify"
	"approvalsbot/notify/push"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Options configure New.
type Options struct {
	// Config is the configuration to start with. Required.
	Config *config.Config
	// LoadConfig reads the configuration again for a reload; nil: none.
	LoadConfig func() (*config.Config, error)
	// Reloads asks for a reload at each value (`bot serve` sends SIGHUP);
	// a configuration that does not load keeps the one in force. Nil: none.
	Reloads <-chan os.Signal
	// Clock decides everything that depends on time; nil: the real one.
	Clock clockwork.Clock
	// Logger gets the bot's log; nil discards it.
	Logger *slog.Logger
	// Stdout gets the log surface's cards; nil discards them.
	Stdout io.Writer
}

// App is the bot, built and ready to run. Run it once; Stop it always.
type App struct {
	cfg     *config.Config
	log     *slog.Logger
	clock   clockwork.Clock
	live    *liveConfig
	load    func() (*config.Config, error)
	reloads <-chan os.Signal

	st            store.Store
	notifications func(ctx context.Context, wake func()) error // nil without PostgreSQL
	svc           *threads.Service
	passkeys      *passkey.Service // nil without a decision page on a host name
	runner        *ladder.Runner
	slackOut      *slack.Surface // the outbound halves, built before the service
	discordOut    *discord.Surface
	slack         *slack.Adapter // the whole adapters, built after it
	discord       *discord.Adapter
	srv           *http.Server
	ln            net.Listener
	privSrv       *http.Server // nil without listen_private
	privLn        net.Listener

	mu       sync.Mutex
	ran      bool
	stopped  bool
	stop     chan struct{} // closed by Stop
	done     chan struct{} // closed when Run returns
	released sync.Once
}

// New opens and migrates the store, builds every part and binds the
// listen addresses, so Addr is known before Run; it starts nothing. On an
// error it releases what it had opened.
func New(ctx context.Context, o Options) (*App, error) {
	if o.Config == nil {
		return nil, errors.New("app: a configuration is required")
	}
	a := &App{cfg: o.Config, log: o.Logger, clock: o.Clock, live: &liveConfig{}, load: o.LoadConfig,
		reloads: o.Reloads, stop: make(chan struct{}), done: make(chan struct{})}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	if a.clock == nil {
		a.clock = clockwork.NewRealClock()
	}
	stdout := o.Stdout
	if stdout == nil {
		stdout = io.Discard
	}
	a.live.p.Store(a.cfg)
	if err := a.build(ctx, stdout); err != nil {
		a.release()
		return nil, err
	}
	return a, nil
}

func (a *App) build(ctx context.Context, stdout io.Writer) error {
	cfg, log := a.cfg, a.log
	st, err := OpenStore(ctx, cfg.Store, log)
	if err != nil {
		return err
	}
	a.st = st
	if pg, ok := st.(*postgres.Store); ok {
		// PostgreSQL wakes the outbox at another replica's commit; the
		// worker's poll stays as the safety net.
		a.notifications = pg.Listen
	}
	renderer, err := templates.New(templates.Options{})
	if err != nil {
		return fmt.Errorf("load card templates: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(threads.OutboxCollector{Store: st, Clock: a.clock})

	client, err := backend.NewClient(backend.ClientOptions{BaseURL: cfg.Backend.URL,
		Secrets: config.RevealAll(cfg.Backend.CallsSecrets), Features: cfg.Backend.Features, Logger: log})
	if err != nil {
		return fmt.Errorf("the job backend client: %w", err)
	}
	var mailer threads.Mailer
	if cfg.SMTP != nil {
		m, err := notify.NewMailer(notify.Options{SMTP: cfg.SMTP.Settings(), Renderer: renderer, Logger: log, Metrics: reg})
		if err != nil {
			return fmt.Errorf("the mail server: %w", err)
		}
		mailer = m
	}
	surfaces, err := a.chatSurfaces(reg)
	if err != nil {
		return err
	}
	links, err := pageLinks(cfg)
	if err != nil {
		return err
	}
	a.svc, err = threads.New(threads.Options{
		Store: st, Tenants: a.live, Clock: a.clock, Logger: log,
		Links:    decisionLinks(links),
		Surfaces: surfaces,
		Fallback: logsurface.New(logsurface.Options{Out: stdout, Renderer: renderer, Links: logLinks(cfg, links), Tenants: a.live.tenants}),
		Metrics:  threads.NewMetrics(reg),
		Backend:  client.ForThreads(),
		Mailer:   mailer,
		// Push notices go over HTTPS to each member's ntfy topic or
		// webhook, read from the tenants in force when each is sent.
		Pusher: push.New(push.Options{Now: a.clock.Now}),
		Lease:  cfg.Lease,
		// The page approves a call that needs a typed confirmation only
		// for a backend that checks the value too.
		TypedConfirm: cfg.Backend.Supports(config.FeatureTypedConfirmation),
		Grants:       cfg.Backend.Supports(config.FeatureGrants),
		Turns:        cfg.Backend.Supports(config.FeatureTurns),
		Questions:    cfg.Backend.Supports(config.FeatureQuestions),
		// The calls secrets key hidden values' fingerprints: the store never
		// holds them, and the backend already has every argument.
		FingerprintSecrets: config.RevealAll(cfg.Backend.CallsSecrets),
	})
	if err != nil {
		return err
	}
	a.svc.StartFigures(cfg.Tenants)
	a.runner, err = ladder.NewRunner(ladder.RunnerOptions{Jobs: scheduled(cfg, a.svc), Logger: log})
	if err != nil {
		return err
	}

	// The job backend's routes are on the private mux when there is one,
	// and then the public listener answers them 404; health is on both.
	mux, private := http.NewServeMux(), http.NewServeMux()
	backendMux := mux
	if cfg.ListenPrivate != "" {
		backendMux = private
		private.HandleFunc("GET /healthz", healthz)
		private.HandleFunc("GET /readyz", a.readyz)
	}
	backendMux.Handle("/v1/events", backend.NewHandler(backend.HandlerOptions{ // it answers other methods with a JSON 405
		Verifier: backend.Verifier{Secrets: config.RevealAll(cfg.Backend.EventsSecrets), Now: a.clock.Now},
		Ingester: a.svc, Logger: log, Registry: reg, IPv6Prefix: cfg.IPv6SourcePrefix,
	}))
	mux.HandleFunc("GET /healthz", healthz)
	mux.HandleFunc("GET /readyz", a.readyz)
	backendMux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if a.passkeys, err = mountPasskeys(mux, cfg, st, a.live, log); err != nil {
		return err
	}
	if err := mountPage(mux, links, a.svc, renderer, a.passkeys, reg, cfg.IPv6SourcePrefix, log); err != nil {
		return err
	}
	// In order: the outbound surfaces (above), the service, then the
	// inbound halves, which take clicks and commands to it.
	if a.slackOut != nil {
		if a.slack, err = slack.New(a.slackOut, a.svc); err != nil {
			return err
		}
		a.slack.Routes(mux)
	}
	if a.discordOut != nil {
		if a.discord, err = discord.New(a.discordOut, a.svc); err != nil {
			return err
		}
		a.discord.Routes(mux)
	}
	// Each listener has its own connection caps and its own body budget:
	// a flood of the public one, from however many sources, shrinks no
	// share of the private one's, where the backend's events (up to 1 MiB)
	// are read.
	var publicReg prometheus.Registerer = reg
	if cfg.ListenPrivate != "" {
		publicReg = listenerMetrics(reg, "public")
	}
	a.ln, a.srv, err = listen(cfg.Listen, mux, log, publicReg, cfg.IPv6SourcePrefix)
	if err != nil || cfg.ListenPrivate == "" {
		return err
	}
	a.privLn, a.privSrv, err = listen(cfg.ListenPrivate, private, log, listenerMetrics(reg, "private"), cfg.IPv6SourcePrefix)
	return err
}

func (a *App) chatSurfaces(reg prometheus.Registerer) (map[string]threads.Surface, error) {
	cfg, surfaces := a.cfg, map[string]threads.Surface{}
	passkeys, err := enrolLinks(cfg)
	if err != nil {
		return nil, err
	}
	if cfg.Slack != nil {
		ad, err := slack.NewSurface(slack.Options{Credentials: SlackCredentials(cfg.Slack), APIURL: cfg.Slack.APIURL, Tenants: a.live.tenants, Store: a.st, Logger: a.log,
			Registry: reg, IPv6Prefix: cfg.IPv6SourcePrefix, Passkeys: passkeys})
		if err != nil {
			return nil, fmt.Errorf("slack: %w", err)
		}
		a.slackOut, surfaces[ladder.SurfaceSlack] = ad, ad
	}
	if cfg.Discord != nil {
		ad, err := discord.NewSurface(discord.Options{Credentials: DiscordCredentials(cfg.Discord), APIURL: cfg.Discord.APIURL, Tenants: a.live.tenants,
			Store: a.st, Logger: a.log, Locker: gatewayLocker(a.st), Registry: reg, IPv6Prefix: cfg.IPv6SourcePrefix, Passkeys: passkeys})
		if err != nil {
			return nil, fmt.Errorf("discord: %w", err)
		}
		a.discordOut, surfaces[ladder.SurfaceDiscord] = ad, ad
	}
	return surfaces, nil
}

// Addr is the address the bot listens on (the port chosen, for ":0").
func (a *App) Addr() string { return a.ln.Addr().String() }

// PrivateAddr is listen_private's address, or "" when there is none.
func (a *App) PrivateAddr() string {
	if a.privLn == nil {
		return ""
	}
	return a.privLn.Addr().String()
}

// Run serves until ctx ends or Stop is called (then it returns nil), or
// until an essential part stops (then it returns which and why). Either
// way it first stops every part within the stop timeout and closes the
// store: see docs/design.md#stopping.
func (a *App) Run(ctx context.Context) error {
	a.mu.Lock()
	if a.ran || a.stopped {
		a.mu.Unlock()
		return errors.New("app: Run called twice, or after Stop")
	}
	a.ran = true
	a.mu.Unlock()
	defer close(a.done)
	defer a.release()

	g := newGroup(context.WithoutCancel(ctx), a.log)
	a.start(g)
	serving := []any{"listen", a.Addr()}
	if a.privLn != nil {
		serving = append(serving, "listen_private", a.PrivateAddr())
	}
	a.log.Info("bot serving", append(serving, "store", a.cfg.Store.Driver, "tenants", len(a.cfg.Tenants))...)
	select {
	case <-ctx.Done():
	case <-a.stop:
	case <-g.Failed():
		a.log.Error("an essential part of the bot stopped: stopping the rest, to exit and be restarted", "err", g.Err().Error())
	}
	a.shutdown(g)
	return g.Err()
}

func serving(srv *http.Server, ln net.Listener) func(context.Context) error {
	return func(context.Context) error {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
}

func (a *App) start(g *group) {
	g.Go("the HTTP server", serving(a.srv, a.ln))
	if a.privSrv != nil {
		g.Go("the private HTTP server", serving(a.privSrv, a.privLn))
	}
	g.Go("the outbox worker", func(ctx context.Context) error {
		return a.svc.RunOutbox(ctx, threads.WorkerOptions{Lease: a.cfg.Lease, StopGrace: outboxGrace(a.cfg.StopTimeout)})
	})
	g.Go("the scheduler", a.runner.Run)
	if a.slack != nil {
		// Socket Mode when an app token is set; it finishes the work it
		// acknowledged before returning.
		g.Go("Slack", a.slack.Run)
	}
	if a.discord != nil {
		// The gateway, unless an interactions endpoint is configured; on
		// PostgreSQL only the replica holding the lock connects.
		g.Go("Discord", a.discord.Run)
	}
	if a.notifications != nil {
		g.Go("the outbox listener", func(ctx context.Context) error { return a.notifications(ctx, a.svc.Wake) })
	}
	if a.reloads != nil && a.load != nil {
		g.Go("configuration reloads", a.reload)
	}
}

// shutdown stops g's parts within the stop timeout (see Run).
func (a *App) shutdown(g *group) {
	timeout := a.cfg.StopTimeout
	a.log.Info("stopping: no new work; finishing what is in flight", "stop_timeout", timeout)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	g.Stop()
	// Both listeners stop taking requests at once.
	var servers sync.WaitGroup
	for _, srv := range []*http.Server{a.srv, a.privSrv} {
		if srv == nil {
			continue
		}
		servers.Go(func() {
			if err := srv.Shutdown(ctx); err != nil {
				a.log.Warn("requests still in flight at the stop timeout: closing their connections", "err", err)
				srv.Close()
			}
		})
	}
	servers.Wait()
	g.Cancel()
	if g.Wait(ctx) {
		a.log.Info("stopped", "took", time.Since(began))
		return
	}
	a.log.Warn("stopped at the stop timeout with work still running: it resumes at the next start, or on another replica after the lease",
		"stop_timeout", timeout)
}

// Stop ends a Run in progress and waits for it; a bot that never ran
// releases what New opened. It is safe to call again, from any goroutine.
func (a *App) Stop() {
	a.mu.Lock()
	ran := a.ran
	if !a.stopped {
		a.stopped = true
		close(a.stop)
	}
	a.mu.Unlock()
	if !ran {
		a.release()
		return
	}
	<-a.done
}

// release closes the listeners and the store, once.
func (a *App) release() {
	a.released.Do(func() {
		for _, ln := range []net.Listener{a.ln, a.privLn} {
			if ln != nil {
				_ = ln.Close() // closed already after a Shutdown
			}
		}
		if a.st != nil {
			if err := a.st.Close(); err != nil {
				a.log.Warn("close the store", "err", err.Error())
			}
		}
	})
}

// outboxGrace is the part of the stop timeout rows in flight may take;
// the rest is kept to record those it cut short and close the store.
func outboxGrace(stop time.Duration) time.Duration {
	return stop - min(stop/4, 2*time.Second)
}
