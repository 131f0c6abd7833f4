// Package backendtest serves the fake job backend of package standin for
// a test.
package backendtest

import (
	"net/http/httptest"
	"testing"

	"approvalsbot/adapters/backend/standin"
)

// Fake is the standin backend served on loopback until the test ends.
type Fake struct {
	*standin.Backend
	srv *httptest.Server
}

// New serves a standin backend built from o.
func New(t testing.TB, o standin.Options) *Fake {
	t.Helper()
	b, err := standin.New(o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	return &Fake{Backend: b, srv: srv}
}

// URL is the base URL to give the bot as backend.url.
func (f *Fake) URL() string { return f.srv.URL }

// Close stops the server now, so that calls fail as with a backend that
// is down.
func (f *Fake) Close() { f.srv.Close() }
