package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend"
)

const digest = "sha256:22000fa35fce701034aa16fa399915912c97492968192b1eb78e782b157baa2d"

// fakeTime is the client's clock and sleep: Sleep records the wait and moves
// Now forward by it, so minutes of backoff take no real time.
type fakeTime struct {
	mu      sync.Mutex
	now     time.Time
	sleeps  []time.Duration
	onSleep func(n int) // called with the 1-based sleep count, before it returns
}

func newFakeTime() *fakeTime { return &fakeTime{now: signNow} }

func (f *fakeTime) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeTime) Sleep(ctx context.Context, d time.Duration) error {
	f.mu.Lock()
	f.sleeps = append(f.sleeps, d)
	f.now = f.now.Add(d)
	n, hook := len(f.sleeps), f.onSleep
	f.mu.Unlock()
	if hook != nil {
		hook(n)
	}
	return ctx.Err()
}

func (f *fakeTime) Sleeps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]time.Duration(nil), f.sleeps...)
}

// received is one request as the test server saw it.
type received struct {
	Method, Path, ContentType, Key, Signature string
	Body                                      []byte
	SignatureErr                              error
}

// server is an httptest server that records every request, checks its
// signature against the first calls secret only (the client must sign with
// the first), and answers with reply(n) for the n-th request (1-based).
type server struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []received
}

func newServer(t *testing.T, clock func() time.Time, reply func(n int, w http.ResponseWriter, r *http.Request)) *server {
	t.Helper()
	s := &server{}
	v := backend.Verifier{Secrets: [][]byte{secretOld}, Now: clock}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		sig := r.Header.Get(backend.SignatureHeader)
		s.mu.Lock()
		s.reqs = append(s.reqs, received{
			Method: r.Method, Path: r.URL.EscapedPath(), ContentType: r.Header.Get("Content-Type"),
			Key: r.Header.Get("Idempotency-Key"), Signature: sig, Body: body,
			SignatureErr: v.Verify(sig, body),
		})
		n := len(s.reqs)
		s.mu.Unlock()
		reply(n, w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *server) Requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.reqs...)
}

func answerJSON(status int, body string) func(int, http.ResponseWriter, *http.Request) {
	return func(_ int, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

func newClient(t *testing.T, url string, ft *fakeTime, edit ...func(*backend.ClientOptions)) *backend.Client {
	t.Helper()
	o := backend.ClientOptions{
		BaseURL: url,
		Secrets: [][]byte{secretOld, secretNew},
		Now:     ft.Now,
		Sleep:   ft.Sleep,
	}
	for _, e := range edit {
		e(&o)
	}
	c, err := backend.NewClient(o)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

func kevinDenies() backend.Decision {
	return backend.Decision{
		ApprovalID: "a-7Q2K9", Revision: 1, Decision: backend.Deny, Actor: "user:kevin",
		Via: backend.Via{Surface: "slack", User: "U0KEVIN"}, Comment: "not before the release",
		ArgsSHA256: digest,
	}
}

func TestDecideOutcomes(t *testing.T) {
	t.Parallel()
	mismatch := "approval a-7Q2K9 is not for the arguments " + digest + " you decided on: look at the call again"
	tests := []struct {
		name   string
		status int
		body   string
		want   backend.DecisionResult
	}{
		{"approved", 200, `{"status":"approved","message":"The call to acme_github.merge runs."}`,
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "approved", Message: "The call to acme_github.merge runs."}},
		{"denied", 200, `{"status":"denied","message":"The call to acme_github.merge was not made: user:kevin denied it: not before the release."}`,
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "denied", Message: "The call to acme_github.merge was not made: user:kevin denied it: not before the release."}},
		{"already decided", 409, `{"error":"already_decided","message":"user:ada approved it first.","status":"approved","actor":"user:ada"}`,
			backend.DecisionResult{Outcome: backend.OutcomeAlreadyDecided, Status: "approved", Actor: "user:ada", Message: "user:ada approved it first."}},
		{"stale revision", 409, `{"error":"stale_revision","message":"The call changed: look at the new card."}`,
			backend.DecisionResult{Outcome: backend.OutcomeStaleRevision, Message: "The call changed: look at the new card."}},
		{"digest mismatch, message verbatim", 422, `{"error":"digest_mismatch","message":"` + mismatch + `"}`,
			backend.DecisionResult{Outcome: backend.OutcomeDigestMismatch, Message: mismatch}},
		{"forbidden", 403, `{"error":"forbidden","message":"You may not approve a job you started."}`,
			backend.DecisionResult{Outcome: backend.OutcomeForbidden, Message: "You may not approve a job you started."}},
		{"not found", 404, `{"error":"not_found","message":"No approval a-7Q2K9."}`,
			backend.DecisionResult{Outcome: backend.OutcomeNotFound, Message: "No approval a-7Q2K9."}},
		{"cancelled", 410, `{"error":"cancelled","message":"The job ended."}`,
			backend.DecisionResult{Outcome: backend.OutcomeCancelled, Message: "The job ended."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(tt.status, tt.body))
			got, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "key-1")
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			reqs := srv.Requests()
			if len(reqs) != 1 {
				t.Fatalf("server saw %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != "POST" || r.Path != "/v1/approvals/a-7Q2K9/decision" || r.ContentType != "application/json" || r.Key != "key-1" {
				t.Errorf("request %s %s Content-Type %q Idempotency-Key %q", r.Method, r.Path, r.ContentType, r.Key)
			}
			if r.SignatureErr != nil {
				t.Errorf("signature does not verify with the first secret: %v", r.SignatureErr)
			}
		})
	}
}

func TestArgumentsOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
		body   string
		want   backend.ArgumentsResult
	}{
		// Extra fields (the fixtures carry approval_id) are ignored.
		{"found", 200, `{"approval_id":"a-7Q2K9","arguments":{"repo":"acme/api","pr":1234},"args_sha256":"` + digest + `"}`,
			backend.ArgumentsResult{Outcome: backend.OutcomeOK, Arguments: json.RawMessage(`{"repo":"acme/api","pr":1234}`), ArgsSHA256: digest}},
		{"forbidden", 403, `{"error":"forbidden","message":"You do not hold the content permission."}`,
			backend.ArgumentsResult{Outcome: backend.OutcomeForbidden, Message: "You do not hold the content permission."}},
		{"not found", 404, `{"error":"not_found","message":"No approval a-7Q2K9."}`,
			backend.ArgumentsResult{Outcome: backend.OutcomeNotFound, Message: "No approval a-7Q2K9."}},
		{"cancelled", 410, `{"error":"cancelled","message":"The job ended."}`,
			backend.ArgumentsResult{Outcome: backend.OutcomeCancelled, Message: "The job ended."}},
		{"stale revision", 409, `{"error":"stale_revision","message":"The call changed."}`,
			backend.ArgumentsResult{Outcome: backend.OutcomeStaleRevision, Message: "The call changed."}},
		// Keys of the tool's own are distinct whatever their case.
		{"keys differing in case inside the arguments", 200, `{"arguments":{"to":"a@example.com","To":"b@example.com"},"args_sha256":"` + digest + `"}`,
			backend.ArgumentsResult{Outcome: backend.OutcomeOK, Arguments: json.RawMessage(`{"to":"a@example.com","To":"b@example.com"}`), ArgsSHA256: digest}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(tt.status, tt.body))
			req := backend.ArgumentsRequest{ApprovalID: "a-7Q2K9", Revision: 2, Actor: "user:kevin"}
			got, err := newClient(t, srv.URL, ft).Arguments(context.Background(), req, "look-1")
			if err != nil {
				t.Fatalf("Arguments: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Arguments (-want +got):\n%s", diff)
			}
			r := srv.Requests()[0]
			if r.Path != "/v1/approvals/a-7Q2K9/arguments" || r.Key != "look-1" || r.SignatureErr != nil {
				t.Errorf("request %s key %q signature %v", r.Path, r.Key, r.SignatureErr)
			}
			if want := `{"approval_id":"a-7Q2K9","revision":2,"actor":"user:kevin"}`; string(r.Body) != want {
				t.Errorf("body %s, want %s", r.Body, want)
			}
		})
	}
}

// TestEveryOutcomeIsReachable keeps the outcome tables above in step with
// Outcomes(): a new Outcome needs a case.
func TestEveryOutcomeIsReachable(t *testing.T) {
	t.Parallel()
	covered := map[backend.Outcome]bool{
		backend.OutcomeRecorded: true, backend.OutcomeOK: true, backend.OutcomeAlreadyDecided: true,
		backend.OutcomeStaleRevision: true, backend.OutcomeDigestMismatch: true, backend.OutcomeForbidden: true,
		backend.OutcomeNotFound: true, backend.OutcomeCancelled: true,
	}
	for _, o := range backend.Outcomes() {
		if !covered[o] {
			t.Errorf("outcome %q has no case in the outcome tests", o)
		}
		delete(covered, o)
	}
	for o := range covered {
		t.Errorf("outcome %q is missing from Outcomes()", o)
	}
}

func TestDecideErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		status   int
		body     string
		protocol *backend.ProtocolError // nil: an error that is not a ProtocolError
	}{
		{"bad signature", 401, `{"error":"bad_signature","message":"The signature does not verify."}`,
			&backend.ProtocolError{Status: 401, Code: "bad_signature", Message: "The signature does not verify."}},
		{"bad json", 400, `{"error":"bad_json","message":"Not JSON."}`,
			&backend.ProtocolError{Status: 400, Code: "bad_json", Message: "Not JSON."}},
		{"422 invalid", 422, `{"error":"invalid","message":"revision: want ≥ 1"}`,
			&backend.ProtocolError{Status: 422, Code: "invalid", Message: "revision: want ≥ 1"}},
		{"409 with another code", 409, `{"error":"conflict","message":"?"}`,
			&backend.ProtocolError{Status: 409, Code: "conflict", Message: "?"}},
		{"404 from a proxy, not the error shape", 404, `<html>Not Found</html>`,
			&backend.ProtocolError{Status: 404}},
		{"redirect not followed", 307, ``, &backend.ProtocolError{Status: 307}},
		{"200 not JSON", 200, `<html>ok</html>`, nil},
		{"200 unknown status", 200, `{"status":"pending","message":""}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, func(n int, w http.ResponseWriter, r *http.Request) {
				if tt.status == 307 {
					w.Header().Set("Location", "/elsewhere")
				}
				answerJSON(tt.status, tt.body)(n, w, r)
			})
			_, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "key-1")
			if err == nil {
				t.Fatal("Decide succeeded, want an error")
			}
			if errors.Is(err, backend.ErrUnavailable) {
				t.Errorf("Decide = %v: an answer is not ErrUnavailable", err)
			}
			var pe *backend.ProtocolError
			if tt.protocol != nil {
				if !errors.As(err, &pe) {
					t.Fatalf("Decide = %v, want a *ProtocolError", err)
				}
				if diff := cmp.Diff(tt.protocol, pe); diff != "" {
					t.Errorf("ProtocolError (-want +got):\n%s", diff)
				}
			} else if errors.As(err, &pe) {
				t.Errorf("Decide = %v, want an error that is not a *ProtocolError", err)
			}
			if !strings.Contains(err.Error(), "decide a-7Q2K9 revision 1") {
				t.Errorf("error %q does not name the call", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1 (not retried)", n)
			}
		})
	}
}

func TestArgumentsErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, body string }{
		{"not JSON", `nope`},
		{"no arguments", `{"args_sha256":"` + digest + `"}`},
		{"arguments null", `{"arguments":null,"args_sha256":"` + digest + `"}`},
		{"arguments not an object", `{"arguments":[1],"args_sha256":"` + digest + `"}`},
		{"no digest", `{"arguments":{}}`},
		{"digest uppercase", `{"arguments":{},"args_sha256":"` + strings.ToUpper(digest) + `"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(200, tt.body))
			req := backend.ArgumentsRequest{ApprovalID: "a-7Q2K9", Revision: 1, Actor: "user:kevin"}
			if _, err := newClient(t, srv.URL, ft).Arguments(context.Background(), req, "k"); err == nil {
				t.Error("Arguments succeeded, want an error")
			}
		})
	}
}

// TestAnswersWithTwoReadings: an answer that holds a key twice, or spells
// a field in another letter case, is refused and not retried:
// encoding/json would pick one of its readings silently. The error names
// no key of the arguments, which are restricted content.
func TestAnswersWithTwoReadings(t *testing.T) {
	t.Parallel()
	const secretKey, evil = "recipient_token", "evil.example"
	other := "sha256:" + strings.Repeat("0", 64)
	type call func(c *backend.Client) error
	lookUp := func(c *backend.Client) error {
		_, err := c.Arguments(context.Background(), backend.ArgumentsRequest{ApprovalID: "a-7Q2K9", Revision: 1, Actor: "user:kevin"}, "k")
		return err
	}
	decide := func(c *backend.Client) error {
		_, err := c.Decide(context.Background(), kevinDenies(), "k")
		return err
	}
	tests := []struct {
		name     string
		call     call
		status   int
		body     string
		protocol *backend.ProtocolError // nil: an error that is not a ProtocolError
	}{
		{"arguments twice", lookUp, 200,
			`{"arguments":{"to":"a@example.com"},"args_sha256":"` + digest + `","arguments":{"to":"x@` + evil + `"}}`, nil},
		{"arguments in another case", lookUp, 200,
			`{"arguments":{"to":"a@example.com"},"args_sha256":"` + digest + `","Arguments":{"to":"x@` + evil + `"}}`, nil},
		{"the digest twice", lookUp, 200,
			`{"arguments":{},"args_sha256":"` + digest + `","args_sha256":"` + other + `"}`, nil},
		{"the digest in another case", lookUp, 200,
			`{"arguments":{},"args_sha256":"` + digest + `","ARGS_SHA256":"` + other + `"}`, nil},
		{"a key twice inside the arguments", lookUp, 200,
			`{"arguments":{"` + secretKey + `":"a","` + secretKey + `":"x@` + evil + `"},"args_sha256":"` + digest + `"}`, nil},
		{"a key twice deep inside the arguments", lookUp, 200,
			`{"arguments":{"mail":[{"` + secretKey + `":"a","` + secretKey + `":"b"}]},"args_sha256":"` + digest + `"}`, nil},
		{"the recorded status twice", decide, 200, `{"status":"denied","message":"m","status":"approved"}`, nil},
		{"the recorded status in another case", decide, 200, `{"status":"denied","Status":"approved","message":"m"}`, nil},
		// An error body with two readings is not the listed shape.
		{"already decided, the actor twice", decide, 409,
			`{"error":"already_decided","message":"m","status":"approved","actor":"user:ada","actor":"user:mallory"}`,
			&backend.ProtocolError{Status: 409}},
		{"forbidden, the code in another case", lookUp, 403,
			`{"error":"forbidden","Error":"cancelled","message":"m"}`, &backend.ProtocolError{Status: 403}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(tt.status, tt.body))
			err := tt.call(newClient(t, srv.URL, ft))
			if err == nil {
				t.Fatal("the call succeeded, want an error")
			}
			if errors.Is(err, backend.ErrUnavailable) {
				t.Errorf("error %v: an answer is not ErrUnavailable", err)
			}
			var pe *backend.ProtocolError
			if tt.protocol != nil {
				if !errors.As(err, &pe) {
					t.Fatalf("error %v, want a *ProtocolError", err)
				}
				if diff := cmp.Diff(tt.protocol, pe); diff != "" {
					t.Errorf("ProtocolError (-want +got):\n%s", diff)
				}
			} else if errors.As(err, &pe) {
				t.Errorf("error %v, want an error that is not a *ProtocolError", err)
			}
			if msg := err.Error(); strings.Contains(msg, secretKey) || strings.Contains(msg, evil) {
				t.Errorf("error %q repeats the arguments", msg)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1 (not retried)", n)
			}
		})
	}
}

// TestDecisionWireBody pins the JSON the backend receives.
func TestDecisionWireBody(t *testing.T) {
	t.Parallel()
	restricted := kevinDenies()
	restricted.ArgsSHA256 = ""
	tests := []struct {
		name string
		d    backend.Decision
		want string
	}{
		{"with digest", kevinDenies(),
			`{"approval_id":"a-7Q2K9","revision":1,"decision":"deny","actor":"user:kevin","via":{"surface":"slack","user":"U0KEVIN"},"comment":"not before the release","args_sha256":"` + digest + `"}`},
		{"content restricted: digest omitted", restricted,
			`{"approval_id":"a-7Q2K9","revision":1,"decision":"deny","actor":"user:kevin","via":{"surface":"slack","user":"U0KEVIN"},"comment":"not before the release"}`},
		{"deadline", backend.Decision{ApprovalID: "a-7Q2K9", Revision: 3, Decision: backend.Deny, Actor: "system:deadline",
			Via: backend.Via{Surface: "deadline"}, Comment: "nobody answered"},
			`{"approval_id":"a-7Q2K9","revision":3,"decision":"deny","actor":"system:deadline","via":{"surface":"deadline"},"comment":"nobody answered"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(200, `{"status":"denied","message":"m"}`))
			if _, err := newClient(t, srv.URL, ft).Decide(context.Background(), tt.d, "k"); err != nil {
				t.Fatal(err)
			}
			if got := string(srv.Requests()[0].Body); got != tt.want {
				t.Errorf("body\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestBaseURLPathPrefix(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, answerJSON(200, `{"status":"denied","message":"m"}`))
	d := kevinDenies()
	d.ApprovalID = "a:b.c_d-1"
	if _, err := newClient(t, srv.URL+"/jobs/", ft).Decide(context.Background(), d, "k"); err != nil {
		t.Fatal(err)
	}
	if got, want := srv.Requests()[0].Path, "/jobs/v1/approvals/a:b.c_d-1/decision"; got != want {
		t.Errorf("path %s, want %s", got, want)
	}
}

// TestInvalidCallsAreNotSent: what the backend would refuse, or what must
// never leave the bot, fails before any I/O.
func TestInvalidCallsAreNotSent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*backend.Decision)
		key  string
	}{
		{"decision maybe", func(d *backend.Decision) { d.Decision = "maybe" }, "k"},
		{"revision 0", func(d *backend.Decision) { d.Revision = 0 }, "k"},
		{"no actor", func(d *backend.Decision) { d.Actor = "" }, "k"},
		{"no surface", func(d *backend.Decision) { d.Via = backend.Via{} }, "k"},
		{"id with slash", func(d *backend.Decision) { d.ApprovalID = "a/../b" }, "k"},
		{"id dot-dot", func(d *backend.Decision) { d.ApprovalID = ".." }, "k"},
		{"id too long", func(d *backend.Decision) { d.ApprovalID = strings.Repeat("a", 65) }, "k"},
		{"digest malformed", func(d *backend.Decision) { d.ArgsSHA256 = "sha256:abc" }, "k"},
		{"deadline approves", func(d *backend.Decision) {
			d.Decision, d.Actor, d.Via = backend.Approve, "system:deadline", backend.Via{Surface: "deadline"}
		}, "k"},
		{"no idempotency key", func(*backend.Decision) {}, ""},
		{"idempotency key with space", func(*backend.Decision) {}, "a b"},
		{"idempotency key too long", func(*backend.Decision) {}, strings.Repeat("k", 256)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(200, `{"status":"denied","message":"m"}`))
			d := kevinDenies()
			tt.edit(&d)
			if _, err := newClient(t, srv.URL, ft).Decide(context.Background(), d, tt.key); err == nil {
				t.Error("Decide succeeded, want an error")
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("server saw %d requests, want none", n)
			}
		})
	}
	t.Run("arguments without actor", func(t *testing.T) {
		t.Parallel()
		ft := newFakeTime()
		srv := newServer(t, ft.Now, answerJSON(200, `{}`))
		req := backend.ArgumentsRequest{ApprovalID: "a-7Q2K9", Revision: 1}
		if _, err := newClient(t, srv.URL, ft).Arguments(context.Background(), req, "k"); err == nil {
			t.Error("Arguments succeeded, want an error")
		}
		if n := len(srv.Requests()); n != 0 {
			t.Errorf("server saw %d requests, want none", n)
		}
	})
}

// TestRetrySameKeySameBody: 500 and 503 are retried with the key and body
// of the first try, each try freshly signed, waits within the backoff.
func TestRetrySameKeySameBody(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, func(n int, w http.ResponseWriter, r *http.Request) {
		switch n {
		case 1:
			answerJSON(500, `{"error":"internal","message":"oops"}`)(n, w, r)
		case 2:
			answerJSON(503, `{"error":"unavailable","message":"try later"}`)(n, w, r)
		default:
			answerJSON(200, `{"status":"denied","message":"m"}`)(n, w, r)
		}
	})
	got, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "click-42")
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	if got.Outcome != backend.OutcomeRecorded {
		t.Errorf("outcome %q", got.Outcome)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("server saw %d requests, want 3", len(reqs))
	}
	for i, r := range reqs {
		if r.Key != "click-42" {
			t.Errorf("try %d: Idempotency-Key %q", i+1, r.Key)
		}
		if !bytes.Equal(r.Body, reqs[0].Body) {
			t.Errorf("try %d: body %s differs from the first %s", i+1, r.Body, reqs[0].Body)
		}
		if r.SignatureErr != nil {
			t.Errorf("try %d: signature: %v", i+1, r.SignatureErr)
		}
	}
	checkBackoff(t, ft.Sleeps())
	if len(ft.Sleeps()) != 2 {
		t.Errorf("slept %v, want 2 waits", ft.Sleeps())
	}
}

// checkBackoff: wait i (0-based) lies in [d/2, d] for d = 500ms·2^i, at most 8 s.
func checkBackoff(t *testing.T, sleeps []time.Duration) {
	t.Helper()
	d := 500 * time.Millisecond
	for i, s := range sleeps {
		if s < d/2 || s > d {
			t.Errorf("wait %d = %s, want within [%s, %s]", i+1, s, d/2, d)
		}
		d = min(2*d, 8*time.Second)
	}
}

func TestRetryAfter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		retryAfter string
		status     int
		want       time.Duration
	}{
		{"429 seconds", "7", 429, 7 * time.Second},
		{"503 seconds", "2", 503, 2 * time.Second},
		{"429 http date", signNow.Add(12 * time.Second).Format(http.TimeFormat), 429, 12 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, func(n int, w http.ResponseWriter, r *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", tt.retryAfter)
					answerJSON(tt.status, `{"error":"rate_limited","message":"slow down"}`)(n, w, r)
					return
				}
				answerJSON(200, `{"status":"denied","message":"m"}`)(n, w, r)
			})
			if _, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "k"); err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff([]time.Duration{tt.want}, ft.Sleeps()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRetrySignsAgain: a retry after a wait longer than MaxSkew still
// verifies, because each try is signed at its own time.
func TestRetrySignsAgain(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, func(n int, w http.ResponseWriter, r *http.Request) {
		if n == 1 {
			w.Header().Set("Retry-After", "400")
			answerJSON(503, `{"error":"unavailable","message":"x"}`)(n, w, r)
			return
		}
		answerJSON(200, `{"status":"denied","message":"m"}`)(n, w, r)
	})
	c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) { o.MaxElapsed = 10 * time.Minute })
	if _, err := c.Decide(context.Background(), kevinDenies(), "k"); err != nil {
		t.Fatalf("Decide: %v", err)
	}
	for i, r := range srv.Requests() {
		if r.SignatureErr != nil {
			t.Errorf("try %d: %v", i+1, r.SignatureErr)
		}
	}
}

// TestRetryAfterPastBudget: a wait that would end past MaxElapsed is not
// started; the client gives up at once.
func TestRetryAfterPastBudget(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, func(n int, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "3600")
		answerJSON(429, `{"error":"rate_limited","message":"slow down"}`)(n, w, r)
	})
	_, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "k")
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Decide = %v, want ErrUnavailable", err)
	}
	if len(ft.Sleeps()) != 0 || len(srv.Requests()) != 1 {
		t.Errorf("slept %v over %d requests, want no wait and 1 request", ft.Sleeps(), len(srv.Requests()))
	}
}

// TestNetworkErrorGivesUp: a backend that is not there is retried with
// growing waits until MaxElapsed, then ErrUnavailable with the last cause.
func TestNetworkErrorGivesUp(t *testing.T) {
	t.Parallel()
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL
	dead.Close()

	ft := newFakeTime()
	c := newClient(t, url, ft)
	_, err := c.Decide(context.Background(), kevinDenies(), "k")
	if !errors.Is(err, backend.ErrUnavailable) {
		t.Fatalf("Decide = %v, want ErrUnavailable", err)
	}
	if !strings.Contains(err.Error(), "connect") {
		t.Errorf("error %q does not carry the last cause", err)
	}
	sleeps := ft.Sleeps()
	checkBackoff(t, sleeps)
	var total time.Duration
	for _, s := range sleeps {
		total += s
	}
	// The client stops only when the next wait (≤ 8 s) would pass 60 s, so it
	// waited more than 52 s; waits of at most 0.5, 1, 2, 4, 8, 8… s need at
	// least 8 of them for that.
	if total > backend.DefaultMaxElapsed || len(sleeps) < 8 {
		t.Errorf("waited %s over %d waits, want ≤ %s and ≥ 8 waits", total, len(sleeps), backend.DefaultMaxElapsed)
	}
	if total < backend.DefaultMaxElapsed-8*time.Second {
		t.Errorf("gave up after waiting %s, want near %s", total, backend.DefaultMaxElapsed)
	}
}

// TestTryTimeout: a backend that never answers is cut off after TryTimeout
// and retried; in the end ErrUnavailable wraps the deadline.
func TestTryTimeout(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, func(_ int, _ http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) {
		o.TryTimeout = 50 * time.Millisecond
		o.MaxElapsed = 2 * time.Second
	})
	start := time.Now()
	_, err := c.Decide(context.Background(), kevinDenies(), "k")
	if !errors.Is(err, backend.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Decide = %v, want ErrUnavailable wrapping context.DeadlineExceeded", err)
	}
	if n := len(srv.Requests()); n < 2 {
		t.Errorf("server saw %d tries, want ≥ 2", n)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s: tries were not cut at 50ms", took)
	}
}

// TestContextEndsRetries: the caller's context stops the loop, both while
// waiting and during a try, and the error is the context's, not
// ErrUnavailable.
func TestContextEndsRetries(t *testing.T) {
	t.Parallel()
	t.Run("while waiting", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ft := newFakeTime()
		ft.onSleep = func(n int) {
			if n == 2 {
				cancel()
			}
		}
		srv := newServer(t, ft.Now, answerJSON(503, `{"error":"unavailable","message":"x"}`))
		_, err := newClient(t, srv.URL, ft).Decide(ctx, kevinDenies(), "k")
		if !errors.Is(err, context.Canceled) || errors.Is(err, backend.ErrUnavailable) {
			t.Fatalf("Decide = %v, want context.Canceled and not ErrUnavailable", err)
		}
		if n := len(srv.Requests()); n != 2 {
			t.Errorf("server saw %d tries, want 2", n)
		}
	})
	t.Run("during a try", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		ft := newFakeTime()
		srv := newServer(t, ft.Now, func(_ int, _ http.ResponseWriter, r *http.Request) {
			cancel()
			<-r.Context().Done()
		})
		_, err := newClient(t, srv.URL, ft).Decide(ctx, kevinDenies(), "k")
		if !errors.Is(err, context.Canceled) || errors.Is(err, backend.ErrUnavailable) {
			t.Fatalf("Decide = %v, want context.Canceled and not ErrUnavailable", err)
		}
		if n := len(srv.Requests()); n != 1 || len(ft.Sleeps()) != 0 {
			t.Errorf("%d tries, waits %v: want 1 try and no wait", n, ft.Sleeps())
		}
	})
	t.Run("before the call", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		ft := newFakeTime()
		srv := newServer(t, ft.Now, answerJSON(200, `{"status":"denied","message":"m"}`))
		if _, err := newClient(t, srv.URL, ft).Decide(ctx, kevinDenies(), "k"); !errors.Is(err, context.Canceled) {
			t.Fatalf("Decide = %v, want context.Canceled", err)
		}
	})
}

func TestResponseSizeLimit(t *testing.T) {
	t.Parallel()
	// A valid answer of exactly MaxBody bytes.
	prefix, suffix := `{"status":"denied","message":"`, `"}`
	exact := prefix + strings.Repeat("x", backend.MaxBody-len(prefix)-len(suffix)) + suffix
	t.Run("exactly 1 MiB accepted", func(t *testing.T) {
		t.Parallel()
		ft := newFakeTime()
		srv := newServer(t, ft.Now, answerJSON(200, exact))
		if _, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "k"); err != nil {
			t.Fatalf("Decide: %v", err)
		}
	})
	for _, tt := range []struct {
		name   string
		status int
	}{{"one byte over, 200", 200}, {"one byte over, 409", 409}} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(tt.status, exact+" "))
			_, err := newClient(t, srv.URL, ft).Decide(context.Background(), kevinDenies(), "k")
			if err == nil || errors.Is(err, backend.ErrUnavailable) {
				t.Fatalf("Decide = %v, want a refusal that is not ErrUnavailable", err)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("server saw %d requests, want 1", n)
			}
		})
	}
}

func TestNewClientOptions(t *testing.T) {
	t.Parallel()
	ok := func() backend.ClientOptions {
		return backend.ClientOptions{BaseURL: "https://jobs.acme.example", Secrets: [][]byte{secretOld}}
	}
	tests := []struct {
		name string
		edit func(*backend.ClientOptions)
		want []string // substrings of the error; nil: no error
	}{
		{"valid", func(*backend.ClientOptions) {}, nil},
		{"no base url", func(o *backend.ClientOptions) { o.BaseURL = "" }, []string{"base url: required"}},
		{"ftp", func(o *backend.ClientOptions) { o.BaseURL = "ftp://jobs.acme.example" }, []string{"scheme"}},
		{"no host", func(o *backend.ClientOptions) { o.BaseURL = "https://" }, []string{"no host"}},
		{"user info", func(o *backend.ClientOptions) { o.BaseURL = "https://bot:" + string(secretNew) + "@jobs.acme.example" }, []string{"user info"}},
		{"unparseable with user info", func(o *backend.ClientOptions) {
			o.BaseURL = "https://bot:" + string(secretNew) + "@jobs.acme.example:port"
		}, []string{"not a URL"}},
		{"query", func(o *backend.ClientOptions) { o.BaseURL = "https://jobs.acme.example/?x=1" }, []string{"query"}},
		{"no secrets", func(o *backend.ClientOptions) { o.Secrets = nil }, []string{"secrets: at least one"}},
		{"empty secret", func(o *backend.ClientOptions) { o.Secrets = [][]byte{secretOld, {}} }, []string{"secrets[1]: empty"}},
		{"negative timeouts", func(o *backend.ClientOptions) { o.TryTimeout, o.MaxElapsed = -1, -1 }, []string{"try timeout", "max elapsed"}},
		{"every problem at once", func(o *backend.ClientOptions) { o.BaseURL, o.Secrets = "", nil }, []string{"base url", "secrets"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := ok()
			tt.edit(&o)
			_, err := backend.NewClient(o)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("NewClient: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatal("NewClient succeeded, want an error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			assertNoSecret(t, err.Error(), "")
		})
	}
}

// TestSecretsStayOut drives the client through retries, a refusal and a
// give-up, and proves no error and no log line carries a secret or any
// signature the client sent.
func TestSecretsStayOut(t *testing.T) {
	t.Parallel()
	var logs bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewJSONHandler(lockedWriter{&logMu, &logs}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ft := newFakeTime()
	srv := newServer(t, ft.Now, func(n int, w http.ResponseWriter, r *http.Request) {
		switch {
		case n <= 2:
			answerJSON(503, `{"error":"unavailable","message":"x"}`)(n, w, r)
		case n == 3:
			answerJSON(401, `{"error":"bad_signature","message":"no"}`)(n, w, r)
		default:
			w.Header().Set("Retry-After", "3600")
			answerJSON(429, `{"error":"rate_limited","message":"x"}`)(n, w, r)
		}
	})
	c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) { o.Logger = logger })
	var errs []error
	_, err := c.Decide(context.Background(), kevinDenies(), "k1")
	errs = append(errs, err)
	_, err = c.Decide(context.Background(), kevinDenies(), "k2")
	errs = append(errs, err)
	for _, err := range errs {
		if err == nil {
			t.Fatal("want errors from the 401 and the 429")
		}
	}
	if !strings.Contains(logs.String(), `"approval_id":"a-7Q2K9"`) {
		t.Errorf("retry logs do not name the approval: %s", logs.String())
	}
	for _, r := range srv.Requests() {
		for _, err := range errs {
			assertNoSecret(t, err.Error(), r.Signature)
		}
		assertNoSecret(t, logs.String(), r.Signature)
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
