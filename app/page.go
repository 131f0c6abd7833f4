package app

import (
	"fmt"
	"log/slog"
	"net/http"
	"net/url"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/adapters/passkey"
	"approvalsbot/config"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// pageLinks makes mail's decision links; nil without a decision page.
func pageLinks(cfg *config.Config) (*decidepage.Links, error) {
	dp := cfg.DecisionPage
	if dp == nil {
		return nil, nil
	}
	keys := make([]string, 0, len(dp.LinkSecrets))
	for _, s := range dp.LinkSecrets {
		keys = append(keys, s.Reveal())
	}
	links, err := decidepage.NewLinks(dp.PublicURL, keys)
	if err != nil {
		return nil, fmt.Errorf("the decision page: %w", err)
	}
	return links, nil
}

// logLinks is the links the log surface may print: only for a decision
// page on this machine (the loop a newcomer runs), since a link decides
// as its member and a log is read by others.
func logLinks(cfg *config.Config, links *decidepage.Links) threads.DecisionLinks {
	if links == nil || cfg.DecisionPage == nil {
		return nil
	}
	u, err := url.Parse(cfg.DecisionPage.PublicURL)
	if err != nil {
		return nil
	}
	if !config.LoopbackHost(u.Hostname()) {
		return nil
	}
	return links
}

// decisionLinks is links as threads takes them: a nil interface, not a
// nil pointer in one, when there is no decision page.
func decisionLinks(links *decidepage.Links) threads.DecisionLinks {
	if links == nil {
		return nil
	}
	return links
}

// mountPage serves the decision page when links are made; passkeys
// checks the passkey an Approve needs (nil: none can be taken).
func mountPage(mux *http.ServeMux, links *decidepage.Links, svc *threads.Service, renderer *templates.Renderer,
	passkeys *passkey.Service, reg prometheus.Registerer, ipv6Prefix int, log *slog.Logger) error {
	if links == nil {
		return nil
	}
	o := decidepage.Options{Links: links, Service: svc, Renderer: renderer, Logger: log, Registry: reg, IPv6Prefix: ipv6Prefix}
	if passkeys != nil {
		o.Passkeys = passkeys
	}
	h, err := decidepage.New(o)
	if err != nil {
		return fmt.Errorf("the decision page: %w", err)
	}
	mux.Handle(decidepage.Path, h)
	return nil
}
