package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/slack"
	"approvalsbot/app"
	"approvalsbot/config"
	"approvalsbot/notify"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// doctorTimeout bounds a whole run: a doctor that hangs helps nobody.
const doctorTimeout = 60 * time.Second

// The signed probe of the job backend: a look-up (it changes nothing) of
// an approval no backend holds. Its 404 (or 403) proves the address, the
// protocol and the calls secret at once.
const (
	probeApproval = "bot-doctor-probe"
	probeActor    = "system:doctor"
)

// cmdDoctor checks what the configuration points at, one line a finding
// (`AREA: found` or `AREA: PROBLEM: what to do`, as the chat surfaces'
// own checks write), and fails with the number of PROBLEM lines.
func cmdDoctor(ctx context.Context, args []string, stdout io.Writer, getenv env) error {
	fs := newFlags("doctor", stdout, nil,
		"Checks what the configuration points at, one line a finding: the listeners, the store, the job backend, the mail server and the chat surfaces. It exits 1 when it finds a problem.",
		"bot doctor --config bot.yaml")
	path := configFlag(fs.FlagSet)
	register := fs.Bool("register", false, "register Discord's /approvals command (as bot serve does at start), then check it")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	cfg, err := config.Load(*path, getenv)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, doctorTimeout)
	defer cancel()
	r := &doctorReport{w: stdout}
	r.say("config", "%s is valid", *path)
	doctorListeners(cfg, r)
	st, ok := doctorStore(ctx, cfg.Store, r)
	var ss surfaceStore
	switch {
	case st != nil:
		defer st.Close()
		ss = st
	case ok:
		ss = notCreated{}
	}
	doctorBackend(ctx, cfg.Backend, r)
	if cfg.SMTP != nil {
		doctorMail(ctx, cfg.SMTP, r)
	}
	doctorSurfaces(ctx, cfg, ss, r, *register)
	r.flush()
	if r.problems > 0 {
		return fmt.Errorf("%s found", count(r.problems, "problem"))
	}
	fmt.Fprintln(stdout, "doctor: no problems found")
	return nil
}

// doctorReport writes the findings and counts the PROBLEM lines, the
// surfaces' checks' too, so the count is what a person reads.
type doctorReport struct {
	w        io.Writer
	problems int
	partial  []byte // a line written in pieces, until its newline
}

const problemMark = ": PROBLEM: "

func (r *doctorReport) say(area, format string, args ...any) {
	fmt.Fprintf(r, "%s: %s\n", area, fmt.Sprintf(format, args...))
}

func (r *doctorReport) problem(area, format string, args ...any) {
	fmt.Fprintf(r, "%s%s%s\n", area, problemMark, fmt.Sprintf(format, args...))
}

// Write passes lines through and counts those that report a problem.
func (r *doctorReport) Write(p []byte) (int, error) {
	r.partial = append(r.partial, p...)
	for {
		i := bytes.IndexByte(r.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		r.line(r.partial[:i+1])
		r.partial = r.partial[i+1:]
	}
}

func (r *doctorReport) line(l []byte) {
	if bytes.Contains(l, []byte(problemMark)) {
		r.problems++
	}
	r.w.Write(l)
}

// flush writes a last line that had no newline.
func (r *doctorReport) flush() {
	if len(r.partial) > 0 {
		r.line(append(r.partial, '\n'))
		r.partial = nil
	}
}

func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// doctorListeners says what each listener serves and finds a public
// listen_private. It reads only the configuration: a probe could not tell
// this bot from another process on the port.
func doctorListeners(cfg *config.Config, r *doctorReport) {
	if cfg.ListenPrivate == "" {
		r.say("listen", "%s serves everything: interactions, the decision page, health, and the job backend's events and metrics "+
			"(in production, set listen_private to keep those two off the public listener)", cfg.Listen)
		return
	}
	r.say("listen", "%s serves interactions, the decision page and health", cfg.Listen)
	host, _, _ := net.SplitHostPort(cfg.ListenPrivate)
	ip, err := netip.ParseAddr(host)
	switch {
	case host == "" || (err == nil && ip.IsUnspecified()):
		r.say("listen_private", "%s serves the job backend's events, metrics and health on every address of this machine: "+
			"keep its port closed to the internet (a firewall, or a container port left unpublished)", cfg.ListenPrivate)
	case err == nil && !ip.IsLoopback() && !ip.IsPrivate() && !ip.IsLinkLocalUnicast():
		r.problem("listen_private", "%s is a public address: the job backend's events and the metrics would face the internet; "+
			"bind a private network's address or loopback", cfg.ListenPrivate)
	default:
		r.say("listen_private", "%s serves the job backend's events, metrics and health", cfg.ListenPrivate)
	}
}

// doctorStore opens the store as a reader beside a running bot (no lock,
// migration or released claims). A missing SQLite file is not created:
// before the first start it is fine (ok, with no store).
func doctorStore(ctx context.Context, sc config.Store, r *doctorReport) (st store.Store, ok bool) {
	what := sc.Driver
	if sc.Driver == config.DriverSQLite || sc.Driver == "" {
		p := app.SQLiteFile(sc.DSN.Reveal())
		what = "sqlite " + p
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			dir := filepath.Dir(p)
			if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
				r.problem("store", "%s cannot be created: its folder %s does not exist", what, dir)
				return nil, false
			}
			f, err := os.CreateTemp(dir, ".bot-doctor-*")
			if err != nil {
				r.problem("store", "%s cannot be created: its folder %s takes no file (%v)", what, dir, err)
				return nil, false
			}
			f.Close()
			os.Remove(f.Name())
			r.say("store", "%s does not exist yet: it will be created at start (or by bot migrate)", what)
			return nil, true
		}
	}
	st, err := pingStore(ctx, sc)
	if err != nil {
		if st != nil {
			st.Close()
		}
		if isNetwork(err) {
			r.problem("store", "cannot reach the %s database: %v (a network failure: check its address, DNS and firewall)", what, err)
		} else {
			r.problem("store", "%s: %v", what, err)
		}
		return nil, false
	}
	r.say("store", "%s answers", what)
	return st, true
}

// surfaceStore is what a chat surface is built with; its checks read
// nothing of it.
type surfaceStore interface {
	slack.Store
	discord.Store
}

// notCreated stands for a store not created yet, which has nothing.
type notCreated struct{}

var errNotCreated = errors.New("the store is not created yet")

func (notCreated) ReplaySeen(context.Context, store.ReplaySeenParams) (bool, error) {
	return false, errNotCreated
}

func (notCreated) ApprovalListPending(context.Context, store.ApprovalListPendingParams) ([]*store.Approval, error) {
	return nil, errNotCreated
}

func (notCreated) PostList(context.Context, string) ([]*store.Post, error) { return nil, errNotCreated }

func (notCreated) GrantList(context.Context, store.GrantListParams) ([]*store.Grant, error) {
	return nil, errNotCreated
}

// pingStore opens and pings the store; a non-nil store must be closed.
func pingStore(ctx context.Context, sc config.Store) (store.Store, error) {
	var (
		st  store.Store
		err error
	)
	switch sc.Driver {
	case "", config.DriverSQLite:
		st, err = sqlite.Open(ctx, sqlite.Options{Path: app.SQLiteFile(sc.DSN.Reveal())})
	case config.DriverPostgres:
		st, err = postgres.Open(ctx, postgres.Options{DSN: sc.DSN.Reveal(), MaxConns: 2, PersonConns: 1})
	default:
		err = fmt.Errorf("store driver %q: want sqlite or postgres", sc.Driver)
	}
	if err != nil {
		return nil, err
	}
	return st, st.Ping(ctx)
}

// doctorBackend sends the job backend the signed probe, once (no retries:
// a doctor reports, it does not wait out an outage).
func doctorBackend(ctx context.Context, b config.Backend, r *doctorReport) {
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: b.URL, Secrets: config.RevealAll(b.CallsSecrets),
		MaxElapsed: time.Nanosecond})
	if err != nil {
		r.problem("backend", "%v", err)
		return
	}
	key := fmt.Sprintf("doctor-%d", time.Now().UnixNano())
	res, err := client.Arguments(ctx, backend.ArgumentsRequest{ApprovalID: probeApproval, Revision: 1, Actor: probeActor}, key)
	var pe *backend.ProtocolError
	switch {
	case err == nil:
		r.say("backend", "%s answers signed calls as the protocol says (a look-up of an approval it does not hold: %s)", b.URL, res.Outcome)
	case errors.As(err, &pe) && pe.Status == 401:
		r.problem("backend", "%s refused the bot's signature (401 %s): backend.calls_secrets must hold the secret the backend checks calls with", b.URL, pe.Code)
	case errors.As(err, &pe):
		r.problem("backend", "%s answered %s, which the protocol does not list: is backend.url the job backend's base URL? (calls go to %s/v1/approvals/…)",
			b.URL, answerOf(pe), strings.TrimRight(b.URL, "/"))
	case isNetwork(err):
		r.problem("backend", "cannot reach %s: %v (a network failure: nothing answers there unless the job backend runs; check the address, DNS and firewall)",
			b.URL, networkCause(err))
	case errors.Is(err, backend.ErrUnavailable):
		r.problem("backend", "%s is reachable but failing: %v", b.URL, lastCause(err))
	default:
		r.problem("backend", "%s: %v", b.URL, err)
	}
}

func answerOf(pe *backend.ProtocolError) string {
	if pe.Code == "" {
		return fmt.Sprintf("%d without the protocol's error body", pe.Status)
	}
	return fmt.Sprintf("%d %s", pe.Status, pe.Code)
}

// doctorMail connects, secures, authenticates and quits.
func doctorMail(ctx context.Context, sc *config.SMTP, r *doctorReport) {
	renderer, err := templates.New(templates.Options{})
	if err != nil {
		r.problem("mail", "load the mail templates: %v", err)
		return
	}
	m, err := notify.NewMailer(notify.Options{SMTP: sc.Settings(), Renderer: renderer})
	if err == nil {
		err = m.Check(ctx)
	}
	switch {
	case err == nil:
		r.say("mail", "%s answers (%s), from %s", sc.Addr, sc.TLS, sc.From)
	case isNetwork(err):
		r.problem("mail", "cannot reach %s: %v (a network failure: check smtp.addr, DNS and firewall)", sc.Addr, networkCause(err))
	default:
		r.problem("mail", "%s: %v", sc.Addr, err)
	}
}

// doctorSurfaces runs each chat surface's own checks; with register,
// Discord's /approvals is registered first.
func doctorSurfaces(ctx context.Context, cfg *config.Config, st surfaceStore, r *doctorReport, register bool) {
	if cfg.Slack == nil && cfg.Discord == nil {
		r.say("chat", "none configured: cards go to the log surface (stdout)")
		return
	}
	type surface interface {
		Doctor(ctx context.Context, w io.Writer) error
	}
	check := func(area string, build func() (surface, error)) {
		if st == nil {
			r.say(area, "not checked: the adapter needs the store, which did not answer")
			return
		}
		ad, err := build()
		if err == nil {
			before := r.problems
			err = ad.Doctor(ctx, r)
			r.flush()
			if r.problems > before {
				return // the check wrote its problems; its error only counts them
			}
		}
		if err != nil {
			r.problem(area, "%s", strings.TrimPrefix(err.Error(), area+": "))
		}
	}
	tenants := func() map[string]*tenant.Tenant { return cfg.Tenants }
	if cfg.Slack != nil {
		check("slack", func() (surface, error) {
			return slack.NewSurface(slack.Options{Credentials: app.SlackCredentials(cfg.Slack), APIURL: cfg.Slack.APIURL, Tenants: tenants, Store: st})
		})
	}
	if cfg.Discord != nil {
		check("discord", func() (surface, error) {
			ad, err := discord.NewSurface(discord.Options{Credentials: app.DiscordCredentials(cfg.Discord), APIURL: cfg.Discord.APIURL, Tenants: tenants, Store: st})
			if err != nil || !register {
				return ad, err
			}
			if err := ad.RegisterCommands(ctx); err != nil {
				r.problem("discord", "commands: could not register /approvals: %s", strings.TrimPrefix(err.Error(), "discord: "))
			} else {
				r.say("discord", "commands: /approvals registered")
			}
			return ad, nil
		})
	}
}

// isNetwork reports whether err is a failure to reach a server at all,
// not an answer: a doctor must not call an outage a bad token.
func isNetwork(err error) bool {
	var (
		ue *url.Error
		oe *net.OpError
		de *net.DNSError
	)
	return errors.As(err, &ue) || errors.As(err, &oe) || errors.As(err, &de)
}

// networkCause is the network's own words, without the request's
// address (a URL may carry what a log should not).
func networkCause(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe
	}
	return err
}

// lastCause is the innermost cause of a given-up call's last try.
func lastCause(err error) error {
	for {
		var next error
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			if es := e.Unwrap(); len(es) > 0 {
				next = es[len(es)-1]
			}
		case interface{ Unwrap() error }:
			next = e.Unwrap()
		}
		if next == nil {
			return err
		}
		err = next
	}
}
