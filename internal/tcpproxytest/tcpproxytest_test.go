package tcpproxytest_test

import (
	"bufio"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"

	"approvalsbot/internal/tcpproxytest"
)

// echoServer answers every line it reads with the same line, on a
// loopback port, until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Go(func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if _, err := c.Write([]byte(line)); err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}

func dial(t *testing.T, p *tcpproxytest.Proxy) (net.Conn, error) {
	t.Helper()
	host, port := p.HostPort()
	c, err := net.DialTimeout("tcp", net.JoinHostPort(host, port), 5*time.Second)
	if err == nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, err
}

// roundTrip sends a line and returns what comes back before deadline.
func roundTrip(c net.Conn, line string, deadline time.Duration) (string, error) {
	c.SetDeadline(time.Now().Add(deadline))
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func TestProxyPassesCutsRefusesAndComesBackAtTheSameAddress(t *testing.T) {
	t.Parallel()
	p := tcpproxytest.Start(t, echoServer(t))
	host, port := p.HostPort()
	if host != "127.0.0.1" || port == "" || port == "0" {
		t.Fatalf("listens on %s:%s, want a loopback port", host, port)
	}

	c, err := dial(t, p)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got, err := roundTrip(c, "hello", 5*time.Second); err != nil || got != "hello" {
		t.Fatalf("through the proxy: %q, %v", got, err)
	}

	p.Cut()
	if _, err := roundTrip(c, "after cut", 5*time.Second); err == nil {
		t.Fatal("a cut connection still answers")
	}

	p.Refuse()
	if c, err := dial(t, p); err == nil {
		c.Close()
		t.Fatal("a refusing proxy accepted a connection")
	}

	p.Listen(t)
	if h, pt := p.HostPort(); h != host || pt != port {
		t.Fatalf("back at %s:%s, want %s:%s", h, pt, host, port)
	}
	c, err = dial(t, p)
	if err != nil {
		t.Fatalf("dial after Listen: %v", err)
	}
	if got, err := roundTrip(c, "again", 5*time.Second); err != nil || got != "again" {
		t.Fatalf("after Listen: %q, %v", got, err)
	}
}

func TestBlackholeAcceptsButNeverAnswers(t *testing.T) {
	t.Parallel()
	p := tcpproxytest.Start(t, echoServer(t))
	p.Blackhole(true)
	c, err := dial(t, p)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	// A negative: nothing comes back within a short wait.
	if _, err := roundTrip(c, "anyone?", 100*time.Millisecond); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a blackholed connection: %v, want a timeout", err)
	}

	p.Blackhole(false)
	c2, err := dial(t, p)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	if got, err := roundTrip(c2, "back", 5*time.Second); err != nil || got != "back" {
		t.Fatalf("after the blackhole: %q, %v", got, err)
	}
	p.Cut()
	if _, err := roundTrip(c, "still?", 5*time.Second); err == nil {
		t.Fatal("Cut leaves a blackholed connection open")
	}
}
