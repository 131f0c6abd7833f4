// Package smtptest is an in-process SMTP server on 127.0.0.1, built on
// go-smtp, that records every mail it accepts: the real protocol (EHLO,
// STARTTLS or TLS from the first byte, AUTH PLAIN, MAIL, RCPT, DATA) for
// tests of what the bot sends, and a server that never answers, for
// tests of its timeouts.
package smtptest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"sync"
	"testing"
	"time"

	gomail "github.com/emersion/go-message/mail"
	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// TLSMode is how a Sink serves: plain (no STARTTLS offered), with
// STARTTLS, or TLS from the first byte.
type TLSMode int

const (
	Plain TLSMode = iota
	StartTLS
	Implicit
)

// Options configures a Sink.
type Options struct {
	TLS               TLSMode
	AllowInsecureAuth bool
	// Username and Password are what AUTH PLAIN accepts; empty offers no AUTH.
	Username, Password string
	// RcptErr and DataErr, when set, reject RCPT and the message.
	RcptErr, DataErr error
}

// Received is one mail a Sink accepted.
type Received struct {
	From  string
	To    []string
	Data  []byte
	TLS   bool   // the session ran over TLS
	Helo  string // the last EHLO name
	Login string // the user it authenticated as, "" without AUTH
}

// Credentials is one AUTH PLAIN attempt a Sink saw.
type Credentials struct{ Username, Password string }

// Sink is an in-process SMTP server on 127.0.0.1 that records what it is
// told, for tests of the real protocol.
type Sink struct {
	Addr string
	opts Options

	mu    sync.Mutex
	mails []Received
	auths []Credentials
}

// Start serves until the test ends.
func Start(t testing.TB, o Options) *Sink {
	t.Helper()
	s := &Sink{opts: o}
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
	case StartTLS:
		srv.TLSConfig = Cert(t).Server
	case Implicit:
		srv.TLSConfig = Cert(t).Server
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

// Mails are the mails accepted so far, in order.
func (s *Sink) Mails() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Received(nil), s.mails...)
}

// Auths are the AUTH PLAIN attempts seen so far.
func (s *Sink) Auths() []Credentials {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Credentials(nil), s.auths...)
}

func (s *Sink) newSession(c *smtp.Conn) (smtp.Session, error) {
	return &session{sink: s, conn: c}, nil
}

type session struct {
	sink  *Sink
	conn  *smtp.Conn
	login string
	mail  Received
}

var _ smtp.AuthSession = (*session)(nil)

func (ss *session) AuthMechanisms() []string {
	if ss.sink.opts.Username == "" {
		return nil
	}
	return []string{sasl.Plain}
}

func (ss *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, username, password string) error {
		ss.sink.mu.Lock()
		ss.sink.auths = append(ss.sink.auths, Credentials{username, password})
		ss.sink.mu.Unlock()
		if username != ss.sink.opts.Username || password != ss.sink.opts.Password {
			return smtp.ErrAuthFailed
		}
		ss.login = username
		return nil
	}), nil
}

func (ss *session) Mail(from string, _ *smtp.MailOptions) error {
	if ss.sink.opts.Username != "" && ss.login == "" {
		return smtp.ErrAuthRequired
	}
	_, isTLS := ss.conn.TLSConnectionState()
	ss.mail = Received{From: from, TLS: isTLS, Helo: ss.conn.Hostname(), Login: ss.login}
	return nil
}

func (ss *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	if err := ss.sink.opts.RcptErr; err != nil {
		return err
	}
	ss.mail.To = append(ss.mail.To, to)
	return nil
}

func (ss *session) Data(r io.Reader) error {
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

func (ss *session) Reset()        { ss.mail = Received{} }
func (ss *session) Logout() error { return nil }

// Silent accepts connections and never says a word, until the test ends.
func Silent(t testing.TB) string {
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

// Certs is a self-signed certificate for 127.0.0.1 and localhost: the
// server's configuration and a client configuration trusting it.
type Certs struct {
	Server, Client *tls.Config
}

var (
	certOnce sync.Once
	certVal  Certs
	certErr  error
)

// Cert is the package's certificate, made once.
func Cert(t testing.TB) Certs {
	t.Helper()
	certOnce.Do(func() { certVal, certErr = makeCert() })
	if certErr != nil {
		t.Fatal(certErr)
	}
	return Certs{Server: certVal.Server.Clone(), Client: certVal.Client.Clone()}
}

func makeCert() (Certs, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Certs{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "smtptest sink"},
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
		return Certs{}, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return Certs{}, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(leaf)
	return Certs{
		Server: &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}}, MinVersion: tls.VersionTLS12},
		Client: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
	}, nil
}

// Message is a received mail read back as a mail client reads it, with
// go-message: its header and each inline part's decoded body.
type Message struct {
	Header gomail.Header
	Parts  map[string]string // content type → decoded body
}

// Parse reads raw as a mail client would; an attachment is an error (the
// bot sends none).
func Parse(raw []byte) (Message, error) {
	r, err := gomail.CreateReader(bytes.NewReader(raw))
	if err != nil {
		return Message{}, fmt.Errorf("read message: %w", err)
	}
	m := Message{Header: r.Header, Parts: map[string]string{}}
	for {
		p, err := r.NextPart()
		if err == io.EOF {
			return m, nil
		}
		if err != nil {
			return Message{}, fmt.Errorf("read part: %w", err)
		}
		h, ok := p.Header.(*gomail.InlineHeader)
		if !ok {
			return Message{}, fmt.Errorf("a part is an attachment: %v", p.Header)
		}
		ct, _, err := h.ContentType()
		if err != nil {
			return Message{}, err
		}
		b, err := io.ReadAll(p.Body)
		if err != nil {
			return Message{}, err
		}
		m.Parts[ct] = string(b)
	}
}
