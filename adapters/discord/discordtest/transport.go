package discordtest

import (
	"net/http"

	"approvalsbot/internal/inprocess"
)

// Transport answers REST calls in this process (package inprocess), for
// tests under testing/synctest: the fake's pace and its message times then
// run on the bubble's clock, the same clock the bot's outbox paces its
// rows by. Hand it to the adapter as its HTTPClient's Transport; the
// adapter still sends discordgo's calls to URL's host, which is the one
// this answers. The gateway is a websocket and needs URL.
func (s *Server) Transport() http.RoundTripper { return inprocess.Transport(s.srv.Config.Handler) }
