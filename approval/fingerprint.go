package approval

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
)

// Why a reask compares fingerprints, and why they are keyed.
//
// A reask compares two revisions of a call (CompareRevisions) on what the
// card shows: the display projection. A value the projection hides (a
// secret, redacted; a string cut past ProjectionMaxString; members or
// levels cut) shows the same in both revisions however it changed, so
// comparing projections alone lets a person approve a swapped API key
// with no hint on the card.
//
// The values themselves are not at hand when the reask arrives: the bot
// keeps no argument as received (Stored), so of the earlier revision it
// has only the stored form; of the new one it has the request just
// received. So StoredForm keeps, for each place of the projection that
// hides something, a fingerprint of what it hides (Fingerprints), and the
// reask fingerprints the new revision's arguments as received (Call.Received,
// held in memory only) under the earlier revision's key and compares the
// two, path by path.
//
// A plain SHA-256 of a short password can be reversed by trying every
// password; a fingerprint here is an HMAC-SHA256 under a random key of
// the revision's own, over the path and the value, cut to fingerprintSize
// bytes. Nobody can test a guess without the key, no two approvals' (or
// paths') fingerprints of one secret are alike, and no table computed
// ahead helps. The key is kept with the fingerprints, in the revision
// (there is nowhere else the next reask could read it), so a reader of the
// store who has both can still test guesses of one value of one revision:
// the fingerprints are no more secret than the store, and are never shown.
// A fingerprint says only whether a hidden value changed; what is shown of
// the change is the projection's own text ("[redacted]", a cut value).
//
// A revision stored before fingerprints existed has none: its reask falls
// back to saying that the change is in values the card does not show
// (Reask.Unshown) when the digest changed.

// Fingerprints are keyed fingerprints of the values a revision's display
// projection hides, one for each place of the projection that hides
// something, in the order of the arguments. StoredForm makes them; Parse
// drops any the backend sent.
type Fingerprints struct {
	// Key is this revision's own random HMAC key (fingerprintKeySize bytes).
	Key    []byte        `json:"key"`
	Values []Fingerprint `json:"values"`
}

// Fingerprint is the keyed fingerprint of what the projection hides at
// Path, a path as ArgumentChange names it: a redacted or cut value, or,
// at the marker member of a cut collection, the members left out.
type Fingerprint struct {
	Path string `json:"path"`
	MAC  []byte `json:"mac"`
}

const (
	fingerprintKeySize = 32
	// fingerprintSize is what a fingerprint keeps of the HMAC: 128 bits
	// tell a changed value apart, and keep a stored revision small.
	fingerprintSize = 16
)

// ReceivedArguments are a call's arguments as the backend sent them,
// which StoredForm holds beside the stored form in memory only, so that
// the reask that arrives with it can fingerprint its hidden values
// (CompareRevisions). They are never encoded (a revision keeps none of
// them) and never printed.
type ReceivedArguments []byte

// receivedShown is what ReceivedArguments print as.
const receivedShown = "<arguments as received>"

func (ReceivedArguments) String() string   { return receivedShown }
func (ReceivedArguments) GoString() string { return receivedShown }

// Format prints receivedShown whatever the verb, so %x or %v of a Call
// does not print the arguments either.
func (ReceivedArguments) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, receivedShown) }

// MarshalJSON encodes nothing of the arguments, should a struct holding
// them be encoded without its json:"-".
func (ReceivedArguments) MarshalJSON() ([]byte, error) { return []byte("null"), nil }

// newFingerprints fingerprints what the display projection of raw hides,
// under a new random key; nil when it hides nothing (or raw cannot be
// read, which Parse never lets through).
func newFingerprints(raw []byte) *Fingerprints {
	key := make([]byte, fingerprintKeySize)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	values, err := fingerprintsOf(raw, key)
	if err != nil || len(values) == 0 {
		return nil
	}
	return &Fingerprints{Key: key, Values: values}
}

// fingerprintsOf fingerprints under key what the display projection of
// raw hides, in the order of the arguments. Where two places of the
// projection have one path (two keys that show alike once redacted), one
// fingerprint covers both, in order.
func fingerprintsOf(raw, key []byte) ([]Fingerprint, error) {
	p, err := Project(raw)
	if err != nil {
		return nil, err
	}
	if !p.Redacted && !p.Truncated {
		return nil, nil // the projection shows the arguments whole
	}
	received, err := readTree(jsonDecoder(raw))
	if err != nil {
		return nil, err
	}
	shown, err := readTree(jsonDecoder(p.JSON))
	if err != nil {
		return nil, err
	}
	h := hider{at: map[string][][]byte{}}
	h.walk("", received, shown)
	out := make([]Fingerprint, 0, len(h.paths))
	for _, path := range h.paths {
		out = append(out, Fingerprint{Path: path, MAC: fingerprint(key, path, h.at[path])})
	}
	return out, nil
}

func jsonDecoder(b []byte) *json.Decoder {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	return dec
}

// fingerprint is the HMAC under key of path and the values hidden there,
// each prefixed by its length so that no two inputs read alike.
func fingerprint(key []byte, path string, values [][]byte) []byte {
	m := hmac.New(sha256.New, key)
	var n [binary.MaxVarintLen64]byte
	write := func(b []byte) {
		m.Write(n[:binary.PutUvarint(n[:], uint64(len(b)))])
		m.Write(b)
	}
	write([]byte(path))
	for _, v := range values {
		write(v)
	}
	return m.Sum(nil)[:fingerprintSize]
}

// hider walks the arguments as received beside their display projection
// and collects, by path, the canonical text of what the projection hides.
// The projection keeps a prefix of each collection's members in order
// (redacted, cut), and ends a cut collection with one marker member for
// the rest, so the two are walked member by member.
type hider struct {
	paths []string            // in the order first found
	at    map[string][][]byte // what is hidden at each path
}

func (h *hider) hide(path string, t *tree) {
	path = hiddenPath(path)
	if _, ok := h.at[path]; !ok {
		h.paths = append(h.paths, path)
	}
	h.at[path] = append(h.at[path], canonicalText(t))
}

// walk compares received with shown at path. A shown scalar that is not
// the received value (redacted, cut, or a marker for a collection nested
// too deep) hides the received value.
func (h *hider) walk(path string, received, shown *tree) {
	switch {
	case shown.kind == 0:
		if received.kind != 0 || received.scalar != shown.scalar {
			h.hide(path, received)
		}
	case shown.kind != received.kind:
		// Unreachable: the projection keeps every collection's kind.
		h.hide(path, received)
	default:
		for i := range shown.kids {
			last := i == len(shown.kids)-1
			if last && leftOutMarker(received, shown, i) {
				h.hide(markerPath(path, shown, i), received.rest(i))
				return
			}
			if i >= len(received.kids) {
				return // unreachable: the projection shows no member it did not receive
			}
			p := path + "[" + strconv.Itoa(i) + "]"
			if shown.kind == '{' {
				p = pathKey(path, shown.keys[i])
			}
			h.walk(p, received.kids[i], shown.kids[i])
		}
	}
}

// leftOutMarker reports whether member i of shown is the marker standing
// for received's members from i on: the marker's text, with their count.
func leftOutMarker(received, shown *tree, i int) bool {
	kid := shown.kids[i]
	if kid.kind != 0 || (shown.kind == '{' && shown.keys[i] != moreKey) {
		return false
	}
	want, _ := json.Marshal(moreText(len(received.kids) - i)) // a string: cannot fail
	return kid.scalar == string(want)
}

func markerPath(path string, shown *tree, i int) string {
	if shown.kind == '{' {
		return pathKey(path, shown.keys[i])
	}
	return path + "[" + strconv.Itoa(i) + "]"
}

// rest is a collection of t's members from i on.
func (t *tree) rest(i int) *tree {
	r := &tree{kind: t.kind, kids: t.kids[i:]}
	if t.kind == '{' {
		r.keys = t.keys[i:]
	}
	return r
}

// canonicalText is t in RFC 8785 form, so that a value sent again with its
// keys in another order (which keeps args_sha256) fingerprints alike; a
// value with no canonical form (a number past a double) keeps its text.
func canonicalText(t *tree) []byte {
	text := []byte(t.String())
	if c, err := Canonicalize(text); err == nil {
		return c
	}
	return text
}

// hiddenChanges are the paths at which what next's projection hides is
// not what prev's hid: prev's fingerprints against next's arguments as
// received, fingerprinted under prev's key. It is nil when either is
// missing (a revision stored before fingerprints, or next read back from
// the store): then nothing hidden can be compared.
func hiddenChanges(prev, next *Approval) map[string]bool {
	fp := prev.Call.Fingerprints
	raw := bytes.TrimSpace(next.Call.Received)
	if fp == nil || len(fp.Key) != fingerprintKeySize || len(raw) == 0 {
		return nil
	}
	now, err := fingerprintsOf(raw, fp.Key)
	if err != nil {
		return nil
	}
	after := make(map[string][]byte, len(now))
	for _, f := range now {
		after[f.Path] = f.MAC
	}
	changed := map[string]bool{}
	for _, f := range fp.Values {
		if mac, ok := after[f.Path]; ok && !hmac.Equal(mac, f.MAC) {
			changed[f.Path] = true
		}
	}
	return changed
}
