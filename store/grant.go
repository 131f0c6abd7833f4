package store

import (
	"errors"
	"time"
)

// Grants: the "Approve and allow…" a person gave with a decision, as the
// bot minted and sent it (docs/protocol.md#grants). The backend owns the
// rule and applies it; the store keeps what the bot needs to show it,
// count its uses, and post its end where it was made.

// Grant states.
const (
	// GrantPending: the decision carrying the grant is on its way.
	GrantPending = "pending"
	// GrantLive: the backend recorded the decision, and so the grant.
	GrantLive = "live"
	// GrantRefused: the backend refused the decision; the grant never lived.
	GrantRefused = "refused"
	// GrantRevoking: a person revoked it; the revocation is on its way.
	GrantRevoking = "revoking"
	// GrantRevoked: the backend ended it at a person's word.
	GrantRevoked = "revoked"
	// GrantExpired: its time ran out (or the backend said it had ended).
	GrantExpired = "expired"
)

// GrantStates lists every state, so tests cover each.
func GrantStates() []string {
	return []string{GrantPending, GrantLive, GrantRefused, GrantRevoking, GrantRevoked, GrantExpired}
}

// Grant is one grant the bot minted.
type Grant struct {
	ID         string // "g-…"
	Tenant     string
	ApprovalID string // the card that made it
	Revision   int
	Actor      string // the tenant user who gave it
	Scope      string // "call" or "values"
	Words      string // the scope in words, as shown
	Body       []byte // the grant as sent (JSON)
	State      string // GrantPending…
	CreatedAt  time.Time
	ExpiresAt  time.Time
	// UsesAllowed is the use cap; UsesSeen counts the uses reported.
	UsesAllowed, UsesSeen int
	LastUseAt             time.Time // zero: never used
	RevokedAt             time.Time // zero: not revoked
	RevokedBy             string
	// EndedPosted: its end (expiry, revocation, uses spent) was posted.
	EndedPosted bool
}

// GrantListParams selects a tenant's grants in States (every state when
// empty), soonest expiry first, then by id, at most Limit (0: 100).
type GrantListParams struct {
	Tenant string
	States []string
	Limit  int
}

// GrantListExpiredParams selects, across tenants, up to Limit live grants
// whose ExpiresAt is at or before Now, soonest first: those whose end is
// still to be posted.
type GrantListExpiredParams struct {
	Now   time.Time
	Limit int
}

var errGrantKey = errors.New("no id, tenant, approval or actor")

// CheckGrant reports what is wrong with g as GrantInsert takes it.
func CheckGrant(g *Grant) error {
	switch {
	case g.ID == "" || g.Tenant == "" || g.ApprovalID == "" || g.Actor == "":
		return errGrantKey
	case g.Scope != "call" && g.Scope != "values":
		return errors.New("scope is neither call nor values")
	case g.CreatedAt.IsZero() || !g.ExpiresAt.After(g.CreatedAt):
		return errors.New("expires is not after created")
	case g.UsesAllowed < 1:
		return errors.New("no use allowed")
	case len(g.Body) == 0:
		return errors.New("no body")
	}
	for _, s := range GrantStates() {
		if g.State == s {
			return nil
		}
	}
	return errors.New("unknown state")
}
