// Package connlimit bounds what open connections can cost a server: its
// listener closes a new connection unread when its source holds PerSource,
// the listener holds Total, or the listener is half full and the source
// holds its busy share (BusyShare). A connection holds its slot until it
// is closed. A source is an IPv4 address or an IPv6 prefix
// (docs/design.md#connection-caps).
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
	// ReasonShare: the listener was half full and the source held its
	// busy share.
	ReasonShare Reason = "share"
)

// DefaultIPv6Prefix is how many leading bits of an IPv6 address name its
// source: a /56, what a provider commonly gives one customer.
const DefaultIPv6Prefix = 56

// BusyShare divides PerSource once the listener holds half of Total: a
// source may then hold at most PerSource/BusyShare connections (at least
// 1), so filling the listener takes many more sources.
const BusyShare = 8

// LogEvery is how often at most a refusal is logged, each line counting
// those since the last: logging each would let a flood fill the disk.
const LogEvery = time.Minute

// Options configure a Listener.
type Options struct {
	// PerSource is how many connections one source may hold open (> 0).
	PerSource int
	// Total is how many the listener may hold open (at least PerSource).
	Total int
	// IPv6Prefix names a source, 1 to 128 (0: DefaultIPv6Prefix).
	IPv6Prefix int
	// Logger gets the refusals, at most one line per LogEvery (nil: none).
	Logger *slog.Logger
	// Registry gets the listener's metrics (nil: unregistered).
	Registry prometheus.Registerer
	// Now decides when the next refusal is logged (nil: time.Now).
	Now func() time.Time
}

// Listener is a net.Listener whose Accept returns only connections within
// the caps; the others it closes and counts.
type Listener struct {
	net.Listener
	perSource, total int
	busyPerSource    int // what a source may hold once the listener is half full
	ipv6Prefix       int
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
// accepted connections keep their slots until closed.
func Wrap(ln net.Listener, opts Options) (*Listener, error) {
	if opts.PerSource <= 0 {
		return nil, fmt.Errorf("connection limits: per source %d: want at least 1", opts.PerSource)
	}
	if opts.Total < opts.PerSource {
		return nil, fmt.Errorf("connection limits: total %d: want at least the per source cap (%d)", opts.Total, opts.PerSource)
	}
	if opts.IPv6Prefix == 0 {
		opts.IPv6Prefix = DefaultIPv6Prefix
	}
	if opts.IPv6Prefix < 1 || opts.IPv6Prefix > 128 {
		return nil, fmt.Errorf("connection limits: IPv6 prefix /%d: want 1 to 128", opts.IPv6Prefix)
	}
	l := &Listener{
		Listener: ln, perSource: opts.PerSource, total: opts.Total, ipv6Prefix: opts.IPv6Prefix,
		busyPerSource: max(1, opts.PerSource/BusyShare),
		log:           opts.Logger, now: opts.Now, bySource: map[netip.Prefix]int{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_connections_refused_total",
			Help: "Connections closed at accept, unread, by the cap they met (per_source, total, share).",
		}, []string{"reason"}),
	}
	if l.now == nil {
		l.now = time.Now
	}
	for _, r := range []Reason{ReasonPerSource, ReasonTotal, ReasonShare} { // a series from the start, for alerts
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

// Accept waits for a connection within the caps, closing those over a cap
// unanswered: answering would spend on the attacker what the cap saves.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		src := sourceOf(c.RemoteAddr(), l.ipv6Prefix)
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

// acquire takes a slot for src, or says which cap refuses it. A lone
// source (a reverse proxy) keeps its whole PerSource while it is quiet.
func (l *Listener) acquire(src netip.Prefix) (Reason, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.bySource[src]
	switch {
	case held >= l.perSource:
		return ReasonPerSource, false
	case l.open >= l.total:
		return ReasonTotal, false
	case 2*l.open >= l.total && held >= l.busyPerSource:
		return ReasonShare, false
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

// Source names the source remoteAddr (host:port) counts against as the
// listener's log lines do: an IPv4 address, an IPv6 prefix, or "non-IP".
func Source(remoteAddr string, ipv6Prefix int) string {
	return sourceString(SourcePrefix(remoteAddr, ipv6Prefix))
}

// SourcePrefix is the source remoteAddr (host:port) counts against, for a
// limit sharing the listener's sources (0 bits: DefaultIPv6Prefix); the
// zero Prefix when it is not IP:port.
func SourcePrefix(remoteAddr string, ipv6Prefix int) netip.Prefix {
	if ipv6Prefix == 0 {
		ipv6Prefix = DefaultIPv6Prefix
	}
	var ip netip.Addr
	if ap, err := netip.ParseAddrPort(remoteAddr); err == nil {
		ip = ap.Addr()
	}
	return prefixOf(ip, ipv6Prefix)
}

// sourceOf is the source a connection counts against (an IPv4-mapped
// address as IPv4); non-IP connections share one source.
func sourceOf(a net.Addr, ipv6Prefix int) netip.Prefix {
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
	return prefixOf(ip, ipv6Prefix)
}

func prefixOf(ip netip.Addr, ipv6Prefix int) netip.Prefix {
	ip = ip.Unmap().WithZone("")
	bits := ipv6Prefix
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
