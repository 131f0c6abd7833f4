package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/passkey"
	"approvalsbot/store"
	"approvalsbot/store/sqlite"
	"approvalsbot/tenant"
)

const passkeyLinkSecret = "link-secret-of-32-bytes-0c9e1f7a"

// passkeyConfig is a configuration with a decision page at publicURL
// and a store at db.
func passkeyConfig(db, publicURL string) string {
	page := ""
	if publicURL != "" {
		page = "public_url: " + publicURL + "\nlink_secrets: [\"${BOT_LINK_SECRET}\"]\n"
	}
	return page + `store: {dsn: "file:` + db + `"}
backend:
  url: "https://jobs.acme.example"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    members:
      - {user: "user:kevin", role: operator}
`
}

var passkeyEnv = map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret, "BOT_CALLS_SECRET": e2eCallsSecret,
	"BOT_LINK_SECRET": passkeyLinkSecret}

type oneTenant struct{ t *tenant.Tenant }

func (o oneTenant) Tenant(id string) (*tenant.Tenant, bool) { return o.t, id == o.t.ID }

// bot passkey enrol prints a link the bot's enrolment page opens; it
// refuses a stranger, and a bot without a decision page on a host name.
func TestPasskeyEnrolCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "bot.db")
	cfg := writeConfig(t, dir, passkeyConfig(db, "http://localhost:8080"))
	code, out, errOut := runBot(t, passkeyEnv, "passkey", "enrol", "--config", cfg, "--tenant", "acme", "--member", "user:kevin")
	if code != 0 || errOut != "" || !strings.HasPrefix(out, "passkey enrolment link for user:kevin in tenant acme, valid until ") {
		t.Fatalf("enrol: exit %d\n%s%s", code, out, errOut)
	}
	link := strings.TrimSpace(out[strings.LastIndex(strings.TrimSpace(out), "\n")+1:])
	if !strings.HasPrefix(link, "http://localhost:8080"+passkey.EnrolPath) {
		t.Fatalf("link %q", link)
	}
	// The page the bot serves opens it.
	migratedStore(t, db)
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc, err := passkey.New(passkey.Options{PublicURL: "http://localhost:8080", Secrets: []string{passkeyLinkSecret}, Store: st,
		Tenants: oneTenant{&tenant.Tenant{ID: "acme", Members: []tenant.Member{{User: "user:kevin", Role: tenant.RoleOperator}}}}})
	if err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	svc.Handler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, strings.TrimPrefix(link, "http://localhost:8080"), nil))
	if w.Code != http.StatusOK || !strings.Contains(w.Body.String(), "For user:kevin in tenant acme.") {
		t.Errorf("the link's page: %d\n%s", w.Code, w.Body)
	}

	for _, c := range []struct {
		name, cfg string
		args      []string
		code      int
		want      string
	}{
		{"a stranger", cfg, []string{"--tenant", "acme", "--member", "user:mallory"}, 1, "bot passkey: user:mallory is not a member of tenant acme"},
		{"an unknown tenant", cfg, []string{"--tenant", "nope", "--member", "user:kevin"}, 1, `bot passkey: no tenant "nope"`},
		{"no member", cfg, []string{"--tenant", "acme"}, 2, "bot passkey: needs --member"},
		{"no decision page", writeConfig(t, t.TempDir(), passkeyConfig(db, "")), []string{"--tenant", "acme", "--member", "user:kevin"}, 1,
			"bot passkey: passkeys are enrolled on the bot's pages: set public_url and link_secrets"},
		{"an IP address", writeConfig(t, t.TempDir(), passkeyConfig(db, "http://127.0.0.1:8080")), []string{"--tenant", "acme", "--member", "user:kevin"}, 1,
			"its host is no host name"},
	} {
		code, out, errOut := runBot(t, passkeyEnv, append([]string{"passkey", "enrol", "--config", c.cfg}, c.args...)...)
		if code != c.code || !strings.Contains(errOut, c.want) || strings.Contains(out, "/passkey/") {
			t.Errorf("%s: exit %d\n%s%s", c.name, code, out, errOut)
		}
	}
}

// bot passkey list and remove work on the store beside a running bot,
// with none of the other secrets.
func TestPasskeyListRemoveCommands(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "bot.db")
	cfg := writeConfig(t, dir, passkeyConfig(db, "http://localhost:8080"))
	if code, out, _ := runBot(t, nil, "passkey", "list", "--config", cfg, "--tenant", "acme"); code != 0 ||
		out != "no passkeys in tenant acme: the store does not exist yet\n" {
		t.Errorf("list before any store: %d %q", code, out)
	}
	migratedStore(t, db)
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	added := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	for _, p := range []store.PasskeyAddParams{
		{ID: "pk-laptop", Tenant: "acme", Member: "user:kevin", Name: "Laptop", Credential: []byte("{}"), Now: added},
		{ID: "pk-ana", Tenant: "acme", Member: "user:ana", Name: "Ana's", Credential: []byte("{}"), Now: added.Add(time.Minute)},
	} {
		if err := st.PasskeyAdd(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	code, out, errOut := runBot(t, nil, "passkey", "list", "--config", cfg, "--tenant", "acme")
	want := "user:kevin\t\"Laptop\"\tadded 2025-06-01 12:00 UTC\tnever used\tid pk-laptop\n" +
		"user:ana\t\"Ana's\"\tadded 2025-06-01 12:01 UTC\tnever used\tid pk-ana\n"
	if code != 0 || out != want {
		t.Errorf("list: exit %d\n%s%s\nwant\n%s", code, out, errOut, want)
	}
	if code, out, _ := runBot(t, nil, "passkey", "list", "--config", cfg, "--tenant", "acme", "--member", "user:ana"); code != 0 ||
		!strings.HasPrefix(out, "user:ana\t") || strings.Contains(out, "kevin") {
		t.Errorf("list of a member: %d %q", code, out)
	}
	if code, _, errOut := runBot(t, nil, "passkey", "remove", "--config", cfg, "--tenant", "acme", "--member", "user:ana", "--id", "pk-laptop"); code != 1 ||
		!strings.Contains(errOut, "user:ana in tenant acme has no passkey pk-laptop") {
		t.Errorf("remove of another member's: %d %q", code, errOut)
	}
	if code, out, errOut := runBot(t, nil, "passkey", "remove", "--config", cfg, "--tenant", "acme", "--member", "user:kevin", "--id", "pk-laptop"); code != 0 ||
		out != "removed passkey pk-laptop of user:kevin in tenant acme\n" {
		t.Errorf("remove: %d %q %q", code, out, errOut)
	}
	if code, out, _ := runBot(t, nil, "passkey", "list", "--config", cfg, "--tenant", "acme", "--member", "user:kevin"); code != 0 ||
		out != "no passkeys for user:kevin in tenant acme\n" {
		t.Errorf("list after the removal: %d %q", code, out)
	}
	for _, args := range [][]string{{"passkey"}, {"passkey", "forget"}, {"passkey", "remove", "--config", cfg, "--tenant", "acme"}} {
		if code, _, errOut := runBot(t, nil, args...); code != 2 || !strings.HasPrefix(errOut, "bot passkey: ") {
			t.Errorf("%v: exit %d %q", args, code, errOut)
		}
	}
	if code, out, _ := runBot(t, nil, "passkey", "list", "-h"); code != 0 || !strings.HasPrefix(out, "usage: bot passkey list [flags]") {
		t.Errorf("list -h: %d %q", code, out)
	}
}
