package slacktest

import (
	"net/http"

	"approvalsbot/internal/inprocess"
)

// Transport answers Web API calls in this process (package inprocess),
// for tests under testing/synctest: the fake's per-channel pace of
// chat.postMessage and its message times then run on the bubble's clock.
// Response_url posts go through it too, whatever host the URL names. Hand
// it to slack-go as its HTTP client's Transport, with APIURL as the API
// URL. Socket Mode is a websocket and needs the listener.
func (s *Server) Transport() http.RoundTripper { return inprocess.Transport(s.srv.Config.Handler) }
