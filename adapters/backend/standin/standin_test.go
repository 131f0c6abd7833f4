package standin_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/threads"
)

const standinSecret = "calls-secret-of-the-stand-in-tests-0123"

// serve runs the stand-in on the fixtures' arguments, and the bot's own
// backend client against it.
func serve(t *testing.T) (threads.Backend, *bytes.Buffer, string) {
	t.Helper()
	dir, err := fixtures.Path("arguments", "")
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	b, err := standin.New(standin.Options{Secrets: [][]byte{[]byte(standinSecret)}, Learn: true, Arguments: dir, Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: [][]byte{[]byte(standinSecret)}, MaxElapsed: time.Second})
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

// TestStandInLearnsFromCalls: an approval with no argument file is taken
// as pending at the call's revision, its first decision recorded with no
// digest to check, a later revision already decided, a lower one stale.
func TestStandInLearnsFromCalls(t *testing.T) {
	var out bytes.Buffer
	_, c := learning(t, &out)
	ctx := context.Background()
	digest := "sha256:" + strings.Repeat("1", 64)
	decide := func(revision int, decision, actor, user, digest, key string) backend.DecisionResult {
		t.Helper()
		res, err := c.Decide(ctx, backend.Decision{ApprovalID: "a-none", Revision: revision, Decision: decision, Actor: actor,
			Via: backend.Via{Surface: "slack", User: user}, ArgsSHA256: digest}, key)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if got := decide(2, backend.Deny, "user:ada", "U0ADA", digest, "k1"); got.Outcome != backend.OutcomeRecorded || got.Status != "denied" ||
		got.Message != "denied by user:ada (recorded by the stand-in backend)" {
		t.Fatalf("the first decision: %+v", got)
	}
	if got := decide(3, backend.Approve, "user:kevin", "U0KEVIN", "", "k2"); got.Outcome != backend.OutcomeAlreadyDecided || got.Actor != "user:ada" {
		t.Errorf("a decision of a later revision: %+v", got)
	}
	if got := decide(1, backend.Approve, "user:kevin", "U0KEVIN", "", "k3"); got.Outcome != backend.OutcomeStaleRevision {
		t.Errorf("a decision of an earlier revision: %+v", got)
	}
	want := "denied a-none revision 2 by user:ada via slack (U0ADA) · bound to " + digest + "\n" +
		"approve a-none revision 3 by user:kevin: refused, already denied by user:ada\n"
	if !strings.HasPrefix(out.String(), want) {
		t.Errorf("the stand-in printed:\n%s\nwant first:\n%s", out.String(), want)
	}
}

// learning serves a stand-in that learns from calls, as `bot backend`
// does, and a client of it.
func learning(t *testing.T, out io.Writer) (*backendtest.Fake, *backend.Client) {
	t.Helper()
	dir, err := fixtures.Path("arguments", "")
	if err != nil {
		t.Fatal(err)
	}
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(standinSecret)}, Learn: true, Arguments: dir, Out: out})
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: fake.URL(), Secrets: [][]byte{[]byte(standinSecret)}, MaxElapsed: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return fake, c
}

// TestWaitDecisions: a wait ends at the n-th decision, or with what came
// when its context ends.
func TestWaitDecisions(t *testing.T) {
	fake, c := learning(t, io.Discard)
	go func() {
		_, _ = c.Decide(context.Background(), backend.Decision{ApprovalID: "a-merge1", Revision: 1, Decision: backend.Deny,
			Actor: "user:kevin", Via: backend.Via{Surface: "slack", User: "U0KEVIN"}}, "k1")
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if got := fake.WaitDecisions(ctx, 1); len(got) != 1 || got[0].Request.Actor != "user:kevin" || got[0].Status != http.StatusOK {
		t.Fatalf("waited for one decision: %+v", got)
	}
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if got := fake.WaitDecisions(short, 2); len(got) != 1 {
		t.Errorf("a wait for a second decision that never comes: %+v", got)
	}
}

func TestNewRefusesArgumentsWithoutLearn(t *testing.T) {
	if _, err := standin.New(standin.Options{Secrets: [][]byte{[]byte(standinSecret)}, Arguments: t.TempDir()}); err == nil {
		t.Error("an arguments folder without Learn was taken")
	}
}

// TestStandInFindsArgumentsOfAFreshID: an approval `bot event` sent
// under a fresh id is looked up in the file of the id it was made from,
// at each revision, however often it was made fresh.
func TestStandInFindsArgumentsOfAFreshID(t *testing.T) {
	be, out, _ := serve(t)
	ctx := context.Background()
	at := time.Date(2026, 12, 1, 9, 26, 0, 123e6, time.UTC)
	fresh := standin.FreshID("a-merge1", at)
	if !regexp.MustCompile(`^a-merge1\.20261201T092600\.123Z-[0-9a-f]{6}$`).MatchString(fresh) {
		t.Fatalf("FreshID: %s", fresh)
	}
	if again := standin.FreshID("a-merge1", at); again == fresh {
		t.Fatalf("two FreshIDs of one instant are both %s", fresh)
	}
	for _, c := range []struct {
		id       string
		revision int
		file     string
	}{
		{fresh, 1, "a-merge1.json"},
		{standin.FreshID(fresh, at.Add(time.Second)), 1, "a-merge1.json"},
		{standin.FreshID("a-merge1", at.Add(2*time.Second)), 2, "a-merge1.r2.json"},
	} {
		args, err := fixtures.Arguments(c.file)
		if err != nil {
			t.Fatal(err)
		}
		want, err := approval.Digest(args)
		if err != nil {
			t.Fatal(err)
		}
		got, err := be.Arguments(ctx, threads.ArgumentsCall{ApprovalID: c.id, Revision: c.revision, Actor: "user:kevin", IdempotencyKey: "k-" + c.id})
		if err != nil || got.ArgsSHA256 != want {
			t.Errorf("look-up of %s revision %d: %+v %v, want the arguments of %s", c.id, c.revision, got, err, c.file)
		}
	}
	if !strings.Contains(out.String(), "arguments of "+fresh+" revision 1 shown to user:kevin\n") {
		t.Errorf("the stand-in printed:\n%s", out.String())
	}
}
