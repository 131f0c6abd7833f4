// Package connlimit bounds what open connections can cost a server. Its
// listener closes a new connection at once, before a byte of it is read,
// when the connection's source already holds PerSource open connections,
// or when the listener holds Total in all.
//
// A connection holds its slot from Accept until it is closed, whatever
// its state: reading a header, serving a request, or idle between
// requests. A source is an IPv4 address, or an IPv6 /64: one host is
// commonly given a whole /64, so counting IPv6 addresses one by one would
// bound nothing.
package connlimit

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reason says which cap a refused connection met.
type Reason string

const (
	// ReasonPerSource: its source already held PerSource connections.
	ReasonPerSource Reason = "per_source"
	// ReasonTotal: the listener already held Total connections.
	ReasonTotal Reason = "total"
)

// LogEvery is how often at most a refusal is logged; each line counts the
// refusals since the line before, and the counter counts every one. A
// flood of refusals is the attack itself: logging each would let it fill
// the disk instead.
const LogEvery = time.Minute

// Options configure a Listener.
type Options struct {
	// PerSource is how many connections one source may hold open (> 0).
	PerSource int
	// Total is how many connections the listener may hold open in all
	// (at least PerSource).
	Total int
	// Logger gets the refusals, at most one line per LogEvery (nil: none).
	Logger *slog.Logger
	// Registry gets bot_connections_open and
	// bot_connections_refused_total{reason} (nil: unregistered).
	Registry prometheus.Registerer
	// Now decides when the next refusal is logged (nil: time.Now).
	Now func() time.Time
}

// Listener is a net.Listener whose Accept returns only connections within
// the caps; the others it closes and counts. Its methods are safe to call
// from several goroutines.
type Listener struct {
	net.Listener
	perSource, total int
	log              *slog.Logger
	now              func() time.Time
	refused          *prometheus.CounterVec

	mu       sync.Mutex
	open     int
	bySource map[netip.Prefix]int
	lastLog  time.Time // zero: nothing logged yet
	unlogged int       // refusals since the last line
}

// Wrap returns ln with the caps of opts. Closing the Listener closes ln;
// connections already accepted stay open and keep their slots until they
// are closed.
func Wrap(ln net.Listener, opts Options) (*Listener, error) {
	if opts.PerSource <= 0 {
		return nil, fmt.Errorf("connection limits: per source %d: want at least 1", opts.PerSource)
	}
	if opts.Total < opts.PerSource {
		return nil, fmt.Errorf("connection limits: total %d: want at least the per source cap (%d)", opts.Total, opts.PerSource)
	}
	l := &Listener{
		Listener: ln, perSource: opts.PerSource, total: opts.Total,
		log: opts.Logger, now: opts.Now, bySource: map[netip.Prefix]int{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_connections_refused_total",
			Help: "Connections closed at accept, unread, by the cap they met (per_source, total).",
		}, []string{"reason"}),
	}
	if l.now == nil {
		l.now = time.Now
	}
	for _, r := range []Reason{ReasonPerSource, ReasonTotal} { // a series from the start, for alerts
		l.refused.WithLabelValues(string(r))
	}
	if opts.Registry != nil {
		open := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "bot_connections_open",
			Help: "Connections open on the HTTP listener, in any state.",
		}, func() float64 { return float64(l.Open()) })
		for _, c := range []prometheus.Collector{l.refused, open} {
			if err := opts.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("connection limits: register metrics: %w", err)
			}
		}
	}
	return l, nil
}

// Accept waits for a connection within the caps. A connection over a cap
// is closed at once and Accept waits for the next: a refusal answers
// nothing, since answering would spend on the attacker what the cap
// saves.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr())
		if reason, ok := l.acquire(src); !ok {
			l.refuse(src, reason) // counted before the close, so whoever sees the close sees the count
			c.Close()
			continue
		}
		return &conn{Conn: c, release: func() { l.release(src) }}, nil
	}
}

// Open is how many accepted connections are still open.
func (l *Listener) Open() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open
}

func (l *Listener) acquire(src netip.Prefix) (Reason, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch {
	case l.bySource[src] >= l.perSource:
		return ReasonPerSource, false
	case l.open >= l.total:
		return ReasonTotal, false
	}
	l.bySource[src]++
	l.open++
	return "", true
}

func (l *Listener) release(src netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.open--
	if l.bySource[src]--; l.bySource[src] == 0 {
		delete(l.bySource, src) // the map holds only sources with open connections
	}
}

func (l *Listener) refuse(src netip.Prefix, reason Reason) {
	l.refused.WithLabelValues(string(reason)).Inc()
	if l.log == nil {
		return
	}
	now := l.now()
	l.mu.Lock()
	l.unlogged++
	if !l.lastLog.IsZero() && now.Sub(l.lastLog) < LogEvery {
		l.mu.Unlock()
		return
	}
	n, open := l.unlogged, l.open
	l.lastLog, l.unlogged = now, 0
	l.mu.Unlock()
	l.log.Warn("connections closed unread: over the open-connection cap",
		"reason", string(reason), "source", sourceString(src), "refused", n,
		"open", open, "per_source_cap", l.perSource, "total_cap", l.total)
}

// sourceOf is the source a connection counts against: its IPv4 address
// (an IPv4-mapped IPv6 address counts as the IPv4 one), or its IPv6 /64.
// Connections whose address is not IP (a Unix socket) share one source.
func sourceOf(a net.Addr) netip.Prefix {
	var ip netip.Addr
	switch a := a.(type) {
	case *net.TCPAddr:
		ip, _ = netip.AddrFromSlice(a.IP)
	case nil:
	default:
		if ap, err := netip.ParseAddrPort(a.String()); err == nil {
			ip = ap.Addr()
		}
	}
	ip = ip.Unmap().WithZone("")
	bits := 64
	if ip.Is4() {
		bits = 32
	}
	p, err := ip.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return p
}

func sourceString(p netip.Prefix) string {
	switch {
	case !p.IsValid():
		return "non-IP"
	case p.Addr().Is4():
		return p.Addr().String()
	}
	return p.String()
}

// conn gives its slot back at its first Close.
type conn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite passes a half-close through: net/http half-closes before it
// hangs up after an error answer (a 431), so the client reads the answer
// instead of a reset.
func (c *conn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return fmt.Errorf("close write on %T: %w", c.Conn, errors.ErrUnsupported)
}
