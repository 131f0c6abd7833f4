package threads

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// KindPush sends one push notice to a member; the row's target is the
// member's user id, never their address, which is a secret of the
// configuration and read when the notice goes.
const KindPush = "push"

// Pusher sends push notices; package notify/push implements it.
type Pusher interface {
	// Push sends one notice. Its error classifies as a surface's does
	// (DeliveryError): a 429's wait, a refusal no retry can fix.
	Push(ctx context.Context, req PushRequest) error
}

// PushRequest is one notice to one member.
type PushRequest struct {
	// To is the member's push address as configured now.
	To         tenant.Push
	Tenant     string
	ApprovalID string
	Revision   int
	// Member is the tenant user the notice is for.
	Member string
	Notice templates.PushNotice
	// Key names the notice (its outbox row): a repeat after a crash
	// carries the same, so a receiver can tell.
	Key string
}

// errNoPusher: a push is due but nothing can send it.
var errNoPusher = errors.New("no push sender is configured")

// pushable keeps the members a push step reaches who can be pushed to
// now: a member of the tenant who may decide and has a push address.
// bot check refuses a step that names anyone else; a reload since, or a
// quorum's approvers, can still bring one here, who is skipped, logged.
func (s *Service) pushable(row *store.Approval, targets []ladder.Target) []ladder.Target {
	if len(targets) == 0 {
		return nil
	}
	t, _ := s.tenants.Tenant(row.Tenant)
	return slices.DeleteFunc(slices.Clone(targets), func(tg ladder.Target) bool {
		if why := s.unpushable(t, tg.ID); why != "" {
			s.log.Info("a push step skips "+why, "tenant", row.Tenant, "approval_id", row.ID, "member", tg.ID)
			return true
		}
		return false
	})
}

// unpushable says why a push cannot reach the member with user id user,
// in the words config uses for a member without an address to mail; ""
// when it can.
func (s *Service) unpushable(t *tenant.Tenant, user string) string {
	m, ok := tenant.Member{}, false
	if t != nil {
		m, ok = t.MemberByUser(user)
	}
	switch {
	case !ok:
		return "a member the tenant no longer has"
	case !m.Role.CanDecide():
		return "a member who may no longer decide"
	case m.Push.IsZero():
		return "a member who has no push address to be sent a push"
	}
	return ""
}

// sendPush performs a push row: the notice of the call as it stands (a
// reask since included) to the member's push address as configured now,
// with their decision link when the tenant gives them one.
func (s *Service) sendPush(ctx context.Context, row *store.OutboxRow, p rowPayload) error {
	t, _ := s.tenants.Tenant(row.Tenant)
	if why := s.unpushable(t, row.Target); why != "" {
		// Configured away since the step: nothing to send, nothing to retry.
		s.log.Info("a push skips "+why, "tenant", row.Tenant, "approval_id", row.ApprovalID, "member", row.Target)
		return nil
	}
	m, _ := t.MemberByUser(row.Target)
	if s.pusher == nil {
		return Permanent(errNoPusher)
	}
	a, err := s.store.ApprovalGet(ctx, row.ApprovalID)
	if err != nil {
		return fmt.Errorf("read approval: %w", err)
	}
	revision := p.Revision
	if a.Revision > revision {
		switch _, err := s.store.RevisionGet(ctx, row.ApprovalID, a.Revision); {
		case err == nil:
			revision = a.Revision
		case !errors.Is(err, store.ErrNotFound):
			return fmt.Errorf("read revision %d: %w", a.Revision, err)
		}
	}
	card, err := s.card(ctx, row.ApprovalID, revision)
	if err != nil {
		return err
	}
	posts, err := s.store.PostList(ctx, row.ApprovalID)
	if err != nil {
		return fmt.Errorf("list posts: %w", err)
	}
	deadline := card.Frozen.Plan.Deadline
	if deadline.IsZero() && card.Approval != nil && card.Approval.Deadline != nil {
		deadline = *card.Approval.Deadline
	}
	notice := templates.Push(templates.Build(card.MailInput()), templates.PushInput{
		Deadline: deadline,
		Zone:     card.Frozen.zone(),
		Link:     pushLink(MemberLink(s.links, t, m, card)),
		ActAs:    m.User,
		Thread:   slices.ContainsFunc(posts, func(p *store.Post) bool { return !isMailPost(p) }),
	})
	return s.pusher.Push(ctx, PushRequest{To: m.Push, Tenant: row.Tenant, ApprovalID: row.ApprovalID,
		Revision: revision, Member: m.User, Notice: notice, Key: row.ID})
}

// pushLink is the link a notice opens: the member's decision page, where
// they give any answer the tenant and the call allow; "" for none.
func pushLink(l *MailLink) string {
	if l == nil {
		return ""
	}
	return l.URL
}
