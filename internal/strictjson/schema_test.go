package strictjson_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"unicode"

	"approvalsbot/internal/strictjson"
)

// The types below exercise encoding/json's rules for which names a struct
// decodes. Every field is a string, so that one key decoding "x" shows
// whether encoding/json matched it to anything.

type Promoted struct {
	Deep   string `json:"deep"`
	Shadow string `json:"shadow"` // hidden by outer.Shadow
	Name   string // untagged: its Go name
}

type unexportedEmbed struct {
	Hidden string `json:"hidden"` // promoted through an unexported embedded struct
}

type Left struct {
	Amb string `json:"amb"`
}

type Right struct {
	Amb string `json:"amb"`
}

// ambiguous embeds Left and Right, whose amb collide at the same depth so
// neither decodes. It is built at run time: vet rightly refuses the
// collision in a type written out.
var ambiguous = reflect.StructOf([]reflect.StructField{
	{Name: "Left", Type: reflect.TypeFor[Left](), Anonymous: true},
	{Name: "Right", Type: reflect.TypeFor[Right](), Anonymous: true},
	{Name: "Own", Type: reflect.TypeFor[string](), Tag: `json:"own"`},
})

type TaggedWins struct {
	Win string `json:"win"`
}

type UntaggedLoses struct {
	//lint:ignore SA5008 the name "-" is the case under test
	Win string `json:"-,"` // named "-", another name
	X   string `json:"win,omitempty"`
}

type outer struct {
	Promoted
	unexportedEmbed
	*Pointed
	Shadow string `json:"shadow"`
	Plain  string
	Skip   string `json:"-"`
	//lint:ignore SA5008 the name "-" is the case under test
	Dash string `json:"-,"`
	//lint:ignore SA5008 an invalid tag name is the case under test
	Bad    string `json:"a\"b"` // not a valid tag name: the Go name stays
	Opt    string `json:",omitempty"`
	Kind   string `json:"kind"`
	Status string `json:"status"`
	//lint:ignore U1000 an unexported field is the case under test
	hidden string // unexported: never decoded
}

type Pointed struct {
	Via string `json:"via"`
}

type ambiguousTagged struct {
	TaggedWins
	Untagged
}

type Untagged struct {
	Win string // "Win", not "win": no collision, both decode
}

// TestSchemaMatchesEncodingJSON asks encoding/json itself, key by key,
// whether it matches a key to a field, and holds Check to it: a key it
// matches is either spelt as a field's name (accepted) or a case variant
// (refused); a key it ignores is accepted.
func TestSchemaMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		typ   reflect.Type
		names []string // the names encoding/json decodes, spelt exactly
	}{
		{"embedding, shadowing, tags", reflect.TypeFor[outer](),
			[]string{"deep", "shadow", "Name", "hidden", "via", "Plain", "-", "Bad", "Opt", "kind", "status"}},
		{"tagged beside untagged", reflect.TypeFor[ambiguousTagged](), []string{"win", "Win"}},
		{"one name twice at one depth", ambiguous, []string{"own"}},
		{"a tag beside a second field of the same name", reflect.TypeFor[UntaggedLoses](), []string{"-", "win"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := strictjson.Of(tt.typ)
			var candidates []string
			for _, n := range append(tt.names, "amb", "Amb", "Skip", "skip", "hidden", "Pointed", "a\"b", "X", "x", "Untagged") {
				candidates = append(candidates, variants(n)...)
			}
			for _, key := range candidates {
				matched := matches(t, tt.typ, key)
				exact := slices.Contains(tt.names, key)
				if exact && !matched {
					t.Errorf("encoding/json does not decode %q: the expected names are wrong", key)
				}
				body, _ := json.Marshal(map[string]string{key: "x"})
				err := strictjson.Check(body, s)
				var ke *strictjson.KeyError
				switch {
				case matched && !exact:
					if !errors.As(err, &ke) || ke.Problem != strictjson.CaseVariant {
						t.Errorf("%q, which encoding/json matches to a field: Check = %v, want a case variant", key, err)
					}
				case err != nil:
					t.Errorf("%q (encoding/json matches it: %v): Check = %v, want nil", key, matched, err)
				}
			}
		})
	}
}

// matches reports whether encoding/json decodes {key:"x"} into some field
// of a fresh value of typ.
func matches(t *testing.T, typ reflect.Type, key string) bool {
	t.Helper()
	v := reflect.New(typ)
	body, _ := json.Marshal(map[string]string{key: "x"})
	if err := json.Unmarshal(body, v.Interface()); err != nil {
		t.Fatalf("decode %s into %s: %v", body, typ, err)
	}
	return !v.Elem().IsZero()
}

// variants spells name as written, in upper, lower and title case, and
// with each k and s swapped for the Kelvin sign and the long s, which
// Unicode folds to them.
func variants(name string) []string {
	out := []string{name, strings.ToUpper(name), strings.ToLower(name)}
	if name != "" {
		r := []rune(name)
		r[0] = unicode.ToUpper(r[0])
		out = append(out, string(r))
		r[0] = unicode.ToLower(r[0])
		out = append(out, string(r))
	}
	lower := strings.ToLower(name)
	out = append(out,
		strings.ReplaceAll(lower, "k", "\u212a"),
		strings.ReplaceAll(lower, "s", "\u017f"),
		strings.ReplaceAll(lower, "i", "\u0131"), // dotless i: folds to nothing ASCII
	)
	slices.Sort(out)
	return slices.Compact(out)
}

func TestSchemaOfUnusualRoots(t *testing.T) {
	t.Parallel()
	attack := []byte(`{"a":{"b":1,"B":2}}`)
	for _, tt := range []struct {
		name string
		s    *strictjson.Schema
	}{
		{"a map", strictjson.For[map[string]map[string]int]()},
		{"an interface", strictjson.For[any]()},
		{"json.RawMessage", strictjson.For[json.RawMessage]()},
		{"a pointer to a pointer to a map", strictjson.For[**map[string]any]()},
	} {
		if err := strictjson.Check(attack, tt.s); err != nil {
			t.Errorf("%s: keys differing in case are distinct in data: Check = %v", tt.name, err)
		}
		if err := strictjson.Check([]byte(`{"a":{"b":1,"b":2}}`), tt.s); err == nil {
			t.Errorf("%s: a duplicate key was accepted", tt.name)
		}
	}
	type self struct {
		Next *self `json:"next"`
		V    int   `json:"v"`
	}
	var ke *strictjson.KeyError
	err := strictjson.Check([]byte(`{"next":{"next":{"V":1}}}`), strictjson.For[self]())
	if !errors.As(err, &ke) || ke.Path != "next.next.V" {
		t.Errorf("a self-referring type: Check = %v, want next.next.V a case variant", err)
	}
}
