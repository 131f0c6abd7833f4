package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/slack"
	"approvalsbot/config"
	"approvalsbot/notify"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
)

// cmdDoctor checks what the configuration points at: the store, the mail
// server, and each chat surface, printing one line per check.
func cmdDoctor(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	path := configFlag(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	failed := 0
	report := func(what string, err error) {
		if err != nil {
			failed++
			fmt.Fprintf(stdout, "FAIL %s: %v\n", what, err)
			return
		}
		fmt.Fprintf(stdout, "ok   %s\n", what)
	}
	report("configuration "+*path, nil)
	st, err := pingStore(ctx, cfg)
	if st != nil {
		defer st.Close()
	}
	report("store "+cfg.Store.Driver, err)
	if cfg.SMTP != nil {
		r, err := templates.New(templates.Options{})
		if err == nil {
			var m *notify.Mailer
			if m, err = notify.NewMailer(notify.Options{Config: cfg.SMTP, Renderer: r}); err == nil {
				err = m.Check(ctx)
			}
		}
		report("mail server "+cfg.SMTP.Addr, err)
	}
	if st == nil {
		fmt.Fprintln(stdout, "skip chat surfaces: the store is needed to check them")
	} else if err := doctorSurfaces(ctx, cfg, st, stdout); err != nil {
		failed++
		fmt.Fprintf(stdout, "FAIL %v\n", err)
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

// pingStore opens the store to check it, as a reader beside a running bot:
// no exclusive lock, no migration, no released claims.
func pingStore(ctx context.Context, cfg *config.Config) (store.Store, error) {
	var (
		st  store.Store
		err error
	)
	switch cfg.Store.Driver {
	case "", config.DriverSQLite:
		st, err = sqlite.Open(ctx, sqlite.Options{Path: sqlitePath(cfg.Store.DSN.Reveal())})
	case config.DriverPostgres:
		st, err = postgres.Open(ctx, postgres.Options{DSN: cfg.Store.DSN.Reveal(), MaxConns: 2})
	default:
		err = fmt.Errorf("store driver %q: want sqlite or postgres", cfg.Store.Driver)
	}
	if err != nil {
		return nil, err
	}
	return st, st.Ping(ctx)
}

// doctorSurfaces checks each configured chat surface: its token, its
// scopes or permissions, and that it can post in each configured channel.
func doctorSurfaces(ctx context.Context, cfg *config.Config, st store.Store, w io.Writer) error {
	if cfg.Slack == nil && cfg.Discord == nil {
		fmt.Fprintln(w, "ok   no chat configured: cards go to the log surface (stdout)")
		return nil
	}
	r, err := templates.New(templates.Options{})
	if err != nil {
		return err
	}
	var errs []error
	if cfg.Slack != nil {
		ad, err := slack.New(slack.Options{Config: cfg.Slack, Tenants: func() map[string]*config.Tenant { return cfg.Tenants },
			Renderer: r, Store: st})
		if err == nil {
			err = ad.Doctor(ctx, w)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("slack: %w", err))
		}
	}
	if cfg.Discord != nil {
		ad, err := discord.New(discord.Options{Config: cfg.Discord, Tenants: func() map[string]*config.Tenant { return cfg.Tenants },
			Renderer: r, Store: st})
		if err == nil {
			err = ad.Doctor(ctx, w)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("discord: %w", err))
		}
	}
	return errors.Join(errs...)
}
