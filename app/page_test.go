package app

import (
	"testing"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/config"
)

// TestLogLinksOnlyForAPageOnThisMachine: the log surface may name working
// decision links only where the decision page is on this machine (the
// loop a newcomer runs); a production public_url keeps them out of a log
// others read, and without a page there are none.
func TestLogLinksOnlyForAPageOnThisMachine(t *testing.T) {
	secret := "link-secret-of-the-app-tests-0123456789"
	for _, c := range []struct {
		publicURL string
		want      bool
	}{
		{"http://127.0.0.1:8080", true},
		{"http://localhost:8080", true},
		{"http://[::1]:8080", true},
		{"https://approvals.acme.example", false},
		{"https://10.0.0.5", false},
	} {
		links, err := decidepage.NewLinks(c.publicURL, []string{secret})
		if err != nil {
			t.Fatal(err)
		}
		cfg := &config.Config{DecisionPage: &config.DecisionPage{PublicURL: c.publicURL}}
		if got := logLinks(cfg, links) != nil; got != c.want {
			t.Errorf("%s: the log surface gets links %v, want %v", c.publicURL, got, c.want)
		}
	}
	if logLinks(&config.Config{}, nil) != nil {
		t.Error("links without a decision page")
	}
}
