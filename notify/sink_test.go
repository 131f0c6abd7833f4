package notify

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// sinkTLS is how a sink serves: plain (no STARTTLS offered), with
// STARTTLS, or TLS from the first byte.
type sinkTLS int

const (
	sinkPlain sinkTLS = iota
	sinkStartTLS
	sinkImplicit
)

// sinkOptions configures a sink.
type sinkOptions struct {
	TLS               sinkTLS
	AllowInsecureAuth bool
	// Username and Password are what AUTH PLAIN accepts; empty offers no AUTH.
	Username, Password string
	// RcptErr and DataErr, when set, reject RCPT and the message.
	RcptErr, DataErr error
}

// received is one mail a sink accepted.
type received struct {
	From  string
	To    []string
	Data  []byte
	TLS   bool   // the session ran over TLS
	Helo  string // the last EHLO name
	Login string // the user it authenticated as, "" without AUTH
}

// credentials is one AUTH PLAIN attempt a sink saw.
type credentials struct{ Username, Password string }

// sink is an in-process SMTP server on 127.0.0.1 that records what it is
// told, for tests of the real protocol.
type sink struct {
	Addr string
	opts sinkOptions

	mu    sync.Mutex
	mails []received
	auths []credentials
}

func startSink(t *testing.T, o sinkOptions) *sink {
	t.Helper()
	s := &sink{opts: o}
	srv := smtp.NewServer(smtp.BackendFunc(s.newSession))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = o.AllowInsecureAuth
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	srv.ErrorLog = log.New(io.Discard, "", 0)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	switch o.TLS {
	case sinkStartTLS:
		srv.TLSConfig = testCert(t).server
	case sinkImplicit:
		srv.TLSConfig = testCert(t).server
		l = tls.NewListener(l, srv.TLSConfig)
	}
	s.Addr = l.Addr().String()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	return s
}

func (s *sink) Mails() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.mails...)
}

func (s *sink) Auths() []credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]credentials(nil), s.auths...)
}

func (s *sink) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &sinkSession{sink: s, conn: c}, nil
}

type sinkSession struct {
	sink  *sink
	conn  *smtp.Conn
	login string
	mail  received
}

var _ smtp.AuthSession = (*sinkSession)(nil)

func (ss *sinkSession) AuthMechanisms() []string {
	if ss.sink.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *sinkSession) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		ss.sink.mu.Lock()
		ss.sink.auths = append(ss.sink.auths, credentials{username, password})
		ss.sink.mu.Unlock()
		if username != ss.sink.opts.Username || password != ss.sink.opts.Password {
			return smtp.ErrAuthFailed
		}
		ss.login = username
		return nil
	}), nil
}

func (ss *sinkSession) Mail(from string, _ *smtp.MailOptions) error {
	if ss.sink.opts.Username != "" && ss.login == "" {
		return smtp.ErrAuthRequired
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.mail = received{From: from, TLS: isTLS, Helo: ss.conn.Hostname(), Login: ss.login}
	return nil
}

func (ss *sinkSession) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.sink.opts.RcptErr; err != nil {
		return err
	}
	ss.mail.To = append(ss.mail.To, to)
	return nil
}

func (ss *sinkSession) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if err := ss.sink.opts.DataErr; err != nil {
		return err
	}
	ss.mail.Data = b
	ss.sink.mu.Lock()
	ss.sink.mails = append(ss.sink.mails, ss.mail)
	ss.sink.mu.Unlock()
	return nil
}

func (ss *sinkSession) Reset()        { ss.mail = received{} }
func (ss *sinkSession) Logout() error { return nil }

// silentServer accepts connections and never says a word, until the test ends.
func silentServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String()
}

// certs is a self-signed certificate for 127.0.0.1 and localhost: the
// server's configuration and a client configuration trusting it.
type certs struct {
	server, client *tls.Config
}

var (
	certOnce sync.Once
	certVal  certs
	certErr  error
)

func testCert(t *testing.T) certs {
	t.Helper()
	certOnce.Do(func() { certVal, certErr = makeCert() })
	if certErr != nil {
		t.Fatal(certErr)
	}
	return certs{server: certVal.server.Clone(), client: certVal.client.Clone()}
}

func makeCert() (certs, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return certs{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "notify test sink"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return certs{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return certs{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return certs{
		server: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}, MinVersion: tls.VersionTLS12},
		client: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}, nil
}
