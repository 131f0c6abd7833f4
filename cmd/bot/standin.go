package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"approvalsbot/adapters/backend/standin"
	"approvalsbot/config"
)

// cmdBackend runs a stand-in job backend at backend.url, so the whole
// loop runs on one machine: it checks the bot's signatures, prints each
// decision and answers look-ups from a folder of argument files.
func cmdBackend(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := flag.NewFlagSet("backend", flag.ContinueOnError)
	path := configFlag(fs)
	listen := fs.String("listen", "", "the address to serve on (default: backend.url's host and port)")
	arguments := fs.String("arguments", "testdata/fixtures/arguments", "the folder of argument files (ID.json, ID.rN.json) look-ups answer from; empty for none")
	if err := fs.Parse(args); err != nil {
		return errUsage
	}
	if fs.NArg() != 0 {
		fmt.Fprintln(fs.Output(), "usage: bot backend [-config bot.yaml] [-listen ADDR] [-arguments DIR]")
		return errUsage
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
