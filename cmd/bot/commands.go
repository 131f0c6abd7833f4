package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"approvalsbot/app"
	"approvalsbot/config"
)

func cmdCheck(args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("check", stdout, nil,
		"Validates the configuration, every problem at once, and prints each listener and each tenant's ladders.",
		"bot check --config examples/bot.yaml")
	path := configFlag(fs.FlagSet)
	if _, err := fs.parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	// Who is on duty in each rotation is said as of now.
	fmt.Fprint(stdout, cfg.SummaryAt(time.Now()))
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return nil
}

func cmdMigrate(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("migrate", stdout, nil,
		"Applies the store's migrations and exits (bot serve applies them at start too). It reads only the store section.",
		"bot migrate --config bot.yaml")
	path := configFlag(fs.FlagSet)
	if _, err := fs.parse(args); err != nil {
		return err
	}
	// Only the store is read: migrating needs none of the backend's or
	// the chat surfaces' secrets.
	sc, err := config.LoadStore(*path, getenv)
	if err != nil {
		return err
	}
	st, err := app.OpenStore(ctx, sc, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "store %s: migrations applied\n", sc.Driver)
	return nil
}

// eventsURL turns a listen address into the URL a local client reaches.
func eventsURL(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen + "/v1/events"
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/v1/events"
}
