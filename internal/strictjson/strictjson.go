// Package strictjson refuses JSON that encoding/json would read one way
// while the sender, a signature or a digest meant another: a key twice in
// one object, or a key that differs from a field's name only in letter
// case. Check runs before json.Unmarshal, with the field names derived
// from the target type by encoding/json's own rules
// (docs/design.md#json-with-one-reading).
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrSyntax is data that is not exactly one JSON text.
var ErrSyntax = errors.New("not one JSON text")

// MaxDepth is how deeply encoding/json nests arrays and objects before it
// refuses a document, and so Check too (as not JSON).
const MaxDepth = 10000

// Problem is what is wrong with a key.
type Problem int

// The problems Check reports.
const (
	// Duplicate: the key appears a second time in one object.
	Duplicate Problem = iota + 1
	// CaseVariant: the key is not a field's name, but encoding/json would
	// match it to one (letter case, or a rune such as the Kelvin sign).
	CaseVariant
	// FoldedTwice: with no schema, two keys of one object differ only in
	// letter case, so either may be the one read.
	FoldedTwice
	// Unknown: in an object the schema describes, the key names no field
	// (CheckKnown only), so encoding/json would drop its value unread.
	Unknown
)

// KeyError is the first key of a document that has two readings.
type KeyError struct {
	Problem Problem
	// Path names the key, as `data.roles[0].role` ("" the top level). It
	// stops, with Opaque set, at data of free shape: such keys may carry a
	// secret, so no error repeats them.
	Path   string
	Opaque bool
	// Field is the name the key would be matched to (CaseVariant).
	Field string
}

// Reason says what is wrong, without the path.
func (e *KeyError) Reason() string {
	switch {
	case e.Problem == CaseVariant:
		return fmt.Sprintf("want %q: keys must match the field's letter case exactly", e.Field)
	case e.Problem == FoldedTwice:
		return "an object holds two keys that differ only in letter case"
	case e.Problem == Unknown && e.Opaque:
		return "an object in it holds an unknown field"
	case e.Problem == Unknown:
		return "unknown field"
	case e.Opaque && e.Path == "":
		return "an object holds a key twice"
	case e.Opaque:
		return "an object in it holds a key twice"
	}
	return "duplicate key: an object may hold a key once"
}

func (e *KeyError) Error() string {
	if e.Path == "" {
		return e.Reason()
	}
	return e.Path + ": " + e.Reason()
}

// Check reads data, exactly one JSON text, and returns as a *KeyError the
// first key repeated in its object or, in an object s describes, differing
// from a field's name only by case folding. Keys compare as encoding/json
// decodes them. A nil s refuses, in every object, keys that differ only in
// case. Data encoding/json would refuse is an error wrapping ErrSyntax.
func Check(data []byte, s *Schema) error { return check(data, s, false) }

// CheckKnown is Check that also refuses a key naming no field of a struct
// s describes (Unknown): a sender must not believe the reader used what it
// dropped. A key with two readings anywhere is reported first.
func CheckKnown(data []byte, s *Schema) error { return check(data, s, true) }

func check(data []byte, s *Schema, known bool) error {
	// json.Valid is encoding/json's own judgement, nesting bound included:
	// past it the scan below may assume well-formed input.
	if !json.Valid(data) {
		err := json.Unmarshal(data, new(json.RawMessage)) // the reason, in encoding/json's words
		if err == nil {
			err = errors.New("invalid JSON")
		}
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	var root *node
	if s != nil {
		root = s.root
	}
	w := walker{root: root, foldAll: s == nil, known: known}
	for i := 0; i < len(data); {
		switch c := data[i]; c {
		case ' ', '\t', '\n', '\r', ',', ':':
			i++
		case '{', '[':
			w.open(c == '{')
			i++
		case '}', ']':
			w.close()
			i++
		case '"':
			end, plain := stringEnd(data, i)
			if w.wantKey() {
				if err := w.key(data[i:end], plain); err != nil {
					return err
				}
			} else {
				w.valueDone()
			}
			i = end
		default: // a number, true, false or null
			for i < len(data) && !endsLiteral(data[i]) {
				i++
			}
			w.valueDone()
		}
	}
	if w.unknown != nil {
		return w.unknown
	}
	return nil
}

// stringEnd returns the index past the string whose quote is data[i], and
// whether its text is its value (no escape, valid UTF-8).
func stringEnd(data []byte, i int) (int, bool) {
	plain := true
	j := i + 1
	for data[j] != '"' {
		switch c := data[j]; {
		case c == '\\':
			plain = false
			j += 2
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(data[j:])
			if r == utf8.RuneError && n == 1 {
				plain = false
			}
			j += n
		default:
			j++
		}
	}
	return j + 1, plain
}

func endsLiteral(c byte) bool {
	switch c {
	case ',', '}', ']', ' ', '\t', '\n', '\r':
		return true
	}
	return false
}

// walker follows one document with a stack of the open arrays and
// objects, frames reused as depth comes and goes.
type walker struct {
	root  *node
	stack []frame
	// foldAll: no schema, so every object may be decoded matching keys
	// whatever their case: two keys that fold alike are two readings.
	foldAll bool
	// known: a key naming no field is refused; unknown is the first,
	// reported only when no key has two readings, the graver fault.
	known   bool
	unknown *KeyError
}

type frame struct {
	n      *node // what this array or object decodes into; nil: any shape
	object bool
	// expectKey: the next string of this object is a key.
	expectKey bool
	key       []byte // the member being read, decoded
	index     int    // the element being read
	keys      [][]byte
	set       map[string]struct{} // the keys, once there are too many to scan
	folds     map[string]struct{} // the keys folded (foldAll only)
}

// scanKeys is how many keys an object holds before they go into a set.
const scanKeys = 16

func (w *walker) wantKey() bool {
	return len(w.stack) > 0 && w.stack[len(w.stack)-1].expectKey
}

// open starts an array or object.
func (w *walker) open(object bool) {
	n := w.child()
	if n != nil && (n.kind == kindArray) == object {
		n = nil // a type error for encoding/json; its keys are still checked
	}
	if len(w.stack) < cap(w.stack) {
		w.stack = w.stack[:len(w.stack)+1]
	} else {
		w.stack = append(w.stack, frame{})
	}
	f := &w.stack[len(w.stack)-1]
	f.n, f.object, f.expectKey, f.key, f.index = n, object, object, nil, 0
	f.keys = f.keys[:0]
	if f.set != nil {
		clear(f.set)
	}
	if f.folds != nil {
		clear(f.folds)
	}
}

func (w *walker) close() {
	w.stack = w.stack[:len(w.stack)-1]
	w.valueDone()
}

// child is the node of the value about to be read.
func (w *walker) child() *node {
	if len(w.stack) == 0 {
		return w.root
	}
	top := &w.stack[len(w.stack)-1]
	switch {
	case top.n == nil:
		return nil
	case top.n.kind == kindStruct:
		return top.n.fields[string(top.key)]
	}
	return top.n.elem
}

// valueDone moves past a complete value.
func (w *walker) valueDone() {
	if len(w.stack) == 0 {
		return
	}
	top := &w.stack[len(w.stack)-1]
	if top.object {
		top.expectKey = true
	} else {
		top.index++
	}
}

// key takes the innermost object's quoted key raw; a key that is not
// plain is decoded by encoding/json itself, to read as it will.
func (w *walker) key(raw []byte, plain bool) error {
	top := &w.stack[len(w.stack)-1]
	top.expectKey = false
	k := raw[1 : len(raw)-1]
	if !plain {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%w: %v", ErrSyntax, err) // json.Valid accepted it: unreachable
		}
		k = []byte(s)
	}
	top.key = k
	if ke := w.checkKey(top, k); ke != nil {
		return ke
	}
	return nil
}

// checkKey records key in its object and reports it if it repeats one or
// bends a field's name.
func (w *walker) checkKey(f *frame, key []byte) *KeyError {
	if f.seen(key) {
		return w.keyError(Duplicate, "")
	}
	if w.foldAll {
		if f.folds == nil {
			f.folds = map[string]struct{}{}
		}
		k := fold(string(key))
		if _, ok := f.folds[k]; ok {
			return w.keyError(FoldedTwice, "")
		}
		f.folds[k] = struct{}{}
	}
	if f.n != nil && f.n.kind == kindStruct {
		if _, ok := f.n.fields[string(key)]; !ok {
			if name, ok := f.n.folded[fold(string(key))]; ok {
				return w.keyError(CaseVariant, name)
			}
			if w.known && w.unknown == nil {
				w.unknown = w.keyError(Unknown, "")
			}
		}
	}
	return nil
}

// seen reports whether key is already in the object, and adds it.
func (f *frame) seen(key []byte) bool {
	if f.set != nil {
		if _, ok := f.set[string(key)]; ok {
			return true
		}
		f.set[string(key)] = struct{}{}
		return false
	}
	for _, k := range f.keys {
		if bytes.Equal(k, key) {
			return true
		}
	}
	f.keys = append(f.keys, key)
	if len(f.keys) > scanKeys {
		f.set = make(map[string]struct{}, 2*scanKeys)
		for _, k := range f.keys {
			f.set[string(k)] = struct{}{}
		}
	}
	return false
}

// keyError names the key being read by its path, which ends at the first
// step into data of free shape.
func (w *walker) keyError(p Problem, field string) *KeyError {
	var b strings.Builder
	for i := range w.stack {
		f := &w.stack[i]
		if f.n == nil || f.n.kind == kindMap {
			return &KeyError{Problem: p, Path: b.String(), Opaque: true, Field: field}
		}
		if f.object {
			writeKey(&b, string(f.key))
		} else {
			fmt.Fprintf(&b, "[%d]", f.index)
		}
	}
	return &KeyError{Problem: p, Path: b.String(), Field: field}
}

// maxKeyInPath bounds the bytes of one key a path repeats.
const maxKeyInPath = 64

// writeKey appends one object step: `.name` for a plain name, else the
// key quoted in ASCII, so a Kelvin sign or a control byte shows as such.
func writeKey(b *strings.Builder, key string) {
	if plain(key) {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(key)
		return
	}
	cut := key
	if len(cut) > maxKeyInPath {
		n := maxKeyInPath
		for n > 0 && !isRuneStart(cut[n]) {
			n--
		}
		cut = cut[:n] + "…"
	}
	b.WriteString("[" + strconv.QuoteToASCII(cut) + "]")
}

func isRuneStart(c byte) bool { return c&0xC0 != 0x80 }

func plain(key string) bool {
	if key == "" || len(key) > maxKeyInPath {
		return false
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}
