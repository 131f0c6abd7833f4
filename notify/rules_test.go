package notify

import (
	"approvalsbot/notify/smtpconf"
	"fmt"
	"slices"
	"strings"
	"testing"

	"approvalsbot/config"
	"approvalsbot/templates"
)

// rulesBase is the smallest bot.yaml the smtp section is added to.
const rulesBase = `backend:
  url: https://jobs.acme.example
  events_secrets: ["${EVENTS_SECRET}"]
  calls_secrets: ["${CALLS_SECRET}"]
slack:
  bot_token: ${SLACK_BOT_TOKEN}
  signing_secret: ${SLACK_SIGNING_SECRET}
tenants:
  acme:
    post: [slack:C0APPROVALS]
`

func rulesEnv(k string) (string, bool) {
	v, ok := map[string]string{
		"EVENTS_SECRET":        "events-secret-of-32-bytes-4a1c9e",
		"CALLS_SECRET":         "calls-secret-of-32-bytes-77b02d5f",
		"SLACK_BOT_TOKEN":      "xoxb-1",
		"SLACK_SIGNING_SECRET": "s",
		"SMTP_PASSWORD":        testPassword,
	}[k]
	return v, ok
}

// rulesYAML writes s as bot.yaml's smtp section, the password as
// ${SMTP_PASSWORD}.
func rulesYAML(s *config.SMTP) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%ssmtp:\n  addr: %q\n  tls: %q\n  from: %q\n", rulesBase, s.Addr, s.TLS, s.From)
	if s.Username != "" {
		fmt.Fprintf(&b, "  username: %q\n", s.Username)
	}
	if s.Password != "" {
		b.WriteString("  password: ${SMTP_PASSWORD}\n")
	}
	return b.String()
}

// TestOneSMTPRuleSet checks the config file and NewMailer refuse the same
// SMTP settings, for the same reasons (config's SMTP.Problems), and accept
// the same; and that neither error shows the password.
func TestOneSMTPRuleSet(t *testing.T) {
	t.Parallel()
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ok := func(spoil func(*config.SMTP)) *config.SMTP {
		s := &config.SMTP{Addr: "smtp.acme.example:587", TLS: smtpconf.TLSStartTLS, From: testFrom, Username: testUser, Password: testPassword}
		if spoil != nil {
			spoil(s)
		}
		return s
	}
	tests := []struct {
		name   string
		s      *config.SMTP
		refuse bool
	}{
		{"starttls with credentials", ok(nil), false},
		{"tls without credentials", ok(func(s *config.SMTP) { s.TLS, s.Username, s.Password = smtpconf.TLSImplicit, "", "" }), false},
		{"none to 127.0.0.1", ok(func(s *config.SMTP) { s.Addr, s.TLS = "127.0.0.1:2525", smtpconf.TLSNone }), false},
		{"none to localhost", ok(func(s *config.SMTP) { s.Addr, s.TLS = "localhost:25", smtpconf.TLSNone }), false},
		{"none to ::1", ok(func(s *config.SMTP) { s.Addr, s.TLS = "[::1]:25", smtpconf.TLSNone }), false},
		{"addr without port", ok(func(s *config.SMTP) { s.Addr = "smtp.acme.example" }), true},
		{"addr without host", ok(func(s *config.SMTP) { s.Addr = ":587" }), true},
		{"addr with a named port", ok(func(s *config.SMTP) { s.Addr = "smtp.acme.example:submission" }), true},
		{"addr port out of range", ok(func(s *config.SMTP) { s.Addr = "smtp.acme.example:99999" }), true},
		{"empty addr", ok(func(s *config.SMTP) { s.Addr = "" }), true},
		{"unknown tls", ok(func(s *config.SMTP) { s.TLS = "ssl" }), true},
		{"empty tls", ok(func(s *config.SMTP) { s.TLS = "" }), true},
		{"none to a remote host", ok(func(s *config.SMTP) { s.Addr, s.TLS = "smtp.acme.example:25", smtpconf.TLSNone }), true},
		{"none to a LAN address", ok(func(s *config.SMTP) { s.Addr, s.TLS = "192.0.2.10:25", smtpconf.TLSNone }), true},
		{"bad from", ok(func(s *config.SMTP) { s.From = "approvals" }), true},
		{"empty from", ok(func(s *config.SMTP) { s.From = "" }), true},
		{"password as from", ok(func(s *config.SMTP) { s.From = testPassword }), true},
		{"password in addr", ok(func(s *config.SMTP) { s.Addr = testPassword + ":25" + "x" }), true},
		{"password as a remote host", ok(func(s *config.SMTP) { s.Addr, s.TLS = testPassword+":25", smtpconf.TLSNone }), true},
		{"username without password", ok(func(s *config.SMTP) { s.Password = "" }), true},
		{"password without username", ok(func(s *config.SMTP) { s.Username = "" }), true},
		{"everything", &config.SMTP{Addr: "smtp.acme.example", TLS: "maybe", From: "nobody", Password: testPassword}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			problems := tc.s.Settings().Problems()
			if refused := len(problems) > 0; refused != tc.refuse {
				t.Fatalf("Problems() = %v, want refused %v", problems, tc.refuse)
			}

			text := rulesYAML(tc.s)
			_, cerr := config.Parse("bot.yaml", []byte(text), rulesEnv)
			_, merr := NewMailer(Options{SMTP: tc.s.Settings(), Renderer: r})
			if !tc.refuse {
				if cerr != nil || merr != nil {
					t.Fatalf("refused: config %v; NewMailer %v", cerr, merr)
				}
				return
			}
			if cerr == nil || merr == nil {
				t.Fatalf("config refuses: %v; NewMailer refuses: %v; want both to", cerr, merr)
			}
			if !strings.HasPrefix(merr.Error(), "notify: ") {
				t.Errorf("NewMailer error %q is not prefixed notify:", merr)
			}
			// Config reports each problem, and only those, at a line.
			lines := strings.Split(cerr.Error(), "\n")
			if len(lines) != len(problems) {
				t.Errorf("config reports %d problems, the rules %d:\n%v\n%v", len(lines), len(problems), cerr, problems)
			}
			for _, p := range problems {
				if !slices.ContainsFunc(lines, func(l string) bool { return strings.HasPrefix(l, "bot.yaml:") && strings.HasSuffix(l, ": "+p.Error()) }) {
					t.Errorf("config does not report %q:\n%v", p, cerr)
				}
				if !strings.Contains(merr.Error(), p.Error()) {
					t.Errorf("NewMailer does not report %q:\n%v", p, merr)
				}
			}
			for what, err := range map[string]error{"config": cerr, "NewMailer": merr} {
				if strings.Contains(err.Error(), testPassword) || strings.Contains(fmt.Sprintf("%+v %#v", err, err), testPassword) {
					t.Errorf("%s error shows the password: %v", what, err)
				}
			}
		})
	}
}
