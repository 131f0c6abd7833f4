package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/emersion/go-smtp"
	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/notify/smtpconf"
	"approvalsbot/notify/smtptest"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// testNow is the clock of every test mail.
var testNow = time.Date(2026, 11, 29, 18, 20, 0, 0, time.UTC)

const (
	testFrom     = "Approvals <approvals@acme.example>"
	testUser     = "approvals-bot"
	testPassword = "pw-Zq8!sekret-4711"
)

// mailerFor makes a Mailer for a sink at addr; tweak adjusts the options.
func mailerFor(t *testing.T, addr, mode string, tweak func(*Options)) *Mailer {
	t.Helper()
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o := Options{
		SMTP:           smtpconf.Settings{Addr: addr, TLS: mode, From: testFrom},
		Renderer:       r,
		Now:            func() time.Time { return testNow },
		TLSConfig:      testCert(t).client,
		CommandTimeout: 5 * time.Second,
	}
	if tweak != nil {
		tweak(&o)
	}
	m, err := NewMailer(o)
	if err != nil {
		t.Fatalf("NewMailer: %v", err)
	}
	return m
}

func withAuth(user, password string) func(*Options) {
	return func(o *Options) {
		o.SMTP.Username, o.SMTP.Password = user, password
	}
}

// fixtureCard is the pending card of a fixture event, and the event's bytes.
func fixtureCard(t *testing.T, name string) (threads.Card, []byte) {
	t.Helper()
	body, ev := threadstest.Event(t, name)
	if ev.Approval == nil {
		t.Fatalf("%s carries no approval", name)
	}
	return threads.Card{Tenant: ev.Approval.Tenant, Approval: ev.Approval, State: approval.StatePending, Now: testNow}, body
}

// parsedMail is a received message read back with go-message.
type parsedMail = smtptest.Message

func parseMail(t *testing.T, raw []byte) parsedMail {
	t.Helper()
	pm, err := smtptest.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return pm
}

// onlyMail is the one mail a sink received.
func onlyMail(t *testing.T, s *sink) received {
	t.Helper()
	mails := s.Mails()
	if len(mails) != 1 {
		t.Fatalf("sink received %d mails, want 1", len(mails))
	}
	return mails[0]
}

var messageIDPattern = regexp.MustCompile(`^a-merge1\.1\.2\.[0-9a-f]{16}@acme\.example$`)

func TestMailDeliversCardAsMultipart(t *testing.T) {
	t.Parallel()
	s := startSink(t, sinkOptions{})
	m := mailerFor(t, s.Addr, smtpconf.TLSNone, nil)
	card, _ := fixtureCard(t, "merge.json")

	id, err := m.Mail(context.Background(), threads.MailRequest{To: "Leads <leads@acme.example>", Card: card, Step: 2})
	if err != nil {
		t.Fatalf("Mail: %v", err)
	}
	if !messageIDPattern.MatchString(id) {
		t.Errorf("Message-ID %q does not match %v", id, messageIDPattern)
	}
	got := onlyMail(t, s)
	if got.From != "approvals@acme.example" || len(got.To) != 1 || got.To[0] != "leads@acme.example" {
		t.Errorf("envelope from %q to %q", got.From, got.To)
	}
	if got.Helo != "acme.example" {
		t.Errorf("EHLO %q, want the From address's domain", got.Helo)
	}
	pm := parseMail(t, got.Data)

	if from, err := pm.Header.AddressList("From"); err != nil || len(from) != 1 || from[0].Address != "approvals@acme.example" || from[0].Name != "Approvals" {
		t.Errorf("From %v, %v", from, err)
	}
	if to, err := pm.Header.AddressList("To"); err != nil || len(to) != 1 || to[0].Address != "leads@acme.example" {
		t.Errorf("To %v, %v", to, err)
	}
	const subject = "Approval needed: acme_github.merge · a-merge1"
	if subj, err := pm.Header.Subject(); err != nil || subj != subject {
		t.Errorf("Subject %q, %v; want %q", subj, err, subject)
	}
	if mid, err := pm.Header.MessageID(); err != nil || mid != id {
		t.Errorf("Message-ID header %q, %v; Mail returned %q", mid, err, id)
	}
	if d, err := pm.Header.Date(); err != nil || !d.Equal(testNow) {
		t.Errorf("Date %v, %v; want %v", d, err, testNow)
	}
	if v := pm.Header.Get("Auto-Submitted"); v != "auto-generated" {
		t.Errorf("Auto-Submitted %q", v)
	}
	for _, k := range []string{"In-Reply-To", "References"} {
		if pm.Header.Has(k) {
			t.Errorf("the first mail has %s: %q", k, pm.Header.Get(k))
		}
	}

	if len(pm.Parts) != 2 {
		t.Fatalf("parts %v, want text/plain and text/html", keys(pm.Parts))
	}
	facts := []string{
		"Waiting for a decision", "acme_github.merge", "DESTRUCTIVE", "j-42", "release-bot",
		"acme/api", "CI is green on #1234", "https://console.example/approvals/a-merge1",
	}
	for _, ct := range []string{"text/plain", "text/html"} {
		body, ok := pm.Parts[ct]
		if !ok {
			t.Errorf("no %s part", ct)
			continue
		}
		for _, f := range facts {
			if !strings.Contains(body, f) {
				t.Errorf("%s part lacks %q", ct, f)
			}
		}
	}
	if !strings.Contains(pm.Parts["text/html"], `href="https://console.example/approvals/a-merge1"`) {
		t.Error("HTML part does not link the console")
	}
}

// TestMailThreadsEachRecipientsOwnMails: a follow-up answers the mails
// its recipient received (In-Reply-To the latest, References the first
// and the latest), under the same subject with "Re: ".
func TestMailThreadsEachRecipientsOwnMails(t *testing.T) {
	t.Parallel()
	s := startSink(t, sinkOptions{})
	m := mailerFor(t, s.Addr, smtpconf.TLSNone, nil)
	card, _ := fixtureCard(t, "merge.json")
	ctx := context.Background()

	first, err := m.Mail(ctx, threads.MailRequest{To: "owner@acme.example", Card: card, Step: 2})
	if err != nil {
		t.Fatal(err)
	}
	second, err := m.Mail(ctx, threads.MailRequest{To: "owner@acme.example", Card: card, Step: 3,
		Thread: threads.MailThread{Root: first, Last: first}})
	if err != nil {
		t.Fatal(err)
	}
	third, err := m.Mail(ctx, threads.MailRequest{To: "owner@acme.example", Card: card, Kind: threads.MailOutcome,
		Thread: threads.MailThread{Root: first, Last: "<" + second + ">"}})
	if err != nil {
		t.Fatal(err)
	}
	if first == second || second == third {
		t.Fatalf("Message-IDs repeat: %q %q %q", first, second, third)
	}
	mails := s.Mails()
	if len(mails) != 3 {
		t.Fatalf("sink received %d mails", len(mails))
	}
	want := []struct {
		inReplyTo  []string
		references []string
		subject    string
	}{
		{nil, nil, "Approval needed: acme_github.merge · a-merge1"},
		{[]string{first}, []string{first}, "Re: Approval needed: acme_github.merge · a-merge1"},
		{[]string{second}, []string{first, second}, "Re: Approval needed: acme_github.merge · a-merge1"},
	}
	for i, w := range want {
		pm := parseMail(t, mails[i].Data)
		if ids, _ := pm.Header.MsgIDList("In-Reply-To"); !slices.Equal(ids, w.inReplyTo) {
			t.Errorf("mail %d: In-Reply-To %q, want %q", i, ids, w.inReplyTo)
		}
		if ids, _ := pm.Header.MsgIDList("References"); !slices.Equal(ids, w.references) {
			t.Errorf("mail %d: References %q, want %q", i, ids, w.references)
		}
		if subj, _ := pm.Header.Subject(); subj != w.subject {
			t.Errorf("mail %d: Subject %q, want %q", i, subj, w.subject)
		}
	}
}

// fixtureSecrets reads the secrets out of a fixture's raw event: every
// string under a secret-named key, the credential after "Bearer", and the
// password of any URL. The key pattern is written here, apart from
// approval's redaction, so a bug there cannot hide one here.
func fixtureSecrets(t *testing.T, raw []byte) []string {
	t.Helper()
	out, err := fixtures.SecretsIn(raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// readable is every form of a received mail a person or a filter could
// read: the raw bytes, the decoded subject and each decoded part.
func readable(t *testing.T, raw []byte) map[string]string {
	t.Helper()
	pm := parseMail(t, raw)
	subj, err := pm.Header.Subject()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{"raw message": string(raw), "subject": subj}
	for ct, body := range pm.Parts {
		out[ct] = body
	}
	return out
}

func TestMailKeepsSecretsOut(t *testing.T) {
	t.Parallel()
	s := startSink(t, sinkOptions{})
	m := mailerFor(t, s.Addr, smtpconf.TLSNone, nil)
	card, body := fixtureCard(t, "secrets.json")
	secrets := fixtureSecrets(t, body)
	if len(secrets) < 6 {
		t.Fatalf("found only %d secrets in the fixture: %q", len(secrets), secrets)
	}
	if _, err := m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1}); err != nil {
		t.Fatal(err)
	}
	forms := readable(t, onlyMail(t, s).Data)
	for where, text := range forms {
		for _, sec := range secrets {
			js, _ := json.Marshal(sec)
			for _, form := range []string{sec, html.EscapeString(sec), strings.Trim(string(js), `"`)} {
				if strings.Contains(text, form) {
					t.Errorf("%s shows the secret %q", where, sec)
				}
			}
		}
	}
	// The harmless note under a harmless key survives the redaction.
	for _, ct := range []string{"text/plain", "text/html"} {
		if !strings.Contains(forms[ct], "token rotation") {
			t.Errorf("%s part lost the harmless %q", ct, "token rotation")
		}
	}
}

func TestMailRestrictedCardCarriesNoDetails(t *testing.T) {
	t.Parallel()
	s := startSink(t, sinkOptions{})
	m := mailerFor(t, s.Addr, smtpconf.TLSNone, nil)
	card, _ := fixtureCard(t, "private.json")
	a := card.Approval
	if !a.Content.Restricted {
		t.Fatal("private.json is not content-restricted")
	}
	if _, err := m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1}); err != nil {
		t.Fatal(err)
	}
	var hidden []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			hidden = append(hidden, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	var args any
	if err := json.Unmarshal(a.Call.Arguments, &args); err != nil {
		t.Fatal(err)
	}
	walk(args)
	hidden = append(hidden, a.Call.ArgsSHA256, strings.TrimPrefix(a.Call.ArgsSHA256, "sha256:"), a.AgentSays, "Deleting my old customer record")
	if len(hidden) < 5 {
		t.Fatalf("found only %d restricted strings: %q", len(hidden), hidden)
	}
	forms := readable(t, onlyMail(t, s).Data)
	for where, text := range forms {
		for _, h := range hidden {
			if strings.Contains(text, h) || strings.Contains(text, html.EscapeString(h)) {
				t.Errorf("%s shows the restricted %q", where, h)
			}
		}
	}
	for _, ct := range []string{"text/plain", "text/html"} {
		for _, want := range []string{"db.delete_rows", "details are shown only to operators with the content permission"} {
			if !strings.Contains(forms[ct], want) {
				t.Errorf("%s part lacks %q", ct, want)
			}
		}
	}
}

func TestMailTransports(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		sink    sinkOptions
		mode    string
		auth    bool
		wantTLS bool
	}{
		{"starttls with AUTH PLAIN", sinkOptions{TLS: sinkStartTLS, Username: testUser, Password: testPassword}, smtpconf.TLSStartTLS, true, true},
		{"starttls without AUTH", sinkOptions{TLS: sinkStartTLS}, smtpconf.TLSStartTLS, false, true},
		{"implicit TLS with AUTH PLAIN", sinkOptions{TLS: sinkImplicit, Username: testUser, Password: testPassword}, smtpconf.TLSImplicit, true, true},
		{"none to 127.0.0.1", sinkOptions{}, smtpconf.TLSNone, false, false},
		{"none to 127.0.0.1 with AUTH PLAIN", sinkOptions{AllowInsecureAuth: true, Username: testUser, Password: testPassword}, smtpconf.TLSNone, true, false},
	}
	card, _ := fixtureCard(t, "merge.json")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startSink(t, tc.sink)
			var tweak func(*Options)
			if tc.auth {
				tweak = withAuth(testUser, testPassword)
			}
			m := mailerFor(t, s.Addr, tc.mode, tweak)
			id, err := m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1})
			if err != nil {
				t.Fatalf("Mail: %v", err)
			}
			got := onlyMail(t, s)
			if got.TLS != tc.wantTLS {
				t.Errorf("session TLS %v, want %v", got.TLS, tc.wantTLS)
			}
			if got.Helo != "acme.example" {
				t.Errorf("EHLO %q after TLS, want acme.example", got.Helo)
			}
			wantAuths := []credentials(nil)
			wantLogin := ""
			if tc.auth {
				wantAuths = []credentials{{Username: testUser, Password: testPassword}}
				wantLogin = testUser
			}
			if a := s.Auths(); fmt.Sprint(a) != fmt.Sprint(wantAuths) {
				t.Errorf("server saw credentials %q, want %q", a, wantAuths)
			}
			if got.Login != wantLogin {
				t.Errorf("mail sent as %q, want %q", got.Login, wantLogin)
			}
			pm := parseMail(t, got.Data)
			if mid, _ := pm.Header.MessageID(); mid != id {
				t.Errorf("Message-ID %q, Mail returned %q", mid, id)
			}
		})
	}
}

func TestMailRefusesAuthWithoutStartTLS(t *testing.T) {
	t.Parallel()
	// The server offers AUTH PLAIN in clear text and no STARTTLS: the
	// client must not fall back to sending the credentials.
	s := startSink(t, sinkOptions{AllowInsecureAuth: true, Username: testUser, Password: testPassword})
	m := mailerFor(t, s.Addr, smtpconf.TLSStartTLS, withAuth(testUser, testPassword))
	card, _ := fixtureCard(t, "merge.json")
	_, err := m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1})
	if err == nil {
		t.Fatal("Mail succeeded over a server without STARTTLS")
	}
	if !strings.Contains(err.Error(), "STARTTLS") {
		t.Errorf("error %q does not say STARTTLS", err)
	}
	if a := s.Auths(); len(a) != 0 {
		t.Errorf("credentials reached the server: %d AUTH attempts", len(a))
	}
	if n := len(s.Mails()); n != 0 {
		t.Errorf("%d mails sent in clear text", n)
	}
	if err := m.Check(context.Background()); err == nil || len(s.Auths()) != 0 {
		t.Errorf("Check: %v, %d AUTH attempts", err, len(s.Auths()))
	}
}

func TestNewMailerValidates(t *testing.T) {
	t.Parallel()
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		cfg     smtpconf.Settings
		wantErr string // "" accepts
	}{
		{"starttls to a remote host", smtpconf.Settings{Addr: "smtp.acme.example:587", TLS: smtpconf.TLSStartTLS, From: testFrom, Username: testUser, Password: testPassword}, ""},
		{"tls to a remote host", smtpconf.Settings{Addr: "smtp.acme.example:465", TLS: smtpconf.TLSImplicit, From: testFrom}, ""},
		{"none to 127.0.0.1", smtpconf.Settings{Addr: "127.0.0.1:25", TLS: smtpconf.TLSNone, From: testFrom, Username: testUser, Password: testPassword}, ""},
		{"none to localhost", smtpconf.Settings{Addr: "localhost:25", TLS: smtpconf.TLSNone, From: testFrom}, ""},
		{"none to ::1", smtpconf.Settings{Addr: "[::1]:25", TLS: smtpconf.TLSNone, From: testFrom}, ""},
		{"none to a remote host", smtpconf.Settings{Addr: "smtp.acme.example:25", TLS: smtpconf.TLSNone, From: testFrom}, "loopback"},
		{"none to a LAN address with credentials", smtpconf.Settings{Addr: "192.0.2.10:25", TLS: smtpconf.TLSNone, From: testFrom, Username: testUser, Password: testPassword}, "loopback"},
		{"unknown tls", smtpconf.Settings{Addr: "smtp.acme.example:587", TLS: "maybe", From: testFrom}, "not one of"},
		{"addr without port", smtpconf.Settings{Addr: "smtp.acme.example", TLS: smtpconf.TLSStartTLS, From: testFrom}, "host:port"},
		{"bad from", smtpconf.Settings{Addr: "smtp.acme.example:587", TLS: smtpconf.TLSStartTLS, From: "approvals"}, "not an address"},
		{"password without username", smtpconf.Settings{Addr: "smtp.acme.example:587", TLS: smtpconf.TLSStartTLS, From: testFrom, Password: testPassword}, "go together"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewMailer(Options{SMTP: tc.cfg, Renderer: r})
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.wantErr != "" && err == nil:
				t.Fatalf("accepted, want an error saying %q", tc.wantErr)
			case tc.wantErr != "" && !strings.Contains(err.Error(), tc.wantErr):
				t.Fatalf("error %q does not say %q", err, tc.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), testPassword) {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
	if _, err := NewMailer(Options{Renderer: r}); err == nil {
		t.Error("accepted no config")
	}
	if _, err := NewMailer(Options{SMTP: smtpconf.Settings{Addr: "127.0.0.1:25", TLS: smtpconf.TLSNone, From: testFrom}}); err == nil {
		t.Error("accepted no renderer")
	}
}

func TestMailClassifiesFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		sink      sinkOptions
		permanent bool
	}{
		{"550 no such user", sinkOptions{RcptErr: &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such user"}}, true},
		{"554 message rejected", sinkOptions{DataErr: &smtp.SMTPError{Code: 554, EnhancedCode: smtp.EnhancedCode{5, 7, 1}, Message: "rejected as spam"}}, true},
		{"451 try again later", sinkOptions{RcptErr: &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 7, 1}, Message: "greylisted"}}, false},
		{"452 out of storage", sinkOptions{DataErr: &smtp.SMTPError{Code: 452, EnhancedCode: smtp.EnhancedCode{4, 3, 1}, Message: "insufficient storage"}}, false},
	}
	card, _ := fixtureCard(t, "merge.json")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := startSink(t, tc.sink)
			m := mailerFor(t, s.Addr, smtpconf.TLSNone, nil)
			_, err := m.Mail(context.Background(), threads.MailRequest{To: "nobody@acme.example", Card: card, Step: 1})
			if err == nil {
				t.Fatal("Mail succeeded")
			}
			var de *threads.DeliveryError
			isPermanent := errors.As(err, &de) && de.Permanent
			if isPermanent != tc.permanent {
				t.Errorf("permanent = %v, want %v (err %v)", isPermanent, tc.permanent, err)
			}
			var se *smtp.SMTPError
			if !errors.As(err, &se) {
				t.Errorf("error %v does not carry the server's reply", err)
			}
		})
	}
	t.Run("not an address", func(t *testing.T) {
		t.Parallel()
		m := mailerFor(t, "127.0.0.1:1", smtpconf.TLSNone, nil)
		_, err := m.Mail(context.Background(), threads.MailRequest{To: "leads", Card: card, Step: 1})
		if !permanent(err) {
			t.Errorf("bad recipient: %v, want permanent", err)
		}
	})
}

func TestMailTimesOutOnASilentServer(t *testing.T) {
	t.Parallel()
	card, _ := fixtureCard(t, "merge.json")
	for _, mode := range []string{smtpconf.TLSNone, smtpconf.TLSStartTLS, smtpconf.TLSImplicit} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			addr := silentServer(t)
			const timeout = 200 * time.Millisecond
			m := mailerFor(t, addr, mode, func(o *Options) { o.CommandTimeout = timeout })
			start := time.Now()
			_, err := m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1})
			took := time.Since(start)
			if err == nil {
				t.Fatal("Mail succeeded against a silent server")
			}
			if took > 10*timeout {
				t.Errorf("took %v with a %v command timeout", took, timeout)
			}
			if permanent(err) {
				t.Errorf("timeout classified permanent: %v", err)
			}
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("error %v is not a timeout", err)
			}
		})
	}
}

func TestMailStopsWhenTheContextEnds(t *testing.T) {
	t.Parallel()
	card, _ := fixtureCard(t, "merge.json")
	addr := silentServer(t)
	m := mailerFor(t, addr, smtpconf.TLSStartTLS, func(o *Options) { o.CommandTimeout = time.Minute })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := m.Mail(ctx, threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %v after a 200ms context", took)
	}
	if !errors.Is(err, context.DeadlineExceeded) || permanent(err) {
		t.Errorf("err %v: want the context's deadline, retryable", err)
	}

	ctx2, cancel2 := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel2)
	if err := m.Check(ctx2); !errors.Is(err, context.Canceled) {
		t.Errorf("Check after cancel: %v", err)
	}
}

func TestMailCountsResults(t *testing.T) {
	t.Parallel()
	reg := prometheus.NewRegistry()
	card, _ := fixtureCard(t, "merge.json")
	send := func(o sinkOptions) {
		t.Helper()
		s := startSink(t, o)
		// Each Mailer registers with the same registry; the counter is shared.
		m := mailerFor(t, s.Addr, smtpconf.TLSNone, func(o *Options) { o.Metrics = reg })
		_, _ = m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1})
	}
	send(sinkOptions{})
	send(sinkOptions{})
	send(sinkOptions{RcptErr: &smtp.SMTPError{Code: 550, Message: "no such user"}})
	send(sinkOptions{RcptErr: &smtp.SMTPError{Code: 451, Message: "later"}})
	send(sinkOptions{RcptErr: &smtp.SMTPError{Code: 421, Message: "closing"}})

	got := map[string]float64{}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "bot_mail_total" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			for _, l := range mt.GetLabel() {
				if l.GetName() == "result" {
					got[l.GetValue()] = mt.GetCounter().GetValue()
				}
			}
		}
	}
	want := map[string]float64{"sent": 2, "permanent": 1, "temporary": 2}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("bot_mail_total %v, want %v", got, want)
	}
}

func TestPasswordNeverShown(t *testing.T) {
	t.Parallel()
	// The server takes another password: AUTH fails with 535.
	s := startSink(t, sinkOptions{TLS: sinkStartTLS, Username: testUser, Password: "the-right-one"})
	var logs bytes.Buffer
	m := mailerFor(t, s.Addr, smtpconf.TLSStartTLS, func(o *Options) {
		withAuth(testUser, testPassword)(o)
		o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	card, _ := fixtureCard(t, "merge.json")
	_, err := m.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Card: card, Step: 1})
	if err == nil {
		t.Fatal("Mail succeeded with a wrong password")
	}
	if a := s.Auths(); len(a) != 1 || a[0].Password != testPassword {
		t.Fatalf("server saw %d AUTH attempts", len(a))
	}
	if !permanent(err) {
		t.Errorf("535 not permanent: %v", err)
	}
	checkErr := m.Check(context.Background())
	if checkErr == nil {
		t.Fatal("Check succeeded with a wrong password")
	}
	shown := map[string]string{
		"Mail error":     err.Error(),
		"Mail error %+v": fmt.Sprintf("%+v", err),
		"Check error":    checkErr.Error(),
		"log":            logs.String(),
		"Mailer %+v":     fmt.Sprintf("%+v", m),
		"Mailer %#v":     fmt.Sprintf("%#v", *m),
		"Mailer %v":      fmt.Sprint(*m),
		"refused NewMailer": func() string {
			_, err := NewMailer(Options{Renderer: m.render, SMTP: smtpconf.Settings{Addr: "192.0.2.1:25", TLS: smtpconf.TLSNone, From: testFrom, Username: testUser, Password: testPassword}})
			return fmt.Sprint(err)
		}(),
	}
	if !strings.Contains(logs.String(), "mail failed") {
		t.Errorf("no failure logged: %q", logs.String())
	}
	for where, text := range shown {
		if strings.Contains(text, testPassword) {
			t.Errorf("%s shows the password: %s", where, text)
		}
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	s := startSink(t, sinkOptions{TLS: sinkStartTLS, Username: testUser, Password: testPassword})
	m := mailerFor(t, s.Addr, smtpconf.TLSStartTLS, withAuth(testUser, testPassword))
	if err := m.Check(context.Background()); err != nil {
		t.Fatalf("Check: %v", err)
	}
	if a := s.Auths(); len(a) != 1 || a[0] != (credentials{Username: testUser, Password: testPassword}) {
		t.Errorf("Check authenticated %v", a)
	}
	if n := len(s.Mails()); n != 0 {
		t.Errorf("Check sent %d mails", n)
	}

	silent := mailerFor(t, silentServer(t), smtpconf.TLSImplicit, func(o *Options) { o.CommandTimeout = 200 * time.Millisecond })
	if err := silent.Check(context.Background()); err == nil {
		t.Error("Check passed a silent server")
	}
	// TLS against a server whose certificate the client does not trust.
	untrusted := mailerFor(t, startSink(t, sinkOptions{TLS: sinkImplicit}).Addr, smtpconf.TLSImplicit, func(o *Options) { o.TLSConfig = nil })
	if err := untrusted.Check(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Check with an untrusted certificate: %v", err)
	}
}

func TestMessageIDs(t *testing.T) {
	t.Parallel()
	m := mailerFor(t, "127.0.0.1:25", smtpconf.TLSNone, nil)
	seen := map[string]bool{}
	for range 100 {
		id, err := m.messageID("a-merge1", 1, 2, "")
		if err != nil {
			t.Fatal(err)
		}
		if !messageIDPattern.MatchString(id) || seen[id] {
			t.Fatalf("Message-ID %q: malformed or repeated", id)
		}
		seen[id] = true
	}
	named := mailerFor(t, "127.0.0.1:25", smtpconf.TLSNone, func(o *Options) { o.Hostname = "bot.acme.example" })
	// The same mail sent again (its outbox row after a crash) keeps its
	// Message-ID; another mail's differs.
	first, _ := m.messageID("a-merge1", 1, 2, "row-1")
	again, _ := m.messageID("a-merge1", 1, 2, "row-1")
	other, _ := m.messageID("a-merge1", 1, 2, "row-2")
	if first != again || first == other || !messageIDPattern.MatchString(first) {
		t.Errorf("Message-IDs by key: %q, again %q, another row %q", first, again, other)
	}
	if id, _ := named.messageID("a:b.c", 3, 0, ""); !regexp.MustCompile(`^a_b_c\.3\.0\.[0-9a-f]{16}@bot\.acme\.example$`).MatchString(id) {
		t.Errorf("Message-ID %q", id)
	}
	if _, err := NewMailer(Options{Renderer: m.render, Hostname: "bad host",
		SMTP: smtpconf.Settings{Addr: "127.0.0.1:25", TLS: smtpconf.TLSNone, From: testFrom}}); err == nil {
		t.Error("accepted a hostname with a space")
	}
}

func TestThreadRef(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"", "", true},
		{"a.1.1.ff@acme.example", "a.1.1.ff@acme.example", true},
		{"<a.1.1.ff@acme.example>", "a.1.1.ff@acme.example", true},
		{"a@b\r\nBcc: all@example.com", "", false},
		{"no-at-sign", "", false},
		{"a b@c", "", false},
	}
	for _, tc := range tests {
		if got, ok := threadRef(tc.in); got != tc.want || ok != tc.ok {
			t.Errorf("threadRef(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func keys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
