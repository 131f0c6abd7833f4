package main

import (
	"context"
	"io"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
)

// TestEventGrantCheck: once a person's approval carried a grant to the
// stand-in backend, `bot event --grant-check` sends the same kind of call
// as approval.auto_granted naming the grant (the quick start's way to
// show a grant used), until its uses are spent; a call it does not cover
// is sent as the request.
func TestEventGrantCheck(t *testing.T) {
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	secret := [][]byte{[]byte("calls-secret-of-32-bytes-77b02d5f")}
	b, err := standin.New(standin.Options{Secrets: secret, Learn: true, Arguments: filepath.Join(root, "testdata", "fixtures", "arguments")})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: secret, Features: []string{backend.FeatureGrants}})
	if err != nil {
		t.Fatal(err)
	}
	body, err := readEventFile(filepath.Join(root, "testdata", "fixtures", "events", "merge.json"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	moved, err := moveEventToNow(body, now)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(moved.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := ev.Approval
	res, err := client.Decide(context.Background(), backend.Decision{ApprovalID: a.ID, Revision: 1, Decision: backend.Approve,
		Actor: "user:kevin", Via: backend.Via{Surface: "slack", User: "U0KEVIN"}, ArgsSHA256: a.Call.ArgsSHA256,
		Grant: &backend.GrantBody{ID: approval.NewGrantID("row-1"), Scope: "call", Function: a.Call.Function,
			ArgsSHA256: a.Call.ArgsSHA256, ExpiresAt: now.Add(time.Hour), Uses: 1}}, "key-1")
	if err != nil || res.Outcome != backend.OutcomeRecorded {
		t.Fatalf("decide: %+v %v", res, err)
	}

	again, _ := moveEventToNow(body, now.Add(time.Second))
	out, err := grantedInstead(context.Background(), srv.URL, again.Body, now, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	granted, err := approval.Parse(out)
	if err != nil || granted.Type != approval.EventAutoGranted || granted.AutoGranted.GrantID != approval.NewGrantID("row-1") ||
		granted.AutoGranted.Call.ArgsSHA256 != a.Call.ArgsSHA256 {
		t.Fatalf("granted %s: %v", out, err)
	}
	// Its one use is spent: the next is sent as the request.
	third, _ := moveEventToNow(body, now.Add(2*time.Second))
	out, err = grantedInstead(context.Background(), srv.URL, third.Body, now, io.Discard)
	if err != nil || string(out) != string(third.Body) {
		t.Fatalf("a spent grant still covers: %s %v", out, err)
	}
	if _, err := grantedInstead(context.Background(), "http://127.0.0.1:1", third.Body, now, io.Discard); err == nil ||
		!strings.Contains(err.Error(), "is bot backend running?") {
		t.Errorf("no stand-in: %v", err)
	}
}
