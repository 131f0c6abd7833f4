package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// Grants ("Approve and allow…", docs/protocol.md#grants). A person may
// approve a call and, with the same decision, allow the backend to let the
// same kind of call through for a while: never broader than the card
// showed. The bot approves nothing itself: the grant rides the person's
// decision to the backend, which owns the rule, applies it, and reports
// each use as approval.auto_granted naming the grant. The core decides
// whether a grant is offered and refuses one a surface should not have
// sent (a crafted button, a call the grant may not cover).

// GrantAsk is what the grant dialog submits: the scope chosen, for how
// long, how many uses. The core checks each against what it offers.
type GrantAsk struct {
	Scope approval.GrantScope
	TTL   time.Duration
	Uses  int
}

// GrantOffer is what the grant dialog offers for one call, in words the
// surface shows as they are (redacted here).
type GrantOffer struct {
	// Call words the "this exact call" scope; Values the "these values"
	// scope, "" when it is not offered (ValuesWhyNot says why).
	Call, Values, ValuesWhyNot string
	// TTLs and Uses are the presets under the tenant's caps, smallest first.
	TTLs []time.Duration
	Uses []int
}

// Grant is a grant as the backend is told of it, minted by the bot.
type Grant struct {
	ID         string              `json:"id"`
	Scope      approval.GrantScope `json:"scope"`
	Function   string              `json:"function"`
	ArgsSHA256 string              `json:"args_sha256,omitempty"` // scope call
	Pins       []approval.GrantPin `json:"pins,omitempty"`        // scope values
	Free       []string            `json:"free,omitempty"`        // scope values
	ExpiresAt  time.Time           `json:"expires_at"`
	Uses       int                 `json:"uses"`
	// Words is the scope as the dialog worded it; TTL the lifetime chosen.
	// Neither is sent: the backend is told the terms, not the words.
	Words string        `json:"words"`
	TTL   time.Duration `json:"ttl"`
}

// grantsOffered reports whether the tenant and its backend offer grants
// at all, and which tenant rule applies.
func (s *Service) grantsOffered(t *tenant.Tenant) bool {
	return s.grants && t != nil && t.Grants.Enabled
}

// grantBar is why a call admits no grant whoever decides it, in the
// person's words; the zero Reason when one may be offered. It reads the
// tenant as configured now and the call's frozen quorum (nil fz: none).
func (s *Service) grantBar(t *tenant.Tenant, a *approval.Approval, fz *Frozen) say.Reason {
	if !s.grantsOffered(t) {
		return say.Reason{Kind: say.GrantsOff, Tenant: a.Tenant}
	}
	barred := func(why string) say.Reason { return say.Reason{Kind: say.GrantBarred, Message: why} }
	if bar := a.GrantBar(t.Grants.Destructive); bar != approval.GrantOK {
		return barred(string(bar))
	}
	if a.DecidedByContentHolders() {
		return barred("it comes from a private chat")
	}
	if a.ContentRestricted() {
		// Its content is shown only privately, to content holders one at
		// a time: no shared card says what a grant would allow.
		return barred("its content is restricted")
	}
	if t.QuorumFor(a.Call.Function) != nil || (fz != nil && fz.Quorum != nil) {
		// A grant must not get around a quorum: the next call would need
		// one person's yes only.
		return barred("a quorum decides it")
	}
	if tenant.PasskeyRequired(t.Passkeys, PasskeyFacts(a)) {
		return barred("approving it needs a passkey")
	}
	return say.Reason{}
}

// grantsOnCard reports whether the card of req offers "Approve and
// allow…": whoever clicks it is checked again (grantBar).
func (s *Service) grantsOnCard(tenantID string, req *approval.Approval, fz *Frozen) bool {
	if !s.grants || req == nil {
		return false
	}
	t, ok := s.tenants.Tenant(tenantID)
	return ok && s.grantBar(t, req, fz).IsZero()
}

// grantOffer is the dialog's offer for the call under the tenant's rule.
func grantOffer(t *tenant.Tenant, a *approval.Approval) GrantOffer {
	o := GrantOffer{TTLs: t.Grants.TTLs(), Uses: t.Grants.Uses()}
	o.Call = approval.GrantTerms{Scope: approval.GrantScopeCall, Function: a.Call.Function}.ScopeWords()
	pins, why := a.GrantPins()
	if why != "" {
		o.ValuesWhyNot = why
		return o
	}
	o.Values = approval.GrantTerms{Scope: approval.GrantScopeValues, Function: a.Call.Function, Pins: pins,
		Free: freeFor(t, a)}.ScopeWords()
	return o
}

// freeFor is the arguments the tenant leaves free for the call's function
// that are not role-marked: a pinned argument is never free.
func freeFor(t *tenant.Tenant, a *approval.Approval) []string {
	var out []string
	for _, f := range t.Grants.FreeFor(a.Call.Function) {
		if !slices.ContainsFunc(a.Roles, func(r approval.Role) bool { return r.Argument == f }) {
			out = append(out, f)
		}
	}
	return out
}

// mintGrant is the grant ask makes of the call, checked against the offer;
// ok false when the ask is not one offered (a crafted submission).
func mintGrant(t *tenant.Tenant, a *approval.Approval, ask GrantAsk, now time.Time) (*Grant, bool) {
	if !t.Grants.AllowsTTL(ask.TTL) || !t.Grants.AllowsUses(ask.Uses) {
		return nil, false
	}
	terms := approval.GrantTerms{Scope: ask.Scope, Function: a.Call.Function, TTL: ask.TTL, Uses: ask.Uses}
	g := &Grant{Scope: ask.Scope, Function: a.Call.Function, ExpiresAt: now.Add(ask.TTL).UTC().Truncate(time.Second),
		Uses: ask.Uses, TTL: ask.TTL}
	switch ask.Scope {
	case approval.GrantScopeCall:
		g.ArgsSHA256 = a.Call.ArgsSHA256
	case approval.GrantScopeValues:
		pins, why := a.GrantPins()
		if why != "" {
			return nil, false
		}
		g.Pins, g.Free = pins, freeFor(t, a)
		terms.Pins, terms.Free = g.Pins, g.Free
	default:
		return nil, false
	}
	g.Words = terms.Words()
	return g, true
}

// grantRow is the store's row of a grant just minted for decision d.
func grantRow(g *Grant, tenantID, approvalID string, d deciding) (*store.Grant, error) {
	body, err := json.Marshal(g)
	if err != nil {
		return nil, err
	}
	return &store.Grant{ID: g.ID, Tenant: tenantID, ApprovalID: approvalID, Revision: d.Revision, Actor: d.Actor,
		Scope: string(g.Scope), Words: g.Words, Body: body, State: store.GrantPending, CreatedAt: d.At,
		ExpiresAt: g.ExpiresAt, UsesAllowed: g.Uses}, nil
}

// settleGrant makes the grant a decision carried live when the backend
// recorded the approval, and refused otherwise: a grant whose decision
// did not land never lives.
func settleGrant(ctx context.Context, tx store.Tx, g *Grant, live bool) error {
	cur, err := tx.GrantGetForUpdate(ctx, g.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if cur.State != store.GrantPending {
		return nil // settled already (a repeat after a crash)
	}
	cur.State = store.GrantRefused
	if live {
		cur.State = store.GrantLive
	}
	return tx.GrantUpdate(ctx, cur)
}

// grantUse records one use of a grant the bot made, reported by
// approval.auto_granted (ev, accepted once by its id in this transaction),
// and posts it in the threads of the card that made the grant; handled
// false when the event names no grant of the tenant's (the caller falls
// back to the audit notice).
func (s *Service) grantUse(ctx context.Context, tx store.Tx, ev *approval.Event, now time.Time) (int, bool, error) {
	ag := ev.AutoGranted
	if ag.GrantID == "" {
		return 0, false, nil
	}
	g, err := tx.GrantGetForUpdate(ctx, ag.GrantID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("read grant %s: %w", ag.GrantID, err)
	}
	if g.Tenant != ev.Tenant {
		return 0, false, nil // another tenant's: as unknown
	}
	g.UsesSeen++
	g.LastUseAt = now
	text := fmt.Sprintf("Allowed by grant %s (%s, %s): %s · %d of %d uses", g.ID, g.Actor, grantTTLOf(g),
		approval.RedactText(ag.Call.Function), g.UsesSeen, g.UsesAllowed)
	if g.State != store.GrantLive && g.State != store.GrantPending {
		// The backend used a grant the bot holds as ended: said, not hidden.
		text = "Warning: " + text + fmt.Sprintf(" (the bot holds this grant as %s)", g.State)
	}
	if g.UsesSeen > g.UsesAllowed {
		text = "Warning: " + text + " (more uses than the grant allows)"
	}
	lines := []string{text}
	if g.UsesSeen == g.UsesAllowed && (g.State == store.GrantLive || g.State == store.GrantPending) {
		g.State, g.EndedPosted = store.GrantExpired, true
		lines = append(lines, fmt.Sprintf("Grant %s has used all %d uses; it has ended.", g.ID, g.UsesAllowed))
	}
	if err := tx.GrantUpdate(ctx, g); err != nil {
		return 0, false, err
	}
	n, err := s.grantLines(ctx, tx, g, lines, now)
	return n, true, err
}

// grantTTLOf words a stored grant's lifetime as the dialog did.
func grantTTLOf(g *store.Grant) string {
	var sent Grant
	if json.Unmarshal(g.Body, &sent) == nil && sent.TTL > 0 {
		return approval.TTLWords(sent.TTL)
	}
	return approval.TTLWords(g.ExpiresAt.Sub(g.CreatedAt).Round(time.Minute))
}

// grantLines enqueues lines as replies in each thread of the card that
// made g (its frozen post targets); a card long pruned has none.
func (s *Service) grantLines(ctx context.Context, tx store.Tx, g *store.Grant, lines []string, now time.Time) (int, error) {
	row, err := tx.ApprovalGetForUpdate(ctx, g.ApprovalID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read approval %s of grant %s: %w", g.ApprovalID, g.ID, err)
	}
	fz, err := frozenOf(row)
	if err != nil {
		return 0, err
	}
	var rows []store.OutboxInsertParams
	for _, text := range lines {
		body, _ := json.Marshal(rowPayload{Text: text, Thread: string(templates.ThreadAutoGranted)}) // plain data
		for _, t := range fz.Post {
			rows = append(rows, store.OutboxInsertParams{ID: s.newID(now), Tenant: row.Tenant, ApprovalID: row.ID,
				Kind: KindReply, Target: t, Payload: body, NotBefore: now, Now: now})
		}
	}
	if len(rows) == 0 {
		return 0, nil
	}
	return len(rows), s.insert(ctx, tx, rows)
}
