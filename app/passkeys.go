package app

import (
	"fmt"
	"log/slog"
	"net/http"

	"approvalsbot/adapters/passkey"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// PasskeyLinks makes members' passkey enrolment links; nil without a
// decision page or when public_url's host is an IP address (no tenant
// may then ask for passkeys: config refuses it).
func PasskeyLinks(cfg *config.Config) (*passkey.Links, error) {
	dp := cfg.DecisionPage
	if dp == nil {
		return nil, nil
	}
	if _, _, err := passkey.RelyingParty(dp.PublicURL); err != nil {
		return nil, nil
	}
	links, err := passkey.NewLinks(dp.PublicURL, linkKeys(dp), nil)
	if err != nil {
		return nil, fmt.Errorf("passkey links: %w", err)
	}
	return links, nil
}

// enrolLinks is PasskeyLinks as the chat surfaces take it: a nil
// interface, not a nil pointer in one, without passkeys.
func enrolLinks(cfg *config.Config) (threads.EnrolLinks, error) {
	links, err := PasskeyLinks(cfg)
	if links == nil || err != nil {
		return nil, err
	}
	return links, nil
}

// mountPasskeys serves passkey enrolment, the passkey script and its
// options beside the decision page, when public_url's host can be a
// passkey's relying party; it returns the service, nil without one.
func mountPasskeys(mux *http.ServeMux, cfg *config.Config, st store.Store, tenants passkey.Tenants, log *slog.Logger) (*passkey.Service, error) {
	dp := cfg.DecisionPage
	if dp == nil {
		return nil, nil
	}
	if _, _, err := passkey.RelyingParty(dp.PublicURL); err != nil {
		log.Info("passkeys are off: public_url's host cannot be a passkey's relying party", "why", err.Error())
		return nil, nil
	}
	svc, err := passkey.New(passkey.Options{PublicURL: dp.PublicURL, Secrets: linkKeys(dp), Store: st,
		Tenants: tenants, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("passkeys: %w", err)
	}
	mux.Handle(passkey.Path, svc.Handler())
	return svc, nil
}

// linkKeys are the link secrets as the passkey package takes them.
func linkKeys(dp *config.DecisionPage) []string {
	keys := make([]string, 0, len(dp.LinkSecrets))
	for _, s := range dp.LinkSecrets {
		keys = append(keys, s.Reveal())
	}
	return keys
}
