package standin_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gowebpki/jcs"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/internal/fixtures"
)

var (
	secret  = []byte("fake-backend-calls-secret-42")
	start   = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	mergeID = "a-merge1"
	// testdata/fixtures/arguments/a-merge1.json
	mergeArgs   = json.RawMessage(`{"repo":"acme/api","pr":1234,"method":"squash"}`)
	mergeDigest = "sha256:22000fa35fce701034aa16fa399915912c97492968192b1eb78e782b157baa2d"
)

// clock is the bot's and the fake's shared clock; sleeping moves it on.
type clock struct {
	mu     sync.Mutex
	now    time.Time
	sleeps []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(ctx context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sleeps = append(c.sleeps, d)
	c.now = c.now.Add(d)
	return ctx.Err()
}

// setup starts a fake with the merge approval and a client pointed at it.
func setup(t *testing.T) (*backendtest.Fake, *backend.Client, *clock) {
	t.Helper()
	clk := &clock{now: start}
	f := backendtest.New(t, standin.Options{Secrets: [][]byte{secret}, Now: clk.Now})
	f.AddApproval(mergeID, 1, mergeArgs, false)
	f.SetFunction(mergeID, "acme_github.merge")
	c, err := backend.NewClient(backend.ClientOptions{
		BaseURL: f.URL(), Secrets: [][]byte{secret}, Now: clk.Now, Sleep: clk.Sleep,
	})
	if err != nil {
		t.Fatal(err)
	}
	return f, c, clk
}

func deny(actor, comment, digest string) backend.Decision {
	return backend.Decision{ApprovalID: mergeID, Revision: 1, Decision: backend.Deny, Actor: actor,
		Via: backend.Via{Surface: "slack", User: "U0X"}, Comment: comment, ArgsSHA256: digest}
}

func approve(actor, digest string) backend.Decision {
	d := deny(actor, "", digest)
	d.Decision = backend.Approve
	return d
}

// TestDigestsMatchFixtures: the fake's digest is the JCS one of every test
// vector and every fixture approval's full arguments.
func TestDigestsMatchFixtures(t *testing.T) {
	t.Parallel()
	dir, err := fixtures.Dir()
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(dir, "digests.json"))
	if err != nil {
		t.Fatal(err)
	}
	var vectors []struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Raw        string          `json:"raw"`
		ArgsSHA256 string          `json:"args_sha256"`
	}
	if err := json.Unmarshal(raw, &vectors); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "arguments", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture arguments: %v", err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var fx struct {
			Arguments  json.RawMessage `json:"arguments"`
			ArgsSHA256 string          `json:"args_sha256"`
		}
		if err := json.Unmarshal(b, &fx); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		vectors = append(vectors, struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Raw        string          `json:"raw"`
			ArgsSHA256 string          `json:"args_sha256"`
		}{Name: filepath.Base(file), Arguments: fx.Arguments, ArgsSHA256: fx.ArgsSHA256})
	}
	f := backendtest.New(t, standin.Options{Secrets: [][]byte{secret}})
	for _, v := range vectors {
		args := v.Arguments
		if v.Raw != "" {
			args = json.RawMessage(v.Raw)
		}
		f.AddApproval("a-vector", 1, args, false)
		if got := f.Digest("a-vector"); got != v.ArgsSHA256 {
			t.Errorf("%s: digest %s, want %s", v.Name, got, v.ArgsSHA256)
		}
	}
}

// TestDecisions drives the fake with the real client through every answer
// a decision can get.
func TestDecisions(t *testing.T) {
	t.Parallel()
	mismatch := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name       string
		arrange    func(f *backendtest.Fake)
		d          backend.Decision
		want       backend.DecisionResult
		wantStatus string // the fake's status afterwards
	}{
		{"approve", nil, approve("user:kevin", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "approved", Message: "The call to acme_github.merge runs."},
			"approved"},
		{"deny with comment", nil, deny("user:kevin", "not before the release", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "denied",
				Message: "The call to acme_github.merge was not made: user:kevin denied it: not before the release."},
			"denied"},
		{"deny without comment or digest", nil, deny("user:kevin", "", ""),
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "denied",
				Message: "The call to acme_github.merge was not made: user:kevin denied it."},
			"denied"},
		{"deadline", nil, backend.Decision{ApprovalID: mergeID, Revision: 1, Decision: backend.Deny, Actor: "system:deadline",
			Via: backend.Via{Surface: "deadline"}, Comment: "nobody answered"},
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "denied",
				Message: "The call to acme_github.merge was not made: system:deadline denied it: nobody answered."},
			"denied"},
		{"unknown approval", nil, func() backend.Decision { d := approve("user:kevin", ""); d.ApprovalID = "a-nope"; return d }(),
			backend.DecisionResult{Outcome: backend.OutcomeNotFound, Message: "approval a-nope is not known here"},
			"pending"},
		{"cancelled", func(f *backendtest.Fake) { f.Cancel(mergeID) }, approve("user:kevin", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeCancelled, Message: "approval a-merge1 was cancelled: the call is no longer wanted"},
			"cancelled"},
		{"stale revision", func(f *backendtest.Fake) {
			f.AddApproval(mergeID, 2, json.RawMessage(`{"repo":"acme/api","pr":1234,"method":"merge"}`), false)
		}, approve("user:kevin", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeStaleRevision,
				Message: "approval a-merge1 changed (revision 1 is now 2): look at the new card"},
			"pending"},
		{"already decided elsewhere", func(f *backendtest.Fake) { f.SetStatus(mergeID, "approved", "user:ada") },
			deny("user:kevin", "", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeAlreadyDecided, Status: "approved", Actor: "user:ada",
				Message: "approval a-merge1 was already decided: approved by user:ada"},
			"approved"},
		{"digest mismatch", nil, approve("user:kevin", mismatch),
			backend.DecisionResult{Outcome: backend.OutcomeDigestMismatch,
				Message: "approval a-merge1 is not for the arguments " + mismatch + " you decided on: look at the call again"},
			"pending"},
		{"forbidden actor", func(f *backendtest.Fake) { f.SetForbidden("user:ada") }, approve("user:ada", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeForbidden, Actor: "user:ada", Message: "user:ada may not decide approval a-merge1"},
			"pending"},
		{"restricted: digest from someone without content permission", func(f *backendtest.Fake) {
			f.AddApproval(mergeID, 1, mergeArgs, true)
			f.SetNoContent("user:bob")
		}, approve("user:bob", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeForbidden,
				Message: "user:bob does not hold the content permission, so a decision from them may not carry a digest"},
			"pending"},
		{"restricted: no digest from someone without content permission", func(f *backendtest.Fake) {
			f.AddApproval(mergeID, 1, mergeArgs, true)
			f.SetNoContent("user:bob")
		}, approve("user:bob", ""),
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "approved", Message: "The call to acme_github.merge runs."},
			"approved"},
		// The digest is content whether or not the call is restricted: a
		// guess at a small value can be checked against it.
		{"not restricted: digest from someone without content permission", func(f *backendtest.Fake) { f.SetNoContent("user:bob") },
			approve("user:bob", mergeDigest),
			backend.DecisionResult{Outcome: backend.OutcomeForbidden,
				Message: "user:bob does not hold the content permission, so a decision from them may not carry a digest"},
			"pending"},
		{"not restricted: no digest from someone without content permission", func(f *backendtest.Fake) { f.SetNoContent("user:bob") },
			approve("user:bob", ""),
			backend.DecisionResult{Outcome: backend.OutcomeRecorded, Status: "approved", Message: "The call to acme_github.merge runs."},
			"approved"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, c, _ := setup(t)
			if tt.arrange != nil {
				tt.arrange(f)
			}
			got, err := c.Decide(context.Background(), tt.d, "click-1")
			if err != nil {
				t.Fatalf("Decide: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decide (-want +got):\n%s", diff)
			}
			if status, _ := f.Status(mergeID); status != tt.wantStatus {
				t.Errorf("fake status %q, want %q", status, tt.wantStatus)
			}
			recs := f.Decisions()
			if len(recs) != 1 {
				t.Fatalf("fake recorded %d decisions, want 1", len(recs))
			}
			r := recs[0]
			if !r.SignatureOK || r.IdempotencyKey != "click-1" || r.Request.Actor != tt.d.Actor ||
				r.Request.ArgsSHA256 != tt.d.ArgsSHA256 || r.Request.Via.Surface != tt.d.Via.Surface {
				t.Errorf("recorded %+v", r)
			}
		})
	}
}

// TestIdempotency: a retry with the same key and body gets the first answer
// even after the state moved on; the same key with another body is refused.
func TestIdempotency(t *testing.T) {
	t.Parallel()
	f, c, _ := setup(t)
	ctx := context.Background()
	first, err := c.Decide(ctx, approve("user:kevin", mergeDigest), "click-1")
	if err != nil || first.Outcome != backend.OutcomeRecorded {
		t.Fatalf("first Decide = %+v, %v", first, err)
	}
	f.Cancel(mergeID) // the replay must not look at state
	again, err := c.Decide(ctx, approve("user:kevin", mergeDigest), "click-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replay answered differently (-first +replay):\n%s", diff)
	}
	_, err = c.Decide(ctx, deny("user:kevin", "changed my mind", mergeDigest), "click-1")
	var pe *backend.ProtocolError
	if !errors.As(err, &pe) || pe.Status != 422 || pe.Code != "idempotency_key_reused" {
		t.Errorf("same key, other body = %v, want 422 idempotency_key_reused", err)
	}
	other, err := c.Decide(ctx, approve("user:kevin", mergeDigest), "click-2")
	if err != nil || other.Outcome != backend.OutcomeCancelled {
		t.Errorf("new key after cancel = %+v, %v, want cancelled", other, err)
	}
	var replays []bool
	for _, r := range f.Decisions() {
		replays = append(replays, r.Replay)
	}
	if diff := cmp.Diff([]bool{false, true, false, false}, replays); diff != "" {
		t.Errorf("replay flags (-want +got):\n%s", diff)
	}
}

func TestAlreadyDecidedByAnotherClick(t *testing.T) {
	t.Parallel()
	f, c, _ := setup(t)
	ctx := context.Background()
	if _, err := c.Decide(ctx, approve("user:ada", mergeDigest), "ada-1"); err != nil {
		t.Fatal(err)
	}
	got, err := c.Decide(ctx, deny("user:kevin", "no", mergeDigest), "kevin-1")
	if err != nil {
		t.Fatal(err)
	}
	want := backend.DecisionResult{Outcome: backend.OutcomeAlreadyDecided, Status: "approved", Actor: "user:ada",
		Message: "approval a-merge1 was already decided: approved by user:ada"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if status, actor := f.Status(mergeID); status != "approved" || actor != "user:ada" {
		t.Errorf("fake status %s by %s", status, actor)
	}
}

func TestLookups(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		arrange func(f *backendtest.Fake)
		actor   string
		id      string
		want    backend.ArgumentsResult
	}{
		{"found", nil, "user:kevin", mergeID,
			backend.ArgumentsResult{Outcome: backend.OutcomeOK, Arguments: mergeArgs, ArgsSHA256: mergeDigest}},
		{"no content permission", func(f *backendtest.Fake) { f.SetNoContent("user:bob") }, "user:bob", mergeID,
			backend.ArgumentsResult{Outcome: backend.OutcomeForbidden, Message: "user:bob does not hold the content permission"}},
		{"forbidden", func(f *backendtest.Fake) { f.SetForbidden("user:bob") }, "user:bob", mergeID,
			backend.ArgumentsResult{Outcome: backend.OutcomeForbidden, Message: "user:bob does not hold the content permission"}},
		{"unknown", nil, "user:kevin", "a-nope",
			backend.ArgumentsResult{Outcome: backend.OutcomeNotFound, Message: "approval a-nope is not known here"}},
		{"cancelled", func(f *backendtest.Fake) { f.Cancel(mergeID) }, "user:kevin", mergeID,
			backend.ArgumentsResult{Outcome: backend.OutcomeCancelled, Message: "approval a-merge1 was cancelled: the call is no longer wanted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, c, _ := setup(t)
			if tt.arrange != nil {
				tt.arrange(f)
			}
			got, err := c.Arguments(context.Background(), backend.ArgumentsRequest{ApprovalID: tt.id, Revision: 1, Actor: tt.actor}, "look")
			if err != nil {
				t.Fatalf("Arguments: %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Arguments (-want +got):\n%s", diff)
			}
			if recs := f.Lookups(); len(recs) != 1 || recs[0].Request.Actor != tt.actor || !recs[0].SignatureOK {
				t.Errorf("recorded %+v", recs)
			}
		})
	}
}

// TestTamperedArguments: the look-up answers other arguments under the
// true digest, so only a JCS check of the arguments themselves catches it.
func TestTamperedArguments(t *testing.T) {
	t.Parallel()
	f, c, _ := setup(t)
	f.TamperArguments(mergeID, json.RawMessage(`{"repo":"acme/api","pr":1234,"method":"rebase"}`))
	got, err := c.Arguments(context.Background(), backend.ArgumentsRequest{ApprovalID: mergeID, Revision: 1, Actor: "user:kevin"}, "look")
	if err != nil {
		t.Fatal(err)
	}
	if got.ArgsSHA256 != mergeDigest {
		t.Errorf("digest %s, want the true %s", got.ArgsSHA256, mergeDigest)
	}
	canon, err := jcs.Transform(got.Arguments)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(canon)
	if "sha256:"+hex.EncodeToString(sum[:]) == mergeDigest {
		t.Error("tampered arguments still hash to the digest")
	}
	// Decisions still check against the truth.
	res, err := c.Decide(context.Background(), approve("user:kevin", mergeDigest), "k")
	if err != nil || res.Outcome != backend.OutcomeRecorded {
		t.Errorf("Decide = %+v, %v", res, err)
	}
}

// TestFailNext: injected failures are answered first, recorded, and the
// client's retries get through with the same key.
func TestFailNext(t *testing.T) {
	t.Parallel()
	t.Run("503 twice", func(t *testing.T) {
		t.Parallel()
		f, c, _ := setup(t)
		f.FailNext(2, http.StatusServiceUnavailable)
		res, err := c.Decide(context.Background(), approve("user:kevin", mergeDigest), "click-9")
		if err != nil || res.Outcome != backend.OutcomeRecorded {
			t.Fatalf("Decide = %+v, %v", res, err)
		}
		type row struct {
			Key    string
			Status int
			Code   string
			SigOK  bool
		}
		var got []row
		for _, r := range f.Decisions() {
			got = append(got, row{r.IdempotencyKey, r.Status, r.Code, r.SignatureOK})
		}
		want := []row{{"click-9", 503, "unavailable", true}, {"click-9", 503, "unavailable", true}, {"click-9", 200, "", true}}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("recorded (-want +got):\n%s", diff)
		}
	})
	t.Run("429 with Retry-After", func(t *testing.T) {
		t.Parallel()
		f, c, clk := setup(t)
		f.FailNextRetryAfter(1, http.StatusTooManyRequests, 3*time.Second)
		if _, err := c.Arguments(context.Background(), backend.ArgumentsRequest{ApprovalID: mergeID, Revision: 1, Actor: "user:kevin"}, "look"); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]time.Duration{3 * time.Second}, clk.sleeps); diff != "" {
			t.Errorf("waits (-want +got):\n%s", diff)
		}
		if recs := f.Lookups(); len(recs) != 2 || recs[0].Code != "rate_limited" || recs[1].Status != 200 {
			t.Errorf("recorded %+v", recs)
		}
	})
	t.Run("down", func(t *testing.T) {
		t.Parallel()
		f, c, _ := setup(t)
		f.Close()
		_, err := c.Decide(context.Background(), approve("user:kevin", mergeDigest), "k")
		if !errors.Is(err, backend.ErrUnavailable) {
			t.Errorf("Decide = %v, want ErrUnavailable", err)
		}
	})
}

// TestRefusals sends what the client never would, by hand, and checks each
// answer has the protocol's status and error shape, and is recorded.
func TestRefusals(t *testing.T) {
	t.Parallel()
	good := `{"approval_id":"a-merge1","revision":1,"decision":"deny","actor":"user:kevin","via":{"surface":"slack","user":"U0X"}}`
	tests := []struct {
		name        string
		method      string
		path        string
		body        string
		contentType string
		key         string
		sign        func(body []byte) string
		status      int
		code        string
		recorded    bool
	}{
		{name: "valid, for reference", body: good, status: 200, recorded: true},
		{name: "unsigned", body: good, sign: func([]byte) string { return "" }, status: 401, code: "bad_signature", recorded: true},
		{name: "another secret", body: good, sign: func(b []byte) string { return backend.Sign([]byte("other"), start, b) },
			status: 401, code: "bad_signature", recorded: true},
		{name: "signed ten minutes ago", body: good, sign: func(b []byte) string { return backend.Sign(secret, start.Add(-10*time.Minute), b) },
			status: 401, code: "bad_signature", recorded: true},
		{name: "no idempotency key", body: good, key: "-", status: 400, code: "missing_idempotency_key", recorded: true},
		{name: "form content type", body: good, contentType: "application/x-www-form-urlencoded", status: 415, code: "unsupported_media_type", recorded: true},
		{name: "not JSON", body: `deny`, status: 400, code: "bad_json", recorded: true},
		{name: "JSON array", body: `[]`, status: 400, code: "bad_json", recorded: true},
		{name: "unknown field", body: strings.Replace(good, `"revision"`, `"rev":1,"revision"`, 1), status: 422, code: "invalid", recorded: true},
		{name: "empty digest", body: strings.Replace(good, `"revision"`, `"args_sha256":"","revision"`, 1), status: 422, code: "invalid", recorded: true},
		{name: "id differs from path", body: strings.Replace(good, "a-merge1", "a-other", 1), status: 422, code: "invalid", recorded: true},
		{name: "revision above the current", body: strings.Replace(good, `"revision":1`, `"revision":2`, 1), status: 422, code: "invalid", recorded: true},
		{name: "decision maybe", body: strings.Replace(good, `"deny"`, `"maybe"`, 1), status: 422, code: "invalid", recorded: true},
		{name: "the deadline approves", body: `{"approval_id":"a-merge1","revision":1,"decision":"approve","actor":"system:deadline","via":{"surface":"deadline"}}`,
			status: 403, code: "forbidden", recorded: true},
		{name: "GET", method: "GET", body: "", status: 405, code: "method_not_allowed", recorded: true},
		{name: "over 1 MiB", body: `{"x":"` + strings.Repeat("x", backend.MaxBody) + `"}`, status: 413, code: "too_large", recorded: true},
		{name: "unknown path", path: "/v1/approvals/a-merge1/approve", body: good, status: 404, code: "not_found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := setup(t)
			method, path, ct, key := "POST", "/v1/approvals/a-merge1/decision", "application/json", "k-1"
			if tt.method != "" {
				method = tt.method
			}
			if tt.path != "" {
				path = tt.path
			}
			if tt.contentType != "" {
				ct = tt.contentType
			}
			if tt.key == "-" {
				key = ""
			}
			sig := backend.Sign(secret, start, []byte(tt.body))
			if tt.sign != nil {
				sig = tt.sign([]byte(tt.body))
			}
			req, err := http.NewRequest(method, f.URL()+path, strings.NewReader(tt.body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", ct)
			if key != "" {
				req.Header.Set("Idempotency-Key", key)
			}
			if sig != "" {
				req.Header.Set(backend.SignatureHeader, sig)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d %s, want %d", resp.StatusCode, body, tt.status)
			}
			if tt.code != "" {
				var e struct{ Error, Message string }
				dec := json.NewDecoder(bytes.NewReader(body))
				if err := dec.Decode(&e); err != nil || e.Error != tt.code || e.Message == "" {
					t.Errorf("body %s, want {\"error\":%q,\"message\":…}", body, tt.code)
				}
			}
			recs := f.Decisions()
			if !tt.recorded {
				if len(recs) != 0 {
					t.Errorf("recorded %+v, want nothing", recs)
				}
				return
			}
			if len(recs) != 1 || recs[0].Status != tt.status || recs[0].Code != tt.code {
				t.Fatalf("recorded %+v", recs)
			}
			wantSig := tt.sign == nil && tt.status != 413
			if recs[0].SignatureOK != wantSig {
				t.Errorf("SignatureOK = %v, want %v", recs[0].SignatureOK, wantSig)
			}
		})
	}
}

// TestClocksMustAgree: the fake checks signatures against its own clock,
// so a bot on another clock is refused like by the real backend.
func TestClocksMustAgree(t *testing.T) {
	t.Parallel()
	f, _, _ := setup(t)
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: f.URL(), Secrets: [][]byte{secret}}) // wall clock
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Decide(context.Background(), approve("user:kevin", mergeDigest), "k")
	var pe *backend.ProtocolError
	if !errors.As(err, &pe) || pe.Status != 401 || pe.Code != "bad_signature" {
		t.Errorf("Decide = %v, want 401 bad_signature", err)
	}
	if recs := f.Decisions(); len(recs) != 1 || recs[0].SignatureOK {
		t.Errorf("recorded %+v", recs)
	}
}
