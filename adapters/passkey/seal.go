package passkey

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// The labels that turn each link secret into a key of its own per use,
// apart from the decision page's ("approvalsbot decision link v1") and
// from each other, so nothing signed for one use verifies for another.
const (
	enrolKeyLabel   = "approvalsbot passkey enrol v1"
	formKeyLabel    = "approvalsbot passkey form v1"
	bindingKeyLabel = "approvalsbot passkey binding v1"
)

// minSecret is the shortest link secret taken: an HMAC-SHA256 key's size,
// as the configuration checks at load.
const minSecret = sha256.Size

// sealer signs small JSON values into tokens that fit a URL path segment
// or an attribute as they are: a version, the body and its MAC, base64url
// without padding. The first key signs, any verifies, so a secret can
// rotate. Immutable; safe for concurrent use.
type sealer struct {
	keys [][]byte
}

func newSealer(secrets []string, label string) (*sealer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("passkey: no link secret")
	}
	s := &sealer{}
	for i, sec := range secrets {
		if len(sec) < minSecret {
			return nil, fmt.Errorf("passkey: link secret %d is shorter than %d bytes", i, minSecret)
		}
		m := hmac.New(sha256.New, []byte(sec))
		m.Write([]byte(label))
		s.keys = append(s.keys, m.Sum(nil))
	}
	return s, nil
}

// sealVersion is the first byte of every token's body.
const sealVersion = "1"

// maxSealed bounds what open reads: real tokens are a few hundred bytes.
const maxSealed = 2048

var strict = base64.RawURLEncoding.Strict()

func (s *sealer) mac(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

// seal signs v's JSON.
func (s *sealer) seal(v any) string {
	body, _ := json.Marshal(v) // plain data: cannot fail
	enc := sealVersion + base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], enc))
}

// notTokenRune is anything seal never writes.
func notTokenRune(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
}

// open checks tok's MAC under every key and decodes its body into v.
func (s *sealer) open(tok string, v any) bool {
	if len(tok) > maxSealed || !strings.HasPrefix(tok, sealVersion) || strings.IndexFunc(tok, notTokenRune) >= 0 {
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
	body, err := strict.DecodeString(enc[len(sealVersion):])
	return err == nil && json.Unmarshal(body, v) == nil
}

func (s *sealer) check(got []byte, msg string) bool {
	for _, k := range s.keys {
		if hmac.Equal(got, s.mac(k, msg)) {
			return true
		}
	}
	return false
}

// formCheck is the value a page's form carries back: a MAC of the page's
// token, so a POST can only come from a page the bot rendered for it.
func (s *sealer) formCheck(token string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], token))
}

// checkForm reports whether v is token's form check under any key.
func (s *sealer) checkForm(token, v string) bool {
	got, err := strict.DecodeString(v)
	return err == nil && strings.IndexFunc(v, notTokenRune) < 0 && s.check(got, token)
}

// enrolClaims is what an enrolment link says: whose passkeys, until when.
type enrolClaims struct {
	Tenant  string    `json:"t"`
	Member  string    `json:"u"`
	Expires time.Time `json:"e"`
}

// sealedBinding is a binding the decision page carries, and until when
// its options may be asked for.
type sealedBinding struct {
	Tenant     string    `json:"t"`
	ApprovalID string    `json:"a"`
	Revision   int       `json:"r"`
	Digest     string    `json:"d"`
	Member     string    `json:"u"`
	Expires    time.Time `json:"e"`
}

// Links makes members' enrolment links. It needs neither the store nor
// the tenants, so `bot passkey enrol` makes one beside a running bot.
type Links struct {
	base  string // PublicURL without a trailing "/"
	enrol *sealer
	now   func() time.Time
}

// NewLinks takes the bot's public URL (whose host must be a name, as
// RelyingParty says), the link secrets (the signing one first) and a
// clock (nil: time.Now).
func NewLinks(publicURL string, secrets []string, now func() time.Time) (*Links, error) {
	if _, _, err := RelyingParty(publicURL); err != nil {
		return nil, err
	}
	enrol, err := newSealer(secrets, enrolKeyLabel)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Links{base: strings.TrimRight(publicURL, "/"), enrol: enrol, now: now}, nil
}

// EnrolLink is a member's enrolment link, PublicURL + EnrolPath + a
// token signed with the link secrets that opens the page for EnrolTTL,
// and when it expires. Whoever holds it enrols passkeys as the member:
// give it to them privately.
func (l *Links) EnrolLink(tenantID, user string) (string, time.Time) {
	exp := l.now().Add(EnrolTTL).UTC().Truncate(time.Second)
	return l.base + EnrolPath + l.enrol.seal(enrolClaims{Tenant: tenantID, Member: user, Expires: exp}), exp
}

// EnrolLink is Links.EnrolLink, for the service's own URL and secrets.
func (s *Service) EnrolLink(tenantID, user string) (string, time.Time) {
	return s.links.EnrolLink(tenantID, user)
}

// openEnrol checks an enrolment token at now.
func (s *Service) openEnrol(tok string) (enrolClaims, error) {
	var c enrolClaims
	if !s.links.enrol.open(tok, &c) || c.Tenant == "" || c.Member == "" || c.Expires.IsZero() {
		return enrolClaims{}, ErrLinkBroken
	}
	if !s.now().Before(c.Expires) {
		return c, ErrLinkExpired
	}
	return c, nil
}

// SealBinding is the value of the decision page's data-passkey-binding
// attribute: b, signed, which the script sends back to OptionsPath to
// begin the ceremony, until expires (say, the link's own expiry). It is
// not secret; it only lets whoever holds the page ask for a challenge.
func (s *Service) SealBinding(b Binding, expires time.Time) string {
	return s.binds.seal(sealedBinding{Tenant: b.Tenant, ApprovalID: b.ApprovalID, Revision: b.Revision, Digest: b.Digest,
		Member: b.Member, Expires: expires.UTC().Truncate(time.Second)})
}

// openBinding checks a sealed binding at now.
func (s *Service) openBinding(tok string) (Binding, error) {
	var c sealedBinding
	if !s.binds.open(tok, &c) || c.Expires.IsZero() {
		return Binding{}, ErrLinkBroken
	}
	b := Binding{Tenant: c.Tenant, ApprovalID: c.ApprovalID, Revision: c.Revision, Digest: c.Digest, Member: c.Member}
	if !b.valid() {
		return Binding{}, ErrLinkBroken
	}
	if !s.now().Before(c.Expires) {
		return b, ErrLinkExpired
	}
	return b, nil
}
