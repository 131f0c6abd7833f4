// Package refusal logs refused requests so that a flood of them cannot
// fill the disk: at most one line per source (connlimit.Source) and
// reason per Every, counting the refusals it stands for. The log is for
// finding the source; the caller's counter, counting every one, for
// alerts.
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

// maxKeys bounds the sources and reasons remembered; past it, stale ones
// are forgotten and new ones share the source "others".
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

// Log writes the lines; it is safe for concurrent use.
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

// Refused notes one refused request from remoteAddr (host:port) and
// writes its line when due, with the source, reason, the refusals it
// stands for and attrs (as slog takes them). A reason must come from a
// bounded set, never from what the request sent.
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

// tallyOf finds or makes k's tally and its key; l.mu is held.
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

// Labels lists every label Label returns, to start each series at 0.
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

// NewCounter makes a surface's Counter: its lines say message, and its
// counter, named by opts at the call (the deployment's tests find it
// there), starts each label at 0 so the first refusal is a rise.
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
