package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/internal/fixtures"
)

// eventSink is a bot's events endpoint that checks each event's
// signature with the events secret and keeps its body.
type eventSink struct {
	url    string
	mu     sync.Mutex
	bodies [][]byte
}

func newEventSink(t *testing.T) *eventSink {
	s := &eventSink{}
	v := backend.Verifier{Secrets: [][]byte{[]byte(e2eEventsSecret)}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := v.Verify(r.Header.Get(backend.SignatureHeader), body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"status":"accepted"}`)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/v1/events"
	return s
}

// ids is the event id and the approval id of the n-th event received.
func (s *eventSink) ids(t *testing.T, n int) (event, approval string) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.bodies) <= n {
		t.Fatalf("the bot received %d events, want a %d-th", len(s.bodies), n+1)
	}
	var ev struct {
		ID   string `json:"id"`
		Data struct {
			ID         string `json:"id"`
			ApprovalID string `json:"approval_id"`
			QuestionID string `json:"question_id"`
		} `json:"data"`
	}
	if err := json.Unmarshal(s.bodies[n], &ev); err != nil {
		t.Fatal(err)
	}
	return ev.ID, ev.Data.ID + ev.Data.ApprovalID + ev.Data.QuestionID
}

// `bot event` needs only the events secret. It sends a request under a
// fresh approval id each run, and says so; a later event about an
// approval keeps the file's id, and --as-is keeps every id.
func TestEventSendsARequestUnderAFreshApprovalID(t *testing.T) {
	t.Parallel()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "examples", "bot.yaml")
	merge := filepath.Join(root, "testdata", "fixtures", "events", "merge.json")
	resolved := filepath.Join(root, "testdata", "fixtures", "events", "merge-resolved.json")
	sink := newEventSink(t)
	onlyEvents := map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}
	fresh := regexp.MustCompile(`^a-merge1\.[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[0-9a-f]{6}$`)
	var approvals []string
	for i := range 2 {
		code, out, errOut := runBot(t, onlyEvents, "event", "--config", example, "--url", sink.url, merge)
		if code != 0 {
			t.Fatalf("bot event with only the events secret: exit %d\n%s%s", code, out, errOut)
		}
		event, approval := sink.ids(t, i)
		if !fresh.MatchString(approval) || !strings.HasPrefix(event, "evt-0001.") ||
			!strings.Contains(out, "sending it as event "+event+"\napproval a-merge1 is sent as "+approval+", a fresh id, so this run shows a new card\n") {
			t.Errorf("run %d sent event %s about approval %s, and said:\n%s", i+1, event, approval, out)
		}
		approvals = append(approvals, approval)
	}
	if approvals[0] == approvals[1] {
		t.Errorf("both runs sent approval %s", approvals[0])
	}
	if code, out, errOut := runBot(t, onlyEvents, "event", "--config", example, "--url", sink.url, resolved); code != 0 || strings.Contains(out, "fresh id") {
		t.Errorf("bot event of a resolution: exit %d\n%s%s", code, out, errOut)
	}
	if _, approval := sink.ids(t, 2); approval != "a-merge1" {
		t.Errorf("a resolution was sent about approval %s, want the file's a-merge1", approval)
	}
	if code, _, errOut := runBot(t, onlyEvents, "event", "--config", example, "--url", sink.url, "--as-is", merge); code != 0 {
		t.Errorf("bot event --as-is: exit %d %s", code, errOut)
	}
	if event, approval := sink.ids(t, 3); event != "evt-0001" || approval != "a-merge1" {
		t.Errorf("--as-is sent event %s about approval %s", event, approval)
	}

	code, _, errOut := runBot(t, nil, "event", "--config", example, "--url", sink.url, merge)
	if code != 1 || !strings.Contains(errOut, "environment variable BOT_EVENTS_SECRET is not set") ||
		strings.Contains(errOut, "BOT_CALLS_SECRET") || strings.Contains(errOut, "BOT_LINK_SECRET") {
		t.Errorf("bot event without the events secret: exit %d\n%s", code, errOut)
	}

	// An approval id a fresh suffix would take past the protocol's 64
	// characters is refused before anything is sent.
	long := filepath.Join(t.TempDir(), "long.json")
	raw, err := os.ReadFile(merge)
	if err != nil {
		t.Fatal(err)
	}
	id := strings.Repeat("x", 50)
	if err := os.WriteFile(long, bytes.Replace(raw, []byte(`"id": "a-merge1"`), []byte(`"id": "`+id+`"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runBot(t, onlyEvents, "event", "--config", example, "--url", sink.url, long)
	if code != 1 || !strings.Contains(errOut, `approval id "`+id+`" is too long for a fresh one`) || !strings.Contains(errOut, "-as-is") {
		t.Errorf("bot event of a long approval id: exit %d\n%s", code, errOut)
	}
}

// An asked question is sent under a fresh question id each run, as a
// request is, and says so; its answer elsewhere keeps the file's id.
func TestEventSendsAQuestionUnderAFreshID(t *testing.T) {
	t.Parallel()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	example := filepath.Join(root, "examples", "bot.yaml")
	asked := filepath.Join(root, "testdata", "events", "question.json")
	answered := filepath.Join(root, "testdata", "events", "question-answered.json")
	sink := newEventSink(t)
	onlyEvents := map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret}
	fresh := regexp.MustCompile(`^q-refund1\.[0-9]{8}T[0-9]{6}\.[0-9]{3}Z-[0-9a-f]{6}$`)
	var questions []string
	for i := range 2 {
		code, out, errOut := runBot(t, onlyEvents, "event", "--config", example, "--url", sink.url, asked)
		if code != 0 {
			t.Fatalf("bot event of a question: exit %d\n%s%s", code, out, errOut)
		}
		event, question := sink.ids(t, i)
		if !fresh.MatchString(question) || !strings.HasPrefix(event, "evt-q001.") ||
			!strings.Contains(out, "question q-refund1 is sent as "+question+", a fresh id, so this run shows a new card\n") {
			t.Errorf("run %d sent event %s about question %s, and said:\n%s", i+1, event, question, out)
		}
		questions = append(questions, question)
	}
	if questions[0] == questions[1] {
		t.Errorf("both runs sent question %s", questions[0])
	}
	if code, out, errOut := runBot(t, onlyEvents, "event", "--config", example, "--url", sink.url, answered); code != 0 || strings.Contains(out, "fresh id") {
		t.Errorf("bot event of an answer elsewhere: exit %d\n%s%s", code, out, errOut)
	}
	if _, question := sink.ids(t, 2); question != "q-refund1" {
		t.Errorf("an answer elsewhere was sent about question %s, want the file's q-refund1", question)
	}
}

// An event id too long for its fresh suffix is refused before anything
// is sent, as an approval id is, with the way round it.
func TestFreshEventIDWithinTheProtocol(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("e", 120)
	body := fmt.Appendf(nil, `{"id":%q,"type":"approval.requested","time":"2026-12-01T09:26:00Z","data":{"id":"a-1"}}`, long)
	if _, err := moveEventToNow(body, time.Now()); err == nil || !strings.Contains(err.Error(), "event id") || !strings.Contains(err.Error(), "--as-is") {
		t.Fatalf("a 120-character event id: %v", err)
	}
}

// bot event needs only the events secret, even where another secret's
// format is checked (a Discord public key) and it is set, or a key that
// is no secret comes from the environment.
func TestEventNeedsOnlyTheEventsSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bot.yaml")
	cfg := `listen: "${BOT_LISTEN}"
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "1100000000000000000"
  public_key: "${DISCORD_PUBLIC_KEY}"
tenants:
  acme:
    post: [discord:channel:112233445566778899]
`
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"BOT_EVENTS_SECRET": e2eEventsSecret, "BOT_LISTEN": "127.0.0.1:8080",
		"DISCORD_PUBLIC_KEY": strings.Repeat("ab", 32)}
	c, err := loadForEvent(path, func(name string) (string, bool) { v, ok := env[name]; return v, ok })
	if err != nil {
		t.Fatalf("bot event's configuration with only the events secret: %v", err)
	}
	if c.Listen != "127.0.0.1:8080" {
		t.Errorf("listen = %q, want the environment's", c.Listen)
	}
	// What may not stand in: the events secret, and a variable that
	// holds no secret.
	for _, unset := range []string{"BOT_EVENTS_SECRET", "BOT_LISTEN"} {
		_, err := loadForEvent(path, func(name string) (string, bool) {
			v, ok := env[name]
			return v, ok && name != unset
		})
		if err == nil || !strings.Contains(err.Error(), unset) {
			t.Errorf("without %s: err = %v, want it named", unset, err)
		}
	}
}
