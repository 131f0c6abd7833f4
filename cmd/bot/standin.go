package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/config"
)

// cmdBackend runs a stand-in job backend at backend.url, so the whole
// loop runs on one machine: it checks the bot's signatures, prints each
// decision and answers look-ups from a folder of argument files.
func cmdBackend(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("backend", stdout, nil,
		"Runs a stand-in job backend at backend.url, for trying the bot, never for production: it checks the bot's signatures, prints each decision and each answer to a question (bot question) it receives and answers argument look-ups from a folder.",
		"bot backend --config examples/bot.yaml")
	path := configFlag(fs.FlagSet)
	listen := fs.String("listen", "", "the address to serve on (default: backend.url's host and port)")
	arguments := fs.String("arguments", "testdata/fixtures/arguments", "the folder of argument files (ID.json, ID.rN.json) look-ups answer from; empty for none")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	addr := *listen
	if addr == "" {
		if addr, err = standinAddr(cfg.Backend.URL); err != nil {
			return err
		}
	}
	if *arguments != "" {
		if fi, err := os.Stat(*arguments); err != nil || !fi.IsDir() {
			return fmt.Errorf("--arguments %s is not a folder: run from the checkout, name the folder of argument files, or give --arguments '' for none", *arguments)
		}
	}
	b, err := standin.New(standin.Options{Secrets: config.RevealAll(cfg.Backend.CallsSecrets), Learn: true, Arguments: *arguments, Out: stdout})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	srv := &http.Server{Handler: b, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stdout, "stand-in job backend at http://%s: it checks the bot's signatures and prints each decision it receives\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-done; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// standinAddr is where a stand-in for backend.url listens: its host and
// port. It serves plain HTTP, so an https URL cannot be stood in for.
func standinAddr(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("backend.url %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return "", fmt.Errorf("backend.url is %s: the stand-in serves plain HTTP; point backend.url at http://127.0.0.1:PORT, or pass -listen", raw)
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port), nil
}
