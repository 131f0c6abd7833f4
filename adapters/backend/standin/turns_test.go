package standin_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
)

// setupTurn is a fake holding a turn of three calls (each with the merge
// call's arguments) and a client that supports turns.
func setupTurn(t *testing.T, features ...string) (*backendtest.Fake, *backend.Client, *syncWriter) {
	t.Helper()
	clk := &clock{now: start}
	out := &syncWriter{}
	f := backendtest.New(t, standin.Options{Secrets: [][]byte{secret}, Now: clk.Now, Out: out})
	for _, id := range []string{"t-1", "t-2", "t-3"} {
		f.AddApproval(id, 1, mergeArgs, false)
	}
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: f.URL(), Secrets: [][]byte{secret}, Now: clk.Now, Sleep: clk.Sleep,
		Features: features})
	if err != nil {
		t.Fatal(err)
	}
	return f, c, out
}

// syncWriter is what the stand-in prints, read while it serves.
type syncWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func turnBatch(decision string, revs ...int) backend.TurnDecision {
	d := backend.TurnDecision{TurnID: "turn-7", Decision: decision, Actor: "user:kevin",
		Via: backend.Via{Surface: "slack", User: "U0KEVIN"}, Comment: "as planned"}
	for i, r := range revs {
		d.Decisions = append(d.Decisions, backend.TurnDecision1{ApprovalID: []string{"t-1", "t-2", "t-3"}[i], Revision: r, ArgsSHA256: mergeDigest})
	}
	return d
}

// TestTurnAllOrNothing: a batch is applied whole, once per key; a member
// that changed refuses it whole, naming the member, and applies none.
func TestTurnAllOrNothing(t *testing.T) {
	t.Parallel()
	f, c, out := setupTurn(t, backend.FeatureTurns)
	ctx := context.Background()
	f.AddApproval("t-2", 2, mergeArgs, false) // asked again
	res, err := c.DecideTurn(ctx, turnBatch(backend.Approve, 1, 1, 1), "key-1")
	if err != nil || res.Outcome != backend.OutcomeStaleRevision || res.ApprovalID != "t-2" {
		t.Fatalf("stale batch: %+v %v", res, err)
	}
	for _, id := range []string{"t-1", "t-2", "t-3"} {
		if st, _ := f.Status(id); st != "pending" {
			t.Fatalf("%s applied from a refused batch: %s", id, st)
		}
	}
	res, err = c.DecideTurn(ctx, turnBatch(backend.Approve, 1, 2, 1), "key-2")
	if err != nil || res.Outcome != backend.OutcomeRecorded || res.Status != "approved" {
		t.Fatalf("batch: %+v %v", res, err)
	}
	again, err := c.DecideTurn(ctx, turnBatch(backend.Approve, 1, 2, 1), "key-2")
	if err != nil || again.Outcome != backend.OutcomeRecorded {
		t.Fatalf("the same batch again: %+v %v", again, err)
	}
	for _, id := range []string{"t-1", "t-2", "t-3"} {
		if st, actor := f.Status(id); st != "approved" || actor != "user:kevin" {
			t.Fatalf("%s: %s by %s", id, st, actor)
		}
	}
	got := f.TurnDecisions()
	if len(got) != 3 || !got[2].Replay || !got[1].SignatureOK || got[0].ApprovalID != "t-2" {
		t.Fatalf("received %+v", got)
	}
	if !strings.Contains(out.String(), "approved turn turn-7 (3 calls) by user:kevin via slack (U0KEVIN)") ||
		!strings.Contains(out.String(), "t-2 revision 2 bound to "+mergeDigest) {
		t.Fatalf("printed:\n%s", out.String())
	}
	// Decided already: a deny of the same calls names the first.
	res, err = c.DecideTurn(ctx, turnBatch(backend.Deny, 1, 2, 1), "key-3")
	if err != nil || res.Outcome != backend.OutcomeAlreadyDecided || res.ApprovalID != "t-1" || res.Status != "approved" {
		t.Fatalf("a batch over decided calls: %+v %v", res, err)
	}
}

// TestTurnRefusals: a wrong digest refuses the batch whole; the client
// sends no batch to a backend without the feature, and none it would
// refuse itself.
func TestTurnRefusals(t *testing.T) {
	t.Parallel()
	f, c, _ := setupTurn(t, backend.FeatureTurns)
	ctx := context.Background()
	bad := turnBatch(backend.Approve, 1, 1, 1)
	bad.Decisions[2].ArgsSHA256 = "sha256:" + strings.Repeat("0", 64)
	res, err := c.DecideTurn(ctx, bad, "k1")
	if err != nil || res.Outcome != backend.OutcomeDigestMismatch || res.ApprovalID != "t-3" {
		t.Fatalf("a wrong digest: %+v %v", res, err)
	}
	if st, _ := f.Status("t-1"); st != "pending" {
		t.Fatalf("t-1 applied from a refused batch: %s", st)
	}
	twice := turnBatch(backend.Deny, 1, 1)
	twice.Decisions[1].ApprovalID = "t-1"
	deadline := turnBatch(backend.Deny, 1)
	deadline.Actor = "system:deadline"
	for name, d := range map[string]backend.TurnDecision{"a call twice": twice, "the deadline": deadline,
		"no calls": turnBatch(backend.Deny)} {
		if _, err := c.DecideTurn(ctx, d, "k2"); err == nil {
			t.Errorf("%s: sent", name)
		}
	}
	_, plain, _ := setupTurn(t)
	if _, err := plain.DecideTurn(ctx, turnBatch(backend.Deny, 1, 1, 1), "k3"); !errors.Is(err, backend.ErrNoTurns) {
		t.Fatalf("to a backend without turns: %v", err)
	}
	if n := len(f.TurnDecisions()); n != 1 {
		t.Fatalf("%d batches reached the backend", n)
	}
}

// TestTurnUnsignedRefused: the stand-in checks a batch's signature.
func TestTurnUnsignedRefused(t *testing.T) {
	t.Parallel()
	f, _, _ := setupTurn(t)
	req, err := http.NewRequest(http.MethodPost, f.URL()+"/v1/turns/turn-7/decision",
		strings.NewReader(`{"turn_id":"turn-7","decision":"deny","actor":"user:kevin","via":{"surface":"slack"},"decisions":[{"approval_id":"t-1","revision":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("unsigned batch answered %d", resp.StatusCode)
	}
	if st, _ := f.Status("t-1"); st != "pending" {
		t.Fatalf("t-1 applied from an unsigned batch: %s", st)
	}
}
