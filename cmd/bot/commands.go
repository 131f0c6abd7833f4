package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/config"
)

func cmdCheck(args []string, stdout io.Writer, getenv env) error {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	path := configFlag(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, cfg.Summary())
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return nil
}

func cmdMigrate(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := flag.NewFlagSet("migrate", flag.ContinueOnError)
	path := configFlag(fs)
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	st, _, err := openStore(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer st.Close()
	fmt.Fprintf(stdout, "store %s: migrations applied\n", cfg.Store.Driver)
	return nil
}

// cmdEvent signs an event file with the first events secret and posts it
// to a running bot: how a backend integrator tries the wiring.
func cmdEvent(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := flag.NewFlagSet("event", flag.ContinueOnError)
	path := configFlag(fs)
	url := fs.String("url", "", "the bot's events URL (default: from the configuration's listen address)")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 1 {
		fmt.Fprintln(fs.Output(), "usage: bot event [-config bot.yaml] [-url URL] EVENT.json")
		return errUsage
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	body, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	target := *url
	if target == "" {
		target = eventsURL(cfg.Listen)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(backend.SignatureHeader, backend.Sign([]byte(cfg.Backend.EventsSecrets[0].Reveal()), time.Now(), body))
	resp, err := (&http.Client{Timeout: 15 * time.Second}).Do(req)
	if err != nil {
		return fmt.Errorf("send to %s: %w", target, err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	fmt.Fprintf(stdout, "%s %s\n", resp.Status, strings.TrimSpace(string(answer)))
	if resp.StatusCode >= 300 {
		return fmt.Errorf("the bot answered %s", resp.Status)
	}
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
