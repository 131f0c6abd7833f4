package strictjson_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/internal/strictjson"
)

// doc is shaped like an event: nested structs, a list of structs, free
// arguments, a map, an interface, a type that decodes itself, recursion.
type doc struct {
	ID      string          `json:"id"`
	Kind    string          `json:"kind"`
	Status  string          `json:"status"`
	Content content         `json:"content"`
	Call    call            `json:"call"`
	Roles   []role          `json:"roles"`
	At      time.Time       `json:"at"`
	Tree    *tree           `json:"tree"`
	Labels  map[string]role `json:"labels"`
}

type content struct {
	Restricted bool `json:"restricted"`
}

type call struct {
	Function  string          `json:"function"`
	Arguments json.RawMessage `json:"arguments"`
	Extra     any             `json:"extra"`
}

type role struct {
	Argument string  `json:"argument"`
	Values   []value `json:"values"`
}

type value struct {
	Value string `json:"value"`
}

type tree struct {
	Name string `json:"name"`
	Kids []tree `json:"kids"`
}

var docKeys = strictjson.For[doc]()

func dup(path string) *strictjson.KeyError {
	return &strictjson.KeyError{Problem: strictjson.Duplicate, Path: path}
}

func dupIn(path string) *strictjson.KeyError {
	return &strictjson.KeyError{Problem: strictjson.Duplicate, Path: path, Opaque: true}
}

func variant(path, field string) *strictjson.KeyError {
	return &strictjson.KeyError{Problem: strictjson.CaseVariant, Path: path, Field: field}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 100)
	tests := []struct {
		name   string
		schema *strictjson.Schema // docKeys unless nilSchema
		nil    bool
		in     string
		want   *strictjson.KeyError // nil: accepted
	}{
		{name: "every field once", in: `{"id":"a","kind":"call","status":"x","content":{"restricted":true},
			"call":{"function":"f","arguments":{"to":"x"},"extra":[1]},"roles":[{"argument":"to","values":[{"value":"x"}]}],
			"at":"2026-11-29T18:00:00Z","tree":{"name":"r","kids":[{"name":"k"}]},"labels":{"a":{"argument":"b"}}}`},
		{name: "unknown keys are ignored, whatever their case", in: `{"id":"a","extra":1,"EXTRA":2,"content":{"restricted":true,"why":"x","Why":"y"}}`},
		{name: "scalars at the top", in: `"x"`},
		{name: "an empty object", in: ` {} `},

		// The attack: encoding/json lets the last of these win.
		{name: "case variant after the field", in: `{"content":{"restricted":true},"Content":{"Restricted":false}}`,
			want: variant("Content", "content")},
		{name: "case variant alone", in: `{"CONTENT":{"restricted":false}}`, want: variant("CONTENT", "content")},
		{name: "case variant inside the field", in: `{"content":{"restricted":true,"Restricted":false}}`,
			want: variant("content.Restricted", "restricted")},
		{name: "duplicate field", in: `{"content":{"restricted":true},"content":{"restricted":false}}`, want: dup("content")},
		{name: "duplicate inside the field", in: `{"content":{"restricted":true,"restricted":false}}`,
			want: dup("content.restricted")},
		{name: "duplicate spelt with an escape", in: `{"id":"a","\u0069d":"b"}`, want: dup("id")},
		{name: "case variant spelt with an escape", in: `{"\u0049D":"b"}`, want: variant("ID", "id")},
		// Unicode folding: encoding/json matches these to kind and status.
		{name: "Kelvin sign for k", in: `{"\u212aind":"changes"}`, want: variant(`["\u212aind"]`, "kind")},
		{name: "long s for s", in: `{"\u017ftatus":"x"}`, want: variant(`["\u017ftatus"]`, "status")},
		{name: "dotless i does not fold to i", in: `{"\u0131d":"x"}`},
		{name: "in a list's second element", in: `{"roles":[{"argument":"a"},{"Argument":"b"}]}`,
			want: variant("roles[1].Argument", "argument")},
		{name: "duplicate deep in a list", in: `{"roles":[{"values":[{"value":"a"},{"value":"a","value":"b"}]}]}`,
			want: dup("roles[0].values[1].value")},
		{name: "recursive type", in: `{"tree":{"kids":[{"kids":[{"name":"a","Name":"b"}]}]}}`,
			want: variant("tree.kids[0].kids[0].Name", "name")},
		{name: "duplicate unknown key", in: `{"extra":1,"extra":2}`, want: dup("extra")},
		{name: "a key that is not a plain name is quoted", in: `{"a.b":1,"a.b":2}`, want: dup(`["a.b"]`)},
		{name: "the empty key", in: `{"":1,"":2}`, want: dup(`[""]`)},
		{name: "a long key is cut", in: `{"` + long + `":1,"` + long + `":2}`, want: dup(`["` + long[:64] + `\u2026"]`)},
		{name: "the first problem wins", in: `{"Kind":"a","id":"x","id":"y"}`, want: variant("Kind", "kind")},

		// Free data: distinct keys by case, duplicates refused without naming them.
		{name: "keys differing in case inside arguments are distinct", in: `{"call":{"arguments":{"To":"a","to":"b","TO":"c"}}}`},
		{name: "duplicate inside arguments", in: `{"call":{"arguments":{"to":"a@example.com","to":"b@evil.example"}}}`,
			want: dupIn("call.arguments")},
		{name: "duplicate deep inside arguments", in: `{"call":{"arguments":{"x":[{"a":1},{"b":{"c":1,"c":1}}]}}}`,
			want: dupIn("call.arguments")},
		{name: "an interface field", in: `{"call":{"extra":{"a":1,"a":2}}}`, want: dupIn("call.extra")},
		{name: "a type that decodes itself", in: `{"at":{"a":1,"a":2}}`, want: dupIn("at")},
		{name: "a type that decodes itself, keys by case", in: `{"at":{"a":1,"A":2}}`},
		{name: "a map's keys are data", in: `{"labels":{"a":{},"a":{}}}`, want: dupIn("labels")},
		{name: "a map's keys may differ in case", in: `{"labels":{"a":{},"A":{}}}`},
		{name: "a map's values are typed", in: `{"labels":{"a":{"Argument":"x"}}}`,
			want: &strictjson.KeyError{Problem: strictjson.CaseVariant, Path: "labels", Opaque: true, Field: "argument"}},
		{name: "an object where a list is wanted", in: `{"roles":{"x":1,"x":2}}`, want: dupIn("roles")},
		{name: "a list where an object is wanted", in: `{"content":[{"Restricted":1}]}`},

		// No schema (a type that decodes itself, matching keys whatever
		// their case): duplicates and keys that fold alike, and no key is
		// named.
		{name: "no schema: a duplicate", nil: true, in: `{"a":{"b":1,"b":2}}`, want: dupIn("")},
		{name: "no schema: case differs", nil: true, in: `{"a":1,"A":2}`,
			want: &strictjson.KeyError{Problem: strictjson.FoldedTwice, Opaque: true}},
		{name: "no schema: case differs deep down", nil: true, in: `{"type":"block_actions","view":{"id":"V1","Id":"V2"}}`,
			want: &strictjson.KeyError{Problem: strictjson.FoldedTwice, Opaque: true}},
		{name: "no schema: a Kelvin sign folds to k", nil: true, in: `{"kind":"a","\u212aind":"b"}`,
			want: &strictjson.KeyError{Problem: strictjson.FoldedTwice, Opaque: true}},
		{name: "no schema: the same key in two objects", nil: true, in: `[{"a":1},{"a":1}]`},
		// encoding/json reads invalid UTF-8 as U+FFFD: both keys are one.
		{name: "no schema: two invalid UTF-8 keys", nil: true, in: "{\"\xff\":1,\"\xfe\":2}", want: dupIn("")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := docKeys
			if tt.nil {
				s = nil
			}
			err := strictjson.Check([]byte(tt.in), s)
			if tt.want == nil {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			var ke *strictjson.KeyError
			if !errors.As(err, &ke) {
				t.Fatalf("Check = %v (%T), want a *KeyError", err, err)
			}
			if diff := cmp.Diff(tt.want, ke); diff != "" {
				t.Errorf("KeyError (-want +got):\n%s", diff)
			}
		})
	}
}

// More keys than Check scans for in a list: the set takes over.
func TestCheckManyKeys(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"call":{"arguments":{`)
	for i := range 100 {
		b.WriteString(`"k` + strings.Repeat("x", i) + `":1,`)
	}
	ok := b.String() + `"last":1}}}`
	if err := strictjson.Check([]byte(ok), docKeys); err != nil {
		t.Fatalf("100 distinct keys: %v", err)
	}
	bad := b.String() + `"kxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx":1}}}` // the 41st key again
	want := dupIn("call.arguments")
	var ke *strictjson.KeyError
	if err := strictjson.Check([]byte(bad), docKeys); !errors.As(err, &ke) || !cmp.Equal(want, ke) {
		t.Fatalf("a repeat of key 41 of 100: Check = %v, want %v", err, want)
	}
	// Later objects at the same depth start empty again.
	again := `[{"call":{"arguments":` + strings.TrimPrefix(ok, `{"call":{"arguments":`) + `,{"call":{"arguments":{"last":1}}}]`
	if err := strictjson.Check([]byte(again), nil); err != nil {
		t.Fatalf("two objects at one depth: %v", err)
	}
}

func TestCheckSyntax(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"blank", " \n"},
		{"cut", `{"a":`},
		{"trailing comma", `{"a":1,}`},
		{"no colon", `{"a" 1}`},
		{"two values", `{} {}`},
		{"trailing garbage", `{"a":1} x`},
		{"a key that is not a string", `{1:2}`},
		{"bad literal", `{"a":tru}`},
		// A key problem before a syntax error: not JSON is the answer.
		{"duplicate, then cut", `{"a":1,"a":2`},
		{"too deep", strings.Repeat("[", strictjson.MaxDepth+1) + strings.Repeat("]", strictjson.MaxDepth+1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := strictjson.Check([]byte(tt.in), docKeys)
			if !errors.Is(err, strictjson.ErrSyntax) {
				t.Fatalf("Check = %v, want ErrSyntax", err)
			}
			if json.Valid([]byte(tt.in)) {
				t.Errorf("encoding/json accepts %.40q, which Check calls not JSON", tt.in)
			}
		})
	}
	deepest := strings.Repeat("[", strictjson.MaxDepth) + strings.Repeat("]", strictjson.MaxDepth)
	if err := strictjson.Check([]byte(deepest), nil); err != nil {
		t.Errorf("nested %d deep, as deep as encoding/json decodes: %v", strictjson.MaxDepth, err)
	}
	if !json.Valid([]byte(deepest)) {
		t.Errorf("encoding/json refuses nesting %d deep: MaxDepth is too high", strictjson.MaxDepth)
	}
}

func TestKeyErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  *strictjson.KeyError
		want string
	}{
		{dup("data.content"), "data.content: duplicate key: an object may hold a key once"},
		{dupIn("data.call.arguments"), "data.call.arguments: an object in it holds a key twice"},
		{dupIn(""), "an object holds a key twice"},
		{variant("data.Content", "content"), `data.Content: want "content": keys must match the field's letter case exactly`},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

// A key of free data never reaches an error's text: it may be a secret.
func TestCheckDoesNotRepeatFreeKeys(t *testing.T) {
	t.Parallel()
	const secret = "sk_live_5f2a9c81d0e47b3e"
	for _, in := range []string{
		`{"call":{"arguments":{"` + secret + `":1,"` + secret + `":2}}}`,
		`{"labels":{"` + secret + `":{"Argument":1}}}`,
		`{"labels":{"x":{"values":[{"` + secret + `":1,"` + secret + `":1}]}}}`,
	} {
		err := strictjson.Check([]byte(in), docKeys)
		if err == nil {
			t.Fatalf("Check(%s) = nil, want a refusal", in)
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "sk_live") {
			t.Errorf("the error repeats a key of free data: %v", err)
		}
	}
}

// CheckKnown refuses a key that names no field of a struct, at its path,
// and lets free shapes hold any key; a key with two readings anywhere in
// the document comes first, and Check alone decides nothing about unknown
// keys.
func TestCheckKnown(t *testing.T) {
	t.Parallel()
	unknown := func(path string, opaque bool) *strictjson.KeyError {
		return &strictjson.KeyError{Problem: strictjson.Unknown, Path: path, Opaque: opaque}
	}
	for _, tt := range []struct {
		doc  string
		want *strictjson.KeyError
	}{
		{`{"id":"a","call":{"function":"f","arguments":{"any":{"thing":1}},"extra":{"x":1}},"labels":{"k":{"argument":"a"}},"at":"2026-01-01T00:00:00Z"}`, nil},
		{`{"id":"a","value":1}`, unknown("value", false)},
		{`{"roles":[{"argument":"to"},{"argument":"cc","value":"x"}]}`, unknown("roles[1].value", false)},
		{`{"roles":[{"values":[{"value":"v","origin":"job_read"}]}]}`, unknown("roles[0].values[0].origin", false)},
		{`{"tree":{"kids":[{"name":"a","kids":[{"nom":"b"}]}]}}`, unknown("tree.kids[0].kids[0].nom", false)},
		{`{"content":{"restricted":true,"private":false}}`, unknown("content.private", false)},
		{`{"labels":{"k":{"argument":"a","secret":"hunter2"}}}`, unknown("labels", true)},
		{`{"zz":1,"id":"a","id":"b"}`, dup("id")},
		{`{"zz":1,"Kind":"x"}`, &strictjson.KeyError{Problem: strictjson.CaseVariant, Path: "Kind", Field: "kind"}},
	} {
		err := strictjson.CheckKnown([]byte(tt.doc), docKeys)
		if tt.want == nil {
			if err != nil {
				t.Errorf("CheckKnown(%s) = %v, want nil", tt.doc, err)
			}
			continue
		}
		var ke *strictjson.KeyError
		if !errors.As(err, &ke) {
			t.Errorf("CheckKnown(%s) = %v, want %v", tt.doc, err, tt.want)
			continue
		}
		if diff := cmp.Diff(tt.want, ke); diff != "" {
			t.Errorf("CheckKnown(%s) (-want +got):\n%s", tt.doc, diff)
		}
		if ke.Problem == strictjson.Unknown && strings.Contains(ke.Error(), "hunter2") {
			t.Errorf("%v repeats a value", ke)
		}
		if ke.Problem == strictjson.Unknown {
			if err := strictjson.Check([]byte(tt.doc), docKeys); err != nil {
				t.Errorf("Check(%s) = %v: it decides nothing about unknown keys", tt.doc, err)
			}
		}
	}
}

// Without takes one field out of a schema, through lists, so that
// CheckKnown refuses it (in any letter case) at its path; the schema it
// came from, and the same type elsewhere in the document, keep it.
func TestWithout(t *testing.T) {
	t.Parallel()
	less := docKeys.Without("roles", "argument")
	unknown := func(path string) *strictjson.KeyError {
		return &strictjson.KeyError{Problem: strictjson.Unknown, Path: path}
	}
	for _, tt := range []struct {
		doc  string
		want *strictjson.KeyError
	}{
		{`{"roles":[{"values":[{"value":"v"}]}]}`, nil},
		{`{"roles":[{"values":[]},{"argument":"to"}]}`, unknown("roles[1].argument")},
		{`{"roles":[{"Argument":"to"}]}`, unknown("roles[0].Argument")},
		{`{"labels":{"k":{"argument":"a"}}}`, nil}, // a map's role keeps it
		{`{"id":"a","kind":"x"}`, nil},
	} {
		err := strictjson.CheckKnown([]byte(tt.doc), less)
		var ke *strictjson.KeyError
		switch {
		case tt.want == nil && err != nil:
			t.Errorf("CheckKnown(%s) = %v, want nil", tt.doc, err)
		case tt.want != nil && !errors.As(err, &ke):
			t.Errorf("CheckKnown(%s) = %v, want %v", tt.doc, err, tt.want)
		case tt.want != nil:
			if diff := cmp.Diff(tt.want, ke); diff != "" {
				t.Errorf("CheckKnown(%s) (-want +got):\n%s", tt.doc, diff)
			}
		}
	}
	if err := strictjson.CheckKnown([]byte(`{"roles":[{"argument":"to"}]}`), docKeys); err != nil {
		t.Errorf("the schema Without was called on lost the field: %v", err)
	}
	for _, path := range [][]string{{}, {"nope"}, {"id", "deeper"}, {"call", "arguments", "x"}} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Without(%q) took out a field the schema does not describe", path)
				}
			}()
			docKeys.Without(path...)
		}()
	}
}
