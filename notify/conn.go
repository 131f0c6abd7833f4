package notify

import (
	"context"
	"net"
	"sync"
	"time"
)

// boundedConn keeps every deadline it is given, or an empty one, within
// wait from now, and expires the connection when ctx ends, so a blocked
// read or write returns at once. go-smtp takes no context and leaves the
// body's writes without a deadline: docs/design.md#smtp-sessions. It
// wraps the TCP connection under TLS, so tls.Conn's deadlines reach it.
type boundedConn struct {
	net.Conn

	mu      sync.Mutex
	wait    time.Duration // the longest any one read or write may block
	expired bool          // the context ended
	stop    func() bool   // stops the context watch
}

// expiredAt is a deadline in the past: it fails pending and later I/O.
var expiredAt = time.Unix(1, 0)

func newBoundedConn(ctx context.Context, c net.Conn, wait time.Duration) *boundedConn {
	b := &boundedConn{Conn: c, wait: wait}
	b.stop = context.AfterFunc(ctx, func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.expired = true
		_ = b.Conn.SetDeadline(expiredAt)
	})
	_ = b.SetDeadline(time.Time{}) // bound the first exchange (TLS handshake, greeting)
	return b
}

// setWait changes how long one read or write may block, from now on; the
// wait after the end of DATA is longer than a command's.
func (b *boundedConn) setWait(d time.Duration) {
	b.mu.Lock()
	b.wait = d
	b.mu.Unlock()
	_ = b.SetDeadline(time.Time{})
}

func (b *boundedConn) bound(t time.Time) time.Time {
	if b.expired {
		return expiredAt
	}
	if most := time.Now().Add(b.wait); t.IsZero() || t.After(most) {
		return most
	}
	return t
}

func (b *boundedConn) SetDeadline(t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Conn.SetDeadline(b.bound(t))
}

func (b *boundedConn) SetReadDeadline(t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Conn.SetReadDeadline(b.bound(t))
}

func (b *boundedConn) SetWriteDeadline(t time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.Conn.SetWriteDeadline(b.bound(t))
}

func (b *boundedConn) Close() error {
	b.stop()
	return b.Conn.Close()
}
