// Package seal signs small JSON values into tokens that fit a URL path
// segment or an HTML attribute as they are, with the bot's link secrets:
// a version, the body and its MAC, base64url without padding. Each use
// derives keys of its own from the secrets with a label, so nothing
// signed for one use verifies for another. The first secret signs, any
// verifies, so a secret can rotate. The decision page's links and the
// passkey enrolment links and bindings are sealed with it.
package seal

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// MinSecret is the shortest secret New takes: an HMAC-SHA256 key's size,
// as the configuration's decoder checks at load.
const MinSecret = sha256.Size

// version is the first byte of every token's body: a format change gets
// a new one, and old tokens then fail to open.
const version = "1"

// maxToken bounds what Open reads: real tokens are a few hundred bytes.
const maxToken = 2048

// strict decodes base64url as Seal wrote it and no other way: unused
// bits must be zero, so a token has one spelling.
var strict = base64.RawURLEncoding.Strict()

// Sealer seals and opens tokens under one label's keys. Immutable; safe
// for concurrent use.
type Sealer struct {
	keys [][]byte
}

// New derives label's keys from secrets, the signing one first.
func New(secrets []string, label string) (*Sealer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("no link secret")
	}
	s := &Sealer{}
	for i, sec := range secrets {
		if len(sec) < MinSecret {
			return nil, fmt.Errorf("link secret %d is shorter than %d bytes", i, MinSecret)
		}
		m := hmac.New(sha256.New, []byte(sec))
		m.Write([]byte(label))
		s.keys = append(s.keys, m.Sum(nil))
	}
	return s, nil
}

func (s *Sealer) mac(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// Seal signs v's JSON with the first key.
func (s *Sealer) Seal(v any) string {
	body, _ := json.Marshal(v) // plain data: cannot fail
	enc := version + base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], enc))
}

// notTokenRune is anything Seal never writes (base64url and the dot):
// the decoder would skip a line break, so one token could be spelt many
// ways.
func notTokenRune(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
}

// Open checks tok's MAC under every key and decodes its body into v; it
// reports whether both went well. Nothing of an altered token is
// decoded.
func (s *Sealer) Open(tok string, v any) bool {
	if len(tok) > maxToken || !strings.HasPrefix(tok, version) || strings.IndexFunc(tok, notTokenRune) >= 0 {
		return false
	}
	enc, sig, ok := strings.Cut(tok, ".")
	if !ok {
		return false
	}
	got, err := strict.DecodeString(sig)
	if err != nil || !s.check(got, enc) {
		return false
	}
	body, err := strict.DecodeString(enc[len(version):])
	return err == nil && json.Unmarshal(body, v) == nil
}

func (s *Sealer) check(got []byte, msg string) bool {
	for _, k := range s.keys {
		if hmac.Equal(got, s.mac(k, msg)) {
			return true
		}
	}
	return false
}

// Check is the value a page's form carries back for msg (say, the
// page's own token): its MAC under the first key, so a POST can only
// come from a page the bot rendered for it.
func (s *Sealer) Check(msg string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], msg))
}

// Checks reports whether v is msg's Check under any key.
func (s *Sealer) Checks(msg, v string) bool {
	got, err := strict.DecodeString(v)
	return err == nil && strings.IndexFunc(v, notTokenRune) < 0 && s.check(got, msg)
}
