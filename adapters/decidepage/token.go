package decidepage

import (
	"errors"
	"fmt"
	"time"

	"approvalsbot/internal/seal"
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

// Signer makes and checks decision links (internal/seal, under the
// links' own key label). The first secret signs, any verifies, so a
// secret can rotate. It is immutable and safe for concurrent use.
type Signer struct {
	seal *seal.Sealer
}

// linkKeyLabel separates decision links' keys from any other use of the
// same secret: each configured secret is turned into a key of its own.
const linkKeyLabel = "approvalsbot decision link v1"

// MinSecret is the shortest secret NewSigner takes: an HMAC-SHA256 key's
// size, as the configuration's decoder checks at load.
const MinSecret = seal.MinSecret

// NewSigner takes the configured link secrets, the signing one first.
func NewSigner(secrets []string) (*Signer, error) {
	s, err := seal.New(secrets, linkKeyLabel)
	if err != nil {
		return nil, fmt.Errorf("decidepage: %w", err)
	}
	return &Signer{seal: s}, nil
}

// Sign returns the token for c: version, body and MAC, base64url without
// padding, so it fits a URL path segment as it is.
func (s *Signer) Sign(c Claims) string {
	c.Expires = c.Expires.UTC().Truncate(time.Second)
	return s.seal.Seal(c)
}

// Verify checks token against every key and its expiry at now. It
// returns the claims only when the MAC matches; an expired link is
// ErrExpired with its claims, so the page can say what it was for.
func (s *Signer) Verify(token string, now time.Time) (Claims, error) {
	var c Claims
	if !s.seal.Open(token, &c) || c.ApprovalID == "" || c.Member == "" || c.Tenant == "" ||
		(c.Action != "" && c.Action != ActionApprove && c.Action != ActionDeny) || (c.Via != "" && c.Via != ViaChat) ||
		c.Revision < 1 || c.Expires.IsZero() {
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
func (s *Signer) FormCheck(token string) string { return s.seal.Check(formLabel + token) }

// CheckForm reports whether v is the form check of token under any key.
func (s *Signer) CheckForm(token, v string) bool { return s.seal.Checks(formLabel+token, v) }
