package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/jonboulle/clockwork"

	"approvalsbot/app"
	"approvalsbot/config"
)

func configFlag(fs *flag.FlagSet) *string {
	return fs.String("config", "bot.yaml", "the configuration file")
}

// cmdServe runs the bot until a signal stops it, or until an essential
// part stops: then it exits 1 for a supervisor to restart it. SIGHUP
// reloads the configuration.
func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer, getenv env) error {
	fs := newFlags("serve", stdout, nil,
		"Runs the bot: events in, cards out, decisions back. SIGHUP reloads the configuration; SIGTERM stops it.",
		"bot serve --config examples/bot.yaml")
	path := configFlag(fs.FlagSet)
	listen := fs.String("listen", "", "override the configuration's listen address (host:port)")
	listenPrivate := fs.String("listen-private", "", "override the configuration's listen_private address (host:port)")
	logLevel := fs.String("log-level", "", "override log.level: debug, info, warn or error")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *listenPrivate != "" {
		cfg.ListenPrivate = *listenPrivate
	}
	level := cfg.Log.Level
	if *logLevel != "" {
		if level, err = config.ParseLogLevel(*logLevel); err != nil {
			return fmt.Errorf("--log-level: %w", err)
		}
	}
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	bot, err := app.New(ctx, app.Options{
		Config:     cfg,
		LoadConfig: func() (*config.Config, error) { return config.Load(*path, getenv) },
		Reloads:    hup,
		Clock:      clockwork.NewRealClock(),
		Logger:     newLogger(stderr, level),
		Stdout:     stdout,
	})
	if err != nil {
		return err
	}
	defer bot.Stop()
	return bot.Run(ctx)
}
