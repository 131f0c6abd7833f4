package passkey_test

import (
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/passkey"
	"approvalsbot/adapters/passkey/passkeytest"
	"approvalsbot/store/sqlite"
	"approvalsbot/tenant"
)

// origin is where the tests' pages are: a host name, as WebAuthn needs.
const origin = "http://localhost:8080"

// secret is a link secret of the shortest length taken.
const secret = "link-secret-of-32-bytes-0c9e1f7a"

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type tenants map[string]*tenant.Tenant

func (ts tenants) Tenant(id string) (*tenant.Tenant, bool) {
	t, ok := ts[id]
	return t, ok
}

// acme has two operators, kevin and ana.
var acme = tenants{"acme": {ID: "acme", Members: []tenant.Member{
	{User: "user:kevin", Role: tenant.RoleOperator},
	{User: "user:ana", Role: tenant.RoleOperator},
}}}

type fixture struct {
	svc   *passkey.Service
	store *sqlite.Store
	clock *clock
	auth  *passkeytest.Authenticator
	// creds are passkeys a test enrolled and means to spoil.
	creds []*passkeytest.Credential
}

// newFixture is a service on a fresh SQLite store, at a fixed time, with
// a software authenticator on the bot's origin.
func newFixture(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(t.TempDir(), "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := st.Migrate(t.Context()); err != nil {
		t.Fatal(err)
	}
	c := &clock{t: time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)}
	svc, err := passkey.New(passkey.Options{PublicURL: origin, Secrets: []string{secret}, Store: st, Tenants: acme, Now: c.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{svc: svc, store: st, clock: c, auth: passkeytest.New(origin)}
}

// enrol enrols a passkey of member's on f's authenticator.
func (f *fixture) enrol(t *testing.T, member, name string) *passkeytest.Credential {
	t.Helper()
	return f.enrolOn(t, f.auth, member, name)
}

// enrolOn enrols a passkey of member's on another authenticator.
func (f *fixture) enrolOn(t *testing.T, auth *passkeytest.Authenticator, member, name string) *passkeytest.Credential {
	t.Helper()
	req, err := f.svc.BeginEnrol(t.Context(), "acme", member)
	if err != nil {
		t.Fatalf("BeginEnrol: %v", err)
	}
	att, cred, err := auth.Create(req.Options, passkeytest.Spoil{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.svc.FinishEnrol(t.Context(), "acme", member, req.Ref, name, att); err != nil {
		t.Fatalf("FinishEnrol: %v", err)
	}
	return cred
}

// options decodes a request's options.
func options(t *testing.T, req *passkey.Request) map[string]any {
	t.Helper()
	var o struct {
		PublicKey map[string]any `json:"publicKey"`
	}
	if err := json.Unmarshal(req.Options, &o); err != nil {
		t.Fatal(err)
	}
	return o.PublicKey
}
