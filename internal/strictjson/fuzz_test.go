package strictjson_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"approvalsbot/internal/strictjson"
)

// fuzzDoc is small enough that the fuzz oracle below can know its names.
type fuzzDoc struct {
	Kind    string          `json:"kind"`
	Status  string          `json:"status"`
	Content fuzzContent     `json:"content"`
	Args    json.RawMessage `json:"args"`
}

type fuzzContent struct {
	Restricted bool `json:"restricted"`
}

var (
	fuzzKeys     = strictjson.For[fuzzDoc]()
	fuzzNames    = []string{"kind", "status", "content", "args"}
	contentNames = []string{"restricted"}
)

// FuzzCheck holds Check to two oracles written another way: encoding/json
// decides what is JSON, and a recursive reading with a map per object and
// strings.EqualFold decides what has two readings.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{
		`{"content":{"restricted":true},"Content":{"Restricted":false}}`,
		`{"content":{"restricted":true,"restricted":false}}`,
		`{"args":{"to":"a","To":"b"}}`,
		`{"args":{"to":"a","to":"b"}}`,
		`{"\u212aind":"x","\u017ftatus":"y"}`,
		`{"kind":"a","\u006bind":"b"}`,
		`[{"a":1},{"a":1},{"b":[{"c":1,"c":2}]}]`,
		`{"a":1,"a":2`,
		`{"a":1} {}`,
		"{\"\xff\":1,\"\xfe\":2}",
		`"x"`,
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		for _, s := range []*strictjson.Schema{nil, fuzzKeys} {
			err := strictjson.Check(data, s)
			var ke *strictjson.KeyError
			switch {
			case !valid:
				if !errors.Is(err, strictjson.ErrSyntax) {
					t.Fatalf("encoding/json refuses %q; Check = %v, want ErrSyntax", data, err)
				}
				continue
			case err != nil && !errors.As(err, &ke):
				t.Fatalf("encoding/json accepts %q; Check = %v, want nil or a *KeyError", data, err)
			}
			names := fuzzNames
			if s == nil {
				names = nil
			}
			two := twoReadings(t, data, names, s == nil)
			if two != (err != nil) {
				t.Fatalf("Check(%q) = %v, but the oracle says two readings: %v", data, err, two)
			}
		}
	})
}

// twoReadings reports whether the JSON text data holds an object with a
// key twice, or (names set) a key of the top-level object or its
// "content" object that equals a name there only under strings.EqualFold.
func twoReadings(t *testing.T, data []byte, names []string, foldAll bool) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	found, err := readValue(dec, names, 0, foldAll)
	if err != nil {
		t.Fatalf("the oracle could not read %q, which encoding/json accepts: %v", data, err)
	}
	return found
}

func readValue(dec *json.Decoder, names []string, depth int, foldAll bool) (bool, error) {
	tok, err := dec.Token()
	if err != nil {
		return false, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return false, nil
	}
	found := false
	switch d {
	case '[':
		for dec.More() {
			f, err := readValue(dec, nil, depth+1, foldAll)
			if err != nil {
				return false, err
			}
			found = found || f
		}
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return false, err
			}
			k := kt.(string)
			if seen[k] {
				found = true
			}
			if foldAll {
				// With no schema, two keys that differ only in case are
				// two readings too.
				for prev := range seen {
					if prev != k && strings.EqualFold(prev, k) {
						found = true
					}
				}
			}
			seen[k] = true
			var inner []string
			for _, n := range names {
				if k != n && strings.EqualFold(k, n) {
					found = true
				}
			}
			if depth == 0 && names != nil && k == "content" {
				inner = contentNames
			}
			f, err := readValue(dec, inner, depth+1, foldAll)
			if err != nil {
				return false, err
			}
			found = found || f
		}
	}
	if _, err := dec.Token(); err != nil && err != io.EOF { // the closing delimiter
		return false, err
	}
	return found, nil
}

// FuzzFoldParity: for any key, Check calls it a case variant exactly when
// encoding/json matches it to a field it is not spelt as.
func FuzzFoldParity(f *testing.F) {
	for _, k := range []string{"kind", "KIND", "\u212aind", "\u017ftatus", "Status", "\u0131", "k", "", "contenT", "args"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		body, err := json.Marshal(map[string]string{key: "x"})
		if err != nil {
			t.Skip()
		}
		// The key as encoding/json reads it back (invalid UTF-8 becomes U+FFFD).
		var back map[string]string
		if err := json.Unmarshal(body, &back); err != nil || len(back) != 1 {
			t.Fatalf("round trip of %q: %v", key, err)
		}
		for k := range back {
			key = k
		}
		type flat struct {
			Kind   string `json:"kind"`
			Status string `json:"status"`
			Args   string `json:"args"`
			Con    string `json:"content"`
		}
		var v flat
		if err := json.Unmarshal(body, &v); err != nil {
			t.Fatalf("decode %s: %v", body, err)
		}
		matched := v != flat{}
		exact := key == "kind" || key == "status" || key == "args" || key == "content"
		err = strictjson.Check(body, strictjson.For[flat]())
		var ke *strictjson.KeyError
		variant := errors.As(err, &ke) && ke.Problem == strictjson.CaseVariant
		if variant != (matched && !exact) {
			t.Fatalf("key %q: encoding/json matches it %v (exactly %v); Check = %v", key, matched, exact, err)
		}
		if err != nil && !variant {
			t.Fatalf("key %q: Check = %v", key, err)
		}
	})
}
