package notify

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/mail"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/notify/smtpconf"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// Defaults for Options. A command's wait is far below RFC 5321's minutes:
// an outbox worker waits on it, and the outbox retries what times out.
const (
	DefaultDialTimeout       = 10 * time.Second
	DefaultCommandTimeout    = 30 * time.Second
	DefaultSubmissionTimeout = time.Minute
)

// Results of one Mail, the values of bot_mail_total's result label.
const (
	resultSent      = "sent"
	resultTemporary = "temporary"
	resultPermanent = "permanent"
)

// Options configures a Mailer.
type Options struct {
	SMTP     smtpconf.Settings   // checked by NewMailer
	Renderer *templates.Renderer // required
	// Now stamps each mail's Date; nil uses time.Now.
	Now func() time.Time
	// Logger gets one line per mail; nil discards.
	Logger *slog.Logger
	// DialTimeout bounds connecting; 0 uses DefaultDialTimeout.
	DialTimeout time.Duration
	// CommandTimeout bounds each exchange with the server, the message's
	// writing included; 0 uses DefaultCommandTimeout.
	CommandTimeout time.Duration
	// SubmissionTimeout bounds the answer to the end of the message (the
	// server's filters run first); 0 uses DefaultSubmissionTimeout.
	SubmissionTimeout time.Duration
	// TLSConfig is the base TLS configuration; nil uses the system roots.
	// ServerName defaults to the host of SMTP.Addr.
	TLSConfig *tls.Config
	// Hostname names the bot in EHLO and Message-IDs; empty: From's domain.
	Hostname string
	// Metrics registers bot_mail_total; nil keeps no metrics.
	Metrics prometheus.Registerer
}

// Mailer sends escalation email over SMTP, one connection a mail. It is
// immutable after NewMailer and safe for concurrent use.
type Mailer struct {
	addr     string
	mode     string // smtpconf.TLSStartTLS, smtpconf.TLSImplicit or smtpconf.TLSNone
	tls      *tls.Config
	from     string // the From header as configured
	envFrom  string // its address, for MAIL FROM
	hostname string
	// auth makes the SASL client; nil when no username is configured. A
	// closure, so that printing a Mailer cannot reach the password.
	auth     func() sasl.Client
	username string

	render            *templates.Renderer
	now               func() time.Time
	log               *slog.Logger
	dialTimeout       time.Duration
	commandTimeout    time.Duration
	submissionTimeout time.Duration
	total             *prometheus.CounterVec // nil without a registerer
}

var _ threads.Mailer = (*Mailer)(nil)

// hostnamePattern is a DNS name, as EHLO and a Message-ID's right side take it.
var hostnamePattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$`)

// NewMailer checks o and freezes it into a Mailer. It refuses SMTP
// settings with any smtpconf Problems (clear text over a network among
// them) and a Hostname, given or From's, that is not a DNS name. Errors
// never carry the password.
func NewMailer(o Options) (*Mailer, error) {
	if o.Renderer == nil {
		return nil, errors.New("notify: no renderer")
	}
	c := o.SMTP
	m := &Mailer{
		addr:              c.Addr,
		mode:              c.TLS,
		from:              c.From,
		username:          c.Username,
		render:            o.Renderer,
		now:               o.Now,
		log:               o.Logger,
		dialTimeout:       cmp.Or(max(o.DialTimeout, 0), DefaultDialTimeout),
		commandTimeout:    cmp.Or(max(o.CommandTimeout, 0), DefaultCommandTimeout),
		submissionTimeout: cmp.Or(max(o.SubmissionTimeout, 0), DefaultSubmissionTimeout),
	}
	if m.now == nil {
		m.now = time.Now
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}

	var problems []error
	for _, p := range c.Problems() {
		problems = append(problems, p)
	}
	host, _, _ := net.SplitHostPort(c.Addr)
	from, err := mail.ParseAddress(c.From)
	if err == nil {
		m.envFrom = from.Address
	}
	m.hostname = o.Hostname
	if m.hostname == "" && from != nil {
		m.hostname = from.Address[strings.LastIndexByte(from.Address, '@')+1:]
	}
	if !hostnamePattern.MatchString(m.hostname) || len(m.hostname) > 253 {
		problems = append(problems, fmt.Errorf("hostname %q is not a DNS name (set Options.Hostname)", m.hostname))
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("notify: %w", errors.Join(problems...))
	}

	if c.Username != "" {
		user, pass := c.Username, c.Password
		m.auth = func() sasl.Client { return sasl.NewPlainClient("", user, pass) }
	}
	m.tls = &tls.Config{MinVersion: tls.VersionTLS12}
	if o.TLSConfig != nil {
		m.tls = o.TLSConfig.Clone()
	}
	if m.tls.ServerName == "" {
		m.tls.ServerName = host
	}
	if o.Metrics != nil {
		total := prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_mail_total",
			Help: "Escalation mails by result: sent, temporary (retried) or permanent (rejected by the server).",
		}, []string{"result"})
		if err := o.Metrics.Register(total); err != nil {
			var are prometheus.AlreadyRegisteredError
			if !errors.As(err, &are) {
				return nil, fmt.Errorf("notify: register metrics: %w", err)
			}
			existing, ok := are.ExistingCollector.(*prometheus.CounterVec)
			if !ok {
				return nil, fmt.Errorf("notify: register metrics: %w", err)
			}
			total = existing
		}
		for _, r := range []string{resultSent, resultTemporary, resultPermanent} {
			total.WithLabelValues(r)
		}
		m.total = total
	}
	return m, nil
}

// Mail sends the card of req as one email to req.To and returns its
// Message-ID (without angle brackets). A permanent rejection by the server
// (an SMTP 5xx) or an unusable request is threads.Permanent; a 4xx, a
// network failure or a timeout is a plain error, for the outbox to retry.
func (m *Mailer) Mail(ctx context.Context, req threads.MailRequest) (string, error) {
	id, err := m.mail(ctx, req)
	result := resultSent
	if err != nil {
		result = resultTemporary
		if permanent(err) {
			result = resultPermanent
		}
	}
	if m.total != nil {
		m.total.WithLabelValues(result).Inc()
	}
	log := m.log.With("approval", approvalID(req), "tenant", req.Card.Tenant, "step", req.Step, "to", req.To)
	if err != nil {
		log.Warn("mail failed", "kind", cmp.Or(req.Kind, "escalation"), "result", result, "err", err)
		return "", err
	}
	log.Info("mail sent", "kind", cmp.Or(req.Kind, "escalation"), "message_id", id)
	return id, nil
}

func (m *Mailer) mail(ctx context.Context, req threads.MailRequest) (string, error) {
	to, err := mail.ParseAddress(req.To)
	if err != nil {
		return "", threads.Permanent(fmt.Errorf("mail to %q: not an address: %w", req.To, err))
	}
	a := req.Card.Approval
	if a == nil {
		return "", threads.Permanent(fmt.Errorf("mail to %s: the card has no approval", to.Address))
	}
	email := m.render.Mail(req.Render())
	id, err := m.messageID(a.ID, a.Revision, req.Step, req.Key)
	if err != nil {
		return "", fmt.Errorf("mail to %s: %w", to.Address, err)
	}
	thread := threadOf(req.Thread)
	if req.Thread != (threads.MailThread{}) && len(thread) == 0 {
		// A mail out of its thread still tells the person; losing it would not.
		m.log.Warn("mail: thread ids unusable, sending unthreaded", "approval", a.ID, "tenant", req.Card.Tenant)
	}
	raw, err := Build(Message{
		From: m.from, To: []string{req.To}, Subject: email.Subject,
		Text: email.Text, HTML: email.HTML, Date: m.now(),
		MessageID: id, References: thread,
	})
	if err != nil {
		return "", threads.Permanent(fmt.Errorf("mail to %s: build message: %w", to.Address, err))
	}
	if err := m.send(ctx, to.Address, raw); err != nil {
		return "", classify(fmt.Errorf("mail to %s via %s: %w", to.Address, m.addr, ctxCause(ctx, err)))
	}
	return id, nil
}

// threadOf is a follow-up's References: the thread's first and latest
// mail (RFC 5322 lets a long chain keep its ends), if usable.
func threadOf(t threads.MailThread) []string {
	var refs []string
	for _, id := range []string{t.Root, t.Last} {
		if ref, ok := threadRef(id); ok && ref != "" && !slices.Contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return refs
}

func approvalID(req threads.MailRequest) string {
	if req.Card.Approval == nil {
		return ""
	}
	return req.Card.Approval.ID
}

// messageID is approval.revision.step.tag@hostname, tag derived from the
// mail's outbox key (random without one), so a mail sent again after a
// crash keeps its Message-ID and receivers can deduplicate it.
func (m *Mailer) messageID(approvalID string, revision, step int, key string) (string, error) {
	var b [8]byte
	if key != "" {
		sum := sha256.Sum256([]byte(key))
		copy(b[:], sum[:])
	} else if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("message id: %w", err)
	}
	return fmt.Sprintf("%s.%d.%d.%s@%s", idLeft(approvalID), revision, step, hex.EncodeToString(b[:]), m.hostname), nil
}

// idLeft keeps an approval id within a Message-ID's dot-atom: approval
// ids may hold ':' (not allowed there) and '.' (which may not repeat).
func idLeft(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 {
		return "approval"
	}
	return string(b)
}

// threadRef takes a Message-ID with or without angle brackets; ok is
// false when it cannot be one, which would otherwise reach a header.
func threadRef(id string) (ref string, ok bool) {
	ref = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(id), "<"), ">")
	if ref == "" {
		return "", id == ""
	}
	if len(ref) > 500 || !strings.Contains(ref, "@") || strings.ContainsFunc(ref, func(r rune) bool {
		return r <= ' ' || r >= 0x7f || r == '<' || r == '>'
	}) {
		return "", false
	}
	return ref, true
}

// send runs one SMTP transaction: MAIL, RCPT, DATA, then QUIT. Once the
// server has accepted the message, a failed QUIT is not an error: the
// mail is on its way, and a retry would send it twice.
func (m *Mailer) send(ctx context.Context, to string, raw []byte) (err error) {
	s, err := m.open(ctx)
	if err != nil {
		return err
	}
	defer s.close()
	defer func() {
		var se *smtp.SMTPError
		if errors.As(err, &se) {
			_ = s.c.Quit() // still in step with the server: say goodbye
		}
	}()
	var opts *smtp.MailOptions
	if !ascii(m.envFrom) || !ascii(to) {
		opts = &smtp.MailOptions{UTF8: true}
	}
	if err := s.c.Mail(m.envFrom, opts); err != nil {
		return fmt.Errorf("MAIL FROM: %w", err)
	}
	if err := s.c.Rcpt(to, nil); err != nil {
		return fmt.Errorf("RCPT TO: %w", err)
	}
	w, err := s.c.Data()
	if err != nil {
		return fmt.Errorf("DATA: %w", err)
	}
	if _, err := w.Write(raw); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	s.conn.setWait(m.submissionTimeout)
	if err := w.Close(); err != nil {
		return fmt.Errorf("end of message: %w", err)
	}
	s.conn.setWait(m.commandTimeout)
	if err := s.c.Quit(); err != nil {
		m.log.Debug("SMTP QUIT after an accepted mail failed", "err", err)
	}
	return nil
}

// Check opens a session as Mail would and quits, for bot doctor.
func (m *Mailer) Check(ctx context.Context) error {
	s, err := m.open(ctx)
	if err != nil {
		return fmt.Errorf("check SMTP server %s: %w", m.addr, err)
	}
	defer s.close()
	if err := s.c.Quit(); err != nil {
		return fmt.Errorf("check SMTP server %s: QUIT: %w", m.addr, err)
	}
	return nil
}

// session is one open, greeted and authenticated SMTP connection.
type session struct {
	c    *smtp.Client
	conn *boundedConn
}

// close drops the connection (after QUIT, or instead of it).
func (s *session) close() { _ = s.c.Close() }

// open dials, secures, says EHLO and authenticates when a username is
// set. Credentials go only over TLS, or with tls none to a loopback
// address; a server not offering STARTTLS is refused before.
func (m *Mailer) open(ctx context.Context) (_ *session, err error) {
	d := net.Dialer{Timeout: m.dialTimeout}
	raw, err := d.DialContext(ctx, "tcp", m.addr)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", ctxCause(ctx, err))
	}
	conn := newBoundedConn(ctx, raw, m.commandTimeout)
	var c *smtp.Client
	switch m.mode {
	case smtpconf.TLSImplicit:
		tc := tls.Client(conn, m.tls)
		if err := tc.HandshakeContext(ctx); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("TLS handshake: %w", ctxCause(ctx, err))
		}
		c = smtp.NewClient(tc)
	case smtpconf.TLSStartTLS:
		// Greets and says EHLO (as "localhost": go-smtp offers no other
		// way to STARTTLS) before TLS; conn bounds its waits meanwhile.
		c, err = smtp.NewClientStartTLS(conn, m.tls)
		if err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("STARTTLS: %w", ctxCause(ctx, err))
		}
	default: // smtpconf.TLSNone, to a loopback address (NewMailer checked)
		c = smtp.NewClient(conn)
	}
	c.CommandTimeout = m.commandTimeout
	c.SubmissionTimeout = m.submissionTimeout
	s := &session{c: c, conn: conn}
	defer func() {
		if err != nil {
			s.close()
		}
	}()
	if err := c.Hello(m.hostname); err != nil {
		return nil, fmt.Errorf("EHLO: %w", ctxCause(ctx, err))
	}
	if m.auth == nil {
		return s, nil
	}
	if _, secure := c.TLSConnectionState(); !secure && m.mode != smtpconf.TLSNone {
		return nil, errors.New("refusing to authenticate over a connection without TLS")
	}
	if !c.SupportsAuth(sasl.Plain) {
		return nil, errors.New("the server does not offer AUTH PLAIN")
	}
	if err := c.Auth(m.auth()); err != nil {
		return nil, fmt.Errorf("AUTH PLAIN as %s: %w", m.username, ctxCause(ctx, err))
	}
	return s, nil
}

// ctxCause names the context's end next to the I/O error it caused (an
// expired deadline), so callers can tell a cancelled send with errors.Is.
func ctxCause(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		return fmt.Errorf("%w: %w", ctx.Err(), err)
	}
	return err
}

// classify marks an SMTP 5xx, a rejection no retry changes, as
// permanent; everything else (4xx, network, timeouts) stays retryable.
func classify(err error) error {
	var se *smtp.SMTPError
	if errors.As(err, &se) && se.Code >= 500 && se.Code < 600 {
		return threads.Permanent(err)
	}
	return err
}

func permanent(err error) bool {
	var de *threads.DeliveryError
	return errors.As(err, &de) && de.Permanent
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
