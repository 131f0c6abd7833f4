package slacktest

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
)

// Transport answers Web API calls in this process, by calling the fake's
// handlers on the caller's goroutine: no socket, no goroutine of its own.
// It is for tests under testing/synctest, which cannot advance time while
// a goroutine waits on a real socket: with it the fake's per-channel pace
// of chat.postMessage and its message times run on the bubble's clock,
// the same clock the bot's outbox paces its rows by, so a test sees that
// pacing exactly, without loopback jitter. Response_url posts go through
// it too, whatever host the URL names. Hand it to slack-go as its HTTP
// client's Transport, with APIURL as the API URL. Socket Mode is a
// websocket and needs the listener.
func (s *Server) Transport() http.RoundTripper { return inProcess{s.srv.Config.Handler} }

type inProcess struct{ h http.Handler }

func (t inProcess) RoundTrip(r *http.Request) (*http.Response, error) {
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
