package backend_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
)

// TestGrantOnTheWire: a decision carries its grant only to a backend
// with the grants feature (to any other it is refused before anything is
// sent); the revoke call is signed, keyed, and each of its answers read.
func TestGrantOnTheWire(t *testing.T) {
	secret := [][]byte{[]byte("calls-secret-of-32-bytes-77b02d5f")}
	now := time.Now()
	b, err := standin.New(standin.Options{Secrets: secret})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(b)
	t.Cleanup(srv.Close)
	args := json.RawMessage(`{"repo":"acme/api","pr":1234,"method":"squash"}`)
	b.AddApproval("a-1", 1, args, false)
	digest := b.Digest("a-1")
	grant := &backend.GrantBody{ID: approval.NewGrantID("k"), Scope: "values", Function: "acme_github.merge",
		Pins: []backend.Pin{{Argument: "repo", Role: "repository", Value: "acme/api"}}, Free: []string{"pr"},
		ExpiresAt: now.Add(time.Hour).In(time.FixedZone("CET", 3600)), Uses: 5}
	decision := backend.Decision{ApprovalID: "a-1", Revision: 1, Decision: backend.Approve, Actor: "user:kevin",
		Via: backend.Via{Surface: "slack", User: "U0KEVIN"}, ArgsSHA256: digest, Grant: grant}

	plain, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: secret})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := plain.Decide(context.Background(), decision, "key-0"); err == nil || !strings.Contains(err.Error(), "grants feature") {
		t.Fatalf("a grant to a backend without the feature: %v", err)
	}
	if _, err := plain.RevokeGrant(context.Background(), backend.Revoke{GrantID: grant.ID, Actor: "user:lee", Via: backend.Via{Surface: "slack"}}, "key-r0"); err == nil {
		t.Fatal("a revoke to a backend without the feature was sent")
	}
	if n := len(b.Decisions()) + len(b.Revokes()); n != 0 {
		t.Fatalf("%d calls reached the backend", n)
	}

	c, err := backend.NewClient(backend.ClientOptions{BaseURL: srv.URL, Secrets: secret, Features: []string{backend.FeatureGrants}})
	if err != nil {
		t.Fatal(err)
	}
	// A pin that is not the call's value is refused by the backend, and
	// nothing recorded.
	wider := *grant
	wider.Pins = []backend.Pin{{Argument: "repo", Role: "repository", Value: "acme/*"}}
	bad := decision
	bad.Grant = &wider
	if _, err := c.Decide(context.Background(), bad, "key-bad"); err == nil {
		t.Fatal("a grant wider than the call was recorded")
	}
	res, err := c.Decide(context.Background(), decision, "key-1")
	if err != nil || res.Outcome != backend.OutcomeRecorded {
		t.Fatalf("decide: %+v %v", res, err)
	}
	got := b.Decisions()
	body := string(got[len(got)-1].Body)
	if !strings.Contains(body, `"grant":{"id":"`+grant.ID+`","scope":"values","function":"acme_github.merge","pins":[{"argument":"repo","role":"repository","value":"acme/api"}],"free":["pr"],"expires_at":"`) ||
		!strings.Contains(body, `Z","uses":5}`) {
		t.Fatalf("body %s", body)
	}
	if gs := b.Grants(); len(gs) != 1 || gs[0].ID != grant.ID || gs[0].Actor != "user:kevin" {
		t.Fatalf("grants kept %+v", gs)
	}

	revoke := backend.Revoke{GrantID: grant.ID, Actor: "user:lee", Via: backend.Via{Surface: "slack", User: "U0LEE"}}
	for i, want := range []backend.Outcome{backend.OutcomeRevoked, backend.OutcomeRevoked, backend.OutcomeAlreadyEnded} {
		key := "key-r1"
		if i == 2 {
			key = "key-r2"
		}
		res, err := c.RevokeGrant(context.Background(), revoke, key)
		if err != nil || res.Outcome != want {
			t.Errorf("revoke %d: %+v %v, want %s", i, res, err, want)
		}
	}
	if rv := b.Revokes(); len(rv) != 3 || !rv[0].SignatureOK || rv[0].IdempotencyKey != "key-r1" || !rv[1].Replay {
		t.Errorf("revokes %+v", rv)
	}
	other := revoke
	other.GrantID = approval.NewGrantID("unknown")
	if res, err := c.RevokeGrant(context.Background(), other, "key-r3"); err != nil || res.Outcome != backend.OutcomeNotFound {
		t.Errorf("revoke of an unknown grant: %+v %v", res, err)
	}
	other.GrantID = "g-../../x"
	if _, err := c.RevokeGrant(context.Background(), other, "key-r4"); err == nil {
		t.Error("a malformed grant id was sent")
	}
}
