package approval

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"approvalsbot/internal/fixtures"
)

// digestVector is one entry of fixtures/digests.json: either arguments (a
// JSON value) or raw (JSON text), its canonical form and its digest.
type digestVector struct {
	Name       string          `json:"name"`
	Arguments  json.RawMessage `json:"arguments"`
	Raw        *string         `json:"raw"`
	JCS        string          `json:"jcs"`
	ArgsSHA256 string          `json:"args_sha256"`
}

// input is the JSON text the vector canonicalises.
func (v digestVector) input() ([]byte, error) {
	switch {
	case v.Raw != nil && v.Arguments != nil:
		return nil, errors.New("vector has both raw and arguments")
	case v.Raw != nil:
		return []byte(*v.Raw), nil
	case v.Arguments != nil:
		return v.Arguments, nil
	}
	return nil, errors.New("vector has neither raw nor arguments")
}

func readDigestVectors(tb testing.TB) []digestVector {
	tb.Helper()
	p, err := fixtures.Path("digests.json")
	if err != nil {
		tb.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		tb.Fatal(err)
	}
	var vs []digestVector
	if err := json.Unmarshal(b, &vs); err != nil {
		tb.Fatalf("decode %s: %v", p, err)
	}
	if len(vs) == 0 {
		tb.Fatalf("%s holds no vectors", p)
	}
	return vs
}

func TestCanonicalizeVectors(t *testing.T) {
	t.Parallel()
	for _, v := range readDigestVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()
			in, err := v.input()
			if err != nil {
				t.Fatal(err)
			}
			got, err := Canonicalize(in)
			if err != nil {
				t.Fatalf("Canonicalize: %v", err)
			}
			if string(got) != v.JCS {
				t.Errorf("Canonicalize:\n got %s\nwant %s", got, v.JCS)
			}
			d, err := Digest(in)
			if err != nil {
				t.Fatalf("Digest: %v", err)
			}
			if d != v.ArgsSHA256 {
				t.Errorf("Digest = %s, want %s", d, v.ArgsSHA256)
			}
			if !ValidDigest(d) {
				t.Errorf("ValidDigest(%q) = false for our own digest", d)
			}
		})
	}
}

// Every full-arguments fixture carries the digest the backend computed; the
// bot must reach the same one or it would refuse to show real arguments.
func TestDigestArgumentFixtures(t *testing.T) {
	t.Parallel()
	dir, err := fixtures.Path("arguments")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no argument fixtures in %s", dir)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			t.Parallel()
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			var a struct {
				Arguments  json.RawMessage `json:"arguments"`
				ArgsSHA256 string          `json:"args_sha256"`
			}
			if err := json.Unmarshal(b, &a); err != nil {
				t.Fatal(err)
			}
			if a.Arguments == nil || !ValidDigest(a.ArgsSHA256) {
				t.Fatalf("fixture lacks arguments or a well-formed args_sha256")
			}
			got, err := Digest(a.Arguments)
			if err != nil {
				t.Fatal(err)
			}
			if got != a.ArgsSHA256 {
				t.Errorf("Digest = %s, want %s", got, a.ArgsSHA256)
			}
		})
	}
}

func TestCanonicalizeEdges(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"top-level scalar with whitespace", " 42 \n", "42"},
		{"top-level string", `"x"`, `"x"`},
		{"negative zero", `[-0,-0.0,0e5]`, `[0,0,0]`},
		{"underflow rounds to zero", `1e-400`, `0`},
		{"largest double", `1.7976931348623157e308`, `1.7976931348623157e+308`},
		{"integer beyond 2^53", `123456789012345678901`, `123456789012345680000`},
		{"solidus and controls", `"\/\u0000\u001f\u007f"`, `"/\u0000\u001f` + "\x7f" + `"`},
		{"surrogate pair escape", `{"\ud83d\ude00":1,"\uffff":2}`, "{\"\U0001F600\":1,\"\uffff\":2}"},
		{"depth at the bound", strings.Repeat("[", CanonicalMaxDepth) + strings.Repeat("]", CanonicalMaxDepth),
			strings.Repeat("[", CanonicalMaxDepth) + strings.Repeat("]", CanonicalMaxDepth)},
		{"brackets inside strings do not count", `["` + strings.Repeat("[", 2*CanonicalMaxDepth) + `"]`,
			`["` + strings.Repeat("[", 2*CanonicalMaxDepth) + `"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonicalize([]byte(tt.in))
			if err != nil {
				t.Fatalf("Canonicalize(%q): %v", tt.in, err)
			}
			if string(got) != tt.want {
				t.Errorf("Canonicalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCanonicalizeRejects(t *testing.T) {
	t.Parallel()
	// secret is planted in every input: no error text may repeat it,
	// because errors reach logs and arguments are restricted content.
	const secret = "hunter2"
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", ``, ErrInvalidJSON},
		{"syntax", `{"password":"hunter2" x}`, ErrInvalidJSON},
		{"bare word", `{"password":hunter2}`, ErrInvalidJSON},
		{"trailing comma", `["hunter2",]`, ErrInvalidJSON},
		{"trailing data", `{"a":"hunter2"} {}`, ErrInvalidJSON},
		{"leading zero", `{"hunter2":01}`, ErrInvalidJSON},
		{"duplicate key", `{"hunter2":1,"hunter2":2}`, ErrInvalidJSON},
		{"lone high surrogate", `{"a":"hunter2\ud800"}`, ErrInvalidJSON},
		{"lone low surrogate", `{"a":"hunter2\udc00"}`, ErrInvalidJSON},
		{"invalid UTF-8", "{\"a\":\"hunter2\xff\"}", ErrInvalidUTF8},
		{"too deep", `{"a":"hunter2","b":` + strings.Repeat("[", CanonicalMaxDepth) + strings.Repeat("]", CanonicalMaxDepth) + `}`, ErrTooDeep},
		{"overflow", `{"hunter2":1e400}`, ErrNumberRange},
		{"negative overflow", `["hunter2",-1e400]`, ErrNumberRange},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Canonicalize([]byte(tt.in))
			if err == nil {
				t.Fatalf("Canonicalize(%q) = %q, want an error", tt.in, got)
			}
			if !errors.Is(err, tt.want) {
				t.Errorf("Canonicalize(%q) error %q, want it to wrap %q", tt.in, err, tt.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Errorf("error %q quotes the input", err)
			}
			if _, derr := Digest([]byte(tt.in)); !errors.Is(derr, tt.want) {
				t.Errorf("Digest error %v, want it to wrap %v", derr, tt.want)
			}
		})
	}
}

func TestValidDigest(t *testing.T) {
	t.Parallel()
	hex64 := strings.Repeat("0123456789abcdef", 4)
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"well formed", "sha256:" + hex64, true},
		{"empty", "", false},
		{"no prefix", hex64, false},
		{"other algorithm", "sha512:" + hex64, false},
		{"uppercase hex", "sha256:" + strings.ToUpper(hex64), false},
		{"uppercase prefix", "SHA256:" + hex64, false},
		{"short", "sha256:" + hex64[1:], false},
		{"long", "sha256:" + hex64 + "0", false},
		{"not hex", "sha256:" + hex64[1:] + "g", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := ValidDigest(tt.in); got != tt.want {
				t.Errorf("ValidDigest(%q) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzCanonicalize checks what must hold for any input Canonicalize
// accepts: the output is valid UTF-8 JSON, canonicalising it again changes
// nothing, and it means the same as the input.
func FuzzCanonicalize(f *testing.F) {
	for _, v := range readDigestVectors(f) {
		if in, err := v.input(); err == nil {
			f.Add(in)
		}
	}
	for _, s := range []string{`1e400`, `[1e-7,1e21,5e-324]`, `{"a":{"a":[]}}`, `"\ud83d\ude00"`, `{"a":1,"a":2}`, ` null `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Canonicalize(in)
		if err != nil {
			return
		}
		if !json.Valid(in) {
			t.Fatalf("accepted invalid JSON %q", in)
		}
		if !json.Valid(out) || !utf8.Valid(out) {
			t.Fatalf("Canonicalize(%q) = %q: not valid UTF-8 JSON", in, out)
		}
		again, err := Canonicalize(out)
		if err != nil {
			t.Fatalf("Canonicalize(canonical %q): %v", out, err)
		}
		if !bytes.Equal(again, out) {
			t.Fatalf("not a fixed point:\n once  %q\n twice %q", out, again)
		}
		var a, b any
		if err := json.Unmarshal(in, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("meaning changed: %q became %q", in, out)
		}
	})
}
