package approval

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Reask is what one reask changed of a call, as its cards show it
// (docs/cards.md, "What changed"), worked out once when it arrives.
type Reask struct {
	From     int `json:"from"`     // the revision asked about before
	Revision int `json:"revision"` // the revision this reask made
	Why      Why `json:"why,omitempty"`
	// Arguments are the paths that differ, in the newer arguments' order,
	// at most ReaskChangesMax; More counts those left out.
	Arguments []ArgumentChange `json:"arguments,omitempty"`
	More      int              `json:"more,omitempty"`
	// Unshown: the digest changed, but no value the bot could compare did.
	Unshown bool `json:"unshown,omitempty"`
	// Withheld: the content is restricted; only the digest was compared.
	Withheld bool `json:"withheld,omitempty"`
	// SnapshotFrom and SnapshotTo are the snapshot digests when they differ.
	SnapshotFrom string `json:"snapshot_from,omitempty"`
	SnapshotTo   string `json:"snapshot_to,omitempty"`
}

// ArgumentChange is one path that differs. Old and New are its values as
// cards show them, cut at ChangeValueMax characters; Old is empty for an
// added path, New for a removed one. Hidden marks a change only in what the
// shown values hide: Old and New may read alike ("[redacted]").
type ArgumentChange struct {
	Path   string     `json:"path"`
	Kind   ChangeKind `json:"kind"`
	Old    string     `json:"old,omitempty"`
	New    string     `json:"new,omitempty"`
	Hidden bool       `json:"hidden,omitempty"`
}

// ChangeKind says how a path changed.
type ChangeKind string

// Kinds of an ArgumentChange.
const (
	ChangeAdded   ChangeKind = "added"
	ChangeRemoved ChangeKind = "removed"
	ChangeChanged ChangeKind = "changed"
)

// Bounds of a Reask, so that a reask of a huge call stays small where it
// is kept (with the approval) and shown.
const (
	// ReaskChangesMax bounds the paths kept.
	ReaskChangesMax = 50
	// ChangeValueMax bounds one shown value, in characters.
	ChangeValueMax = 60
	// changePathMax bounds one shown path, in characters.
	changePathMax = 120
)

// CompareRevisions works out what the reask from prev to next changed. The
// arguments are projected again (Project) before they are compared, so the
// result never holds a value a card would not show. A hidden value is
// compared when prev's fingerprints were keyed with one of secrets and next
// has its arguments as received; otherwise a change only there is Unshown.
// It never fails: unreadable arguments count as withheld.
func CompareRevisions(prev, next *Approval, secrets ...[]byte) Reask {
	r := Reask{From: prev.Revision, Revision: next.Revision, Why: next.Why}
	if prev.Call.Snapshot != next.Call.Snapshot && ValidDigest(prev.Call.Snapshot) && ValidDigest(next.Call.Snapshot) {
		r.SnapshotFrom, r.SnapshotTo = prev.Call.Snapshot, next.Call.Snapshot
	}
	digestChanged := prev.Call.ArgsSHA256 != next.Call.ArgsSHA256
	var before, after *tree
	withheld := prev.ContentRestricted() || next.ContentRestricted()
	if !withheld {
		var err1, err2 error
		before, err1 = projectedTree(prev.Call.Arguments)
		after, err2 = projectedTree(next.Call.Arguments)
		withheld = err1 != nil || err2 != nil
	}
	if withheld {
		// A restricted call keeps its digest: that it changed tells
		// nothing of the content, and lets the card say so.
		r.Withheld = true
		r.Unshown = digestChanged && ValidDigest(prev.Call.ArgsSHA256) && ValidDigest(next.Call.ArgsSHA256)
		return r
	}
	d := differ{hidden: hiddenChanges(prev, next, secrets)}
	d.diff("", before, after)
	r.Arguments, r.More = d.kept, d.more
	r.Unshown = len(r.Arguments) == 0 && r.More == 0 && digestChanged
	return r
}

// ArgumentsChanged reports whether r saw the arguments change, by a path,
// the digest alone, or (withheld) the backend's word.
func (r Reask) ArgumentsChanged() bool {
	return len(r.Arguments) > 0 || r.More > 0 || r.Unshown || (r.Withheld && r.Why == WhyArgumentsChanged)
}

// projectedTree reads raw's display projection as an ordered tree; no
// arguments read as an empty object.
func projectedTree(raw json.RawMessage) (*tree, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	p, err := Project(raw)
	if err != nil {
		return nil, err
	}
	return readTree(jsonDecoder(p.JSON))
}

// tree is a JSON value with its objects' keys in order. Scalars keep
// their compact JSON text.
type tree struct {
	kind   byte // '{', '[' or 0 for a scalar
	keys   []string
	kids   []*tree
	scalar string
}

func readTree(dec *json.Decoder) (*tree, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		t := &tree{kind: byte(v)}
		for dec.More() {
			if t.kind == '{' {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				key, _ := k.(string)
				t.keys = append(t.keys, key)
			}
			kid, err := readTree(dec)
			if err != nil {
				return nil, err
			}
			t.kids = append(t.kids, kid)
		}
		if _, err := dec.Token(); err != nil { // the closing delimiter
			return nil, err
		}
		return t, nil
	case string:
		b, _ := json.Marshal(v) // a string: cannot fail
		return &tree{scalar: string(b)}, nil
	case json.Number:
		return &tree{scalar: v.String()}, nil
	case bool:
		return &tree{scalar: strconv.FormatBool(v)}, nil
	}
	return &tree{scalar: "null"}, nil
}

func (t *tree) compact(b *strings.Builder) {
	switch t.kind {
	case 0:
		b.WriteString(t.scalar)
	case '{', '[':
		b.WriteByte(t.kind)
		for i, kid := range t.kids {
			if i > 0 {
				b.WriteByte(',')
			}
			if t.kind == '{' {
				k, _ := json.Marshal(t.keys[i]) // a string: cannot fail
				b.Write(k)
				b.WriteByte(':')
			}
			kid.compact(b)
		}
		b.WriteByte(t.kind + 2) // '{'+2 is '}', '['+2 is ']'
	}
}

func (t *tree) String() string {
	var b strings.Builder
	t.compact(&b)
	return b.String()
}

func (t *tree) lookup(key string) (*tree, bool) {
	if i := t.index(key); i >= 0 {
		return t.kids[i], true
	}
	return nil, false
}

// index is the position of key among an object's keys, or -1.
func (t *tree) index(key string) int {
	for i, k := range t.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// differ collects one comparison's changes within ReaskChangesMax; hidden
// are the paths where a hidden value changed (hiddenChanges).
type differ struct {
	kept   []ArgumentChange
	more   int
	hidden map[string]bool
}

func (d *differ) add(c ArgumentChange) {
	if len(d.kept) == ReaskChangesMax {
		d.more++
		return
	}
	c.Path = shownValue(hiddenPath(c.Path), changePathMax)
	d.kept = append(d.kept, c)
}

// diff compares two values at path: objects key by key, arrays index by
// index, anything else by its text.
func (d *differ) diff(path string, a, b *tree) {
	switch {
	case a.kind == '{' && b.kind == '{':
		// next is how far a's keys are matched or reported: a key the
		// newer object dropped is reported where it stood in the older.
		next := 0
		removed := func(upto int) {
			for ; next < upto; next++ {
				if _, ok := b.lookup(a.keys[next]); !ok {
					d.add(ArgumentChange{Path: pathKey(path, a.keys[next]), Kind: ChangeRemoved,
						Old: shownValue(a.kids[next].String(), ChangeValueMax)})
				}
			}
		}
		for i, k := range b.keys {
			ai := a.index(k)
			if ai < 0 {
				d.add(ArgumentChange{Path: pathKey(path, k), Kind: ChangeAdded, New: shownValue(b.kids[i].String(), ChangeValueMax)})
				continue
			}
			if ai >= next {
				removed(ai)
				next = ai + 1
			}
			d.diff(pathKey(path, k), a.kids[ai], b.kids[i])
		}
		removed(len(a.keys))
	case a.kind == '[' && b.kind == '[':
		for i := 0; i < max(len(a.kids), len(b.kids)); i++ {
			p := path + "[" + strconv.Itoa(i) + "]"
			switch {
			case i >= len(a.kids):
				d.add(ArgumentChange{Path: p, Kind: ChangeAdded, New: shownValue(b.kids[i].String(), ChangeValueMax)})
			case i >= len(b.kids):
				d.add(ArgumentChange{Path: p, Kind: ChangeRemoved, Old: shownValue(a.kids[i].String(), ChangeValueMax)})
			default:
				d.diff(p, a.kids[i], b.kids[i])
			}
		}
	default:
		// A change shown, or one only of what the value hides.
		if old, now := a.String(), b.String(); old != now || d.hidden[hiddenPath(path)] {
			d.add(ArgumentChange{Path: path, Kind: ChangeChanged, Old: shownValue(old, ChangeValueMax), New: shownValue(now, ChangeValueMax),
				Hidden: old == now})
		}
	}
}

// hiddenPath is path as a change or a fingerprint names it: the whole
// arguments (the empty path) by a name.
func hiddenPath(path string) string {
	if path == "" {
		return "(the arguments)"
	}
	return path
}

// plainKey is a key a path shows bare.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// pathKey extends path by an object key: .key, or ["key"] for a key
// that is not a plain name.
func pathKey(path, key string) string {
	if plainKey.MatchString(key) {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	q, _ := json.Marshal(key) // a string: cannot fail
	return path + "[" + string(q) + "]"
}

// shownValue cuts s to at most n characters, marking the cut with "…".
func shownValue(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	runes := []rune(s)
	return string(runes[:n-1]) + "…"
}
