// Package bodybudget bounds the memory request bodies hold before their
// signature is verified: the bytes of all bodies being read come out of
// one budget, shared fairly between sources (connlimit.SourcePrefix), and
// a body that trickles is cut off (docs/design.md#the-request-body-budget).
package bodybudget

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/internal/connlimit"
)

// Defaults (docs/security.md, "Open connections").
const (
	// DefaultTotal is the budget: 32 full-size (1 MiB) events at once, or
	// thousands of clicks of a few KiB.
	DefaultTotal = 32 << 20
	// DefaultMinRate is the rate a body must average after the grace: 16 s
	// for 1 MiB, within the server's 30 s ReadTimeout.
	DefaultMinRate = 64 << 10
	// DefaultGrace is how long a body may take before the rate counts.
	DefaultGrace = 5 * time.Second
	// DefaultRetryAfter is what a refused request is told to wait: about
	// how long a trickling body holds its bytes before it is cut off.
	DefaultRetryAfter = 10 * time.Second
	// step is what a body without a Content-Length is admitted for first.
	step = 16 << 10
)

// ErrBusy is Read's error for a request the budget refused or cut off;
// Read has set Retry-After and Connection: close: answer 503.
var ErrBusy = errors.New("the budget for unauthenticated request bodies is spent; retry later")

// ErrTooSlow is Read's error for a body that fell under the minimum rate.
var ErrTooSlow = errors.New("the request body arrived too slowly")

// Options configure a Budget. Zero values take the defaults above.
type Options struct {
	Total      int64         // bytes all bodies being read may hold
	MinRate    int64         // bytes per second a body must average after Grace
	Grace      time.Duration // how long a body may take before MinRate counts
	RetryAfter time.Duration // told to a refused request
	// ReadTimeout is the server's, the read deadline a request gets back
	// once its body is read (0: none).
	ReadTimeout time.Duration
	// IPv6Prefix names a source, as the connection limiter counts them
	// (0: connlimit.DefaultIPv6Prefix).
	IPv6Prefix int
	// Registry gets the budget's metrics (nil: unregistered).
	Registry prometheus.Registerer
}

// Budget is shared by every handler that reads an unauthenticated body.
type Budget struct {
	o       Options
	refused *prometheus.CounterVec

	mu      sync.Mutex
	used    int64
	sources map[netip.Prefix]*source
}

type source struct {
	held  int64
	holds map[*hold]struct{}
}

// hold is one body's admitted bytes.
type hold struct {
	src  netip.Prefix
	n    int64
	cut  func() // ends the body's read at once
	gone bool   // released, or taken back by preemption
	// preempted: taken back for a source under its share.
	preempted bool
}

// Reasons a request is refused, as counted.
const (
	reasonBusy      = "busy"      // answered 503 unread
	reasonPreempted = "preempted" // cut off for a source under its share
	reasonSlow      = "too_slow"  // under the minimum rate
)

// New makes a budget.
func New(o Options) (*Budget, error) {
	if o.Total == 0 {
		o.Total = DefaultTotal
	}
	if o.MinRate == 0 {
		o.MinRate = DefaultMinRate
	}
	if o.Grace == 0 {
		o.Grace = DefaultGrace
	}
	if o.RetryAfter == 0 {
		o.RetryAfter = DefaultRetryAfter
	}
	if o.Total < 0 || o.MinRate < 0 || o.Grace < 0 || o.RetryAfter < 0 {
		return nil, fmt.Errorf("body budget: negative option in %+v", o)
	}
	if o.IPv6Prefix < 0 || o.IPv6Prefix > 128 {
		return nil, fmt.Errorf("body budget: IPv6 prefix /%d: want 1 to 128", o.IPv6Prefix)
	}
	b := &Budget{o: o, sources: map[netip.Prefix]*source{},
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_body_budget_refused_total",
			Help: "Requests refused by the budget for unauthenticated bodies: busy (503 unread), preempted (503, cut off for a source under its share), too_slow (under the minimum rate).",
		}, []string{"reason"})}
	for _, r := range []string{reasonBusy, reasonPreempted, reasonSlow} {
		b.refused.WithLabelValues(r)
	}
	if o.Registry != nil {
		held := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "bot_body_budget_bytes",
			Help: "Bytes admitted for request bodies being read before their signature is verified.",
		}, func() float64 { return float64(b.Used()) })
		for _, c := range []prometheus.Collector{b.refused, held} {
			if err := o.Registry.Register(c); err != nil {
				return nil, fmt.Errorf("body budget: register metrics: %w", err)
			}
		}
	}
	return b, nil
}

// Total is the budget's size in bytes.
func (b *Budget) Total() int64 { return b.o.Total }

// Used is how many bytes bodies being read hold now.
func (b *Budget) Used() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.used
}

// Sources is how many sources hold bytes now.
func (b *Budget) Sources() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.sources)
}

type ctxKey struct{}

// Handler makes the budget the one Read spends for every request to h.
func (b *Budget) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, b)))
	})
}

// Read reads r's body, at most max bytes, spending the budget Handler
// attached (none: a plain bounded read). Errors: *http.MaxBytesError
// (answer 413), ErrBusy (503), ErrTooSlow, or the read's own.
func Read(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if r.ContentLength > max {
		return nil, &http.MaxBytesError{Limit: max}
	}
	b, _ := r.Context().Value(ctxKey{}).(*Budget)
	if b == nil {
		body, err := io.ReadAll(io.LimitReader(r.Body, max+1))
		if err == nil && int64(len(body)) > max {
			return nil, &http.MaxBytesError{Limit: max}
		}
		return body, err
	}
	return b.read(w, r, max)
}

func (b *Budget) read(w http.ResponseWriter, r *http.Request, max int64) (_ []byte, err error) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return []byte{}, nil
	}
	rc := http.NewResponseController(w)
	start := time.Now()
	// One byte past the length, or past max, so that the read sees the
	// end of the body (or a body over max) without another buffer.
	want := int64(step)
	if r.ContentLength > 0 {
		want = r.ContentLength + 1
	}
	want = min(want, max+1)
	h := &hold{src: connlimit.SourcePrefix(r.RemoteAddr, b.o.IPv6Prefix), cut: func() { _ = rc.SetReadDeadline(time.Now()) }}
	if !b.acquire(h, want) {
		_ = rc.SetReadDeadline(time.Now()) // see the deadline below
		return nil, b.busy(w, reasonBusy)
	}
	// Deferred in this order so the bytes are given back first and the
	// deadline set last stays (net/http keeps a read pending past the
	// body). A refused body stays refused: net/http would otherwise read
	// up to 256 KiB more of it at the sender's pace.
	defer func() {
		var until time.Time // the server's own bound back, for the rest of the request
		switch {
		case err != nil:
			until = time.Now()
		case b.o.ReadTimeout > 0:
			until = start.Add(b.o.ReadTimeout)
		}
		_ = rc.SetReadDeadline(until)
	}()
	defer b.release(h)
	// Never pooled: after an attack the memory is the collector's to return.
	buf := make([]byte, 0, want)
	for {
		if len(buf) == cap(buf) {
			if int64(len(buf)) > max {
				return nil, &http.MaxBytesError{Limit: max}
			}
			more := min(int64(cap(buf)), max+1-int64(cap(buf)))
			if !b.acquire(h, more) {
				if b.wasPreempted(h) {
					return nil, b.busy(w, "") // counted when it was preempted
				}
				return nil, b.busy(w, reasonBusy)
			}
			grown := make([]byte, len(buf), int64(cap(buf))+more)
			copy(grown, buf)
			buf = grown
		}
		// Every byte received buys 1/MinRate more time: a body must
		// average MinRate once the grace is spent.
		earned := time.Duration(float64(len(buf)) / float64(b.o.MinRate) * float64(time.Second))
		_ = rc.SetReadDeadline(start.Add(b.o.Grace + earned))
		// A cut that came before this deadline was set would be undone
		// by it: preempted is set before the cut, so it is seen here.
		if b.wasPreempted(h) {
			return nil, b.busy(w, "") // counted when it was preempted
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > max {
			return nil, &http.MaxBytesError{Limit: max}
		}
		switch {
		case err == io.EOF:
			return buf, nil
		case err == nil:
			continue
		case b.wasPreempted(h):
			return nil, b.busy(w, "") // counted when it was preempted
		case isTimeout(err):
			b.refused.WithLabelValues(reasonSlow).Inc()
			w.Header().Set("Connection", "close") // see the deadline above
			return nil, fmt.Errorf("%w: %d bytes in %s", ErrTooSlow, len(buf), time.Since(start).Round(time.Millisecond))
		default:
			return nil, err
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// busy sets a 503's headers (Connection: close, so net/http reads no
// more of the body), counts reason unless "", and returns ErrBusy.
func (b *Budget) busy(w http.ResponseWriter, reason string) error {
	if reason != "" {
		b.refused.WithLabelValues(reason).Inc()
	}
	secs := int64((b.o.RetryAfter + time.Second - 1) / time.Second)
	w.Header().Set("Retry-After", strconv.FormatInt(secs, 10))
	w.Header().Set("Connection", "close")
	return ErrBusy
}

// acquire admits n more bytes for h, preempting sources over their share
// if h's is under its own; false: not admitted.
func (b *Budget) acquire(h *hold, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if h.gone {
		return false
	}
	s := b.sources[h.src]
	if b.used+n > b.o.Total {
		k, held := int64(len(b.sources)), int64(0)
		if s == nil {
			k++
		} else {
			held = s.held
		}
		share := b.o.Total / k
		if held+n > share {
			return false
		}
		// The others hold more than their shares together: take back the
		// largest body of the source holding the most until n fits.
		for b.used+n > b.o.Total {
			v := b.victim(h.src)
			if v == nil {
				return false
			}
			b.drop(v)
			v.preempted = true
			v.cut()
			b.refused.WithLabelValues(reasonPreempted).Inc()
		}
	}
	if s == nil {
		s = &source{holds: map[*hold]struct{}{}}
		b.sources[h.src] = s
	}
	s.holds[h] = struct{}{}
	s.held += n
	h.n += n
	b.used += n
	return true
}

// victim is the largest body of the source holding the most, other than
// not (nil: none). Called with b.mu held.
func (b *Budget) victim(not netip.Prefix) *hold {
	var top *source
	for p, s := range b.sources {
		if p != not && (top == nil || s.held > top.held) {
			top = s
		}
	}
	if top == nil {
		return nil
	}
	var v *hold
	for h := range top.holds {
		if v == nil || h.n > v.n {
			v = h
		}
	}
	return v
}

// drop gives h's bytes back. Called with b.mu held.
func (b *Budget) drop(h *hold) {
	if h.gone {
		return
	}
	h.gone = true
	s := b.sources[h.src]
	if s == nil {
		return
	}
	delete(s.holds, h)
	s.held -= h.n
	b.used -= h.n
	if len(s.holds) == 0 {
		delete(b.sources, h.src) // the map holds only sources holding bytes
	}
}

func (b *Budget) release(h *hold) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.drop(h)
}

func (b *Budget) wasPreempted(h *hold) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return h.preempted
}
