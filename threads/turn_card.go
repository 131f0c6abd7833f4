package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"approvalsbot/store"
	"approvalsbot/templates"
)

// One card per turn and target: the first member to be posted at a
// target posts the turn card; every other member's copy there is a post
// row pointing at the same message, so an edit of any member shows the
// whole turn again, and its replies go to the turn card's thread.

// withTurn fills c.Turn when c's approval is a call of a turn shown on
// one card: the backend supports turns, the turn has several calls, and
// no more than templates.MaxTurnRows (a longer turn keeps one card per
// call, which says why).
func (s *Service) withTurn(ctx context.Context, c *Card) error {
	a := c.Approval
	if !s.turnCards || a == nil || !a.InTurn() {
		return nil
	}
	if n := len(a.Turn.Members); n > templates.MaxTurnRows {
		c.turnTooMany = n
		return nil
	}
	members, err := s.turnOf(ctx, a)
	if err != nil {
		return err
	}
	t, served := s.tenants.Tenant(c.Tenant)
	in := &templates.TurnInput{Members: len(members)}
	for _, tm := range members {
		if tm.Row == nil {
			continue
		}
		mc, err := s.cardOf(tm.Row, tm.Req, c.Now)
		if err != nil {
			return Permanent(fmt.Errorf("card of turn member %s: %w", tm.ID, err))
		}
		block := "the tenant is not served."
		if served && t != nil {
			block = s.turnApproveBlock(t, tm)
		}
		in.Rows = append(in.Rows, templates.TurnRowInput{Input: mc.Input(), Block: block})
		if in.Key == "" {
			in.Key = tm.ID
		}
	}
	c.Turn = in
	return nil
}

// turnCardOr is c with its turn filled, for the clicked copy a click
// answers with; nil (the person is told in words) when the turn cannot
// be read: a card of one call must not replace the turn card.
func (s *Service) turnCardOr(ctx context.Context, c *Card) *Card {
	if c == nil {
		return nil
	}
	if err := s.withTurn(ctx, c); err != nil {
		s.log.Warn("build the clicked turn card", "tenant", c.Tenant, "approval_id", c.Approval.ID, "err", err.Error())
		return nil
	}
	return c
}

// joinTurnCard puts a turn member's copy at row's target onto the turn
// card already there: it edits that message to show the member, and
// returns the post that points at it. nil, nil when card is no turn card
// or this member is to post it. A member that is not the first here
// waits for the first's card (as a reask waits for its thread), at most
// orphanAfter, then posts its own (wait: not yet).
func (s *Service) joinTurnCard(ctx context.Context, surface Surface, row *store.OutboxRow, p rowPayload, card Card) (*store.Post, bool, error) {
	if card.Turn == nil || len(card.Turn.Rows) == 0 {
		return nil, false, nil
	}
	owner, err := s.claimTurnCard(ctx, card.Approval.Turn.Members, row.ApprovalID, row.Target)
	if err != nil {
		return nil, false, err
	}
	posts, err := s.store.PostList(ctx, owner)
	if err != nil {
		return nil, false, fmt.Errorf("list posts of turn member %s: %w", owner, err)
	}
	var root *store.Post
	for _, post := range posts {
		if post.Target == row.Target && (root == nil || post.Revision < root.Revision) {
			root = post
		}
	}
	now := s.clock.Now()
	if root == nil {
		if owner == row.ApprovalID || now.Sub(row.CreatedAt) >= orphanAfter {
			return nil, false, nil // this call posts the turn card here
		}
		return nil, true, nil // the owner's card is still on its way
	}
	if err := surface.Edit(ctx, EditRequest{Post: RefOf(root), Card: card}); err != nil {
		return nil, false, err
	}
	return &store.Post{ApprovalID: row.ApprovalID, Target: row.Target, Revision: p.Revision,
		Channel: root.Channel, Ref: root.Ref, ThreadRef: root.ThreadRef, CreatedAt: now}, false, nil
}

// claimTurnCard says which call of the turn posts the turn card at
// target: the one that claimed it first. Every member the store holds is
// locked, in id order, and read for a claim; with none, the call id
// claims it. Two calls claiming at once lock each other's rows, so the
// later sees the earlier's claim: one card per turn and place, across
// replicas.
func (s *Service) claimTurnCard(ctx context.Context, members []string, id, target string) (string, error) {
	ids := slices.Clone(members)
	slices.Sort(ids)
	owner := ""
	err := s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		owner = ""
		var own *store.Approval
		var ownFz Frozen
		for _, m := range ids {
			row, err := tx.ApprovalGetForUpdate(ctx, m)
			if errors.Is(err, store.ErrNotFound) {
				continue
			}
			if err != nil {
				return err
			}
			fz, err := frozenOf(row)
			if err != nil {
				return err
			}
			if owner == "" && slices.Contains(fz.TurnCards, target) {
				owner = m
			}
			if m == id {
				own, ownFz = row, fz
			}
		}
		if owner != "" {
			return nil
		}
		if own == nil {
			return fmt.Errorf("turn member %s: %w", id, store.ErrNotFound)
		}
		owner = id
		ownFz.TurnCards = append(ownFz.TurnCards, target)
		plan, err := json.Marshal(ownFz)
		if err != nil {
			return fmt.Errorf("encode plan of %s: %w", id, err)
		}
		own.Plan = plan
		return tx.ApprovalUpsert(ctx, own)
	})
	if err != nil {
		return "", fmt.Errorf("claim the turn card at %s: %w", target, err)
	}
	return owner, nil
}
