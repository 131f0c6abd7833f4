package app_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads/threadstest"
)

// The bot keys the fingerprints of what a card hides with its calls
// secret: a reask that changes only a redacted API key shows that change
// on the new card, and the revision stored names the calls secret by its
// key id, holding neither it nor the key nor the API key.
func TestReaskShowsAChangedSecretUnderTheCallsSecret(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	_, load := botConfig(t, dir, "", nil)
	b := startBot(t, dir, load, nil)

	p, err := fixtures.Path("events", "secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	first, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if code := b.send(t, first); code != http.StatusAccepted {
		t.Fatalf("event: %d, want 202", code)
	}
	threadstest.Eventually(t, "the first card on the log surface", func() bool {
		return strings.Contains(b.out.String(), "(approval a-sec1, revision 1)")
	})
	if code := b.send(t, reaskedAPIKey(t, first)); code != http.StatusAccepted {
		t.Fatalf("reask: %d, want 202", code)
	}
	threadstest.Eventually(t, "the reask's card on the log surface", func() bool {
		return strings.Contains(b.out.String(), "(approval a-sec1, revision 2)")
	})
	out := b.out.String()
	if !strings.Contains(out, "headers.X-Api-Key:") || strings.Contains(out, "does not show") {
		t.Errorf("the reask's card does not show the API key changed:\n%s", out)
	}
	if strings.Contains(out, "ak_live") {
		t.Errorf("a card shows the API key:\n%s", out)
	}
	b.Stop()
	if err := b.exited(t); err != nil {
		t.Fatalf("Run: %v", err)
	}

	st, err := sqlite.Open(t.Context(), sqlite.Options{Path: filepath.Join(dir, "bot.db"), Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rev, err := st.RevisionGet(context.Background(), "a-sec1", 1)
	if err != nil {
		t.Fatal(err)
	}
	var stored approval.Approval
	if err := json.Unmarshal(rev.Body, &stored); err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, []byte(callsSecret))
	m.Write([]byte("approvalsbot fingerprint key id"))
	if fp := stored.Call.Fingerprints; fp == nil || !bytes.Equal(fp.KeyID, m.Sum(nil)[:8]) {
		t.Errorf("revision 1's fingerprints %+v: want them keyed from the calls secret", fp)
	}
	for _, leak := range []string{callsSecret, "ak_live_51H8", `"key"`} {
		if bytes.Contains(rev.Body, []byte(leak)) {
			t.Errorf("the stored revision holds %q: %s", leak, rev.Body)
		}
	}
}

// reaskedAPIKey is the event secrets.json asked again as revision 2, its
// arguments changed only in the API key the card redacts.
func reaskedAPIKey(t *testing.T, first []byte) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(first, &ev); err != nil {
		t.Fatal(err)
	}
	ev["id"], ev["type"] = "evt-sec1-2", "approval.reasked"
	data := ev["data"].(map[string]any)
	data["revision"], data["why"] = 2, "arguments_changed"
	call := data["call"].(map[string]any)
	headers := call["arguments"].(map[string]any)["headers"].(map[string]any)
	if headers["X-Api-Key"] == nil {
		t.Fatal("secrets.json has no X-Api-Key header")
	}
	headers["X-Api-Key"] = "ak_live_77Q2"
	call["args_sha256"] = "sha256:" + strings.Repeat("ef", 32)
	body, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return body
}
