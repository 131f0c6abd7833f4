// Package refusal logs refused requests so that a flood of them cannot
// fill the disk: at most one line per source and reason per interval
// (Every), each carrying how many refusals of that source and reason it
// stands for. A refusal between lines is not lost: the next line of its
// source and reason counts it, and the caller's counter counts every one
// (the log is for finding the source, the counter for alerts).
//
// A source is what the connection limits count against
// (connlimit.Source): an IPv4 address or an IPv6 /56, so rotating
// through the addresses of one network does not make new lines either.
package refusal

import (
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/internal/connlimit"
)

// Every is the least time between two lines of one source and reason.
const Every = time.Minute

// maxKeys bounds the sources and reasons remembered, so that refusals
// from many networks cannot grow the memory they cost without bound;
// past it, stale ones are forgotten and new ones share the source
// "others".
const maxKeys = 4096

// Options configure a Log.
type Options struct {
	// Logger gets the lines, at warn level (nil: none).
	Logger *slog.Logger
	// Message is every line's message ("slack: requests refused").
	Message string
	// IPv6Prefix names a source (0: connlimit.DefaultIPv6Prefix).
	IPv6Prefix int
	// Now decides when a line is due (nil: time.Now).
	Now func() time.Time
}

// Log writes the lines. Its methods are safe to call from several
// goroutines.
type Log struct {
	log        *slog.Logger
	msg        string
	ipv6Prefix int
	now        func() time.Time

	mu   sync.Mutex
	seen map[key]*tally
}

type key struct{ source, reason string }

type tally struct {
	last     time.Time // the last line
	unlogged int       // refusals since it
}

// New returns a Log for o.
func New(o Options) *Log {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Log{log: o.Logger, msg: o.Message, ipv6Prefix: o.IPv6Prefix, now: o.Now, seen: map[key]*tally{}}
}

// Refused notes one refused request from remoteAddr (host:port, as in
// http.Request.RemoteAddr) for reason, and writes its line when one is
// due: the first refusal of a source and reason, then the first after
// Every has passed since its last line. The line has the source, the
// reason, "refused" (the refusals it stands for, this one included) and
// attrs (key-value pairs, as slog takes them). A reason must come from a
// bounded set, and never hold what the request sent.
func (l *Log) Refused(remoteAddr, reason string, attrs ...any) {
	now := l.now()
	k := key{connlimit.Source(remoteAddr, l.ipv6Prefix), reason}
	l.mu.Lock()
	k, t := l.tallyOf(k, now)
	t.unlogged++
	if !t.last.IsZero() && now.Sub(t.last) < Every {
		l.mu.Unlock()
		return
	}
	n := t.unlogged
	t.last, t.unlogged = now, 0
	l.mu.Unlock()
	l.log.Warn(l.msg, append([]any{"source", k.source, "reason", reason, "refused", n}, attrs...)...)
}

// tallyOf finds or makes k's tally, and says the key it is under; l.mu
// is held.
func (l *Log) tallyOf(k key, now time.Time) (key, *tally) {
	if t, ok := l.seen[k]; ok {
		return k, t
	}
	if len(l.seen) >= maxKeys {
		for sk, t := range l.seen {
			if now.Sub(t.last) >= Every { // its refusals since stay counted by the caller
				delete(l.seen, sk)
			}
		}
	}
	if len(l.seen) >= maxKeys {
		k.source = "others"
		if t, ok := l.seen[k]; ok {
			return k, t
		}
	}
	t := &tally{}
	l.seen[k] = t
	return k, t
}

// Labels of a refused-requests counter, by what the answer's status
// says: a bounded set, whatever the reasons in the lines are.
const (
	LabelBadRequest   = "bad_request"
	LabelBadSignature = "bad_signature"
	LabelTooLarge     = "too_large"
	LabelMediaType    = "unsupported_media_type"
	LabelUnavailable  = "unavailable"
	LabelOther        = "other"
)

// Labels lists every label Label returns, for a counter to start each
// series at 0.
func Labels() []string {
	return []string{LabelBadRequest, LabelBadSignature, LabelTooLarge, LabelMediaType, LabelUnavailable, LabelOther}
}

// Label is the counter label of a refusal answered with status.
func Label(status int) string {
	switch status {
	case http.StatusBadRequest:
		return LabelBadRequest
	case http.StatusUnauthorized:
		return LabelBadSignature
	case http.StatusRequestEntityTooLarge:
		return LabelTooLarge
	case http.StatusUnsupportedMediaType:
		return LabelMediaType
	case http.StatusServiceUnavailable:
		return LabelUnavailable
	}
	return LabelOther
}

// Counter is a surface's refused requests: each counted by the label of
// its answer's status, and noted in the surface's Log.
type Counter struct {
	log     *Log
	refused *prometheus.CounterVec
}

// NewCounter makes a surface's log of refused requests, its lines saying
// message, and its counter of them by reason (opts names it: the
// deployment's tests find the metric by its literal name at the call),
// each label's series counted from 0 so that the first refusal after a
// start is a rise.
func NewCounter(opts prometheus.CounterOpts, message string, log *slog.Logger, reg prometheus.Registerer, ipv6Prefix int) (*Counter, error) {
	refused := prometheus.NewCounterVec(opts, []string{"reason"})
	for _, l := range Labels() {
		refused.WithLabelValues(l)
	}
	if reg != nil {
		if err := reg.Register(refused); err != nil {
			return nil, fmt.Errorf("register %s: %w", opts.Name, err)
		}
	}
	return &Counter{log: New(Options{Logger: log, Message: message, IPv6Prefix: ipv6Prefix}), refused: refused}, nil
}

// Refused counts r, answered status, and notes it for reason (Log.Refused),
// its line carrying r's path and the status.
func (c *Counter) Refused(r *http.Request, status int, reason string) {
	c.refused.WithLabelValues(Label(status)).Inc()
	c.log.Refused(r.RemoteAddr, reason, "path", r.URL.Path, "status", status)
}
