// Package smtpconf holds the SMTP settings the mailer takes and the
// rules they must meet: the one place those rules live. The
// configuration file's decoder reports each broken rule at its line; the
// mailer refuses settings that break any.
package smtpconf

import (
	"fmt"
	"net"
	"net/mail"
	"strconv"
	"strings"
)

// Transport security: STARTTLS after connecting, TLS from the first byte,
// or none (allowed only to a loopback address, since credentials and
// approval content would otherwise cross the network in clear).
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "tls"
	TLSNone     = "none"
)

// redacted stands for a value that holds the password.
const redacted = "<secret>"

// Settings are how the mailer reaches the SMTP server.
type Settings struct {
	// Addr is host:port.
	Addr string
	// TLS is TLSStartTLS, TLSImplicit or TLSNone.
	TLS      string
	Username string
	Password string
	// From is the From header, display name allowed.
	From string
}

// loopback reports whether host never leaves the machine.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Problem is one way SMTP settings are unusable. Key is the setting at
// fault, a key of the smtp section: addr, tls, from, username or password
// (for a username without a password, or the reverse, the one that is
// set). Msg says what is wrong without the key, the way a problem in the
// file reads after "smtp.KEY: "; it never holds the password.
type Problem struct {
	Key string
	Msg string
}

// Error is the problem as "smtp.KEY: MSG", the path the file gives it.
func (p Problem) Error() string { return "smtp." + p.Key + ": " + p.Msg }

// Problems checks SMTP settings against the rules for sending mail, in
// the order addr, tls, from, username and password, and returns nil when
// they are usable:
//
//   - addr is host:port, with a host and a numeric port;
//   - tls is TLSStartTLS, TLSImplicit or TLSNone, and TLSNone only to a
//     loopback host : credentials and approval content must
//     not cross a network in clear text;
//   - from parses as an address (display name allowed);
//   - username and password are both set or both empty.
//
// It is the one place these rules live: the decoder reports each problem at
// the line of its key, and the mailer refuses settings with any.
// Messages quote addr, tls and from as given, but a value holding the
// password is shown as "<secret>"; username and password are never quoted.
func (s Settings) Problems() []Problem {
	var ps []Problem
	add := func(key, format string, args ...any) {
		ps = append(ps, Problem{Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	host, ok := smtpHost(s.Addr)
	if !ok {
		add("addr", "%q is not host:port (like smtp.acme.example:587)", s.shown(s.Addr))
	}
	switch s.TLS {
	case TLSStartTLS, TLSImplicit:
	case TLSNone:
		if ok && !loopback(host) {
			add("tls", "none is allowed only to a loopback address, not %s", s.shown(host))
		}
	default:
		add("tls", "%q is not one of %s, %s, %s", s.shown(s.TLS), TLSStartTLS, TLSImplicit, TLSNone)
	}
	if _, err := mail.ParseAddress(s.From); err != nil {
		add("from", "%q is not an address (like Approvals <approvals@acme.example>)", s.shown(s.From))
	}
	if (s.Username == "") != (s.Password == "") {
		key := "username"
		if s.Username == "" {
			key = "password"
		}
		add(key, "username and password go together: set both or neither")
	}
	return ps
}

// smtpHost returns the host of a host:port addr, and whether addr is one:
// a host and a port number.
func smtpHost(addr string) (string, bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "", false
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", false
	}
	return host, true
}

// shown is v as a problem may quote it: "<secret>" when it holds the
// password (a password pasted into the wrong setting).
func (s Settings) shown(v string) string {
	if pw := s.Password; pw != "" && strings.Contains(v, pw) {
		return redacted
	}
	return v
}
