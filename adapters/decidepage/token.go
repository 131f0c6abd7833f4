package decidepage

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

// Answers a page's form may send. A link made today names none: it
// opens the one page of its member and revision, which offers every
// answer the tenant and the call allow. Links mailed by earlier releases
// name one (approve or deny) and open the same page.
const (
	ActionApprove = "approve"
	ActionDeny    = "deny"
)

// Claims is what one decision link says: who may do what to which
// revision of which approval, until when. The link is the person's only
// credential on the page, so every field is signed.
type Claims struct {
	Tenant     string `json:"t"`
	ApprovalID string `json:"a"`
	Revision   int    `json:"r"`
	Member     string `json:"u"` // the tenant user id ("user:kevin")
	// Action is empty in the links made today; a link mailed by an
	// earlier release names ActionApprove or ActionDeny, which the page
	// no longer reads: it offers what the tenant and the call allow.
	Action string `json:"x,omitempty"`
	// Via is ViaChat for a link the bot gave in chat (to a member who
	// may have no e-mail address); "" for a mailed one.
	Via     string    `json:"v,omitempty"`
	Expires time.Time `json:"e"` // the approval's deadline
}

// ViaChat marks a link given in chat: its page's decisions are made on
// the page surface (tenant.SurfacePage), not as the member's mail.
const ViaChat = "chat"

// Errors of Verify; each gets its own page.
var (
	// ErrMalformed: not a link this bot makes, or altered on the way.
	ErrMalformed = errors.New("the link is not one this bot made, or it was altered")
	// ErrExpired: the link's deadline has passed.
	ErrExpired = errors.New("the link has expired")
)

// tokenVersion is the first byte of every token's body: a format change
// gets a new one, and old links then fail as malformed.
const tokenVersion = "1"

// Signer makes and checks decision links. The first key signs, any
// verifies, so a secret can rotate. It is immutable and safe for
// concurrent use.
type Signer struct {
	keys [][]byte
}

// linkKeyLabel separates decision links' keys from any other use of the
// same secret: each configured secret is turned into a key of its own.
const linkKeyLabel = "approvalsbot decision link v1"

// MinSecret is the shortest secret NewSigner takes: an HMAC-SHA256 key's
// size, as the configuration's decoder checks at load.
const MinSecret = sha256.Size

// NewSigner takes the configured link secrets, the signing one first.
func NewSigner(secrets []string) (*Signer, error) {
	if len(secrets) == 0 {
		return nil, errors.New("decidepage: no link secret")
	}
	s := &Signer{}
	for i, sec := range secrets {
		if len(sec) < MinSecret {
			return nil, fmt.Errorf("decidepage: link secret %d is shorter than %d bytes", i, MinSecret)
		}
		m := hmac.New(sha256.New, []byte(sec))
		m.Write([]byte(linkKeyLabel))
		s.keys = append(s.keys, m.Sum(nil))
	}
	return s, nil
}

// Sign returns the token for c: version, body and MAC, base64url without
// padding, so it fits a URL path segment as it is.
func (s *Signer) Sign(c Claims) string {
	c.Expires = c.Expires.UTC().Truncate(time.Second)
	body, _ := json.Marshal(c) // plain data: cannot fail
	enc := tokenVersion + base64.RawURLEncoding.EncodeToString(body)
	return enc + "." + base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], enc))
}

func (s *Signer) mac(key []byte, enc string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(enc))
	return m.Sum(nil)
}

// maxToken bounds what Verify reads: real tokens are a few hundred bytes.
const maxToken = 2048

// strict decodes base64url as Sign wrote it and no other way: unused
// bits must be zero, so a link has one spelling.
var strict = base64.RawURLEncoding.Strict()

// notTokenRune is anything Sign never writes (base64url and the dot):
// the decoder would skip a line break, so one link could be spelt many
// ways.
func notTokenRune(r rune) bool {
	return !(r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.')
}

// Verify checks token against every key and its expiry at now. It
// returns the claims only when the MAC matches; an expired link is
// ErrExpired with its claims, so the page can say what it was for.
func (s *Signer) Verify(token string, now time.Time) (Claims, error) {
	if len(token) > maxToken || !strings.HasPrefix(token, tokenVersion) || strings.IndexFunc(token, notTokenRune) >= 0 {
		return Claims{}, ErrMalformed
	}
	enc, sig, ok := strings.Cut(token, ".")
	if !ok {
		return Claims{}, ErrMalformed
	}
	got, err := strict.DecodeString(sig)
	if err != nil {
		return Claims{}, ErrMalformed
	}
	valid := false
	for _, k := range s.keys {
		if hmac.Equal(got, s.mac(k, enc)) {
			valid = true
			break
		}
	}
	if !valid {
		return Claims{}, ErrMalformed
	}
	body, err := strict.DecodeString(enc[len(tokenVersion):])
	if err != nil {
		return Claims{}, ErrMalformed
	}
	var c Claims
	if err := json.Unmarshal(body, &c); err != nil || c.ApprovalID == "" || c.Member == "" || c.Tenant == "" ||
		(c.Action != "" && c.Action != ActionApprove && c.Action != ActionDeny) || (c.Via != "" && c.Via != ViaChat) || c.Revision < 1 || c.Expires.IsZero() {
		return Claims{}, ErrMalformed
	}
	if !now.Before(c.Expires) {
		return c, ErrExpired
	}
	return c, nil
}

// formLabel separates a page's form field from the link's own MAC.
const formLabel = "form:"

// FormCheck is the value the page's form carries back: a MAC of the
// token, so that a POST can only come from a page the bot rendered for
// that link (a request forged elsewhere cannot know it without the
// page), bound to the link and nothing else.
func (s *Signer) FormCheck(token string) string {
	return base64.RawURLEncoding.EncodeToString(s.mac(s.keys[0], formLabel+token))
}

// CheckForm reports whether v is the form check of token under any key.
func (s *Signer) CheckForm(token, v string) bool {
	got, err := strict.DecodeString(v)
	if err != nil || strings.IndexFunc(v, notTokenRune) >= 0 {
		return false
	}
	for _, k := range s.keys {
		if hmac.Equal(got, s.mac(k, formLabel+token)) {
			return true
		}
	}
	return false
}
