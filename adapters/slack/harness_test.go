package slack_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/syncbuf"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

const (
	botToken      = "xoxb-test-0123456789"
	signingSecret = "signing-secret-0123456789"
	appToken      = "xapp-test-0123456789"
	callsSecret   = "calls-secret-0123456789abcdef0123"
	eventsSecret  = "events-secret-0123456789abcdef012"
)

// testEnv is the bot's environment in these tests: the configuration
// names each secret, as a real one must.
func testEnv(name string) (string, bool) {
	v, ok := map[string]string{
		"BOT_EVENTS_SECRET":    eventsSecret,
		"BOT_CALLS_SECRET":     callsSecret,
		"SLACK_BOT_TOKEN":      botToken,
		"SLACK_SIGNING_SECRET": signingSecret,
		"SLACK_APP_TOKEN":      appToken,
	}[name]
	return v, ok
}

const testConfig = `
backend:
  url: "%s"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
%s  api_url: "%s"
tenants:
  acme:
    post: [slack:C0APPROVALS]
    audit: slack:C0AUDIT
    forbid_self_approval: true
    ladders:
      default:
        - after: 15m
          mention: [slack:U0KEVIN, slack:S0ONCALL]
        - after: 1h
          dm: [slack:U0LEE]
    tools:
      "payments.*": {deadline: 2h, post: [slack:C0FINANCE]}
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
      - {user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA}
      - {user: "user:lee", role: operator, content: true, slack: U0LEE}
      - {user: "user:nocontent", role: admin, content: false, slack: U0NOC}
      - {user: "user:vic", role: viewer, slack: U0VIC}
  quiet:
    post: [slack:C0QUIET]
`

// syncBuffer collects log lines from every goroutine.
type syncBuffer = syncbuf.Buffer

// harness is the bot's Slack side for real: the adapter's HTTP endpoints
// on a loopback listener, threads on SQLite in a temporary directory, the
// real backend client calling the fake job backend, and slack-go calling
// the fake Slack.
type harness struct {
	slack   *slacktest.Server
	backend *backendtest.Fake
	svc     *threads.Service
	store   store.Store
	cfg     *config.Config
	adapter *slackad.Adapter
	// clicks is the service the adapter's clicks go to: threads, until
	// a test switches it.
	clicks *threadstest.Switch
	opts   slackad.Options
	http   *httptest.Server
	clock  *clockwork.FakeClock
	logs   *syncBuffer
}

type harnessOptions struct {
	socket  bool // configure an app token: Socket Mode
	slack   slacktest.Options
	adapter func(*slackad.Options)
	// handler wraps the adapter's HTTP endpoints, to watch them answer.
	handler func(http.Handler) http.Handler
	// alone opens the store as the bot serves it, the process's alone
	// (store.Alone): the deadline waits only for clicks open here.
	alone bool
	// config, when set, rewrites the configuration file before it is read.
	config func(yaml string) string
	// features are the backend's optional parts the bot uses.
	features []string
	// turns: the backend takes a turn's batch (feature turns).
	turns bool
	// questions: the backend sends its agents' questions and takes their
	// answers (feature questions).
	questions bool
}

func newHarness(t *testing.T) *harness { return newHarnessWith(t, harnessOptions{}) }

func newHarnessWith(t *testing.T, ho harnessOptions) *harness {
	t.Helper()
	ho.slack.Token = botToken
	if ho.slack.AppToken == "" {
		ho.slack.AppToken = appToken
	}
	fake := slacktest.New(t, ho.slack)
	for _, c := range []string{"C0APPROVALS", "C0AUDIT", "C0FINANCE", "C0QUIET"} {
		fake.AddChannel(c, strings.ToLower(strings.TrimPrefix(c, "C0")), true)
	}
	for _, u := range []string{"U0KEVIN", "U0ADA", "U0LEE", "U0NOC", "U0VIC", "U0STRANGER"} {
		fake.AddUser(u)
	}
	clock := clockwork.NewFakeClockAt(threadstest.FixtureNow)
	back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(callsSecret)}, GrantNow: clock.Now})
	appLine := ""
	if ho.socket {
		appLine = "  app_token: \"${SLACK_APP_TOKEN}\"\n"
	}
	yaml := fmt.Sprintf(testConfig, back.URL(), appLine, fake.APIURL())
	if ho.config != nil {
		yaml = ho.config(yaml)
	}
	cfg, err := config.Parse("bot.yaml", []byte(yaml), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	open := threadstest.OpenSQLite
	if ho.alone {
		open = threadstest.OpenExclusiveSQLite
	}
	st := open(t)
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	o := slackad.Options{Credentials: slackad.Credentials{BotToken: cfg.Slack.BotToken.Reveal(), SigningSecret: cfg.Slack.SigningSecret.Reveal(), AppToken: cfg.Slack.AppToken.Reveal()}, APIURL: cfg.Slack.APIURL, Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants },
		Store: st, Logger: log, Now: clock.Now}
	if ho.adapter != nil {
		ho.adapter(&o)
	}
	surface, err := slackad.NewSurface(o)
	if err != nil {
		t.Fatal(err)
	}
	features := ho.features
	if ho.questions {
		features = append(slices.Clone(features), backend.FeatureQuestions)
	}
	svc := threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: cfg, Backend: back, CallsSecret: callsSecret,
		Clock: clock, Logger: log, Surfaces: map[string]threads.Surface{"slack": surface}, Features: features, Turns: ho.turns})
	clicks := threadstest.NewSwitch(svc)
	ad, err := slackad.New(surface, clicks)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	ad.Routes(mux)
	var handler http.Handler = mux
	if ho.handler != nil {
		handler = ho.handler(mux)
	}
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	h := &harness{slack: fake, backend: back, svc: svc, store: st, cfg: cfg, adapter: ad, clicks: clicks, opts: o, http: srv, clock: clock, logs: logs}
	t.Cleanup(func() {
		ad.Close()
		// No secret, token or response_url ever reaches a log line.
		out := logs.String()
		for _, secret := range []string{botToken, signingSecret, appToken, callsSecret, eventsSecret, "/response/"} {
			if strings.Contains(out, secret) {
				t.Errorf("the logs carry %q:\n%s", secret, out)
			}
		}
	})
	return h
}

// threadsOn is threads as the harness builds it, on st: the harness's
// store, or one that fails as a test needs.
func (h *harness) threadsOn(t *testing.T, st store.Store) *threads.Service {
	t.Helper()
	return threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: h.cfg, Backend: h.backend,
		CallsSecret: callsSecret, Clock: h.clock, Logger: slog.New(slog.NewTextHandler(h.logs, nil))})
}

// ingest feeds a fixture event to threads, with the arguments behind it
// known to the fake job backend.
func (h *harness) ingest(t *testing.T, name string) *approval.Event {
	t.Helper()
	return h.ingestWith(t, name, nil)
}

// ingestWith feeds a fixture event changed by edit (the envelope as a
// map) to threads.
func (h *harness) ingestWith(t *testing.T, name string, edit func(ev map[string]any)) *approval.Event {
	t.Helper()
	ev := threadstest.Ingest(t, h.svc, name, edit)
	threadstest.Backed(t, h.backend, ev)
	return ev
}

func (h *harness) drain(t *testing.T) {
	t.Helper()
	if _, err := h.svc.DrainOutbox(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// card is the message of an approval's card of a revision in a channel,
// as it stands now, found through the post threads recorded.
func (h *harness) card(t *testing.T, approvalID, channel string, revision int) slacktest.Message {
	t.Helper()
	posts, err := h.store.PostList(context.Background(), approvalID)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range posts {
		if p.Channel != channel || p.Revision != revision {
			continue
		}
		for _, m := range h.slack.Channel(channel) {
			if m.TS == p.Ref {
				return m
			}
		}
		t.Fatalf("post %+v names no message in %s", p, channel)
	}
	t.Fatalf("no card of %s revision %d in %s; posts %+v", approvalID, revision, channel, posts)
	return slacktest.Message{}
}

// button finds the card's button of a kind.
func button(t *testing.T, m slacktest.Message, kind templates.ActionKind) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if strings.HasPrefix(b.ActionID, "ab1|"+string(kind)+"|") {
			return b.ActionID
		}
	}
	t.Fatalf("no %s button on %+v", kind, m.Buttons())
	return ""
}

// sign computes Slack's v0 signature of body at ts.
func sign(secret string, ts int64, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts)
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

type signedRequest struct {
	path   string
	body   []byte
	ts     int64
	sig    string // "" signs correctly
	noSign bool
	ctype  string
}

func (h *harness) send(t *testing.T, r signedRequest) (int, string) {
	t.Helper()
	status, body, took, err := h.do(r)
	if err != nil {
		t.Fatal(err)
	}
	if took > time.Second {
		t.Errorf("%s answered after %s: Slack wants an ack within 3 s", r.path, took)
	}
	return status, body
}

// do sends a signed request to the adapter's endpoints and returns the
// answer and how long it took; it is safe on any goroutine.
func (h *harness) do(r signedRequest) (status int, body string, took time.Duration, err error) {
	if r.ts == 0 {
		r.ts = time.Now().Unix()
	}
	req, err := http.NewRequest(http.MethodPost, h.http.URL+r.path, bytes.NewReader(r.body))
	if err != nil {
		return 0, "", 0, err
	}
	req.Header.Set("Content-Type", cmp.Or(r.ctype, "application/x-www-form-urlencoded"))
	if !r.noSign {
		req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(r.ts, 10))
		req.Header.Set("X-Slack-Signature", cmp.Or(r.sig, sign(signingSecret, r.ts, r.body)))
	}
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", 0, err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), time.Since(start), nil
}

// interaction is a payload form body.
func interaction(payload any) []byte {
	b, _ := json.Marshal(payload)
	return []byte(url.Values{"payload": {string(b)}}.Encode())
}

// clickPayload is a block_actions payload as Slack sends it for a button
// of a card: its response_url and message_ts belong to the card's message
// (the post threads recorded in channel for the action's approval and
// revision), so replace_original through it replaces that message. A
// payload that names no card the bot posted (a forgery) carries a
// response_url of no message.
func (h *harness) clickPayload(user, channel, actionID string) map[string]any {
	ts := h.cardTS(channel, actionID)
	ru := h.slack.ResponseURLFor(channel, user, ts)
	if ts == "" {
		ts, ru = "1700000000.000001", h.slack.ResponseURL(channel, user)
	}
	return map[string]any{
		"type": "block_actions", "trigger_id": "trig-" + user, "api_app_id": "A0APP",
		"user":         map[string]any{"id": user},
		"channel":      map[string]any{"id": channel},
		"container":    map[string]any{"type": "message", "channel_id": channel, "message_ts": ts},
		"response_url": ru,
		"actions": []any{map[string]any{"type": "button", "block_id": "b1", "action_id": actionID, "value": actionID,
			"action_ts": "1700000001.000001"}},
	}
}

// cardTS is the ts of the card in channel that a button's action names,
// or "" when the bot posted none there.
func (h *harness) cardTS(channel, actionID string) string {
	if ta, err := templates.ParseTurnAction(actionID); err == nil {
		actionID = templates.EncodeAction(templates.Action{Kind: templates.ActionDeny, ApprovalID: ta.ApprovalID, Revision: 1})
	}
	act, err := templates.ParseAction(actionID)
	if err != nil {
		return ""
	}
	posts, _ := h.store.PostList(context.Background(), act.ApprovalID)
	for _, p := range posts {
		if p.Channel == channel && p.Revision == act.Revision {
			return p.Ref
		}
	}
	return ""
}

func (h *harness) click(t *testing.T, user, channel, actionID string) {
	t.Helper()
	status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(h.clickPayload(user, channel, actionID))})
	if status != http.StatusOK || body != "" {
		t.Fatalf("click answered %d %q", status, body)
	}
}

// clickAnswer presses a button on a private answer the bot gave user in
// channel (an ephemeral message), as Slack sends such a click: its
// container says is_ephemeral.
func (h *harness) clickAnswer(t *testing.T, user, channel, actionID string) {
	t.Helper()
	p := h.clickPayload(user, channel, actionID)
	p["container"] = map[string]any{"type": "message", "channel_id": channel, "message_ts": "1700000000.000009", "is_ephemeral": true}
	status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(p)})
	if status != http.StatusOK || body != "" {
		t.Fatalf("click answered %d %q", status, body)
	}
}

// told waits for the answer to one person containing want, and returns
// it. Every answer must be for them alone: an ephemeral response_url post
// or chat.postEphemeral. A card replaced through a response_url is not an
// answer (replaced checks those).
func (h *harness) told(t *testing.T, user, want string) slacktest.Message {
	t.Helper()
	var got []string
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got = got[:0]
		for _, m := range h.slack.Messages() {
			if (m.Method == "response_url" || m.Method == "chat.postEphemeral") && m.User == user {
				if m.Method == "response_url" && m.ReplaceOriginal {
					continue
				}
				if m.Method == "response_url" && m.ResponseType != "ephemeral" {
					t.Fatalf("an answer to %s was not ephemeral: %+v", user, m)
				}
				if strings.Contains(m.AllText(), want) {
					return m
				}
				got = append(got, m.AllText())
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s was not told %q; was told %q", user, want, got)
	return slacktest.Message{}
}

// notTold checks that nobody was answered with a text containing what.
func (h *harness) notTold(t *testing.T, what string) {
	t.Helper()
	for _, m := range h.slack.Messages() {
		if (m.Method == "chat.postEphemeral" || m.Method == "response_url" && !m.ReplaceOriginal) && strings.Contains(m.AllText(), what) {
			t.Fatalf("%s was told %q: %+v", m.User, what, m.AllText())
		}
	}
}

// replaced waits until the card at ts in channel was replaced through the
// click's response_url with a card that reads want and offers neither
// Approve nor Deny, and returns the message as the channel shows it now:
// what everyone in the channel sees.
func (h *harness) replaced(t *testing.T, channel, ts, want string) slacktest.Message {
	t.Helper()
	threadstest.Eventually(t, fmt.Sprintf("the card %s in %s replaced with %q", ts, channel, want), func() bool {
		for _, m := range h.replacements(channel, ts) {
			if strings.Contains(m.AllText(), want) {
				return true
			}
		}
		return false
	})
	for _, m := range h.slack.Channel(channel) {
		if m.TS != ts {
			continue
		}
		if !strings.Contains(m.AllText(), want) {
			t.Fatalf("the channel shows the card %s as %q, want %q", ts, m.AllText(), want)
		}
		if kinds := decisionButtons(m); len(kinds) != 0 {
			t.Fatalf("the replaced card %s still offers %v", ts, kinds)
		}
		return m
	}
	t.Fatalf("no message %s in %s", ts, channel)
	return slacktest.Message{}
}

// replacements lists the response_url posts that replaced the message ts
// in channel, in order.
func (h *harness) replacements(channel, ts string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.slack.MessagesBy("response_url") {
		if m.ReplaceOriginal && m.Channel == channel && m.TS == ts {
			out = append(out, m)
		}
	}
	return out
}

// edits lists every change Slack received of the message ts in channel,
// in order: each chat.update of it and each response_url post that
// replaced it.
func (h *harness) edits(channel, ts string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.slack.Messages() {
		if m.Channel == channel && m.TS == ts && (m.Method == "chat.update" || m.Method == "response_url" && m.ReplaceOriginal) {
			out = append(out, m)
		}
	}
	return out
}

// untouched checks that a card nobody could decide stayed as it was: never
// replaced through a response_url, and still offering Approve or Deny.
func (h *harness) untouched(t *testing.T, channel, ts string) {
	t.Helper()
	if r := h.replacements(channel, ts); len(r) != 0 {
		t.Fatalf("the card %s in %s was replaced: %q", ts, channel, r[0].AllText())
	}
	for _, m := range h.slack.Channel(channel) {
		if m.TS == ts {
			if len(decisionButtons(m)) == 0 {
				t.Fatalf("the card %s in %s lost its buttons: %q", ts, channel, m.AllText())
			}
			return
		}
	}
	t.Fatalf("no message %s in %s", ts, channel)
}

// decisionButtons lists the kinds of a message's Approve and Deny buttons.
func decisionButtons(m slacktest.Message) []templates.ActionKind {
	var out []templates.ActionKind
	for _, b := range m.Buttons() {
		if a, err := templates.ParseAction(b.ActionID); err == nil && (a.Kind == templates.ActionApprove || a.Kind == templates.ActionDeny) {
			out = append(out, a.Kind)
		}
	}
	return out
}

// committed reports whether a decision on the approval is recorded and in
// flight (threads keeps it on the approval until the backend answers).
func (h *harness) committed(t *testing.T, approvalID string) bool {
	t.Helper()
	return len(h.approval(t, approvalID).Deciding) > 0
}

// approval reads an approval as the store holds it.
func (h *harness) approval(t *testing.T, id string) *store.Approval {
	t.Helper()
	a, err := h.store.ApprovalGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}
