package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TestReaskShowsAChangedSecret: a reask whose only change is a secret the
// card redacts (the API key of secrets.json) says, on the new card, that
// the redacted value changed, as long as the service still lists the
// calls secret the earlier revision's fingerprints were keyed with; a
// rotation that keeps it listed still compares. Once it is rotated out,
// or without a secret, the card says the change is in values it does not
// show, and no path changed. The store holds neither the secret nor the
// fingerprints' key.
func TestReaskShowsAChangedSecret(t *testing.T) {
	before, after := []byte("calls-secret-before-the-rotation"), []byte("calls-secret-after-the-rotation")
	apiKey := approval.ArgumentChange{Path: "headers.X-Api-Key", Kind: approval.ChangeChanged,
		Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true}
	tests := []struct {
		name          string
		first, reask  [][]byte // the service's secrets at the request, at the reask
		want          []approval.ArgumentChange
		unshown       bool
		fingerprinted bool // revision 1 is stored with fingerprints
	}{
		{name: "one secret", first: [][]byte{before}, reask: [][]byte{before},
			want: []approval.ArgumentChange{apiKey}, fingerprinted: true},
		{name: "rotated, the old secret still listed", first: [][]byte{before}, reask: [][]byte{after, before},
			want: []approval.ArgumentChange{apiKey}, fingerprinted: true},
		{name: "rotated out", first: [][]byte{before}, reask: [][]byte{after}, unshown: true, fingerprinted: true},
		{name: "no secret", unshown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarnessWith(t, func(o *threads.Options) { o.FingerprintSecrets = tt.first })
			body, ev := readEvent(t, "secrets.json")
			if _, err := h.ingestBody(body, ev); err != nil {
				t.Fatal(err)
			}
			h.drain(t)
			rev, err := h.store.RevisionGet(context.Background(), ev.Approval.ID, 1)
			if err != nil {
				t.Fatal(err)
			}
			var stored approval.Approval
			if err := json.Unmarshal(rev.Body, &stored); err != nil {
				t.Fatal(err)
			}
			if got := stored.Call.Fingerprints != nil; got != tt.fingerprinted {
				t.Fatalf("revision 1 stored with fingerprints %v, want %v: %s", got, tt.fingerprinted, rev.Body)
			}
			if bytes.Contains(rev.Body, []byte("ak_live_51H8")) || bytes.Contains(rev.Body, before) ||
				bytes.Contains(rev.Body, []byte(`"key"`)) {
				t.Errorf("the stored revision holds the API key, the calls secret or a key: %s", rev.Body)
			}

			h.opts.FingerprintSecrets = tt.reask
			h.restart(t)
			next := *ev.Approval
			next.Revision, next.Why = 2, approval.WhyArgumentsChanged
			next.Call.Arguments = bytes.Replace(ev.Approval.Call.Arguments, []byte("ak_live_51H8"), []byte("ak_live_77Q2"), 1)
			if bytes.Equal(next.Call.Arguments, ev.Approval.Call.Arguments) {
				t.Fatal("the fixture's API key is not where the test changes it")
			}
			next.Call.ArgsSHA256 = "sha256:" + strings.Repeat("ef", 32)
			re := &approval.Event{ID: "evt-sec1-2", Type: approval.EventReasked, Time: ev.Time, Tenant: ev.Tenant, Approval: &next}
			raw, err := json.Marshal(map[string]any{"id": re.ID, "type": re.Type, "time": re.Time, "tenant": re.Tenant, "data": next})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.ingestBody(raw, re); err != nil {
				t.Fatal(err)
			}
			h.drain(t)

			var card *threads.Card
			for i := range h.surf.posts {
				if p := h.surf.posts[i]; p.Card.Approval.Revision == 2 {
					card = &h.surf.posts[i].Card
				}
			}
			if card == nil {
				t.Fatalf("%d posts: want the new card posted", len(h.surf.posts))
			}
			in := card.Input()
			if in.Reask == nil {
				t.Fatal("the new card carries no reask")
			}
			if diff := cmp.Diff(tt.want, in.Reask.Arguments); diff != "" || in.Reask.Unshown != tt.unshown {
				t.Errorf("the new card's reask %+v: unshown %v, changes (-want +got):\n%s", in.Reask, tt.unshown, diff)
			}
			c := templates.Build(in)
			if c.Reask == nil {
				t.Fatal("the new card says nothing of the reask")
			}
			lines := strings.Join(c.Reask.Changes, "\n")
			if strings.Contains(lines+c.Reask.Note, "ak_live") {
				t.Errorf("the new card shows the API key: %+v", c.Reask)
			}
			if tt.unshown {
				if len(c.Reask.Changes) != 0 || !strings.HasPrefix(c.Reask.Note, "the change is in values this card does not show") {
					t.Errorf("the new card says %+v: want no change listed, and that the change is in values it does not show", c.Reask)
				}
				return
			}
			if len(c.Reask.Changes) != 1 || !strings.HasPrefix(c.Reask.Changes[0], "headers.X-Api-Key:") || c.Reask.Note != "" {
				t.Errorf("the new card says %+v: want the API key's change, however the card words a hidden one", c.Reask)
			}
		})
	}
}
