package backend_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend"
	"approvalsbot/threads"
)

// quorumMet is a decision that completed a quorum of two, one approver
// without the content permission, times given in another zone than UTC.
func quorumMet() backend.Decision {
	berlin := time.FixedZone("CET", 3600)
	return backend.Decision{
		ApprovalID: "a-7Q2K9", Revision: 2, Decision: backend.Approve, Actor: "user:kevin",
		Via: backend.Via{Surface: "slack", User: "U0KEVIN"}, ArgsSHA256: digest,
		Approvers: []backend.Approver{
			{Actor: "user:ada", Via: backend.Via{Surface: "email", User: "ada@acme.example"},
				At: time.Date(2026, 11, 29, 19, 4, 10, 0, berlin)},
			{Actor: "user:kevin", Via: backend.Via{Surface: "slack", User: "U0KEVIN"},
				At: time.Date(2026, 11, 29, 19, 9, 31, 250e6, berlin), ArgsSHA256: digest},
		},
	}
}

// sentBody sends d with a client given features and returns the one body
// the backend received, after checking its signature.
func sentBody(t *testing.T, d backend.Decision, features ...string) string {
	t.Helper()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, answerJSON(200, `{"status":"approved","message":"m"}`))
	c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) { o.Features = features })
	if _, err := c.Decide(context.Background(), d, "k"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("the backend got %d requests, want 1", len(reqs))
	}
	if reqs[0].SignatureErr != nil {
		t.Errorf("the signature does not cover the body sent: %v", reqs[0].SignatureErr)
	}
	return string(reqs[0].Body)
}

// TestDecisionApproversFeature: a backend with the approvers feature gets
// the quorum's approvers in the signed body, in UTC, in the order given;
// any other gets the decision it got before the feature, byte for byte.
func TestDecisionApproversFeature(t *testing.T) {
	t.Parallel()
	const head = `{"approval_id":"a-7Q2K9","revision":2,"decision":"approve","actor":"user:kevin","via":{"surface":"slack","user":"U0KEVIN"},"args_sha256":"` + digest + `"`
	const approvers = `,"approvers":[` +
		`{"actor":"user:ada","via":{"surface":"email","user":"ada@acme.example"},"at":"2026-11-29T18:04:10Z"},` +
		`{"actor":"user:kevin","via":{"surface":"slack","user":"U0KEVIN"},"at":"2026-11-29T18:09:31.25Z","args_sha256":"` + digest + `"}]`
	single := quorumMet()
	single.Approvers = nil
	tests := []struct {
		name     string
		d        backend.Decision
		features []string
		want     string
	}{
		{"feature on", quorumMet(), []string{backend.FeatureApprovers}, head + approvers + `}`},
		{"feature off", quorumMet(), nil, head + `}`},
		{"feature on, no quorum", single, []string{backend.FeatureApprovers}, head + `}`},
		{"feature off, no quorum", single, nil, head + `}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := sentBody(t, tt.d, tt.features...); got != tt.want {
				t.Errorf("body\n got %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("the caller's times are kept", func(t *testing.T) {
		t.Parallel()
		d := quorumMet()
		sentBody(t, d, backend.FeatureApprovers)
		if loc := d.Approvers[0].At.Location().String(); loc != "CET" {
			t.Errorf("Decide changed the caller's approver time to %s", loc)
		}
	})
}

// TestDecisionApproversThroughThreads: the core's DecisionCall reaches the
// backend with its approvers, surface and user as via.
func TestDecisionApproversThroughThreads(t *testing.T) {
	t.Parallel()
	ft := newFakeTime()
	srv := newServer(t, ft.Now, answerJSON(200, `{"status":"approved","message":"m"}`))
	c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) { o.Features = []string{backend.FeatureApprovers} })
	at := time.Date(2026, 11, 29, 18, 4, 10, 0, time.UTC)
	ans, err := c.ForThreads().Decide(context.Background(), threads.DecisionCall{
		ApprovalID: "a-7Q2K9", Revision: 1, Approve: true, Actor: "user:kevin", Surface: "discord", User: "D0KEVIN",
		IdempotencyKey: "k",
		Approvers: []threads.Approver{
			{Actor: "user:ada", Surface: "slack", User: "U0ADA", At: at, ArgsSHA256: digest},
			{Actor: "user:kevin", Surface: "discord", User: "D0KEVIN", At: at.Add(time.Minute)},
		},
	})
	if err != nil || ans.Outcome != threads.DecisionRecorded {
		t.Fatalf("decide: %+v %v", ans, err)
	}
	var got struct {
		Approvers []map[string]any `json:"approvers"`
	}
	if err := json.Unmarshal(srv.Requests()[0].Body, &got); err != nil {
		t.Fatal(err)
	}
	want := []map[string]any{
		{"actor": "user:ada", "via": map[string]any{"surface": "slack", "user": "U0ADA"}, "at": "2026-11-29T18:04:10Z", "args_sha256": digest},
		{"actor": "user:kevin", "via": map[string]any{"surface": "discord", "user": "D0KEVIN"}, "at": "2026-11-29T18:05:10Z"},
	}
	if diff := cmp.Diff(want, got.Approvers); diff != "" {
		t.Errorf("approvers sent (-want +got):\n%s", diff)
	}
}

// TestDecisionApproversInvalidAreNotSent: approvers no backend should
// accept fail before any I/O, with what is wrong named.
func TestDecisionApproversInvalidAreNotSent(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		edit func(*backend.Decision)
		want string
	}{
		{"on a deny", func(d *backend.Decision) { d.Decision = backend.Deny }, "only a decision to approve"},
		{"last is not the actor", func(d *backend.Decision) { d.Approvers[0], d.Approvers[1] = d.Approvers[1], d.Approvers[0] }, "the last is"},
		{"one person twice", func(d *backend.Decision) { d.Approvers[0].Actor = "user:kevin" }, `"user:kevin" approved twice`},
		{"no actor", func(d *backend.Decision) { d.Approvers[0].Actor = "" }, "approvers[0].actor"},
		{"a system actor", func(d *backend.Decision) { d.Approvers[0].Actor = "system:deadline" }, "approvers[0].actor"},
		{"the deadline's surface", func(d *backend.Decision) { d.Approvers[0].Via.Surface = "deadline" }, "approvers[0].via.surface"},
		{"no time", func(d *backend.Decision) { d.Approvers[1].At = time.Time{} }, "approvers[1].at"},
		{"digest malformed", func(d *backend.Decision) { d.Approvers[1].ArgsSHA256 = "sha256:abc" }, "approvers[1].args_sha256"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ft := newFakeTime()
			srv := newServer(t, ft.Now, answerJSON(200, `{"status":"approved","message":"m"}`))
			c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) { o.Features = []string{backend.FeatureApprovers} })
			d := quorumMet()
			tt.edit(&d)
			_, err := c.Decide(context.Background(), d, "k")
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Decide: %v, want an error saying %q", err, tt.want)
			}
			if n := len(srv.Requests()); n != 0 {
				t.Errorf("server saw %d requests, want none", n)
			}
		})
	}
}

// TestClientFeatures: NewClient takes the features it knows, each once.
func TestClientFeatures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		features []string
		want     string // in the error; "": none
	}{
		{"none", nil, ""},
		{"approvers", []string{"approvers"}, ""},
		{"unknown", []string{"approvers", "votes"}, `features[1]: "votes" is not one of approvers`},
		{"twice", []string{"approvers", "approvers"}, `features[1]: "approvers" is listed twice`},
		{"another case", []string{"Approvers"}, `features[0]: "Approvers" is not one of`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := backend.NewClient(backend.ClientOptions{BaseURL: "https://jobs.acme.example", Secrets: [][]byte{secretOld}, Features: tt.features})
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("NewClient: %v", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("NewClient: %v, want an error saying %q", err, tt.want)
			}
		})
	}
}

// TestProtocolApproversExample: the decision docs/protocol.md#approvers
// shows reads into a Decision, field for field, that the client sends
// back as the same JSON.
func TestProtocolApproversExample(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "protocol.md"))
	if err != nil {
		t.Fatal(err)
	}
	example := jsonBlockAfter(t, string(doc), "### `approvers`")
	var d backend.Decision
	dec := json.NewDecoder(bytes.NewReader(example))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("the example does not read as a decision: %v\n%s", err, example)
	}
	if len(d.Approvers) < 2 {
		t.Fatalf("the example shows %d approvers, want a quorum of at least 2", len(d.Approvers))
	}
	sent := sentBody(t, d, backend.FeatureApprovers)
	var want, got any
	if err := json.Unmarshal(example, &want); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(sent), &got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the client sends the example otherwise (-doc +sent):\n%s", diff)
	}
}

// jsonBlockAfter is the first ```json block after heading in doc.
func jsonBlockAfter(t *testing.T, doc, heading string) []byte {
	t.Helper()
	at := strings.Index(doc, "\n"+heading+"\n")
	if at < 0 {
		t.Fatalf("docs/protocol.md has no heading %s", heading)
	}
	rest := doc[at:]
	open := strings.Index(rest, "\n```json\n")
	if open < 0 {
		t.Fatalf("docs/protocol.md shows no JSON after %s", heading)
	}
	rest = rest[open+len("\n```json\n"):]
	end := strings.Index(rest, "\n```")
	if end < 0 {
		t.Fatalf("the JSON after %s is not closed", heading)
	}
	return []byte(rest[:end])
}

// TestDecisionForbiddenNamesTheApprover: a 403 to a quorum's decision
// may name the approver it refuses (docs/protocol.md#approvers); the core
// is told whose, and a 403 that names none names nobody.
func TestDecisionForbiddenNamesTheApprover(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ body, want string }{
		{`{"error":"forbidden","actor":"user:ada","message":"approvers[0]: user:ada may not decide"}`, "user:ada"},
		{`{"error":"forbidden","message":"user:kevin may not decide"}`, ""},
	} {
		ft := newFakeTime()
		srv := newServer(t, ft.Now, answerJSON(403, tt.body))
		c := newClient(t, srv.URL, ft, func(o *backend.ClientOptions) { o.Features = []string{backend.FeatureApprovers} })
		ans, err := c.ForThreads().Decide(context.Background(), threads.DecisionCall{
			ApprovalID: "a-7Q2K9", Revision: 1, Approve: true, Actor: "user:kevin", Surface: "slack", User: "U0KEVIN",
			IdempotencyKey: "k",
			Approvers: []threads.Approver{
				{Actor: "user:ada", Surface: "slack", User: "U0ADA", At: time.Date(2026, 11, 29, 18, 4, 10, 0, time.UTC)},
				{Actor: "user:kevin", Surface: "slack", User: "U0KEVIN", At: time.Date(2026, 11, 29, 18, 5, 10, 0, time.UTC)},
			},
		})
		if err != nil || ans.Outcome != threads.DecisionForbidden || ans.Actor != tt.want {
			t.Errorf("answer %s: %+v %v; want forbidden, actor %q", tt.body, ans, err, tt.want)
		}
	}
}
