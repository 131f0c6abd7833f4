package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/config"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads"
)

// botConfig is the smallest configuration the events endpoint runs under.
const botConfig = `
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
  features: [questions]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
tenants:
  acme:
    post: [slack:C0APPROVALS]
`

var (
	eventsSecret = []byte("events-secret-contract-0123456789abcdef")
	callsSecret  = []byte("calls-secret-contract-0123456789abcdef0")
)

func lookupEnv(k string) (string, bool) {
	switch k {
	case "BOT_EVENTS_SECRET":
		return string(eventsSecret), true
	case "BOT_CALLS_SECRET":
		return string(callsSecret), true
	case "SLACK_BOT_TOKEN":
		return "xoxb-dummy-token", true
	case "SLACK_SIGNING_SECRET":
		return "slack-signing-dummy", true
	}
	return "", false
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// nowhere is a chat surface that posts nothing: the outbox is not run
// here, rows are only enqueued.
type nowhere struct{}

func (nowhere) Post(context.Context, threads.PostRequest) (threads.PostResult, error) {
	return threads.PostResult{}, nil
}
func (nowhere) Edit(context.Context, threads.EditRequest) error     { return nil }
func (nowhere) Reply(context.Context, threads.ReplyRequest) error   { return nil }
func (nowhere) Notice(context.Context, threads.NoticeRequest) error { return nil }

// eventsBot is the bot's real events endpoint (verifier, parser, threads
// ingest, SQLite on disk) on a loopback listener.
type eventsBot struct {
	store *sqlite.Store
	srv   *httptest.Server
}

func newEventsBot(tb testing.TB) *eventsBot {
	tb.Helper()
	return newEventsBotWith(tb, botConfig)
}

// newEventsBotWith is newEventsBot under the configuration text given.
func newEventsBotWith(tb testing.TB, text string) *eventsBot {
	tb.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(text), lookupEnv)
	if err != nil {
		tb.Fatalf("config.Parse: %v", err)
	}
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(tb.TempDir(), "bot.db")})
	if err != nil {
		tb.Fatalf("sqlite.Open: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: wallClock{}, Fallback: nowhere{},
		Questions: cfg.Backend.Supports(config.FeatureQuestions)})
	if err != nil {
		tb.Fatalf("threads.New: %v", err)
	}
	h := backend.NewHandler(backend.HandlerOptions{Verifier: backend.Verifier{Secrets: [][]byte{eventsSecret}}, Ingester: svc})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return &eventsBot{store: st, srv: srv}
}

// eventRequest is a signed POST of body to the endpoint, as a backend
// sends it.
func (b *eventsBot) eventRequest(tb testing.TB, body []byte) *http.Request {
	tb.Helper()
	req, err := http.NewRequest(http.MethodPost, b.srv.URL+"/v1/events", bytes.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(backend.SignatureHeader, backend.Sign(eventsSecret, time.Now(), body))
	return req
}

// exchange is one request and its answer, each body read and kept.
type exchange struct {
	req      *http.Request
	reqBody  []byte
	resp     *http.Response
	respBody []byte
}

// do sends req and reads the answer whole.
func do(tb testing.TB, req *http.Request) exchange {
	tb.Helper()
	var reqBody []byte
	if req.Body != nil {
		reqBody, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(reqBody))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	respBody, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	req.Body = io.NopCloser(bytes.NewReader(reqBody))
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	return exchange{req: req, reqBody: reqBody, resp: resp, respBody: respBody}
}

// post sends body as a signed event and returns the exchange.
func (b *eventsBot) post(tb testing.TB, body []byte) exchange {
	tb.Helper()
	return do(tb, b.eventRequest(tb, body))
}
