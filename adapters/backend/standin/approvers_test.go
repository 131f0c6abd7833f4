package standin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
)

// TestDecisionApproversStandinAccepts: a good list is recorded with the
// decision, as tests read it, and printed with it.
func TestDecisionApproversStandinAccepts(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	clk := &clock{now: start}
	f := backendtest.New(t, standin.Options{Secrets: [][]byte{secret}, Now: clk.Now, Out: &out})
	f.AddApproval(mergeID, 1, mergeArgs, false)
	f.SetNoContent("user:ada")
	c, err := backend.NewClient(backend.ClientOptions{BaseURL: f.URL(), Secrets: [][]byte{secret}, Now: clk.Now, Sleep: clk.Sleep,
		Features: []string{backend.FeatureApprovers}})
	if err != nil {
		t.Fatal(err)
	}
	d := approve("user:kevin", mergeDigest)
	d.Via = backend.Via{Surface: "slack", User: "U0KEVIN"}
	d.Approvers = []backend.Approver{
		{Actor: "user:ada", Via: backend.Via{Surface: "email", User: "ada@acme.example"}, At: start.Add(-2 * time.Minute)},
		{Actor: "user:kevin", Via: backend.Via{Surface: "slack", User: "U0KEVIN"}, At: start.Add(-time.Second / 2), ArgsSHA256: mergeDigest},
	}
	res, err := c.Decide(context.Background(), d, "k")
	if err != nil || res.Outcome != backend.OutcomeRecorded || res.Status != "approved" {
		t.Fatalf("decide: %+v %v", res, err)
	}
	recs := f.Decisions()
	if len(recs) != 1 {
		t.Fatalf("recorded %d decisions, want 1", len(recs))
	}
	want := []standin.Approver{
		{Actor: "user:ada", Via: standin.Via{Surface: "email", User: "ada@acme.example"}, At: "2026-11-29T17:58:00Z"},
		{Actor: "user:kevin", Via: standin.Via{Surface: "slack", User: "U0KEVIN"}, At: "2026-11-29T17:59:59.5Z", ArgsSHA256: mergeDigest},
	}
	if diff := cmp.Diff(want, recs[0].Request.Approvers); diff != "" {
		t.Errorf("approvers recorded (-want +got):\n%s", diff)
	}
	line := "approved a-merge1 revision 1 by user:kevin via slack (U0KEVIN) · bound to " + mergeDigest +
		" · 2 approvers: user:ada via email (ada@acme.example) at 2026-11-29T17:58:00Z; " +
		"user:kevin via slack (U0KEVIN) at 2026-11-29T17:59:59.5Z bound to " + mergeDigest + "\n"
	if out.String() != line {
		t.Errorf("the stand-in printed:\n%s\nwant:\n%s", out.String(), line)
	}
}

// TestDecisionApproversStandinRefuses: each list that does not make a
// quorum, sent signed as a backend could get it, is answered 403
// forbidden saying why, and the approval stays pending.
func TestDecisionApproversStandinRefuses(t *testing.T) {
	t.Parallel()
	other := "sha256:" + strings.Repeat("0", 64)
	tests := []struct {
		name    string
		arrange func(*backendtest.Fake)
		edit    func(*decisionBody)
		want    string // in the message
	}{
		{"empty", nil, func(b *decisionBody) { b.Approvers = []approverBody{} }, "the list is empty"},
		{"on a deny", nil, func(b *decisionBody) { b.Decision = "deny" }, "only a decision to approve carries approvers"},
		{"last is not the actor", nil, func(b *decisionBody) { b.Approvers[0], b.Approvers[1] = b.Approvers[1], b.Approvers[0] },
			`the last is "user:ada", not the decision's actor "user:kevin"`},
		{"one person twice", nil, func(b *decisionBody) { b.Approvers[0].Actor = "user:kevin" }, "approvers[1]: user:kevin is listed twice"},
		{"no actor", nil, func(b *decisionBody) { b.Approvers[0].Actor = "" }, `approvers[0]: actor "" is not a tenant user`},
		{"a system actor", nil, func(b *decisionBody) { b.Approvers[0].Actor = "system:deadline" }, `actor "system:deadline" is not a tenant user`},
		{"unknown surface", nil, func(b *decisionBody) { b.Approvers[0].Via.Surface = "deadline" },
			`approvers[0]: via.surface "deadline" is not one of slack, discord, email`},
		{"no surface", nil, func(b *decisionBody) { b.Approvers[0].Via.Surface = "" }, `via.surface "" is not one of`},
		{"time not RFC 3339", nil, func(b *decisionBody) { b.Approvers[0].At = "2026-11-29 18:00" },
			`approvers[0]: at "2026-11-29 18:00" is not an RFC 3339 time`},
		{"no time", nil, func(b *decisionBody) { b.Approvers[1].At = "" }, `approvers[1]: at "" is not an RFC 3339 time`},
		{"an approver who may not decide", func(f *backendtest.Fake) { f.SetForbidden("user:ada") }, nil,
			"approvers[0]: user:ada may not decide"},
		{"a digest from one without the content permission", func(f *backendtest.Fake) { f.SetNoContent("user:ada") }, nil,
			"approvers[0]: user:ada does not hold the content permission"},
		{"another revision's digest", nil, func(b *decisionBody) { b.Approvers[0].ArgsSHA256 = other },
			"approvers[0]: user:ada approved the arguments " + other + ", not revision 1's"},
		{"digest malformed", nil, func(b *decisionBody) { b.Approvers[0].ArgsSHA256 = "sha256:abc" }, "approvers[0]: args_sha256 is not"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, _, _ := setup(t)
			if tt.arrange != nil {
				tt.arrange(f)
			}
			b := goodQuorum()
			if tt.edit != nil {
				tt.edit(&b)
			}
			status, e := post(t, f, b)
			if status != http.StatusForbidden || e.Error != "forbidden" || !strings.Contains(e.Message, tt.want) {
				t.Errorf("answer %d %+v, want 403 forbidden saying %q", status, e, tt.want)
			}
			if got, _ := f.Status(mergeID); got != "pending" {
				t.Errorf("the approval is %s after a refused quorum", got)
			}
			if recs := f.Decisions(); len(recs) != 1 || recs[0].Code != "forbidden" || recs[0].Request.Approvers == nil {
				t.Errorf("recorded %+v, want the refused decision with its approvers", recs)
			}
		})
	}
	t.Run("the good list, for reference", func(t *testing.T) {
		t.Parallel()
		f, _, _ := setup(t)
		if status, e := post(t, f, goodQuorum()); status != http.StatusOK {
			t.Errorf("answer %d %+v, want 200", status, e)
		}
	})
}

// decisionBody and approverBody are a decision as a backend can get it,
// not held to what the bot's client would send.
type decisionBody struct {
	ApprovalID string         `json:"approval_id"`
	Revision   int            `json:"revision"`
	Decision   string         `json:"decision"`
	Actor      string         `json:"actor"`
	Via        standin.Via    `json:"via"`
	ArgsSHA256 string         `json:"args_sha256"`
	Approvers  []approverBody `json:"approvers"`
}

type approverBody struct {
	Actor      string      `json:"actor"`
	Via        standin.Via `json:"via"`
	At         string      `json:"at"`
	ArgsSHA256 string      `json:"args_sha256,omitempty"`
}

func goodQuorum() decisionBody {
	return decisionBody{ApprovalID: mergeID, Revision: 1, Decision: "approve", Actor: "user:kevin",
		Via: standin.Via{Surface: "slack", User: "U0KEVIN"}, ArgsSHA256: mergeDigest,
		Approvers: []approverBody{
			{Actor: "user:ada", Via: standin.Via{Surface: "discord", User: "D0ADA"}, At: "2026-11-29T17:58:00Z", ArgsSHA256: mergeDigest},
			{Actor: "user:kevin", Via: standin.Via{Surface: "slack", User: "U0KEVIN"}, At: "2026-11-29T17:59:30.5Z", ArgsSHA256: mergeDigest},
		}}
}

// post sends b signed to f's decision endpoint and returns the answer.
func post(t *testing.T, f *backendtest.Fake, b decisionBody) (int, struct{ Error, Message string }) {
	t.Helper()
	var e struct{ Error, Message string }
	body, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, f.URL()+"/v1/approvals/"+mergeID+"/decision", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-1")
	req.Header.Set(backend.SignatureHeader, backend.Sign(secret, start, body))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		if err := json.Unmarshal(answer, &e); err != nil {
			t.Fatalf("answer %d %s: %v", resp.StatusCode, answer, err)
		}
	}
	return resp.StatusCode, e
}

// TestProtocolApproversExampleStandin: the stand-in records the decision
// docs/protocol.md#approvers shows, as sent there.
func TestProtocolApproversExampleStandin(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	at := strings.Index(section, "\n### `approvers`\n")
	if at < 0 {
		t.Fatal("docs/protocol.md has no section on approvers")
	}
	section = section[at:]
	open := strings.Index(section, "\n```json\n")
	if open < 0 {
		t.Fatal("docs/protocol.md shows no JSON for approvers")
	}
	body := section[open+len("\n```json\n"):]
	end := strings.Index(body, "\n```")
	if end < 0 {
		t.Fatal("the JSON for approvers is not closed")
	}
	body = body[:end]

	f := backendtest.New(t, standin.Options{Secrets: [][]byte{secret}, Now: func() time.Time { return start }})
	f.AddApproval("a-7Q2K9", 1, mergeArgs, false)
	f.AddApproval("a-7Q2K9", 2, mergeArgs, false) // the example's revision, reasked
	req, err := http.NewRequest(http.MethodPost, f.URL()+"/v1/approvals/a-7Q2K9/decision", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-doc")
	req.Header.Set(backend.SignatureHeader, backend.Sign(secret, start, []byte(body)))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	answer, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the example was answered %d %s", resp.StatusCode, answer)
	}
	recs := f.Decisions()
	if len(recs) != 1 || len(recs[0].Request.Approvers) < 2 || recs[0].Request.Approvers[len(recs[0].Request.Approvers)-1].Actor != recs[0].Request.Actor {
		t.Errorf("recorded %+v, want the example's approvers, its actor last", recs)
	}
}
