package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
	"approvalsbot/notify/smtpconf"
)

const smtpTestPassword = "smtp-pw-Qx7!rule-9090"

// smtpOK is settings with no problem, which each case spoils.
func smtpOK(spoil func(*config.SMTP)) *config.SMTP {
	s := &config.SMTP{Addr: "smtp.acme.example:587", TLS: smtpconf.TLSStartTLS, From: "Approvals <approvals@acme.example>"}
	if spoil != nil {
		spoil(s)
	}
	return s
}

func TestSMTPProblems(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		s    *config.SMTP
		want []smtpconf.Problem
	}{
		{"starttls", smtpOK(nil), nil},
		{"tls with credentials", smtpOK(func(s *config.SMTP) {
			s.TLS, s.Username, s.Password = smtpconf.TLSImplicit, "u", smtpTestPassword
		}), nil},
		{"none to 127.0.0.1", smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "127.0.0.1:25", smtpconf.TLSNone }), nil},
		{"none to localhost", smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "LocalHost:25", smtpconf.TLSNone }), nil},
		{"none to ::1", smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "[::1]:25", smtpconf.TLSNone }), nil},
		{"no port", smtpOK(func(s *config.SMTP) { s.Addr = "smtp.acme.example" }), []smtpconf.Problem{
			{Key: "addr", Msg: `"smtp.acme.example" is not host:port (like smtp.acme.example:587)`},
		}},
		{"port not a number", smtpOK(func(s *config.SMTP) { s.Addr = "smtp.acme.example:smtp" }), []smtpconf.Problem{
			{Key: "addr", Msg: `"smtp.acme.example:smtp" is not host:port (like smtp.acme.example:587)`},
		}},
		{"port out of range", smtpOK(func(s *config.SMTP) { s.Addr = "smtp.acme.example:65536" }), []smtpconf.Problem{
			{Key: "addr", Msg: `"smtp.acme.example:65536" is not host:port (like smtp.acme.example:587)`},
		}},
		{"no host", smtpOK(func(s *config.SMTP) { s.Addr = ":587" }), []smtpconf.Problem{
			{Key: "addr", Msg: `":587" is not host:port (like smtp.acme.example:587)`},
		}},
		{"empty", &config.SMTP{}, []smtpconf.Problem{
			{Key: "addr", Msg: `"" is not host:port (like smtp.acme.example:587)`},
			{Key: "tls", Msg: `"" is not one of starttls, tls, none`},
			{Key: "from", Msg: `"" is not an address (like Approvals <approvals@acme.example>)`},
		}},
		{"unknown tls", smtpOK(func(s *config.SMTP) { s.TLS = "ssl" }), []smtpconf.Problem{
			{Key: "tls", Msg: `"ssl" is not one of starttls, tls, none`},
		}},
		{"none to a remote host", smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "smtp.acme.example:25", smtpconf.TLSNone }), []smtpconf.Problem{
			{Key: "tls", Msg: "none is allowed only to a loopback address, not smtp.acme.example"},
		}},
		{"none to a LAN address", smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "192.0.2.10:25", smtpconf.TLSNone }), []smtpconf.Problem{
			{Key: "tls", Msg: "none is allowed only to a loopback address, not 192.0.2.10"},
		}},
		// A bad addr is its own problem; where it would go is not known.
		{"none to a bad addr", smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "smtp.acme.example", smtpconf.TLSNone }), []smtpconf.Problem{
			{Key: "addr", Msg: `"smtp.acme.example" is not host:port (like smtp.acme.example:587)`},
		}},
		{"bad from", smtpOK(func(s *config.SMTP) { s.From = "approvals" }), []smtpconf.Problem{
			{Key: "from", Msg: `"approvals" is not an address (like Approvals <approvals@acme.example>)`},
		}},
		{"username without password", smtpOK(func(s *config.SMTP) { s.Username = "u" }), []smtpconf.Problem{
			{Key: "username", Msg: "username and password go together: set both or neither"},
		}},
		{"password without username", smtpOK(func(s *config.SMTP) { s.Password = smtpTestPassword }), []smtpconf.Problem{
			{Key: "password", Msg: "username and password go together: set both or neither"},
		}},
		// A password pasted into another setting is not quoted back.
		{"password as from", smtpOK(func(s *config.SMTP) { s.Username, s.Password, s.From = "u", smtpTestPassword, smtpTestPassword }), []smtpconf.Problem{
			{Key: "from", Msg: `"<secret>" is not an address (like Approvals <approvals@acme.example>)`},
		}},
		{"password in addr and tls", smtpOK(func(s *config.SMTP) {
			s.Username, s.Password = "u", smtpTestPassword
			s.Addr, s.TLS = "smtp.acme.example/"+smtpTestPassword, "x"+smtpTestPassword
		}), []smtpconf.Problem{
			{Key: "addr", Msg: `"<secret>" is not host:port (like smtp.acme.example:587)`},
			{Key: "tls", Msg: `"<secret>" is not one of starttls, tls, none`},
		}},
		{"password as host", smtpOK(func(s *config.SMTP) {
			s.Username, s.Password = "u", smtpTestPassword
			s.Addr, s.TLS = smtpTestPassword+":25", smtpconf.TLSNone
		}), []smtpconf.Problem{
			{Key: "tls", Msg: "none is allowed only to a loopback address, not <secret>"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := tc.s.Settings().Problems()
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Problems (-want +got):\n%s", diff)
			}
			for _, p := range got {
				if strings.Contains(p.Error(), smtpTestPassword) {
					t.Errorf("problem shows the password: %s", p)
				}
				if want := "smtp." + p.Key + ": " + p.Msg; p.Error() != want {
					t.Errorf("Error() = %q, want %q", p.Error(), want)
				}
			}
		})
	}
}

// smtpYAML writes s as an smtp section after base: addr, tls and from on
// lines 12 to 14, then username and password when set, the password from
// ${SMTP_PASSWORD}. line gives the line of each key.
func smtpYAML(s *config.SMTP) (text string, line map[string]int) {
	var b strings.Builder
	b.WriteString(base + "smtp:\n")
	line = map[string]int{}
	n := strings.Count(base, "\n") + 2
	put := func(key, value string) {
		fmt.Fprintf(&b, "  %s: %s\n", key, value)
		line[key] = n
		n++
	}
	put("addr", fmt.Sprintf("%q", s.Addr))
	put("tls", fmt.Sprintf("%q", s.TLS))
	put("from", fmt.Sprintf("%q", s.From))
	if s.Username != "" {
		put("username", fmt.Sprintf("%q", s.Username))
	}
	if s.Password != "" {
		put("password", "${SMTP_PASSWORD}")
	}
	return b.String(), line
}

// TestSMTPDecoderUsesProblems checks the decoder reports what Problems
// finds, each at the line of its key, and nothing of its own for values
// it could read.
func TestSMTPDecoderUsesProblems(t *testing.T) {
	t.Parallel()
	for name, s := range map[string]*config.SMTP{
		"no port":                    smtpOK(func(s *config.SMTP) { s.Addr = "smtp.acme.example" }),
		"no host":                    smtpOK(func(s *config.SMTP) { s.Addr = ":587" }),
		"empty addr, tls and from":   &config.SMTP{},
		"unknown tls":                smtpOK(func(s *config.SMTP) { s.TLS = "ssl" }),
		"none to a remote host":      smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "192.0.2.10:25", smtpconf.TLSNone }),
		"bad from":                   smtpOK(func(s *config.SMTP) { s.From = "approvals" }),
		"username without password":  smtpOK(func(s *config.SMTP) { s.Username = "u" }),
		"password without username":  smtpOK(func(s *config.SMTP) { s.Password = smtpTestPassword }),
		"password as from":           smtpOK(func(s *config.SMTP) { s.Username, s.Password, s.From = "u", smtpTestPassword, smtpTestPassword }),
		"several":                    smtpOK(func(s *config.SMTP) { s.Addr, s.TLS, s.Username = "smtp.acme.example:25", smtpconf.TLSNone, "u" }),
		"accepted, with credentials": smtpOK(func(s *config.SMTP) { s.Username, s.Password = "u", smtpTestPassword }),
		"accepted, none to loopback": smtpOK(func(s *config.SMTP) { s.Addr, s.TLS = "127.0.0.1:2525", smtpconf.TLSNone }),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			text, line := smtpYAML(s)
			c, err := config.Parse("bot.yaml", []byte(text), baseEnv(map[string]string{"SMTP_PASSWORD": smtpTestPassword}))
			var want, got []string
			for _, p := range s.Settings().Problems() {
				want = append(want, fmt.Sprintf("bot.yaml:%d: %s", line[p.Key], p))
			}
			if err != nil {
				got = strings.Split(err.Error(), "\n")
				if strings.Contains(err.Error(), smtpTestPassword) {
					t.Errorf("a problem shows the password:\n%v", err)
				}
			} else if diff := cmp.Diff(s, c.SMTP); diff != "" {
				t.Errorf("decoded (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s\n%s", diff, text)
			}
		})
	}
}

// TestSMTPDecoderUnread checks a setting the decoder could not read, or
// that is missing, is reported once: not again by the rules, which see it
// empty.
func TestSMTPDecoderUnread(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, add string
		want      []string
	}{
		{"unset addr, and tls unknown", "smtp:\n  addr: ${UNSET}\n  tls: ssl\n  from: approvals@acme.example\n", []string{
			"bot.yaml:12: smtp.addr: environment variable UNSET is not set",
			`bot.yaml:13: smtp.tls: "ssl" is not one of starttls, tls, none`,
		}},
		{"addr not text, and tls none", "smtp:\n  addr: [smtp.acme.example]\n  tls: none\n  from: approvals@acme.example\n", []string{
			"bot.yaml:12: smtp.addr: expected a string, got a list",
		}},
		{"null addr and from", "smtp:\n  addr:\n  from: ~\n", []string{
			"bot.yaml:11: smtp.addr: missing: the SMTP server's host:port",
			"bot.yaml:11: smtp.from: missing: the From address",
		}},
		{"null tls is the default", "smtp:\n  addr: smtp.acme.example:25\n  tls:\n  from: approvals@acme.example\n", nil},
		{"tls not text", "smtp:\n  addr: smtp.acme.example:25\n  tls: true\n  from: approvals@acme.example\n", []string{
			"bot.yaml:13: smtp.tls: expected a string, got a boolean",
		}},
		{"unset from", "smtp:\n  addr: smtp.acme.example:25\n  from: ${UNSET}\n", []string{
			"bot.yaml:13: smtp.from: environment variable UNSET is not set",
		}},
		{"username with a password that failed", "smtp:\n  addr: smtp.acme.example:25\n  from: approvals@acme.example\n  username: u\n  password: ${UNSET}\n", []string{
			"bot.yaml:15: smtp.password: environment variable UNSET is not set",
		}},
		{"password with a username that failed", "smtp:\n  addr: smtp.acme.example:25\n  from: approvals@acme.example\n  username: [u]\n  password: ${SET}\n", []string{
			"bot.yaml:14: smtp.username: expected a string, got a list",
		}},
		{"null username is empty", "smtp:\n  addr: smtp.acme.example:25\n  from: approvals@acme.example\n  username:\n  password: ${SET}\n", []string{
			"bot.yaml:15: smtp.password: username and password go together: set both or neither",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, got := parse(t, base+tc.add)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}
