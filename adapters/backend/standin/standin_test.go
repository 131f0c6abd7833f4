package standin_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/threads"
)

const secret = "calls-secret-of-the-stand-in-tests-0123"

// serve runs the stand-in on the fixtures' arguments, and the bot's own
// backend client against it.
func serve(t *testing.T) (threads.Backend, *bytes.Buffer, string) {
	t.Helper()
	dir, err := fixtures.Path("arguments", "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	b, err := standin.New(standin.Options{Secrets: [][]byte{[]byte(secret)}, Arguments: dir, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: [][]byte{[]byte(secret)}, MaxElapsed: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return c.ForThreads(), &out, srv.URL
}

func digestOf(t *testing.T, id string) string {
	t.Helper()
	args, err := fixtures.Arguments(id + ".json")
	if err != nil {
		t.Fatal(err)
	}
	d, err := approval.Digest(args)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestStandInAnswersAsTheProtocolSays: the first decision is recorded and
// printed, a retry with its key gets the same answer, a later one is
// already decided, a wrong digest is refused, look-ups answer the
// folder's arguments.
func TestStandInAnswersAsTheProtocolSays(t *testing.T) {
	be, out, _ := serve(t)
	ctx := context.Background()
	digest := digestOf(t, "a-merge1")

	bad, err := be.Decide(ctx, threads.DecisionCall{ApprovalID: "a-merge1", Revision: 1, Approve: true, Actor: "user:kevin",
		Surface: "email", User: "kevin@acme.example", ArgsSHA256: "sha256:" + strings.Repeat("0", 64), IdempotencyKey: "k0"})
	if err != nil || bad.Outcome != threads.DecisionDigestMismatch {
		t.Fatalf("a wrong digest: %+v %v", bad, err)
	}
	call := threads.DecisionCall{ApprovalID: "a-merge1", Revision: 1, Approve: true, Actor: "user:kevin",
		Surface: "email", User: "kevin@acme.example", Comment: "ship it", ArgsSHA256: digest, IdempotencyKey: "k1"}
	for range 2 { // the second is a retry of the same intent
		ans, err := be.Decide(ctx, call)
		if err != nil || ans.Outcome != threads.DecisionRecorded || ans.Status != approval.StateApproved {
			t.Fatalf("decide: %+v %v", ans, err)
		}
	}
	late, err := be.Decide(ctx, threads.DecisionCall{ApprovalID: "a-merge1", Revision: 1, Approve: false, Actor: "user:ada",
		Surface: "slack", User: "U0ADA", IdempotencyKey: "k2"})
	if err != nil || late.Outcome != threads.DecisionAlreadyDecided || late.Actor != "user:kevin" {
		t.Fatalf("a later decision: %+v %v", late, err)
	}
	want := `approved a-merge1 revision 1 by user:kevin via email (kevin@acme.example): "ship it" · bound to ` + digest
	if strings.Count(out.String(), want) != 1 {
		t.Errorf("the stand-in printed:\n%s\nwant once: %s", out.String(), want)
	}

	args, err := be.Arguments(ctx, threads.ArgumentsCall{ApprovalID: "a-merge1", Revision: 1, Actor: "user:kevin", IdempotencyKey: "k3"})
	if err != nil || args.ArgsSHA256 != digest || len(args.Arguments) == 0 {
		t.Fatalf("look-up: %+v %v", args, err)
	}
	gone, err := be.Arguments(ctx, threads.ArgumentsCall{ApprovalID: "a-none", Revision: 1, Actor: "user:kevin", IdempotencyKey: "k4"})
	if err != nil || !gone.Gone {
		t.Errorf("look-up of an unknown approval: %+v %v", gone, err)
	}
}

// TestStandInRefusesUnsignedCalls: a call without the calls secret's
// signature is refused and nothing is recorded.
func TestStandInRefusesUnsignedCalls(t *testing.T) {
	be, out, url := serve(t)
	body := []byte(`{"approval_id":"a-merge1","revision":1,"decision":"approve","actor":"user:x","via":{"surface":"slack"}}`)
	for _, sig := range []string{"", backend.Sign([]byte("another-secret-0123456789abcdef0123"), time.Now(), body)} {
		req, _ := http.NewRequest(http.MethodPost, url+"/v1/approvals/a-merge1/decision", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k")
		if sig != "" {
			req.Header.Set(backend.SignatureHeader, sig)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("signature %q: %d, want 401", sig, resp.StatusCode)
		}
	}
	ans, err := be.Decide(context.Background(), threads.DecisionCall{ApprovalID: "a-merge1", Revision: 1, Approve: false,
		Actor: "user:kevin", Surface: "slack", User: "U0KEVIN", IdempotencyKey: "k5"})
	if err != nil || ans.Outcome != threads.DecisionRecorded {
		t.Errorf("the first signed decision after the refusals: %+v %v", ans, err)
	}
	if strings.Contains(out.String(), "user:x") {
		t.Errorf("an unsigned decision was recorded:\n%s", out.String())
	}
}
