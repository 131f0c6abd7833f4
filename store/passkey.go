package store

import (
	"errors"
	"time"
)

// Passkeys: the WebAuthn credentials tenant members enrolled, and the
// single-use challenges the bot issued for them (adapters/passkey owns
// what the records hold; the store keeps them, moves a signature count
// forward only, and hands a challenge out once).

// Sentinel errors of the passkey methods.
var (
	// ErrExists: PasskeyAdd of a credential id already held (by anyone).
	ErrExists = errors.New("store: already exists")
	// ErrSignCount: PasskeyUse with a signature count that does not move
	// the stored one forward, the mark of a cloned authenticator. Nothing
	// was changed.
	ErrSignCount = errors.New("store: signature count did not increase")
)

// Passkey is one enrolled credential of a tenant member.
type Passkey struct {
	ID     string // the credential id, unpadded base64url
	Tenant string
	Member string // the tenant user id ("user:kevin")
	Name   string // what the member calls it
	// Credential is the verified credential record (JSON, owned by the
	// passkey package).
	Credential []byte
	SignCount  uint32
	CreatedAt  time.Time
	LastUsedAt time.Time // zero: never used
}

// PasskeyAddParams enrols one credential.
type PasskeyAddParams struct {
	ID, Tenant, Member, Name string
	Credential               []byte
	SignCount                uint32
	Now                      time.Time
}

// Check reports what is wrong with p, before the database is touched.
func (p PasskeyAddParams) Check() error {
	switch {
	case p.ID == "" || p.Tenant == "" || p.Member == "":
		return errPasskeyKey
	case len(p.Credential) == 0:
		return errors.New("no credential")
	case p.Now.IsZero():
		return errNoNow
	}
	return nil
}

// PasskeyListParams selects passkeys: a member's, or with Member empty
// every member's of Tenant.
type PasskeyListParams struct {
	Tenant string // required
	Member string
}

// PasskeyRemoveParams names one member's passkey.
type PasskeyRemoveParams struct {
	Tenant, Member, ID string
}

// PasskeyUseParams records one verified assertion.
type PasskeyUseParams struct {
	Tenant, Member, ID string
	// SignCount is the count the assertion carried.
	SignCount uint32
	Now       time.Time
}

// The purposes of a passkey challenge.
const (
	// PurposeApprove: an assertion that approves one revision of one
	// approval, as one member, having seen one digest.
	PurposeApprove = "approve"
	// PurposeEnrol: a member's new credential.
	PurposeEnrol = "enrol"
)

// PasskeyChallenge is one challenge issued, with what it is bound to.
type PasskeyChallenge struct {
	ID         string // the SHA-256 (hex) of the reference the browser carries
	Purpose    string // PurposeApprove or PurposeEnrol
	Tenant     string
	Member     string
	ApprovalID string // "" for PurposeEnrol
	Revision   int    // 0 for PurposeEnrol
	Digest     string
	// Session is the ceremony's session data (JSON, owned by the passkey
	// package).
	Session   []byte
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    time.Time // zero while unused
}

// PasskeyChallengeTakeParams takes one challenge.
type PasskeyChallengeTakeParams struct {
	ID  string
	Now time.Time
}

var (
	errPasskeyKey = errors.New("no id, tenant or member")
	errNoNow      = errors.New("no time")
)

// CheckChallenge reports what is wrong with c as PasskeyChallengeAdd
// takes it.
func CheckChallenge(c *PasskeyChallenge) error {
	switch {
	case c.ID == "" || c.Tenant == "" || c.Member == "":
		return errPasskeyKey
	case c.Purpose != PurposeApprove && c.Purpose != PurposeEnrol:
		return errors.New("unknown purpose")
	case c.Purpose == PurposeApprove && (c.ApprovalID == "" || c.Revision < 1):
		return errors.New("an approval's challenge names no approval or revision")
	case len(c.Session) == 0:
		return errors.New("no session")
	case c.CreatedAt.IsZero() || !c.ExpiresAt.After(c.CreatedAt):
		return errors.New("expires is not after created")
	case !c.UsedAt.IsZero():
		return errors.New("a new challenge is unused")
	}
	return nil
}
