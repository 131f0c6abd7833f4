// Package inprocess is an http.RoundTripper that calls a handler on the
// caller's goroutine, with no socket: under testing/synctest, which cannot
// advance time while a goroutine waits on a real socket, a platform fake's
// pace then runs on the bubble's clock, without loopback jitter.
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
// and refuses each call without a socket, which a synctest bubble needs.
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
