package approval_test

import (
	"encoding/json"
	"testing"

	"approvalsbot/approval"
)

// TestTypedMatches: the forms the platform's Decision controls accept for
// a typed confirmation, and the near misses it refuses.
func TestTypedMatches(t *testing.T) {
	for _, c := range []struct {
		value, typed string
		want         bool
	}{
		{`250`, `250`, true},
		{`250`, ` 250`, false},
		{`250`, `250.0`, false},
		{`2.50`, `2.5`, true}, // the number's canonical form
		{`1e3`, `1000`, true},
		{`"250"`, `250`, true}, // a text, typed as it is
		{`"250"`, `"250"`, false},
		{`"Åsa"`, `Åsa`, true},
		{`"Åsa"`, `\u00c5sa`, false}, // a text is typed as it is
		{`"a b"`, `a b`, true},
		{`"a b"`, `a  b`, false},
		{`["a","b"]`, `["a","b"]`, true},
		{`[ "a", "b" ]`, `["a","b"]`, true},
		{`["a","b"]`, `["a", "b"]`, false},
		{`["a","b"]`, `["b","a"]`, false},
		{`{"sum":250,"currency":"EUR"}`, `{"currency":"EUR","sum":250}`, true},
		{`{"sum":250,"currency":"EUR"}`, `{"sum":250,"currency":"EUR"}`, false},
		{`{"name":"Åsa"}`, `{"name":"Åsa"}`, true},
		{`{"name":"Åsa"}`, `{"name":"\u00c5sa"}`, true},
		{`{"name":"Åsa"}`, `{"name":"\u00C5sa"}`, true},
		{`{"name":"\u00c5sa"}`, `{"name":"Åsa"}`, true},
		{`{"name":"Åsa"}`, `{"name":"\u00c5sa"`, false},
		{`{"name":"Åsa"}`, `{"name":"Asa"}`, false},
		{`{"e":"😀"}`, `{"e":"\ud83d\ude00"}`, true},
		{`{"e":"😀"}`, `{"e":"😀"}`, true},
		{`true`, `true`, true},
		{`null`, `null`, true},
		{`null`, ``, false},
	} {
		if got := approval.TypedMatches(json.RawMessage(c.value), c.typed); got != c.want {
			t.Errorf("value %s, typed %q: %v, want %v", c.value, c.typed, got, c.want)
		}
	}
}

func TestConfirmValue(t *testing.T) {
	v, ok := approval.ConfirmValue(json.RawMessage(`{"amount":250,"to":"x"}`), "amount")
	if !ok || string(v) != "250" {
		t.Fatalf("%s %v", v, ok)
	}
	if _, ok := approval.ConfirmValue(json.RawMessage(`{"to":"x"}`), "amount"); ok {
		t.Fatal("a missing argument found")
	}
}
