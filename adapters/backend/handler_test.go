package backend_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads"
)

// botConfig is the smallest configuration the events endpoint runs under:
// one tenant posting to one Slack channel, and two events secrets, as
// while a secret rotates. Secrets come from the environment (botEnv).
const botConfig = `
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}", "${BOT_EVENTS_SECRET_NEXT}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
tenants:
  acme:
    post: [slack:C0APPROVALS]
`

// botEnv is the environment botConfig reads. No secret is a substring of
// another, so a leak of one is found by searching for it.
var botEnv = map[string]string{
	"BOT_EVENTS_SECRET":      "events-secret-current-5f2a9c0123456789",
	"BOT_EVENTS_SECRET_NEXT": "events-secret-rotated-81d0e40123456789",
	"BOT_CALLS_SECRET":       "calls-secret-7b3e110123456789abcdef01",
	"SLACK_BOT_TOKEN":        "xoxb-dummy-token",
	"SLACK_SIGNING_SECRET":   "slack-signing-dummy",
}

func lookupBotEnv(k string) (string, bool) {
	v, ok := botEnv[k]
	return v, ok
}

// wallClock is the real clock: the Verifier checks signatures made with
// time.Now, so the service runs on the same time.
type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// discardSurface is a real Surface that performs nothing. The outbox is not
// run here: rows are only enqueued.
type discardSurface struct{}

var _ threads.Surface = discardSurface{}

func (discardSurface) Post(context.Context, threads.PostRequest) (threads.PostResult, error) {
	return threads.PostResult{}, nil
}
func (discardSurface) Edit(context.Context, threads.EditRequest) error     { return nil }
func (discardSurface) Reply(context.Context, threads.ReplyRequest) error   { return nil }
func (discardSurface) Notice(context.Context, threads.NoticeRequest) error { return nil }

// wiring is the ingest path as cmd/bot assembles it, without HTTP: an
// SQLite store on disk, the threads service over the parsed configuration,
// and the verifier of the configuration's events secrets.
type wiring struct {
	store    *sqlite.Store
	path     string
	service  *threads.Service
	verifier backend.Verifier
	// secrets are the events secrets in the file's order: [0] current,
	// [1] the rotated one.
	secrets [][]byte
	calls   []byte // the calls secret, which must not verify events
}

// wire builds the ingest path on a fresh database in a temporary directory.
func wire(tb testing.TB, log *slog.Logger) *wiring {
	tb.Helper()
	return wireQuestions(tb, log, true)
}

// wireQuestions is wire for a backend that sends questions or not
// (backend.features: questions).
func wireQuestions(tb testing.TB, log *slog.Logger, questions bool) *wiring {
	tb.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(botConfig), lookupBotEnv)
	if err != nil {
		tb.Fatalf("config.Parse: %v", err)
	}
	path := filepath.Join(tb.TempDir(), "bot.db")
	st := openStore(tb, path)
	// The backend these tests stand for sends its agents' questions too
	// (backend.features: questions), so every example event is taken.
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: wallClock{}, Logger: log,
		Fallback: discardSurface{}, Questions: questions})
	if err != nil {
		tb.Fatalf("threads.New: %v", err)
	}
	w := &wiring{store: st, path: path, service: svc}
	for _, s := range cfg.Backend.EventsSecrets {
		w.secrets = append(w.secrets, []byte(s.Reveal()))
	}
	if len(w.secrets) != 2 {
		tb.Fatalf("the configuration has %d events secrets, want 2", len(w.secrets))
	}
	w.calls = []byte(cfg.Backend.CallsSecrets[0].Reveal())
	w.verifier = backend.Verifier{Secrets: w.secrets}
	return w
}

// openStore opens and migrates the SQLite store at path, closed when the
// test ends.
func openStore(tb testing.TB, path string) *sqlite.Store {
	tb.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: path})
	if err != nil {
		tb.Fatalf("sqlite.Open: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return st
}

// syncLog is a log destination that handler goroutines write to while the
// test reads it.
type syncLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *syncLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *syncLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// eventsBot is the events endpoint served on a real loopback listener.
type eventsBot struct {
	*wiring
	srv  *httptest.Server
	logs *syncLog

	mu   sync.Mutex
	sigs []string // every signature header sent, to prove none is logged
}

func newEventsBot(t *testing.T) *eventsBot {
	t.Helper()
	return newEventsBotQuestions(t, true)
}

// newEventsBotQuestions is newEventsBot for a backend that sends
// questions or not.
func newEventsBotQuestions(t *testing.T, questions bool) *eventsBot {
	t.Helper()
	logs := &syncLog{}
	log := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	w := wireQuestions(t, log, questions)
	h := backend.NewHandler(backend.HandlerOptions{Verifier: w.verifier, Ingester: w.service,
		Logger: log, Registry: prometheus.NewRegistry()})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &eventsBot{wiring: w, srv: srv, logs: logs}
}

// answer is one response of the endpoint.
type answer struct {
	status      int
	contentType string
	allow       string
	raw         []byte
}

// request is one call of the endpoint. By default it is a POST of body
// with Content-Type application/json and a signature made now with the
// current events secret.
type request struct {
	method string
	body   []byte
	// headers override the defaults; an empty value removes the header.
	headers map[string]string
	// chunked sends the body without Content-Length, so only the read
	// limit can find it too large.
	chunked bool
	// claimLength, when set, is the Content-Length sent on a raw
	// connection, followed by body whatever its size.
	claimLength int64
}

// post sends body signed now with the current events secret, with headers
// overriding or (empty value) removing the defaults.
func (b *eventsBot) post(t *testing.T, body []byte, headers map[string]string) answer {
	t.Helper()
	return b.send(t, request{body: body, headers: headers})
}

func (b *eventsBot) headersFor(r request) map[string]string {
	h := map[string]string{
		"Content-Type":          "application/json",
		backend.SignatureHeader: backend.Sign(b.secrets[0], time.Now(), r.body),
	}
	for k, v := range r.headers {
		if v == "" {
			delete(h, k)
		} else {
			h[k] = v
		}
	}
	if sig, ok := h[backend.SignatureHeader]; ok {
		b.mu.Lock()
		b.sigs = append(b.sigs, sig)
		b.mu.Unlock()
	}
	return h
}

func (b *eventsBot) send(t *testing.T, r request) answer {
	t.Helper()
	headers := b.headersFor(r)
	if r.claimLength > 0 {
		return b.sendRaw(t, r, headers)
	}
	method := r.method
	if method == "" {
		method = http.MethodPost
	}
	var body io.Reader = bytes.NewReader(r.body)
	if r.chunked {
		body = io.NopCloser(body) // hides the length from net/http
	}
	req, err := http.NewRequestWithContext(t.Context(), method, b.srv.URL+"/v1/events", body)
	if err != nil {
		t.Fatal(err)
	}
	if r.chunked {
		req.ContentLength = -1
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s /v1/events: %v (the server did not answer)", method, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"),
		allow: resp.Header.Get("Allow"), raw: raw}
}

// sendRaw writes the request on its own connection, with a Content-Length
// net/http's client would not send for this body.
func (b *eventsBot) sendRaw(t *testing.T, r request, headers map[string]string) answer {
	t.Helper()
	addr := b.srv.Listener.Addr().String()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := conn.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	var head strings.Builder
	fmt.Fprintf(&head, "POST /v1/events HTTP/1.1\r\nHost: %s\r\nConnection: close\r\nContent-Length: %d\r\n", addr, r.claimLength)
	for k, v := range headers {
		fmt.Fprintf(&head, "%s: %s\r\n", k, v)
	}
	head.WriteString("\r\n")
	if _, err := io.WriteString(conn, head.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Write(r.body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("read the answer: %v (the server did not answer)", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	return answer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"),
		allow: resp.Header.Get("Allow"), raw: raw}
}

// want is an expected answer: 202 accepted, 200 duplicate, or an error.
type want struct {
	status int
	code   string // the error code; empty for 200 and 202
	// msg, when set, is how the error's message starts: for 422 the field
	// path it names.
	msg string
}

var (
	accepted  = want{status: http.StatusAccepted}
	duplicate = want{status: http.StatusOK}
)

func refused(status int, code string) want { return want{status: status, code: code} }

func invalid(msg string) want {
	return want{status: http.StatusUnprocessableEntity, code: "invalid", msg: msg}
}

// check compares an answer with w. Every answer is JSON; every error
// answer is exactly {"error","message"} with a message a person can act
// on (docs/protocol.md, "Errors").
func (w want) check(t *testing.T, a answer) {
	t.Helper()
	if a.status != w.status {
		t.Errorf("status = %d, want %d (body %.300s)", a.status, w.status, a.raw)
	}
	if a.contentType != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", a.contentType)
	}
	var got map[string]string
	if err := json.Unmarshal(a.raw, &got); err != nil {
		t.Fatalf("the body is not a JSON object of strings: %v (%.300s)", err, a.raw)
	}
	switch w.status {
	case http.StatusAccepted:
		if diff := cmp.Diff(map[string]string{"status": "accepted"}, got); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
		return
	case http.StatusOK:
		if diff := cmp.Diff(map[string]string{"status": "duplicate"}, got); diff != "" {
			t.Errorf("body (-want +got):\n%s", diff)
		}
		return
	}
	keys := slices.Sorted(maps.Keys(got))
	if !slices.Equal(keys, []string{"error", "message"}) {
		t.Errorf("error body has keys %q, want exactly error and message", keys)
	}
	if got["error"] != w.code {
		t.Errorf("error = %q, want %q (message %q)", got["error"], w.code, got["message"])
	}
	if strings.TrimSpace(got["message"]) == "" {
		t.Errorf("message is empty")
	}
	if w.msg != "" && !strings.HasPrefix(got["message"], w.msg) {
		t.Errorf("message = %q, want it to start with %q", got["message"], w.msg)
	}
}

// readFixture reads one example event as the backend sends it.
func readFixture(tb testing.TB, name string) []byte {
	tb.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		tb.Fatal(err)
	}
	body, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	return body
}

// fixtureOrder lists the example events in file order, except that
// orphan-resolved.json goes just before late-requested.json: the resolve
// of an approval arrives before its request (fixtures README).
func fixtureOrder(tb testing.TB) []string {
	tb.Helper()
	paths, err := fixtures.EventFiles()
	if err != nil {
		tb.Fatal(err)
	}
	var names []string
	for _, p := range paths {
		if n := filepath.Base(p); n != "orphan-resolved.json" {
			names = append(names, n)
		}
	}
	late := slices.Index(names, "late-requested.json")
	if late < 0 || len(names) == len(paths) {
		tb.Fatalf("fixtures lack late-requested.json or orphan-resolved.json: %q", names)
	}
	return slices.Insert(names, late, "orphan-resolved.json")
}

// editEvent decodes a fixture, sets each dotted path to its value (a
// json.Number keeps its digits; nil deletes the key) and encodes it again.
func editEvent(tb testing.TB, name string, edits map[string]any) []byte {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(readFixture(tb, name)))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil {
		tb.Fatalf("decode %s: %v", name, err)
	}
	for path, v := range edits {
		keys := strings.Split(path, ".")
		m := ev
		for _, k := range keys[:len(keys)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				tb.Fatalf("%s: %s is not an object", name, k)
			}
			m = next
		}
		if v == nil {
			delete(m, keys[len(keys)-1])
		} else {
			m[keys[len(keys)-1]] = v
		}
	}
	body, err := json.Marshal(ev)
	if err != nil {
		tb.Fatalf("encode %s: %v", name, err)
	}
	return body
}

var lastID atomic.Int64

// freshMerge is merge.json as a new event of a new approval, with edits.
func freshMerge(tb testing.TB, edits map[string]any) []byte {
	tb.Helper()
	n := lastID.Add(1)
	all := map[string]any{"id": fmt.Sprintf("evt-test-%d", n), "data.id": fmt.Sprintf("a-test-%d", n)}
	for k, v := range edits {
		all[k] = v
	}
	return editEvent(tb, "merge.json", all)
}

// paddedMerge is a fresh, valid merge event of exactly size bytes, padded
// inside the call's arguments (the display projection has no size limit
// of its own: the body limit bounds it).
func paddedMerge(tb testing.TB, size int) []byte {
	tb.Helper()
	const marker = "PADDING-GOES-HERE"
	body := freshMerge(tb, map[string]any{"data.call.arguments.pad": marker})
	n := size - (len(body) - len(marker))
	if n < 0 {
		tb.Fatalf("cannot pad a %d-byte event to %d bytes", len(body), size)
	}
	body = bytes.Replace(body, []byte(marker), bytes.Repeat([]byte("x"), n), 1)
	if len(body) != size {
		tb.Fatalf("padded event is %d bytes, want %d", len(body), size)
	}
	return body
}

// nested is a JSON object nested depth deep; closed false cuts it before
// the innermost value.
func nested(depth int, closed bool) []byte {
	s := strings.Repeat(`{"a":`, depth)
	if closed {
		s += "1" + strings.Repeat("}", depth)
	}
	return []byte(s)
}

// endpointCase is one request and the answer it must get.
type endpointCase struct {
	name string
	req  request
	want want
	// resend: afterwards the same body, signed correctly, is accepted
	// (202, not 200): the refused request stored nothing.
	resend bool
}

func (b *eventsBot) run(t *testing.T, c endpointCase) {
	t.Helper()
	c.want.check(t, b.send(t, c.req))
	if c.resend {
		accepted.check(t, b.post(t, c.req.body, nil))
	}
}

func badJSONCases(t *testing.T) []endpointCase {
	merge := readFixture(t, "merge.json")
	withBadUTF8 := bytes.Replace(freshMerge(t, map[string]any{"data.agent_says": "BAD-UTF8-HERE"}),
		[]byte("BAD-UTF8-HERE"), []byte("bad \xff\xfe utf-8"), 1)
	badJSON := refused(http.StatusBadRequest, "bad_json")
	return []endpointCase{
		{name: "not JSON", req: request{body: []byte("this is not JSON")}, want: badJSON},
		{name: "a JSON array", req: request{body: slices.Concat([]byte("["), merge, []byte("]"))}, want: badJSON},
		{name: "a JSON string", req: request{body: []byte(`"an event"`)}, want: badJSON},
		{name: "JSON null", req: request{body: []byte("null")}, want: badJSON},
		{name: "truncated fixture", req: request{body: merge[:len(merge)/2]}, want: badJSON},
		{name: "invalid UTF-8 inside a string", req: request{body: withBadUTF8}, want: badJSON},
		{name: "nested 10000 deep, cut short", req: request{body: nested(10000, false)}, want: badJSON},
		{name: "nested 10001 deep", req: request{body: nested(10001, true)}, want: badJSON},
		// Well-formed, but deeper than any event nests (approval.MaxDepth):
		// refused before decoding.
		{name: "object nested 10000 deep", req: request{body: nested(10000, true)}, want: badJSON},
		{name: "empty body", req: request{body: []byte{}}, want: badJSON},
		{name: "whitespace only", req: request{body: []byte(" \n\t ")}, want: badJSON},
	}
}

func TestEventsFixturesAcceptedOnceThenDuplicate(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	names := fixtureOrder(t)
	for _, pass := range []struct {
		name string
		want want
	}{{"first delivery", accepted}, {"redelivery", duplicate}} {
		for _, n := range names {
			t.Run(pass.name+"/"+n, func(t *testing.T) {
				pass.want.check(t, b.post(t, readFixture(t, n), nil))
			})
		}
	}
	t.Run("signed with the rotated secret", func(t *testing.T) {
		body := freshMerge(t, nil)
		sig := map[string]string{backend.SignatureHeader: backend.Sign(b.secrets[1], time.Now(), body)}
		accepted.check(t, b.post(t, body, sig))
		duplicate.check(t, b.post(t, body, sig))
	})
	t.Run("signed with both secrets", func(t *testing.T) {
		body := freshMerge(t, nil)
		accepted.check(t, b.post(t, body, map[string]string{
			backend.SignatureHeader: backend.SignAll(b.secrets, time.Now(), body)}))
	})
	t.Run("a redelivery signed with the other secret", func(t *testing.T) {
		body := readFixture(t, "merge.json")
		duplicate.check(t, b.post(t, body, map[string]string{
			backend.SignatureHeader: backend.Sign(b.secrets[1], time.Now(), body)}))
	})
}

func TestEventsBadJSON(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, c := range badJSONCases(t) {
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
}

func badSignatureCases(t *testing.T, b *eventsBot) []endpointCase {
	badSig := refused(http.StatusUnauthorized, "bad_signature")
	sign := func(secret []byte, at time.Time, body []byte) map[string]string {
		return map[string]string{backend.SignatureHeader: backend.Sign(secret, at, body)}
	}
	now := time.Now()
	c := func(name string, body []byte, headers map[string]string) endpointCase {
		return endpointCase{name: name, req: request{body: body, headers: headers}, want: badSig, resend: true}
	}
	tampered := freshMerge(t, nil)
	signedBody := bytes.Replace(tampered, []byte(`"pr":`), []byte(`"pr": `), 1) // one more byte
	if bytes.Equal(signedBody, tampered) {
		t.Fatal("merge.json has no call.arguments.pr to tamper with")
	}
	fresh := func() []byte { return freshMerge(t, nil) }
	var cases []endpointCase
	body := fresh()
	cases = append(cases, c("no header", body, map[string]string{backend.SignatureHeader: ""}))
	body = fresh()
	cases = append(cases, c("malformed header", body, map[string]string{backend.SignatureHeader: "t=yesterday,v1=beef"}))
	body = fresh()
	cases = append(cases, c("v1 without t", body, map[string]string{
		backend.SignatureHeader: strings.TrimPrefix(sign(b.secrets[0], now, body)[backend.SignatureHeader], fmt.Sprintf("t=%d,", now.Unix()))}))
	body = fresh()
	cases = append(cases, c("wrong secret", body, sign([]byte("not-a-configured-secret"), now, body)))
	body = fresh()
	cases = append(cases, c("the calls secret", body, sign(b.calls, now, body)))
	cases = append(cases, c("tampered body", tampered, sign(b.secrets[0], now, signedBody)))
	body = fresh()
	cases = append(cases, c("301 s old", body, sign(b.secrets[0], now.Add(-301*time.Second), body)))
	body = fresh()
	cases = append(cases, c("302 s ahead", body, sign(b.secrets[0], now.Add(302*time.Second), body)))
	return cases
}

func TestEventsBadSignature(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, c := range badSignatureCases(t, b) {
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
	t.Run("logs carry no secret and no signature", func(t *testing.T) {
		logs := b.logs.String()
		if !strings.Contains(logs, "bad signature") {
			t.Fatalf("no refusal was logged; logs:\n%s", logs)
		}
		for _, s := range slices.Concat(b.secrets, [][]byte{b.calls}) {
			if strings.Contains(logs, string(s)) {
				t.Errorf("a secret is in the logs")
			}
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, sig := range b.sigs {
			for _, part := range strings.Split(sig, ",") {
				if v, ok := strings.CutPrefix(part, "v1="); ok && len(v) >= 16 && strings.Contains(logs, v) {
					t.Errorf("a signature sent is in the logs")
				}
			}
		}
	})
}

func tooLargeCases(t *testing.T, b *eventsBot) []endpointCase {
	tooLarge := refused(http.StatusRequestEntityTooLarge, "too_large")
	over := paddedMerge(t, backend.MaxBody+1)
	overChunked := paddedMerge(t, backend.MaxBody+1)
	small := freshMerge(t, nil)
	return []endpointCase{
		{name: "1 MiB + 1 byte", req: request{body: over}, want: tooLarge},
		{name: "1 MiB + 1 byte without Content-Length", req: request{body: overChunked, chunked: true}, want: tooLarge},
		{name: "Content-Length over the limit", req: request{body: small, claimLength: backend.MaxBody + 1}, want: tooLarge,
			resend: true},
	}
}

func TestEventsTooLarge(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, c := range tooLargeCases(t, b) {
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
	t.Run("exactly 1 MiB is not too large", func(t *testing.T) {
		accepted.check(t, b.post(t, paddedMerge(t, backend.MaxBody), nil))
	})
	t.Run("exactly 1 MiB without Content-Length", func(t *testing.T) {
		accepted.check(t, b.send(t, request{body: paddedMerge(t, backend.MaxBody), chunked: true}))
	})
}

func mediaTypeCases(t *testing.T) []endpointCase {
	unsupported := refused(http.StatusUnsupportedMediaType, "unsupported_media_type")
	return []endpointCase{
		{name: "text/plain", req: request{body: freshMerge(t, nil), headers: map[string]string{"Content-Type": "text/plain"}},
			want: unsupported, resend: true},
		{name: "no Content-Type", req: request{body: freshMerge(t, nil), headers: map[string]string{"Content-Type": ""}},
			want: unsupported, resend: true},
		{name: "application/json-seq", req: request{body: freshMerge(t, nil), headers: map[string]string{"Content-Type": "application/json-seq"}},
			want: unsupported},
		{name: "unparsable media type", req: request{body: freshMerge(t, nil), headers: map[string]string{"Content-Type": "application/json; ="}},
			want: unsupported},
	}
}

func TestEventsMediaType(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, c := range mediaTypeCases(t) {
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
	for _, ct := range []string{"application/json; charset=utf-8", "Application/JSON"} {
		t.Run(ct+" is accepted", func(t *testing.T) {
			accepted.check(t, b.post(t, freshMerge(t, nil), map[string]string{"Content-Type": ct}))
		})
	}
}

func invalidCases(t *testing.T) []endpointCase {
	return []endpointCase{
		{name: "400-digit revision",
			req:  request{body: freshMerge(t, map[string]any{"data.revision": json.Number(strings.Repeat("9", 400))})},
			want: invalid("data.revision: ")},
		{name: "bad args_sha256",
			req:  request{body: freshMerge(t, map[string]any{"data.call.args_sha256": "sha256:not-hex"})},
			want: invalid("data.call.args_sha256: want sha256:<64 hex>")},
		{name: "data.tenant is not the envelope's",
			req:  request{body: freshMerge(t, map[string]any{"data.tenant": "globex"})},
			want: invalid("data.tenant: ")},
		{name: "no call.function",
			req:  request{body: freshMerge(t, map[string]any{"data.call.function": nil})},
			want: invalid("data.call.function: ")},
		{name: "unknown type",
			req:  request{body: freshMerge(t, map[string]any{"type": "approval.teleported"})},
			want: invalid("type: ")},
	}
}

func TestEventsInvalid(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, c := range invalidCases(t) {
		c.resend = false
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
	t.Run("an accepted id with a different body", func(t *testing.T) {
		accepted.check(t, b.post(t, readFixture(t, "merge.json"), nil))
		changed := editEvent(t, "merge.json", map[string]any{"data.agent_says": "Merging something else."})
		invalid("id: ").check(t, b.post(t, changed, nil))
		duplicate.check(t, b.post(t, readFixture(t, "merge.json"), nil)) // the stored event is unchanged
	})
}

func TestEventsUnknownTenant(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, name := range []string{"merge.json", "merge-resolved.json", "auto.json"} {
		t.Run(name, func(t *testing.T) {
			edits := map[string]any{"tenant": "globex"}
			if name == "merge.json" {
				edits["data.tenant"] = "globex"
			}
			want{status: http.StatusUnprocessableEntity, code: "unknown_tenant", msg: "tenant: "}.
				check(t, b.post(t, editEvent(t, name, edits), nil))
		})
	}
	t.Run("the same event for acme is then accepted", func(t *testing.T) {
		accepted.check(t, b.post(t, readFixture(t, "merge.json"), nil))
	})
}

func TestEventsMethodNotAllowed(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	for _, m := range []string{http.MethodGet, http.MethodPut} {
		t.Run(m, func(t *testing.T) {
			a := b.send(t, request{method: m, body: readFixture(t, "merge.json")})
			refused(http.StatusMethodNotAllowed, "method_not_allowed").check(t, a)
			if a.allow != http.MethodPost {
				t.Errorf("Allow = %q, want POST", a.allow)
			}
		})
	}
}

func TestEventsStoreUnavailable(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	accepted.check(t, b.post(t, readFixture(t, "merge.json"), nil))
	if err := b.store.Close(); err != nil {
		t.Fatalf("close the store: %v", err)
	}
	unavailable := refused(http.StatusServiceUnavailable, "unavailable")
	for _, c := range []endpointCase{
		{name: "a new event", req: request{body: freshMerge(t, nil)}, want: unavailable},
		{name: "a redelivery", req: request{body: readFixture(t, "merge.json")}, want: unavailable},
		{name: "a resolve", req: request{body: readFixture(t, "merge-resolved.json")}, want: unavailable},
		{name: "still refuses bad JSON", req: request{body: []byte("{")}, want: refused(http.StatusBadRequest, "bad_json")},
		{name: "still refuses a bad signature", req: request{body: freshMerge(t, nil),
			headers: map[string]string{backend.SignatureHeader: ""}}, want: refused(http.StatusUnauthorized, "bad_signature")},
		{name: "still answers GET", req: request{method: http.MethodGet}, want: refused(http.StatusMethodNotAllowed, "method_not_allowed")},
		{name: "another new event", req: request{body: freshMerge(t, nil)}, want: unavailable},
	} {
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
}

// TestEventsStaysUp sends every bad input to one bot, then a good event:
// nothing refused leaves the bot unable to accept.
func TestEventsStaysUp(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	cases := slices.Concat(badJSONCases(t), badSignatureCases(t, b), tooLargeCases(t, b), mediaTypeCases(t), invalidCases(t),
		[]endpointCase{{name: "GET", req: request{method: http.MethodGet}, want: refused(http.StatusMethodNotAllowed, "method_not_allowed")}})
	for _, c := range cases {
		c.resend = false // only the good event at the end is sent correctly
		t.Run(c.name, func(t *testing.T) { b.run(t, c) })
	}
	t.Run("a good event afterwards", func(t *testing.T) {
		accepted.check(t, b.post(t, readFixture(t, "merge.json"), nil))
		duplicate.check(t, b.post(t, readFixture(t, "merge.json"), nil))
	})
}

// TestAlertedAnswersAreCountedFromZero: the answers ApprovalsBotEventsRefused
// watches exist at 0 before any event, so the first one after a start
// is a rise the alert sees.
func TestAlertedAnswersAreCountedFromZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	w := wire(t, slog.New(slog.DiscardHandler))
	backend.NewHandler(backend.HandlerOptions{Verifier: w.verifier, Ingester: w.service, Logger: slog.New(slog.DiscardHandler), Registry: reg})
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "bot_events_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			got[labels["type"]+" "+labels["answer"]] = m.GetCounter().GetValue()
		}
	}
	want := []string{"unparsed bad_signature"}
	for _, typ := range approval.EventTypes() {
		want = append(want, string(typ)+" unavailable")
	}
	for _, k := range want {
		if v, ok := got[k]; !ok || v != 0 {
			t.Errorf("bot_events_total{%s} before any event: %v (present %v), want 0", k, v, ok)
		}
	}
}
