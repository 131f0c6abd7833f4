// Package tcpproxytest stands a loopback TCP proxy between a test's client
// and a server, so the test can take the server away (refuse, cut, or
// blackhole connections) and give it back at the same address.
package tcpproxytest

import (
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Proxy passes connections on a loopback port through to a target.
type Proxy struct {
	target    string
	blackhole atomic.Bool

	mu    sync.Mutex
	addr  string
	ln    net.Listener
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// Start proxies a free loopback port to target (host:port) until the test
// ends, then cuts every connection and waits for its goroutines.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	p := &Proxy{target: target, addr: "127.0.0.1:0", conns: map[net.Conn]bool{}}
	p.Listen(t)
	t.Cleanup(func() {
		p.Refuse()
		p.Cut()
		p.wg.Wait()
	})
	return p
}

// HostPort is where the proxy listens, the same across Refuse and Listen.
func (p *Proxy) HostPort() (host, port string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	host, port, _ = net.SplitHostPort(p.addr)
	return host, port
}

// Listen accepts connections (again) at the proxy's address; it fails the
// test if the proxy listens already.
func (p *Proxy) Listen(t testing.TB) {
	t.Helper()
	p.mu.Lock()
	addr := p.addr
	p.mu.Unlock()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("proxy listen on %s: %v", addr, err)
	}
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if p.blackhole.Load() {
				p.track(c)
				continue
			}
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				c.Close()
				continue
			}
			p.track(c)
			p.track(s)
			p.wg.Go(func() { pipe(c, s) })
			p.wg.Go(func() { pipe(s, c) })
		}
	})
}

// pipe copies one way; when either side ends, both do.
func pipe(dst, src net.Conn) {
	io.Copy(dst, src)
	dst.Close()
	src.Close()
}

func (p *Proxy) track(c net.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.conns[c] = true
}

// Refuse refuses new connections until Listen; open ones stay open.
func (p *Proxy) Refuse() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
}

// Cut closes every connection through the proxy.
func (p *Proxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Blackhole makes the server unresponsive rather than unreachable: while
// on, new connections are held open but never reach the target.
func (p *Proxy) Blackhole(on bool) { p.blackhole.Store(on) }
