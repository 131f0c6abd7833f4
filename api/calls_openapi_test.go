package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
)

// recorder serves h and keeps every request and answer, read whole.
type recorder struct {
	h  http.Handler
	mu sync.Mutex
	xs []exchange
}

func (rec *recorder) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	rr := httptest.NewRecorder()
	rec.h.ServeHTTP(rr, r)
	resp := rr.Result()
	respBody := rr.Body.Bytes()
	saved := r.Clone(context.Background())
	saved.Body = io.NopCloser(bytes.NewReader(body))
	resp.Body = io.NopCloser(bytes.NewReader(respBody))
	rec.mu.Lock()
	rec.xs = append(rec.xs, exchange{req: saved, reqBody: body, resp: resp, respBody: respBody})
	rec.mu.Unlock()
	for k, vs := range rr.Header() {
		w.Header()[k] = vs
	}
	w.WriteHeader(rr.Code)
	w.Write(respBody)
}

func (rec *recorder) last(tb testing.TB) exchange {
	tb.Helper()
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.xs) == 0 {
		tb.Fatal("no call reached the backend")
	}
	return rec.xs[len(rec.xs)-1]
}

// TestCallsOutMatchOpenAPI: the bot's real client sends decisions and
// look-ups to the stand-in backend (which checks signatures and
// digests), through every answer of the calls' tables and with each
// optional feature on. Every request the client sends and every answer
// the stand-in gives matches openapi.yaml, and the bodies match the
// schemas the document references.
func TestCallsOutMatchOpenAPI(t *testing.T) {
	t.Parallel()
	v := openAPI(t)
	schemas := map[string]*jsonschema.Schema{
		"decision":  compile(t, decisionRequestSchema),
		"arguments": compile(t, argumentsRequestSchema),
	}
	sb, err := standin.New(standin.Options{Secrets: [][]byte{callsSecret}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: sb}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	client := func(secret []byte, features ...string) *backend.Client {
		c, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: [][]byte{secret},
			Features: features, MaxElapsed: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	plain := client(callsSecret)
	full := client(callsSecret, backend.FeatureApprovers, backend.FeatureTypedConfirmation)
	wrong := client([]byte("calls-secret-out-of-step-0123456789ab"))

	args := json.RawMessage(`{"to":"ada@acme.example","amount":{"currency":"EUR","sum":250}}`)
	for _, id := range []string{"a-ok", "a-again", "a-digest", "a-quorum", "a-typed", "a-deadline", "a-page", "a-lee", "a-cancel", "a-chg"} {
		sb.AddApproval(id, 1, args, false)
	}
	sb.AddApproval("a-stale", 2, args, false)
	sb.Cancel("a-cancel")
	sb.SetForbidden("user:mallory")
	sb.SetNoContent("user:lee")
	sb.SetChanges("a-chg", []backend.ChangedFileAnswer{{Path: "rules/policy.yaml", Protected: true}, {Path: "README.md"}}, "--- a\n+++ b\n")
	digest := sb.Digest("a-ok")
	slack := backend.Via{Surface: "slack", User: "U0KEVIN"}
	decision := func(id, decision string) backend.Decision {
		return backend.Decision{ApprovalID: id, Revision: 1, Decision: decision, Actor: "user:kevin", Via: slack,
			Comment: "looked at it", ArgsSHA256: digest}
	}
	at := time.Now().Add(-time.Minute)
	quorum := decision("a-quorum", backend.Approve)
	quorum.Approvers = []backend.Approver{
		{Actor: "user:ada", Via: backend.Via{Surface: "email", User: "ada@acme.example"}, At: at},
		{Actor: "user:kevin", Via: slack, At: at.Add(30 * time.Second), ArgsSHA256: digest},
	}
	typed := decision("a-typed", backend.Approve)
	typed.Via = backend.Via{Surface: "email", User: "kevin@acme.example"}
	typed.Confirmation = &backend.Confirmation{Argument: "amount", Value: `{"currency":"EUR","sum":250}`}
	mistyped := typed
	mistyped.Confirmation = &backend.Confirmation{Argument: "amount", Value: "250"}
	page := decision("a-page", backend.Approve)
	page.Via = backend.Via{Surface: "page", User: "user:kevin"}
	deadline := backend.Decision{ApprovalID: "a-deadline", Revision: 1, Decision: backend.Deny, Actor: "system:deadline",
		Via: backend.Via{Surface: "deadline"}, Comment: "nobody answered"}
	blind := decision("a-lee", backend.Deny)
	blind.Actor, blind.ArgsSHA256 = "user:lee", ""
	stale := decision("a-stale", backend.Deny)
	stale.ArgsSHA256 = ""
	mallory := decision("a-again", backend.Approve)
	mallory.Actor = "user:mallory"
	wrongDigest := decision("a-digest", backend.Approve)
	wrongDigest.ArgsSHA256 = "sha256:" + strings.Repeat("0", 64)

	type call struct {
		name   string
		do     func(ctx context.Context) error
		status int
		code   string
	}
	decide := func(c *backend.Client, d backend.Decision, key string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := c.Decide(ctx, d, key); return err }
	}
	lookUp := func(c *backend.Client, id string, revision int, actor string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := c.Arguments(ctx, backend.ArgumentsRequest{ApprovalID: id, Revision: revision, Actor: actor}, "lookup-"+id+"-"+actor)
			return err
		}
	}
	calls := []call{
		{"an approve bound to the digest", decide(plain, decision("a-ok", backend.Approve), "k-ok"), 200, ""},
		{"a decision after another", decide(plain, decision("a-ok", backend.Deny), "k-ok-2"), 409, "already_decided"},
		{"a deny without the digest", decide(plain, blind, "k-lee"), 200, ""},
		{"the deadline's deny", decide(plain, deadline, "k-deadline"), 200, ""},
		{"an approve from the decision page", decide(plain, page, "k-page"), 200, ""},
		{"a quorum's approve", decide(full, quorum, "k-quorum"), 200, ""},
		{"a typed confirmation that differs", decide(full, mistyped, "k-mistyped"), 422, "confirmation_mismatch"},
		{"a typed confirmation", decide(full, typed, "k-typed"), 200, ""},
		{"a stale revision", decide(plain, stale, "k-stale"), 409, "stale_revision"},
		{"another digest", decide(plain, wrongDigest, "k-digest"), 422, "digest_mismatch"},
		{"a forbidden actor", decide(plain, mallory, "k-mallory"), 403, "forbidden"},
		{"an unknown approval", decide(plain, decision("a-none", backend.Deny), "k-none"), 404, "not_found"},
		{"a cancelled approval", decide(plain, decision("a-cancel", backend.Deny), "k-cancel"), 410, "cancelled"},
		{"a calls secret out of step", decide(wrong, decision("a-again", backend.Deny), "k-wrong"), 401, "bad_signature"},
		{"a look-up", lookUp(plain, "a-ok", 1, "user:kevin"), 200, ""},
		{"a look-up of a changeset", lookUp(plain, "a-chg", 1, "user:kevin"), 200, ""},
		{"a look-up without the content permission", lookUp(plain, "a-again", 1, "user:lee"), 403, "forbidden"},
		{"a look-up of an unknown approval", lookUp(plain, "a-none", 1, "user:kevin"), 404, "not_found"},
		{"a look-up of a cancelled approval", lookUp(plain, "a-cancel", 1, "user:kevin"), 410, "cancelled"},
		{"the doctor's probe", lookUp(plain, "bot-doctor-probe", 1, "system:doctor"), 404, "not_found"},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.do(context.Background())
			x := rec.last(t)
			if x.resp.StatusCode != c.status {
				t.Fatalf("answer %d %s (client: %v), want %d %s", x.resp.StatusCode, x.respBody, err, c.status, c.code)
			}
			if c.code != "" {
				if got := decode(t, x.respBody).(map[string]any)["error"]; got != c.code {
					t.Fatalf("error %v, want %s", got, c.code)
				}
			}
			kind := x.req.URL.Path[strings.LastIndexByte(x.req.URL.Path, '/')+1:]
			if err := validate(schemas[kind], x.reqBody); err != nil {
				t.Errorf("the %s the bot sent does not match its schema: %v\n\t%s", kind, err, x.reqBody)
			}
			checkExchange(t, v, x)
		})
	}
}

// TestQuestionCallsMatchOpenAPI: the bot's real client sends answers and
// question look-ups (docs/protocol.md#questions) to the stand-in backend
// through every answer of their tables: each request and each answer
// matches openapi.yaml, and each body its schema.
func TestQuestionCallsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	v := openAPI(t)
	schemas := map[string]*jsonschema.Schema{
		"answer":   compile(t, answerRequestSchema),
		"question": compile(t, questionRequestSchema),
	}
	answers := map[string]*jsonschema.Schema{
		"answer":   compile(t, answerAnswerSchema),
		"question": compile(t, questionAnswerSchema),
	}
	sb, err := standin.New(standin.Options{Secrets: [][]byte{callsSecret}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{h: sb}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	client := func(secret []byte) *backend.Client {
		c, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: [][]byte{secret},
			Features: []string{backend.FeatureQuestions}, MaxElapsed: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	plain, wrong := client(callsSecret), client([]byte("calls-secret-out-of-step-0123456789ab"))
	q := approval.Question{Text: "Which account should I refund?", Choices: []string{"acct-1", "acct-2"}, FreeText: true}
	digest := approval.QuestionDigest(&q)
	for _, id := range []string{"q-choice", "q-words", "q-deadline", "q-wall", "q-cancel", "q-other"} {
		sb.AddQuestion(id, 1, q, id == "q-wall")
	}
	sb.AddQuestion("q-stale", 2, q, false)
	sb.SetNoContent("user:lee")
	if _, err := sb.CancelQuestion("acme", "q-cancel", "the job ended", time.Now()); err != nil {
		t.Fatal(err)
	}
	slack := backend.Via{Surface: "slack", User: "U0KEVIN"}
	choice := func(i int) *backend.AnswerBody { return &backend.AnswerBody{Choice: &i} }
	answer := func(id string, body *backend.AnswerBody) backend.AnswerRequest {
		return backend.AnswerRequest{QuestionID: id, Revision: 1, Answer: body, Actor: "user:kevin", Via: slack, QuestionSHA256: digest}
	}
	send := func(c *backend.Client, r backend.AnswerRequest, key string) func(context.Context) error {
		return func(ctx context.Context) error { _, err := c.Answer(ctx, r, key); return err }
	}
	lookUp := func(id string, revision int, actor string) func(context.Context) error {
		return func(ctx context.Context) error {
			_, err := plain.Question(ctx, backend.QuestionRequest{QuestionID: id, Revision: revision, Actor: actor}, "lookup-"+id+"-"+actor)
			return err
		}
	}
	walled := answer("q-wall", choice(0))
	walled.Actor, walled.Via, walled.QuestionSHA256 = "user:lee", backend.Via{Surface: "slack", User: "U0LEE"}, ""
	page := answer("q-words", &backend.AnswerBody{Text: "acct-2, with a note to the order"})
	page.Via = backend.Via{Surface: "page", User: "user:kevin"}
	otherDigest := answer("q-other", choice(0))
	otherDigest.QuestionSHA256 = "sha256:" + strings.Repeat("0", 64)
	calls := []struct {
		name   string
		do     func(ctx context.Context) error
		status int
		code   string
	}{
		{"a choice bound to the question", send(plain, answer("q-choice", choice(1)), "k-choice"), 200, ""},
		{"words from the decision page", send(plain, page, "k-words"), 200, ""},
		{"the deadline's nobody answered", send(plain, backend.AnswerRequest{QuestionID: "q-deadline", Revision: 1, Unanswered: true,
			Actor: "system:deadline", Via: backend.Via{Surface: "deadline"}, Comment: "nobody answered"}, "k-deadline"), 200, ""},
		{"an answer after another", send(plain, answer("q-choice", choice(0)), "k-choice-2"), 409, "already_answered"},
		{"an answer after the deadline", send(plain, answer("q-deadline", choice(0)), "k-deadline-2"), 409, "already_answered"},
		{"a stale revision", send(plain, answer("q-stale", choice(0)), "k-stale"), 409, "stale_revision"},
		{"a walled member", send(plain, walled, "k-lee"), 403, "forbidden"},
		{"another question's digest", send(plain, otherDigest, "k-other"), 422, "digest_mismatch"},
		{"a choice that is not one", send(plain, answer("q-other", choice(2)), "k-other-2"), 422, "invalid"},
		{"an unknown question", send(plain, answer("q-none", choice(0)), "k-none"), 404, "not_found"},
		{"a cancelled question", send(plain, answer("q-cancel", choice(0)), "k-cancel"), 410, "cancelled"},
		{"a calls secret out of step", send(wrong, answer("q-other", choice(0)), "k-wrong"), 401, "bad_signature"},
		{"a look-up", lookUp("q-wall", 1, "user:kevin"), 200, ""},
		{"a look-up without the content permission", lookUp("q-wall", 1, "user:lee"), 403, "forbidden"},
		{"a look-up of an earlier revision", lookUp("q-stale", 1, "user:kevin"), 409, "stale_revision"},
		{"a look-up of an unknown question", lookUp("q-none", 1, "user:kevin"), 404, "not_found"},
		{"a look-up of a cancelled question", lookUp("q-cancel", 1, "user:kevin"), 410, "cancelled"},
	}
	for _, c := range calls {
		t.Run(c.name, func(t *testing.T) {
			err := c.do(context.Background())
			x := rec.last(t)
			if x.resp.StatusCode != c.status {
				t.Fatalf("answer %d %s (client: %v), want %d %s", x.resp.StatusCode, x.respBody, err, c.status, c.code)
			}
			kind := x.req.URL.Path[strings.LastIndexByte(x.req.URL.Path, '/')+1:]
			if c.code != "" {
				if got := decode(t, x.respBody).(map[string]any)["error"]; got != c.code {
					t.Fatalf("error %v, want %s", got, c.code)
				}
			} else if err := validate(answers[kind], x.respBody); err != nil {
				t.Errorf("the stand-in's %s answer does not match its schema: %v\n\t%s", kind, err, x.respBody)
			}
			if err := validate(schemas[kind], x.reqBody); err != nil {
				t.Errorf("the %s the bot sent does not match its schema: %v\n\t%s", kind, err, x.reqBody)
			}
			checkExchange(t, v, x)
		})
	}
}
