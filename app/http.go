package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/internal/bodybudget"
	"approvalsbot/internal/connlimit"
)

// What an open connection may cost the HTTP server. Every caller (Slack,
// Discord, the job backend) sends a header block of a few hundred bytes
// and is answered in milliseconds, while a connection that sends a header
// slowly holds its buffers until ReadHeaderTimeout.
const (
	// MaxHeaderBlock bounds a request's line and headers; a larger block
	// is answered 431. net/http reads netHTTPHeaderSlop bytes past its
	// MaxHeaderBytes, so the server is given the difference.
	MaxHeaderBlock    = 16 << 10
	netHTTPHeaderSlop = 4096
	// ConnsPerSource bounds the connections one source (an IPv4
	// address, an IPv6 /56) holds open, an eighth of it once half of
	// ConnsTotal is open (connlimit.BusyShare), so a few attackers cannot
	// shut out Slack, Discord or the backend, which connect from their
	// own addresses. Behind a reverse proxy every connection comes from
	// the proxy: it must then limit per client itself and keep its pool
	// to the bot under this.
	ConnsPerSource = 64
	// ConnsTotal bounds all of them, well above one source's cap: with
	// the header bound, some 40 MiB of buffers and goroutines (measured:
	// +39 MiB for 1,024 held), the bodies on top within the body budget,
	// and file descriptors to spare. Only an attack from many addresses reaches it,
	// which this process cannot tell from traffic; without it, such an
	// attack would end the process (memory or descriptors) instead.
	ConnsTotal = 1024
)

// readTimeout bounds reading a whole request; the body budget gives it
// back to a request once its body is read.
const readTimeout = 30 * time.Second

// listen binds addr behind the connection limits, which count per IPv4
// address or IPv6 prefix of ipv6Prefix bits, and makes the server for h;
// it serves nothing yet.
func listen(addr string, h http.Handler, log *slog.Logger, reg prometheus.Registerer, ipv6Prefix int) (net.Listener, *http.Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	limited, err := connlimit.Wrap(ln, connlimit.Options{PerSource: ConnsPerSource, Total: ConnsTotal, Logger: log, Registry: reg,
		IPv6Prefix: ipv6Prefix})
	if err != nil {
		ln.Close()
		return nil, nil, err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: readTimeout,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: MaxHeaderBlock - netHTTPHeaderSlop,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	return limited, srv, nil
}

// listenerMetrics is reg for one of two listeners: the connection
// metrics of each carry listener="public" or "private". With one
// listener they carry no such label, as before there could be two.
func listenerMetrics(reg prometheus.Registerer, name string) prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"listener": name}, reg)
}

// bodyBudget is what request bodies read before their signature is
// verified may hold, shared by every handler that reads one, on every
// listener (bodybudget.Read); README, Security: "Open connections". Its
// sources are the connection limiter's, with the same ipv6Prefix.
func bodyBudget(reg prometheus.Registerer, ipv6Prefix int) (*bodybudget.Budget, error) {
	return bodybudget.New(bodybudget.Options{Total: bodybudget.DefaultTotal, ReadTimeout: readTimeout, Registry: reg,
		IPv6Prefix: ipv6Prefix})
}
