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

// What an open connection may cost the HTTP server:
// docs/design.md#what-a-connection-may-cost.
const (
	// MaxHeaderBlock bounds a request's line and headers (431 past it).
	// net/http reads netHTTPHeaderSlop bytes past its MaxHeaderBytes.
	MaxHeaderBlock    = 16 << 10
	netHTTPHeaderSlop = 4096
	// ConnsPerSource bounds the connections one source (an IPv4 address,
	// an IPv6 /56) holds open. A reverse proxy must keep its pool under it.
	ConnsPerSource = 64
	// ConnsTotal bounds all connections: some 40 MiB when all are held.
	ConnsTotal = 1024
)

// readTimeout bounds reading a whole request; the body budget gives it
// back to a request once its body is read.
const readTimeout = 30 * time.Second

// listen binds addr behind the connection limits, and makes h's reads of
// unauthenticated bodies spend a body budget of the listener's own; it
// serves nothing yet. reg gets the caps' and the budget's metrics.
func listen(addr string, h http.Handler, log *slog.Logger, reg prometheus.Registerer, ipv6Prefix int) (net.Listener, *http.Server, error) {
	budget, err := bodyBudget(reg, ipv6Prefix)
	if err != nil {
		return nil, nil, err
	}
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
	srv := &http.Server{Handler: budget.Handler(h), ReadHeaderTimeout: 10 * time.Second, ReadTimeout: readTimeout,
		WriteTimeout: 30 * time.Second, MaxHeaderBytes: MaxHeaderBlock - netHTTPHeaderSlop,
		ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	return limited, srv, nil
}

// listenerMetrics labels one of two listeners' metrics listener=name.
func listenerMetrics(reg prometheus.Registerer, name string) prometheus.Registerer {
	return prometheus.WrapRegistererWith(prometheus.Labels{"listener": name}, reg)
}

// bodyBudget is a listener's budget of bodies read before their
// signature is verified; its sources are the connection limiter's.
func bodyBudget(reg prometheus.Registerer, ipv6Prefix int) (*bodybudget.Budget, error) {
	return bodybudget.New(bodybudget.Options{Total: bodybudget.DefaultTotal, ReadTimeout: readTimeout, Registry: reg,
		IPv6Prefix: ipv6Prefix})
}
