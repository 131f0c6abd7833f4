package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
)

// Revoking, listing and ending grants: /approvals grants lists a tenant's
// live grants with a Revoke each; a Revoke is recorded before it is
// answered and reaches the backend through the outbox, once; a grant whose
// time ran out is posted as ended where it was made, by the tick.

// GrantRevoker is a backend that ends grants (docs/protocol.md#grants).
type GrantRevoker interface {
	RevokeGrant(ctx context.Context, c RevokeCall) (RevokeAnswer, error)
}

// RevokeCall asks the backend to end one grant.
type RevokeCall struct {
	GrantID, Actor, Surface, User string
	IdempotencyKey                string // the same on every retry
}

// RevokeOutcome is the backend's answer to a revocation.
type RevokeOutcome string

// Revocation outcomes.
const (
	RevokeRevoked      RevokeOutcome = "revoked"
	RevokeAlreadyEnded RevokeOutcome = "already_ended"
	RevokeNotFound     RevokeOutcome = "not_found"
)

// RevokeAnswer is what the backend said to a revocation.
type RevokeAnswer struct {
	Outcome RevokeOutcome
	Message string
}

// KindRevoke sends a person's revocation of a grant to the backend.
const KindRevoke = "grant_revoke"

// revokePayload is a revocation row's payload: who revoked, where.
type revokePayload struct {
	GrantID string `json:"grant_id"`
	Actor   string `json:"actor"`
	Surface string `json:"surface"`
	User    string `json:"user,omitempty"`
}

// liveStates are the states /approvals grants lists.
var liveStates = []string{store.GrantLive, store.GrantRevoking}

// ListedGrant is one grant as /approvals grants shows it.
type ListedGrant struct {
	ID, Actor, Words string
	// UsesLeft counts the uses the backend has not reported yet.
	UsesLeft int
	// Expires and LastUse are worded in the tenant's zone; LastUse ""
	// for never.
	Expires, LastUse string
	// Revoking: a revocation is on its way; no Revoke is offered.
	Revoking bool
}

// GrantStore is what ListGrants reads; store.Store satisfies it.
type GrantStore interface {
	GrantList(ctx context.Context, p store.GrantListParams) ([]*store.Grant, error)
}

// ListGrants lists the tenant's live grants the bot knows, soonest expiry
// first, those past their time left out (the tick ends them); failed true
// when the store could not be read (logged by the caller).
func ListGrants(ctx context.Context, st GrantStore, tenantID string, zone *time.Location, now time.Time) ([]ListedGrant, error) {
	gs, err := st.GrantList(ctx, store.GrantListParams{Tenant: tenantID, States: liveStates, Limit: ListMax})
	if err != nil {
		return nil, fmt.Errorf("list grants of %s: %w", tenantID, err)
	}
	if zone == nil {
		zone = time.UTC
	}
	var out []ListedGrant
	for _, g := range gs {
		if !g.ExpiresAt.After(now) {
			continue
		}
		l := ListedGrant{ID: g.ID, Actor: g.Actor, Words: g.Words, UsesLeft: max(0, g.UsesAllowed-g.UsesSeen),
			Expires: g.ExpiresAt.In(zone).Format(timeLayout), Revoking: g.State == store.GrantRevoking}
		if !g.LastUseAt.IsZero() {
			l.LastUse = g.LastUseAt.In(zone).Format(timeLayout)
		}
		out = append(out, l)
	}
	return out, nil
}

// GrantLine words a listed grant on one line, as every surface lists it:
// "g-… · user:kevin · for 1 h: … · 3 uses left · until … · last used …".
func GrantLine(g ListedGrant) string {
	line := fmt.Sprintf("%s · %s · %s · %d %s left · until %s", g.ID, g.Actor, g.Words, g.UsesLeft,
		map[bool]string{true: "use", false: "uses"}[g.UsesLeft == 1], g.Expires)
	if g.LastUse != "" {
		line += " · last used " + g.LastUse
	} else {
		line += " · not used yet"
	}
	if g.Revoking {
		line += " · being revoked"
	}
	return line
}

// timeLayout words a grant's times in listings.
const timeLayout = "2006-01-02 15:04 MST"

// RevokeGrant records a member's Revoke of a grant and queues the call
// that tells the backend, in one transaction; the Reason says what
// became of it. The grant's tenant comes from the store, never from the
// click; only a member of it who may decide revokes.
func (s *Service) RevokeGrant(ctx context.Context, grantID string, who Person) (say.Reason, error) {
	ctx = ForPerson(ctx)
	if !approval.GrantIDPattern.MatchString(grantID) {
		return say.Reason{Kind: say.GrantUnknown, Message: "(not a grant id)"}, nil
	}
	known, err := s.store.GrantGet(ctx, grantID)
	if errors.Is(err, store.ErrNotFound) {
		return say.Reason{Kind: say.GrantUnknown, Message: grantID}, nil
	}
	if err != nil {
		return say.Reason{}, fmt.Errorf("read grant %s: %w", grantID, err)
	}
	tenantID := known.Tenant
	_, m, why := s.member(tenantID, who, say.Decision)
	if !why.IsZero() {
		return why, nil
	}
	now := s.clock.Now()
	var res say.Reason
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		g, err := tx.GrantGetForUpdate(ctx, grantID)
		if errors.Is(err, store.ErrNotFound) || err == nil && g.Tenant != tenantID {
			res = say.Reason{Kind: say.GrantUnknown, Message: grantID}
			return nil
		}
		if err != nil {
			return err
		}
		switch {
		case g.State == store.GrantPending:
			// Revoked before the backend has it, the revocation could
			// overtake the grant and miss it: the person tries again.
			res = say.Reason{Kind: say.GrantInFlight, Message: grantID}
			return nil
		case g.State == store.GrantRevoking:
			res = say.Reason{Kind: say.GrantRevoking, Message: grantID}
			return nil
		case g.State != store.GrantLive, !g.ExpiresAt.After(now):
			state := g.State
			if state == store.GrantLive {
				state = store.GrantExpired
			}
			res = say.Reason{Kind: say.GrantEnded, Message: grantID, State: state}
			return nil
		}
		g.State, g.RevokedAt, g.RevokedBy = store.GrantRevoking, now, m.User
		if err := tx.GrantUpdate(ctx, g); err != nil {
			return err
		}
		body, _ := json.Marshal(revokePayload{GrantID: g.ID, Actor: m.User, Surface: who.Surface, User: who.User}) // plain data
		res = say.Reason{Kind: say.GrantRevoking, Message: grantID}
		return s.insert(ctx, tx, []store.OutboxInsertParams{{ID: s.newID(now), Tenant: g.Tenant, ApprovalID: g.ApprovalID,
			Kind: KindRevoke, Target: surfaceBackend, Payload: body, NotBefore: now, Now: now}})
	})
	if err != nil {
		return say.Reason{}, fmt.Errorf("record the revocation of %s: %w", grantID, err)
	}
	if res.Kind == say.GrantRevoking {
		s.Wake()
	}
	return res, nil
}

// clickRevoke is /approvals grants' Revoke as a click: the action's
// ApprovalID holds the grant's id. Recorded before it returns.
func (s *Service) clickRevoke(ctx context.Context, req ClickRequest) Clicked {
	ctx, cancel := context.WithTimeout(ctx, RecordBound)
	defer cancel()
	why, err := s.RevokeGrant(ctx, req.Action.ApprovalID, req.Person)
	if err != nil {
		s.log.Error("record a revocation", "surface", req.Person.Surface, "user", req.Person.User, "err", err.Error())
		return Clicked{Retry: true, Reason: failed(err, say.NotRecorded, say.Decision)}
	}
	return Clicked{Sent: why.Kind == say.GrantRevoking, Reason: why}
}

// performRevoke sends a revocation and applies the answer: the grant
// ends, and its end is posted where it was made, once.
func (s *Service) performRevoke(ctx context.Context, row *store.OutboxRow) error {
	rv, ok := s.backend.(GrantRevoker)
	if s.backend == nil || !ok {
		return Permanent(errors.New("no backend client that revokes grants"))
	}
	var p revokePayload
	if err := json.Unmarshal(row.Payload, &p); err != nil {
		return Permanent(fmt.Errorf("decode payload: %w", err))
	}
	g, err := s.store.GrantGet(ctx, p.GrantID)
	if err != nil {
		return fmt.Errorf("read grant %s: %w", p.GrantID, err)
	}
	if g.State != store.GrantRevoking {
		return nil // answered already (a repeat after a crash)
	}
	ans, err := rv.RevokeGrant(ctx, RevokeCall{GrantID: g.ID, Actor: p.Actor, Surface: p.Surface, User: p.User,
		IdempotencyKey: row.ID})
	if err != nil {
		return err // retried by the outbox until the backend answers
	}
	state, line := store.GrantRevoked, fmt.Sprintf("Grant %s (%s, %s) was revoked by %s: %s.", g.ID, g.Actor,
		grantTTLOf(g), p.Actor, g.Words)
	if ans.Outcome == RevokeAlreadyEnded || ans.Outcome == RevokeNotFound {
		state, line = store.GrantExpired, fmt.Sprintf("Grant %s (%s, %s) had already ended when %s revoked it.",
			g.ID, g.Actor, grantTTLOf(g), p.Actor)
	}
	return s.endGrant(context.WithoutCancel(ctx), g.ID, store.GrantRevoking, state, line)
}

// endGrant moves a grant from state from to state to and posts line in
// its threads, in one transaction; nothing when it moved on meanwhile.
func (s *Service) endGrant(ctx context.Context, id, from, to, line string) error {
	now := s.clock.Now()
	n := 0
	err := s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		n = 0
		g, err := tx.GrantGetForUpdate(ctx, id)
		if err != nil {
			return err
		}
		if g.State != from || g.EndedPosted {
			return nil
		}
		g.State, g.EndedPosted = to, true
		if err := tx.GrantUpdate(ctx, g); err != nil {
			return err
		}
		n, err = s.grantLines(ctx, tx, g, []string{line}, now)
		return err
	})
	if err != nil {
		return fmt.Errorf("end grant %s: %w", id, err)
	}
	if n > 0 {
		s.Wake()
	}
	return nil
}

// ExpireGrants posts the end of every live grant whose time ran out, in
// the thread where it was made, each once across replicas (the grant's
// row lock and state); it returns how many it ended. The tick calls it.
func (s *Service) ExpireGrants(ctx context.Context) (int, error) {
	ended := 0
	for range tickRounds {
		gs, err := s.store.GrantListExpired(ctx, store.GrantListExpiredParams{Now: s.clock.Now(), Limit: tickBatch})
		if err != nil {
			return ended, fmt.Errorf("list expired grants: %w", err)
		}
		for _, g := range gs {
			line := fmt.Sprintf("Grant %s (%s, %s) has expired: %s · %d of %d uses.", g.ID, g.Actor, grantTTLOf(g),
				g.Words, g.UsesSeen, g.UsesAllowed)
			if err := s.endGrant(ctx, g.ID, store.GrantLive, store.GrantExpired, line); err != nil {
				return ended, err
			}
			ended++
		}
		if len(gs) < tickBatch {
			break
		}
	}
	return ended, nil
}
