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

// Fingerprints are keyed fingerprints of what a revision's projection
// hides, so that a reask can tell a hidden value changed without the store
// keeping it. The key is never stored: docs/design.md#reask-fingerprints.
type Fingerprints struct {
	// Salt is the revision's own random value the key is derived from.
	Salt []byte `json:"salt"`
	// KeyID names the secret the key is derived from (keyID), never the
	// key: it lets a reask pick the secret from the configured list.
	KeyID  []byte        `json:"key_id"`
	Values []Fingerprint `json:"values"`
}

// Fingerprint is the keyed fingerprint of what the projection hides at
// Path: a redacted or cut value, or the members a cut collection left out.
type Fingerprint struct {
	Path string `json:"path"`
	MAC  []byte `json:"mac"`
}

const (
	fingerprintSaltSize = 32
	// fingerprintKeyIDSize is what a key id keeps of its HMAC: enough to
	// tell the few secrets of one list apart.
	fingerprintKeyIDSize = 8
	// fingerprintSize is what a fingerprint keeps of the HMAC: 128 bits
	// tell a changed value apart, and keep a stored revision small.
	fingerprintSize = 16

	// Labels of their own, so that neither the key nor the key id is an
	// HMAC of the calls secret the backend could be asked to check.
	fingerprintKeyLabel   = "approvalsbot fingerprint v1"
	fingerprintKeyIDLabel = "approvalsbot fingerprint key id"
)

// fingerprintKey is the key of the revision salted salt, under secret.
func fingerprintKey(secret, salt []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(fingerprintKeyLabel))
	m.Write(salt)
	return m.Sum(nil)
}

// keyID names secret in a stored revision.
func keyID(secret []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(fingerprintKeyIDLabel))
	return m.Sum(nil)[:fingerprintKeyIDSize]
}

// usableSecrets are the secrets of the list that can key a fingerprint:
// an empty one would make a key anyone could compute.
func usableSecrets(secrets [][]byte) [][]byte {
	var out [][]byte
	for _, s := range secrets {
		if len(s) > 0 {
			out = append(out, s)
		}
	}
	return out
}

// secretOf is the secret of the list fp was keyed with; false when fp
// lacks a salt or key id, or its secret was rotated out.
func secretOf(fp *Fingerprints, secrets [][]byte) ([]byte, bool) {
	if fp == nil || len(fp.Salt) != fingerprintSaltSize || len(fp.KeyID) != fingerprintKeyIDSize {
		return nil, false
	}
	for _, s := range usableSecrets(secrets) {
		if hmac.Equal(keyID(s), fp.KeyID) {
			return s, true
		}
	}
	return nil, false
}

// ReceivedArguments are a call's arguments as sent, held beside the stored
// form in memory only, for the reask that arrives with them. They never
// encode and never print.
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

// newFingerprints fingerprints what p, raw's projection, hides under a new
// salt and the first usable secret; nil without a secret or anything hidden.
func newFingerprints(raw []byte, p Projection, secrets [][]byte) *Fingerprints {
	usable := usableSecrets(secrets)
	if len(usable) == 0 {
		return nil
	}
	salt := make([]byte, fingerprintSaltSize)
	_, _ = rand.Read(salt) // never fails (crypto/rand)
	values, err := fingerprintsOf(raw, p, fingerprintKey(usable[0], salt))
	if err != nil || len(values) == 0 {
		return nil
	}
	return &Fingerprints{Salt: salt, KeyID: keyID(usable[0]), Values: values}
}

// fingerprintsOf fingerprints under key what p, raw's projection, hides.
// Two places with one path (keys that show alike once redacted) share one
// fingerprint, in order.
func fingerprintsOf(raw []byte, p Projection, key []byte) ([]Fingerprint, error) {
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

// hider collects, by path, the canonical text of what the projection
// hides. The projection keeps a prefix of each collection's members and
// ends a cut one with a marker member, so the two walk in step.
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

// walk compares received with shown at path: a shown scalar that is not
// the received value (redacted, cut, a depth marker) hides it.
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
				h.hide(memberPath(path, shown, i), received.rest(i))
				return
			}
			if i >= len(received.kids) {
				return // unreachable: the projection shows no member it did not receive
			}
			h.walk(memberPath(path, shown, i), received.kids[i], shown.kids[i])
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

// memberPath is the path of member i of shown, a collection at path.
func memberPath(path string, shown *tree, i int) string {
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

// hiddenChanges are the paths where what next's projection hides differs
// from what prev's hid, under prev's key; nil when nothing hidden can be
// compared (secretOf fails, or next was read back from the store).
func hiddenChanges(prev, next *Approval, secrets [][]byte) map[string]bool {
	fp := prev.Call.Fingerprints
	raw := bytes.TrimSpace(next.Call.Received)
	secret, ok := secretOf(fp, secrets)
	if !ok || len(raw) == 0 {
		return nil
	}
	p, err := Project(raw)
	if err != nil {
		return nil
	}
	now, err := fingerprintsOf(raw, p, fingerprintKey(secret, fp.Salt))
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
