package threads

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"approvalsbot/ladder"
	"approvalsbot/store"
)

// digestMax bounds the lines of one digest; the rest are counted.
const digestMax = 50

// Waiting is one pending approval, as a digest or /approvals lists it.
type Waiting struct {
	ApprovalID string
	Function   string
	Requested  time.Time
	Deadline   time.Time
}

// Waiting lists a tenant's pending approvals, oldest first, at most limit,
// and whether more wait.
func (s *Service) Waiting(ctx context.Context, tenant string, limit int) ([]Waiting, bool, error) {
	rows, err := s.store.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: tenant, Limit: limit + 1})
	if err != nil {
		return nil, false, fmt.Errorf("list what waits in %s: %w", tenant, err)
	}
	more := len(rows) > limit
	if more {
		rows = rows[:limit]
	}
	out := make([]Waiting, 0, len(rows))
	for _, a := range rows {
		out = append(out, Waiting{ApprovalID: a.ID, Function: a.Function, Requested: a.RequestedAt, Deadline: a.DeadlineAt})
	}
	return out, more, nil
}

// DigestText words what waits in a tenant, oldest first.
func DigestText(tenant string, items []Waiting, more bool, now time.Time) string {
	if len(items) == 0 {
		return "Nothing waits for a decision in " + tenant + "."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d waiting for a decision in %s, oldest first:", len(items), tenant)
	for _, w := range items {
		fmt.Fprintf(&b, "\n• %s (%s) · waiting %s", shownText(w.Function), shownText(w.ApprovalID), waited(now.Sub(w.Requested)))
		if !w.Deadline.IsZero() {
			fmt.Fprintf(&b, " · deadline %s", w.Deadline.UTC().Format("2006-01-02 15:04 UTC"))
		}
	}
	if more {
		b.WriteString("\n… and more: the console lists them all.")
	}
	return b.String()
}

func waited(d time.Duration) string {
	d = d.Round(time.Minute)
	if d < time.Minute {
		return "under a minute"
	}
	return ladder.FormatDuration(d)
}

// Digest sends the tenant's digest of what still waits to its digest
// target, through the outbox.
func (s *Service) Digest(ctx context.Context, tenantID string) error {
	tenant, ok := s.tenants.Tenant(tenantID)
	if !ok || tenant.Digest == nil {
		return nil
	}
	items, more, err := s.Waiting(ctx, tenantID, digestMax)
	if err != nil {
		return err
	}
	now := s.clock.Now()
	text := DigestText(tenantID, items, more, now)
	// What the week's outcomes tell a lead; without them, what waits
	// still goes.
	if f, err := s.digestFigures(ctx, tenantID, now); err != nil {
		s.log.Warn("the digest goes without the week's figures", "tenant", tenantID, "err", err)
	} else {
		text += FatigueText(tenantID, f.Lines())
	}
	body, _ := json.Marshal(rowPayload{Text: text, Lines: true}) // plain data
	// Every replica's scheduler fires; the first to record this minute's slot
	// in the events table (which deduplicates) sends the digest.
	slot := "digest:" + tenantID + ":" + now.UTC().Truncate(time.Minute).Format("2006-01-02T15:04")
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		ins, err := tx.EventInsert(ctx, store.EventInsertParams{ID: slot, Tenant: tenantID, Type: "digest",
			BodySHA256: slot, ReceivedAt: now})
		if err != nil || !ins.Inserted {
			return err
		}
		return s.insert(ctx, tx, []store.OutboxInsertParams{{ID: s.newID(now), Tenant: tenantID,
			Kind: KindNotice, Target: tenant.Digest.To.String(), Payload: body, NotBefore: now, Now: now}})
	})
	if err != nil {
		return fmt.Errorf("enqueue the digest of %s: %w", tenantID, err)
	}
	s.Wake()
	return nil
}
