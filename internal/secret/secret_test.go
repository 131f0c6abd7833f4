package secret_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"approvalsbot/internal/secret"
)

// token is a type that holds only a secret and prints through package
// secret, as the adapters' credentials do.
type token struct{ value string }

func (token) Format(f fmt.State, verb rune) { secret.Format(f, verb, "secret_test.token") }
func (token) LogValue() slog.Value          { return secret.LogValue() }
func (token) MarshalJSON() ([]byte, error)  { return secret.JSON() }

// Every verb, slog handler and JSON encoder prints the word, never the
// value; %#v names the type.
func TestEveryWayOfPrintingShowsTheWord(t *testing.T) {
	tok := token{"LEAK"}
	for _, verb := range []string{"%v", "%+v", "%s", "%q", "%x", "%X", "%d", "%10s"} {
		if got := fmt.Sprintf(verb, tok); got != secret.Shown {
			t.Errorf("%s: %q, want %q", verb, got, secret.Shown)
		}
	}
	if got := fmt.Sprintf("%#v", tok); got != "secret_test.token{<secret>}" {
		t.Errorf("%%#v: %q", got)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("m", "t", tok)
	slog.New(slog.NewTextHandler(&logged, nil)).Info("m", "t", tok)
	js, err := json.Marshal(struct{ T token }{tok})
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(logged.Bytes(), []byte("LEAK")) || !bytes.Contains(logged.Bytes(), []byte(secret.Shown)) {
		t.Errorf("logged %q", logged.String())
	}
	var back struct{ T string }
	if err := json.Unmarshal(js, &back); err != nil || back.T != secret.Shown {
		t.Errorf("JSON %s (%v)", js, err)
	}
}
