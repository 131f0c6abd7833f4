package passkey

import (
	"fmt"
	"strings"
	"time"

	"approvalsbot/internal/seal"
)

// The labels that turn each link secret into a key of its own per use,
// apart from the decision page's ("approvalsbot decision link v1") and
// from each other, so nothing signed for one use verifies for another.
const (
	enrolKeyLabel   = "approvalsbot passkey enrol v1"
	formKeyLabel    = "approvalsbot passkey form v1"
	bindingKeyLabel = "approvalsbot passkey binding v1"
)

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
	enrol *seal.Sealer
	now   func() time.Time
}

// NewLinks takes the bot's public URL (whose host must be a name, as
// RelyingParty says), the link secrets (the signing one first) and a
// clock (nil: time.Now).
func NewLinks(publicURL string, secrets []string, now func() time.Time) (*Links, error) {
	if _, _, err := RelyingParty(publicURL); err != nil {
		return nil, err
	}
	enrol, err := sealNew(secrets, enrolKeyLabel)
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
	return l.base + EnrolPath + l.enrol.Seal(enrolClaims{Tenant: tenantID, Member: user, Expires: exp}), exp
}

// EnrolLink is Links.EnrolLink, for the service's own URL and secrets.
func (s *Service) EnrolLink(tenantID, user string) (string, time.Time) {
	return s.links.EnrolLink(tenantID, user)
}

// openEnrol checks an enrolment token at now.
func (s *Service) openEnrol(tok string) (enrolClaims, error) {
	var c enrolClaims
	if !s.links.enrol.Open(tok, &c) || c.Tenant == "" || c.Member == "" || c.Expires.IsZero() {
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
	return s.binds.Seal(sealedBinding{Tenant: b.Tenant, ApprovalID: b.ApprovalID, Revision: b.Revision, Digest: b.Digest,
		Member: b.Member, Expires: expires.UTC().Truncate(time.Second)})
}

// openBinding checks a sealed binding at now.
func (s *Service) openBinding(tok string) (Binding, error) {
	var c sealedBinding
	if !s.binds.Open(tok, &c) || c.Expires.IsZero() {
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

// sealNew is seal.New with the package's name on its errors.
func sealNew(secrets []string, label string) (*seal.Sealer, error) {
	s, err := seal.New(secrets, label)
	if err != nil {
		return nil, fmt.Errorf("passkey: %w", err)
	}
	return s, nil
}
