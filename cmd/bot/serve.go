package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jonboulle/clockwork"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/logsurface"
	"approvalsbot/adapters/slack"
	"approvalsbot/config"
	"approvalsbot/internal/connlimit"
	"approvalsbot/ladder"
	"approvalsbot/notify"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

var errUsage = errors.New("usage")

// What an open connection may cost the HTTP server. Every caller (Slack,
// Discord, the job backend) sends a header block of a few hundred bytes
// and is answered in milliseconds, while a connection that sends a header
// slowly holds its buffers until ReadHeaderTimeout.
const (
	// maxHeaderBlock bounds a request's line and headers; a larger block is
	// answered 431. net/http reads netHTTPHeaderSlop bytes past its
	// MaxHeaderBytes, so the server is given the difference.
	maxHeaderBlock    = 16 << 10
	netHTTPHeaderSlop = 4096
	// connsPerSource bounds the connections one address (an IPv6 /64)
	// holds open, so one attacker cannot shut out Slack, Discord or the
	// backend, which connect from their own addresses. Behind a reverse
	// proxy every connection comes from the proxy: it must then limit per
	// client itself and keep its pool to the bot under this.
	connsPerSource = 64
	// connsTotal bounds all of them, well above one source's cap: with
	// the header bound, about 40 MiB of buffers and goroutines, and file
	// descriptors to spare. Only an attack from many addresses reaches it,
	// which this process cannot tell from traffic; without it, such an
	// attack would end the process (memory or descriptors) instead.
	connsTotal = 1024
)

// liveConfig holds the configuration in force; SIGHUP swaps it. Approvals
// keep what they were given at request, so a swap changes only later ones.
type liveConfig struct{ p atomic.Pointer[config.Config] }

func (l *liveConfig) Tenant(id string) (*config.Tenant, bool) {
	t, ok := l.p.Load().Tenants[id]
	return t, ok
}

func (l *liveConfig) tenants() map[string]*config.Tenant { return l.p.Load().Tenants }

func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "bot.yaml", "the configuration file")
}

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := configFlag(fs)
	listen := fs.String("listen", "", "override the configuration's listen address (host:port)")
	logLevel := fs.String("log-level", "", "override log.level: debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	level := cfg.Log.Level
	if *logLevel != "" {
		if level, err = config.ParseLogLevel(*logLevel); err != nil {
			return fmt.Errorf("--log-level: %w", err)
		}
	}
	log := newLogger(stderr, level)
	clock := clockwork.NewRealClock()

	st, notifications, err := openStore(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.Close()

	live := &liveConfig{}
	live.p.Store(cfg)

	renderer, err := templates.New(templates.Options{})
	if err != nil {
		return fmt.Errorf("load card templates: %w", err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg.MustRegister(threads.OutboxCollector{Store: st, Clock: clock})

	client, err := backend.NewClient(backend.ClientOptions{BaseURL: cfg.Backend.URL,
		Secrets: secrets(cfg.Backend.CallsSecrets), Logger: log})
	if err != nil {
		return fmt.Errorf("the job backend client: %w", err)
	}
	var mailer threads.Mailer
	if cfg.SMTP != nil {
		m, err := notify.NewMailer(notify.Options{Config: cfg.SMTP, Renderer: renderer, Logger: log, Metrics: reg})
		if err != nil {
			return fmt.Errorf("the mail server: %w", err)
		}
		mailer = m
	}
	surfaces := map[string]threads.Surface{}
	var slackAd *slack.Adapter
	if cfg.Slack != nil {
		slackAd, err = slack.New(slack.Options{Config: cfg.Slack, Tenants: live.tenants, Renderer: renderer, Store: st, Logger: log})
		if err != nil {
			return fmt.Errorf("slack: %w", err)
		}
		surfaces[ladder.SurfaceSlack] = slackAd
	}
	var discordAd *discord.Adapter
	if cfg.Discord != nil {
		discordAd, err = discord.New(discord.Options{Config: cfg.Discord, Tenants: live.tenants, Renderer: renderer,
			Store: st, Logger: log, Locker: gatewayLocker(st)})
		if err != nil {
			return fmt.Errorf("discord: %w", err)
		}
		surfaces[ladder.SurfaceDiscord] = discordAd
	}
	links, err := pageLinks(cfg)
	if err != nil {
		return err
	}
	svc, err := threads.New(threads.Options{
		Store: st, Tenants: live, Clock: clock, Logger: log,
		Links:    decisionLinks(links),
		Surfaces: surfaces,
		Fallback: logsurface.New(logsurface.Options{Out: stdout, Renderer: renderer, Links: logLinks(cfg, links), Tenants: live.tenants}),
		Metrics:  threads.NewMetrics(reg),
		Backend:  client.ForThreads(),
		Mailer:   mailer,
		Lease:    cfg.Lease,
	})
	if err != nil {
		return err
	}
	runner, err := ladder.NewRunner(ladder.RunnerOptions{Jobs: scheduled(cfg, svc), Logger: log})
	if err != nil {
		return err
	}
	events := backend.NewHandler(backend.HandlerOptions{
		Verifier: backend.Verifier{Secrets: secrets(cfg.Backend.EventsSecrets), Now: clock.Now},
		Ingester: svc, Logger: log, Registry: reg,
	})

	mux := http.NewServeMux()
	mux.Handle("/v1/events", events) // the handler answers other methods with a JSON 405
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		pctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain")
		if err := st.Ping(pctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "store unreachable")
			return
		}
		fmt.Fprintln(w, "ready")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	if err := mountPage(mux, links, st, svc, live, renderer, log); err != nil {
		return err
	}
	if slackAd != nil {
		slackAd.Bind(svc)
		slackAd.Routes(mux)
	}
	if discordAd != nil {
		discordAd.Bind(svc)
		discordAd.Routes(mux)
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	limited, err := connlimit.Wrap(ln, connlimit.Options{PerSource: connsPerSource, Total: connsTotal, Logger: log, Registry: reg})
	if err != nil {
		ln.Close()
		return err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: maxHeaderBlock - netHTTPHeaderSlop,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}

	workCtx, stopWork := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := svc.RunOutbox(workCtx, threads.WorkerOptions{Lease: cfg.Lease, StopGrace: outboxGrace(cfg.StopTimeout)}); err != nil {
			log.Error("outbox worker stopped", "err", err)
		}
	})
	wg.Go(func() { reloadOnHUP(workCtx, *path, getenv, live, log) })
	if slackAd != nil {
		// Socket Mode when an app token is set; it finishes the work it
		// acknowledged before returning.
		wg.Go(func() {
			if err := slackAd.Run(workCtx); err != nil {
				log.Error("slack stopped", "err", err)
			}
		})
	}
	if discordAd != nil {
		// The gateway, unless an interactions endpoint is configured; on
		// PostgreSQL only the replica holding the lock connects.
		wg.Go(func() {
			if err := discordAd.Run(workCtx); err != nil {
				log.Error("discord stopped", "err", err)
			}
		})
	}
	if notifications != nil {
		// PostgreSQL wakes the outbox at another replica's commit; the
		// worker's poll stays as the safety net.
		wg.Go(func() {
			if err := notifications(workCtx, svc.Wake); err != nil {
				log.Error("outbox notifications stopped", "err", err)
			}
		})
	}
	wg.Go(func() {
		if err := runner.Run(workCtx); err != nil {
			log.Error("scheduler stopped", "err", err)
		}
	})

	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(limited) }()
	log.Info("bot serving", "listen", ln.Addr().String(), "store", cfg.Store.Driver, "tenants", len(cfg.Tenants))

	select {
	case <-ctx.Done():
	case err := <-serveErr:
		stopWork()
		wg.Wait()
		return fmt.Errorf("http server: %w", err)
	}
	return stopServing(log, cfg.StopTimeout, srv, stopWork, &wg)
}

// stopServing stops within timeout: no more requests (those in flight
// finish), then no more claims, ticks or interactions, while the outbox
// finishes the rows it performs within outboxGrace and puts back those
// still running (a decision retrying against a backend that is down),
// for the next start. The store closes after it returns (deferred). Work
// still running at the timeout, which the outbox's grace makes rare, is
// left to the lease: this process's claims are released at the next
// start (SQLite), or taken over by another replica (PostgreSQL).
func stopServing(log *slog.Logger, timeout time.Duration, srv *http.Server, stopWork func(), wg *sync.WaitGroup) error {
	log.Info("stopping: no new work; finishing what is in flight", "stop_timeout", timeout)
	began := time.Now()
	shutCtx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		log.Warn("requests still in flight at the stop timeout: closing their connections", "err", err)
		srv.Close()
	}
	stopWork()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	select {
	case <-finished:
		log.Info("stopped", "took", time.Since(began))
	case <-shutCtx.Done():
		log.Warn("stopped at the stop timeout with work still running: it resumes at the next start, or on another replica after the lease",
			"stop_timeout", timeout)
	}
	return nil
}

// outboxGrace is the part of the stop timeout rows in flight may take;
// the rest is kept to record those it cut short and close the store.
func outboxGrace(stop time.Duration) time.Duration {
	return stop - min(stop/4, 2*time.Second)
}

// reloadOnHUP swaps in the configuration file on SIGHUP; a bad file keeps
// the configuration in force and says why.
func reloadOnHUP(ctx context.Context, path string, getenv env, live *liveConfig, log *slog.Logger) {
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			cfg, err := config.Load(path, getenv)
			if err != nil {
				log.Error("configuration not reloaded; keeping the one in force", "err", err.Error())
				continue
			}
			live.p.Store(cfg)
			log.Info("configuration reloaded: tenants, members, ladders and targets for later approvals; "+
				"secrets, tokens, listen, store, tick, lease, retention and digest schedules take effect at restart", "tenants", len(cfg.Tenants))
		}
	}
}

// gatewayLocker lets exactly one replica hold Discord's gateway: a
// PostgreSQL advisory lock when replicas share a database; none for the
// one process of a SQLite store.
func gatewayLocker(st store.Store) discord.GatewayLocker {
	pg, ok := st.(*postgres.Store)
	if !ok {
		return nil
	}
	return pgLocker{pg}
}

type pgLocker struct{ st *postgres.Store }

func (l pgLocker) Acquire(ctx context.Context) (<-chan struct{}, func(), error) {
	return l.st.Singleton(ctx, "discord-gateway")
}

// scheduled is the cron work: the ladder tick, the retention pass, and
// each tenant's digest in its zone. Digests and retention are scheduled
// from the configuration at start.
func scheduled(cfg *config.Config, svc *threads.Service) []ladder.Job {
	jobs := []ladder.Job{{Name: "ladder", Spec: ladder.Every(cfg.Tick), Run: func(ctx context.Context) error {
		_, err := svc.Tick(ctx)
		return err
	}}}
	pruner := svc.Pruner(threads.RetentionOf(cfg))
	jobs = append(jobs, ladder.Job{Name: "retention", Spec: ladder.Every(threads.PruneEvery), Run: func(ctx context.Context) error {
		_, err := pruner.Prune(ctx)
		return err
	}})
	for id, t := range cfg.Tenants {
		if t.Digest == nil {
			continue
		}
		jobs = append(jobs, ladder.Job{Name: "digest " + id, Spec: "CRON_TZ=" + t.Digest.Zone.String() + " " + t.Digest.Cron,
			Run: func(ctx context.Context) error { return svc.Digest(ctx, id) }})
	}
	return jobs
}

// openStore opens and migrates the configured store. For PostgreSQL it
// also returns the listener that wakes the outbox at commit.
func openStore(ctx context.Context, cfg *config.Config, log *slog.Logger) (store.Store, func(context.Context, func()) error, error) {
	switch cfg.Store.Driver {
	case "", config.DriverSQLite:
		st, err := sqlite.Open(ctx, sqlite.Options{Path: sqlitePath(cfg.Store.DSN.Reveal()), Logger: log, Exclusive: true})
		if err != nil {
			return nil, nil, fmt.Errorf("open the SQLite store: %w", err)
		}
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, nil, fmt.Errorf("migrate the SQLite store: %w", err)
		}
		// This process alone holds the file: claims left in it are those
		// of a process that died, and its work resumes now.
		n, err := st.ReleaseClaims(ctx)
		if err != nil {
			st.Close()
			return nil, nil, err
		}
		if n > 0 {
			log.Info("resumed work a stopped process had claimed", "claims", n)
		}
		return st, nil, nil
	case config.DriverPostgres:
		st, err := postgres.Open(ctx, postgres.Options{DSN: cfg.Store.DSN.Reveal(), Logger: log})
		if err != nil {
			return nil, nil, fmt.Errorf("open the PostgreSQL store: %w", err)
		}
		// Replicas starting together migrate once, under an advisory lock.
		if err := st.Migrate(ctx); err != nil {
			st.Close()
			return nil, nil, fmt.Errorf("migrate the PostgreSQL store: %w", err)
		}
		return st, st.Listen, nil
	}
	return nil, nil, fmt.Errorf("store driver %q: want sqlite or postgres", cfg.Store.Driver)
}

// sqlitePath takes the file out of a `file:PATH?…` DSN; the store sets its
// own pragmas (LIBRARIES.md).
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "file:")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == "" {
		return "bot.db"
	}
	return p
}

func secrets(list []config.Secret) [][]byte {
	out := make([][]byte, 0, len(list))
	for _, s := range list {
		out = append(out, []byte(s.Reveal()))
	}
	return out
}
