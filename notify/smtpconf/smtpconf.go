// Package smtpconf holds the mailer's SMTP settings and the one copy of
// their rules: the config decoder reports each at its line, the mailer
// refuses settings that break any.
package smtpconf

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"strconv"
	"strings"

	"approvalsbot/internal/secret"
)

// Transport security: STARTTLS, TLS from the first byte, or none (only
// to a loopback address: nothing crosses a network in clear).
const (
	TLSStartTLS = "starttls"
	TLSImplicit = "tls"
	TLSNone     = "none"
)

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

// settingsFields is Settings without its methods, for Format to print.
type settingsFields Settings

// shownFields is s with a password as "<secret>".
func (s Settings) shownFields() settingsFields {
	if s.Password != "" {
		s.Password = secret.Shown
	}
	return settingsFields(s)
}

// Format prints the settings with the password as "<secret>".
func (s Settings) Format(f fmt.State, verb rune) {
	_, _ = fmt.Fprintf(f, fmt.FormatString(f, verb), s.shownFields())
}

// LogValue gives slog the settings with the password as "<secret>".
func (s Settings) LogValue() slog.Value {
	c := s.shownFields()
	return slog.GroupValue(slog.String("addr", c.Addr), slog.String("tls", c.TLS),
		slog.String("username", c.Username), slog.String("password", c.Password), slog.String("from", c.From))
}

// MarshalJSON encodes the settings with the password as "<secret>".
func (s Settings) MarshalJSON() ([]byte, error) { return json.Marshal(s.shownFields()) }

// Loopback reports whether host never leaves the machine (localhost or a
// loopback IP): the one rule for where clear text may go, SMTP without
// TLS here and, through config.LoopbackHost, a decision page over http.
func Loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Problem is one way SMTP settings are unusable: Key is the smtp
// section's key at fault, Msg what is wrong, never holding the password.
type Problem struct {
	Key string
	Msg string
}

// Error is the problem as "smtp.KEY: MSG", the path the file gives it.
func (p Problem) Error() string { return "smtp." + p.Key + ": " + p.Msg }

// Problems checks the settings, in key order, and is nil when they are
// usable: addr is host:port; tls is one of the TLS constants, TLSNone
// only to a loopback host; from is an address; username and password go
// together. A value holding the password is quoted as "<secret>".
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
		if ok && !Loopback(host) {
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

// smtpHost returns addr's host, and whether addr is host:port.
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
		return secret.Shown
	}
	return v
}
