package approval

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"approvalsbot/internal/fixtures"
)

func TestRevealKeepsEverythingButSecrets(t *testing.T) {
	p, err := fixtures.Path("arguments", "a-sec1.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var fx struct{ Arguments json.RawMessage }
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	out, redacted, err := Reveal(fx.Arguments)
	if err != nil || !redacted {
		t.Fatalf("reveal: %v redacted=%v", err, redacted)
	}
	for _, secret := range []string{"hunter2", "eyJhbGciOiJIUzI1NiJ9", "ak_live_51H8", "correct horse", "cs_9f8e", "BEGIN PRIVATE KEY"} {
		if strings.Contains(string(out), secret) {
			t.Errorf("%q revealed:\n%s", secret, out)
		}
	}
	for _, keep := range []string{"token rotation", "ci.acme.example/hooks/run", `"note"`, `"X-Api-Key"`} {
		if !strings.Contains(string(out), keep) {
			t.Errorf("%q lost:\n%s", keep, out)
		}
	}
	if !json.Valid(out) {
		t.Fatalf("not JSON:\n%s", out)
	}
}

func TestRevealDoesNotCut(t *testing.T) {
	long := strings.Repeat("x", 5000)
	var items []string
	for range 100 {
		items = append(items, `"`+long+`"`)
	}
	raw := []byte(`{"list":[` + strings.Join(items, ",") + `],"n":12345678901234567890}`)
	out, redacted, err := Reveal(raw)
	if err != nil || redacted {
		t.Fatalf("%v %v", err, redacted)
	}
	if strings.Count(string(out), long) != 100 || !strings.Contains(string(out), "12345678901234567890") {
		t.Fatal("Reveal cut or changed something")
	}
	if _, _, err := Reveal([]byte(`{"a":1} {"b":2}`)); err == nil {
		t.Fatal("two values accepted")
	}
	if _, _, err := Reveal([]byte(`{"a":`)); err == nil {
		t.Fatal("broken JSON accepted")
	}
}

// A key is text too: one that is itself a secret shows redacted, as the
// card's projection shows it, and the value under it stays.
func TestRevealRedactsSecretsInKeys(t *testing.T) {
	raw := []byte(`{"env":{"GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345":"set","plain":"ok"}}`)
	out, redacted, err := Reveal(raw)
	if err != nil || !redacted {
		t.Fatalf("reveal: %v redacted=%v", err, redacted)
	}
	if strings.Contains(string(out), "ghp_0123456789") {
		t.Errorf("the secret in a key was revealed:\n%s", out)
	}
	p, err := Project(raw)
	if err != nil {
		t.Fatal(err)
	}
	var shown, projected any
	if err := json.Unmarshal(out, &shown); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(p.JSON, &projected); err != nil {
		t.Fatal(err)
	}
	if a, b := mustJSON(t, shown), mustJSON(t, projected); a != b {
		t.Errorf("Reveal and Project disagree on the keys:\n%s\n%s", a, b)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
