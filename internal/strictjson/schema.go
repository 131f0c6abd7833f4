package strictjson

import (
	"encoding"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Schema holds the JSON field names encoding/json matches at every object
// path of one Go type.
type Schema struct {
	root *node
}

// For derives the Schema of T, the type the checked bytes are decoded into.
func For[T any]() *Schema { return Of(reflect.TypeFor[T]()) }

// Of derives the Schema of t with encoding/json's rules for which fields
// a struct decodes, embedded and tagged ones included.
func Of(t reflect.Type) *Schema {
	b := builder{seen: map[reflect.Type]*node{}}
	return &Schema{root: b.node(t)}
}

// Without returns s less one field, named by the field names from the top
// (an array's elements are passed through: "data", "roles", "found" is
// the found of every role). The field must be one s describes. It is for
// a field the Go type decodes that a sender must never send, such as the
// reader's own record kept in the same type: CheckKnown then refuses it
// as Unknown at its path, instead of it being read. s is left as it is.
func (s *Schema) Without(path ...string) *Schema {
	if len(path) == 0 {
		panic("strictjson: Without needs a field")
	}
	return &Schema{root: without(s.root, path)}
}

// without is a copy of n less the field at path, sharing every node off
// the path.
func without(n *node, path []string) *node {
	if n != nil && n.kind == kindArray {
		c := *n
		c.elem = without(n.elem, path)
		return &c
	}
	name := path[0]
	if n == nil || n.kind != kindStruct {
		panic(fmt.Sprintf("strictjson: Without: %q is not a field of an object the schema describes", name))
	}
	child, ok := n.fields[name]
	if !ok {
		panic(fmt.Sprintf("strictjson: Without: no field %q", name))
	}
	c := &node{kind: kindStruct, fields: maps.Clone(n.fields), folded: maps.Clone(n.folded)}
	if len(path) == 1 {
		delete(c.fields, name)
		f := fold(name)
		delete(c.folded, f)
		for other := range c.fields { // a field whose name folds alike
			if fold(other) == f {
				c.folded[f] = other
			}
		}
	} else {
		c.fields[name] = without(child, path[1:])
	}
	return c
}

type nodeKind int

const (
	kindStruct nodeKind = iota + 1 // an object of named fields
	kindMap                        // an object whose keys are data
	kindArray                      // an array or slice
)

// node is what one JSON value decodes into. A nil *node is data of any
// shape: an interface, json.RawMessage, a type with its own UnmarshalJSON,
// or a scalar (for which an object is a type error anyway).
type node struct {
	kind nodeKind
	// fields maps each name a struct decodes to its value's node.
	fields map[string]*node
	// folded maps fold(name) to name, to find a key that encoding/json
	// would match to a field without being spelt like it.
	folded map[string]string
	// elem is an array's element or a map's value.
	elem *node
}

type builder struct {
	// seen ends recursion through self-referring types: a type's node is
	// recorded before its fields are filled in.
	seen map[reflect.Type]*node
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodesItself reports whether encoding/json hands t's bytes to a method
// of t (or *t), whose reading of keys Check cannot know.
func decodesItself(t reflect.Type) bool {
	for _, u := range []reflect.Type{jsonUnmarshaler, textUnmarshaler} {
		if t.Implements(u) || (t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(u)) {
			return true
		}
	}
	return false
}

func (b *builder) node(t reflect.Type) *node {
	for {
		if decodesItself(t) {
			return nil
		}
		if t.Kind() != reflect.Pointer {
			break
		}
		t = t.Elem()
	}
	if n, ok := b.seen[t]; ok {
		return n
	}
	switch t.Kind() {
	case reflect.Struct:
		n := &node{kind: kindStruct, fields: map[string]*node{}, folded: map[string]string{}}
		b.seen[t] = n
		for _, f := range structFields(t) {
			n.fields[f.name] = b.node(f.typ)
			n.folded[fold(f.name)] = f.name
		}
		return n
	case reflect.Map:
		n := &node{kind: kindMap}
		b.seen[t] = n
		n.elem = b.node(t.Elem())
		return n
	case reflect.Slice, reflect.Array:
		n := &node{kind: kindArray}
		b.seen[t] = n
		n.elem = b.node(t.Elem())
		return n
	}
	return nil
}

// field is one name a struct decodes.
type field struct {
	name   string
	typ    reflect.Type
	depth  int  // embedding depth: 0 for the struct's own fields
	tagged bool // the name comes from a json tag
}

// structFields lists the fields encoding/json decodes into t, breadth
// first as its typeFields does, keeping each name's dominant field.
func structFields(t reflect.Type) []field {
	type level struct {
		typ   reflect.Type
		depth int
	}
	var all []field
	next := []level{{typ: t}}
	visited := map[reflect.Type]bool{}
	var count, nextCount map[reflect.Type]int
	for len(next) > 0 {
		current := next
		next = nil
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, l := range current {
			if visited[l.typ] {
				continue
			}
			visited[l.typ] = true
			for i := range l.typ.NumField() {
				sf := l.typ.Field(i)
				ft := sf.Type
				if sf.Anonymous {
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				if !validTag(name) {
					name = ""
				}
				if name != "" || !sf.Anonymous || ft.Kind() != reflect.Struct {
					f := field{name: name, typ: sf.Type, depth: l.depth, tagged: name != ""}
					if f.name == "" {
						f.name = sf.Name
					}
					all = append(all, f)
					if count[l.typ] > 1 {
						// The same struct embedded twice at one depth: its
						// fields collide with themselves and are dropped.
						all = append(all, f)
					}
					continue
				}
				nextCount[ft]++
				if nextCount[ft] == 1 {
					next = append(next, level{typ: ft, depth: l.depth + 1})
				}
			}
		}
	}
	byName := map[string][]field{}
	var order []string
	for _, f := range all {
		if _, ok := byName[f.name]; !ok {
			order = append(order, f.name)
		}
		byName[f.name] = append(byName[f.name], f)
	}
	var out []field
	for _, name := range order {
		if f, ok := dominant(byName[name]); ok {
			out = append(out, f)
		}
	}
	return out
}

// dominant picks the shallowest field of a name, or among those the only
// tagged one; otherwise the name is ambiguous and decodes none.
func dominant(fs []field) (field, bool) {
	depth := fs[0].depth
	for _, f := range fs {
		depth = min(depth, f.depth)
	}
	var top []field
	for _, f := range fs {
		if f.depth == depth {
			top = append(top, f)
		}
	}
	if len(top) == 1 {
		return top[0], true
	}
	var tagged []field
	for _, f := range top {
		if f.tagged {
			tagged = append(tagged, f)
		}
	}
	if len(tagged) == 1 {
		return tagged[0], true
	}
	return field{}, false
}

// validTag is encoding/json's test of a tag name; a name it refuses
// leaves the Go field name in use.
func validTag(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}

// fold maps s to a form two strings share exactly when strings.EqualFold
// holds, as encoding/json matches keys ("\u212Aind" is "kind").
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteByte(byte(r))
			continue
		}
		b.WriteRune(foldRune(r))
	}
	return b.String()
}

// foldRune is the smallest rune of r's case-fold orbit.
func foldRune(r rune) rune {
	for {
		r2 := unicode.SimpleFold(r)
		if r2 <= r {
			return r2
		}
		r = r2
	}
}
