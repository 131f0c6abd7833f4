package app

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/adapters/passkey"
	"approvalsbot/config"
	"approvalsbot/store/sqlite"
)

// Passkeys are served beside the decision page when public_url's host
// can be their relying party (a name), and not otherwise.
func TestPasskeysMounted(t *testing.T) {
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	secret := config.Secret("link-secret-of-the-app-tests-0123456789")
	for _, c := range []struct {
		publicURL string
		served    bool
	}{
		{"http://localhost:8080", true},
		{"https://approvals.acme.example/bot", true},
		{"http://127.0.0.1:8080", false},
		{"", false},
	} {
		cfg := &config.Config{}
		if c.publicURL != "" {
			cfg.DecisionPage = &config.DecisionPage{PublicURL: c.publicURL, LinkSecrets: []config.Secret{secret}}
		}
		live := &liveConfig{}
		live.p.Store(cfg)
		mux := http.NewServeMux()
		svc, err := mountPasskeys(mux, cfg, st, live, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatalf("%s: %v", c.publicURL, err)
		}
		w := httptest.NewRecorder()
		mux.ServeHTTP(w, httptest.NewRequest(http.MethodGet, passkey.ScriptPath, nil))
		if got := w.Code == http.StatusOK; got != c.served || (svc != nil) != c.served {
			t.Errorf("%q: script %d, service %v; want served %v", c.publicURL, w.Code, svc != nil, c.served)
		}
		links, err := PasskeyLinks(cfg)
		if err != nil || (links != nil) != c.served {
			t.Errorf("%q: links %v, %v", c.publicURL, links, err)
		}
		if links != nil {
			if link, _ := links.EnrolLink("acme", "user:kevin"); !strings.HasPrefix(link, strings.TrimRight(c.publicURL, "/")+passkey.EnrolPath) {
				t.Errorf("%q: link %q", c.publicURL, link)
			}
		}
	}
}

// Without passkeys the chat surfaces get no enrolment links: a nil
// interface, so /approvals passkey says the bot takes none.
func TestEnrolLinksNilWithoutPasskeys(t *testing.T) {
	for _, cfg := range []*config.Config{{}, {DecisionPage: &config.DecisionPage{PublicURL: "http://127.0.0.1:8080",
		LinkSecrets: []config.Secret{"link-secret-of-the-app-tests-0123456789"}}}} {
		if l, err := enrolLinks(cfg); l != nil || err != nil {
			t.Errorf("%+v: %v, %v", cfg.DecisionPage, l, err)
		}
	}
}
