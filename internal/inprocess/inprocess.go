// Package inprocess is an http.RoundTripper that answers requests by
// calling a handler on the caller's goroutine: no socket, no goroutine of
// its own. The platform fakes (slacktest, discordtest) offer it to tests
// under testing/synctest, which cannot advance time while a goroutine
// waits on a real socket: with it a fake's pace and its clock are the
// bubble's, the same clock the bot's outbox paces its rows by, so a test
// sees that pacing exactly, without loopback jitter.
package inprocess

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
)

// Transport answers every request, whatever host it names, with h.
func Transport(h http.Handler) http.RoundTripper { return transport{h} }

type transport struct{ h http.Handler }

func (t transport) RoundTrip(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		body = b
	}
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	in := httptest.NewRequestWithContext(r.Context(), r.Method, r.URL.String(), bytes.NewReader(body))
	in.Header = r.Header.Clone()
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, in)
	res := rec.Result()
	res.Request = r
	return res, nil
}

// NoCalls is the transport of a client that must call nothing: it counts
// each call and refuses it, so a call shows without reaching a socket (a
// goroutine waiting on one would keep a synctest bubble from ever
// settling).
type NoCalls struct{ n atomic.Int64 }

// RoundTrip counts the call and refuses it.
func (c *NoCalls) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		r.Body.Close()
	}
	c.n.Add(1)
	return nil, errors.New("this test expects no call")
}

// Calls is how many calls were refused.
func (c *NoCalls) Calls() int64 { return c.n.Load() }
