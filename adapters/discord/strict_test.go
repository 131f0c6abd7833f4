package discord_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/templates"
)

// TestInteractionWithAKeyTwiceIsRefused: a correctly signed click whose
// body holds "data" twice (a forged Approve first, the real Deny after,
// which encoding/json would read) is refused with 400 before it is read:
// no answer, no dialog, nothing recorded.
func TestInteractionWithAKeyTwiceIsRefused(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	card := h.card(t, "a-merge1", approvalTarget, 1)
	approve := button(t, card, templates.ActionApprove)
	own := h.discord.Payload(discordtest.Click{User: kevin, Channel: chApproval, CustomID: button(t, card, templates.ActionDeny)})
	body := append([]byte(`{"data":{"custom_id":"`+approve+`","component_type":2},`), own[1:]...)
	status, answer := h.discord.Post(body, time.Now(), nil)
	if status != http.StatusBadRequest || !strings.Contains(answer, "holds a key twice") {
		t.Fatalf("answered %d %q, want 400 naming the key held twice", status, answer)
	}
	h.adapter.Close() // whatever the request set off has ended
	h.drain(t)
	if n := len(h.backend.Decisions()); n != 0 {
		t.Fatalf("%d decisions reached the backend", n)
	}
	if a, err := h.store.ApprovalGet(context.Background(), "a-merge1"); err != nil || len(a.Deciding) != 0 {
		t.Fatalf("approval %+v (%v): a decision is in flight", a, err)
	}
	if f := h.discord.Followups(kevin); len(f) != 0 {
		t.Fatalf("followed up: %+v", f)
	}
	if m, _ := h.discord.Message(card.ID); m.Edits != 0 {
		t.Fatalf("the card was edited: %+v", m)
	}
}

// TestReplayInAnotherCaseOrToAnotherReplicaIsRefused: a captured click
// sent again with its signature's hex upper-cased, or exactly as it was
// to another replica on the same store, is refused; the one decision
// recorded is the first click's.
func TestReplayInAnotherCaseOrToAnotherReplicaIsRefused(t *testing.T) {
	h := newHarness(t)
	// A call whose Approve records at once (no confirmation first).
	h.ingest(t, "search.json")
	h.drain(t)
	card := h.card(t, "a-search1", approvalTarget, 1)
	body := h.discord.Payload(discordtest.Click{User: kevin, Channel: chApproval, CustomID: button(t, card, templates.ActionApprove)})
	now := time.Now()
	var sig, stamp string
	status, _ := h.discord.Post(body, now, func(r *http.Request) {
		sig, stamp = r.Header.Get("X-Signature-Ed25519"), r.Header.Get("X-Signature-Timestamp")
	})
	if status != http.StatusOK {
		t.Fatalf("the click answered %d", status)
	}
	status, answer := h.discord.Post(body, now, func(r *http.Request) {
		r.Header.Set("X-Signature-Ed25519", strings.ToUpper(sig))
		r.Header.Set("X-Signature-Timestamp", stamp)
	})
	if status != http.StatusUnauthorized || !strings.Contains(answer, "sent before") {
		t.Fatalf("the upper-cased replay answered %d %q, want 401", status, answer)
	}

	// Another replica: its own adapter, the same store.
	o := h.opts
	other := newAdapter(t, o, h.svc)
	mux := http.NewServeMux()
	other.Routes(mux)
	serve := func(ts, sig string) (int, string) {
		req := httptest.NewRequest(http.MethodPost, "/discord/interactions", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Signature-Timestamp", ts)
		req.Header.Set("X-Signature-Ed25519", sig)
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	if status, answer := serve(stamp, sig); status != http.StatusUnauthorized || !strings.Contains(answer, "sent before") {
		t.Fatalf("the replay to another replica answered %d %q, want 401", status, answer)
	}
	// What it has not seen it takes: the same click signed a second later
	// is a new request (threads then refuses a second decision).
	later := strconv.FormatInt(now.Unix()+1, 10)
	if status, answer := serve(later, h.discord.Sign(later, body)); status != http.StatusOK {
		t.Fatalf("a new request to the other replica answered %d %q", status, answer)
	}
	other.Close()
	h.adapter.Close()
	h.drain(t)
	if got := h.backend.Decisions(); len(got) != 1 {
		t.Fatalf("decisions %+v, want the first click's alone", got)
	}
}
