package threads

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/tenant"
)

// An event is ingested in two parts, the content work outside any
// transaction (prepare) and a shared transaction that only reads and
// writes rows: see docs/design.md#ingesting-in-two-parts.

// ingestLeaders is how many ingest groups run at once where writers run
// side by side (PostgreSQL); SQLite runs one.
const ingestLeaders = 4

// prepared is one event with the work done before its transaction.
type prepared struct {
	tenant *tenant.Tenant
	ev     *approval.Event
	now    time.Time
	// work is nil when the event carries no request, or its approval was
	// another tenant's or pruned when read (the transaction sees to it).
	work *contentWork
	// request is nil when the event carries none.
	request *request
	// closed is the close the transaction recorded, counted after its
	// commit (fatigue.go); nil for none.
	closed *closing
}

// request is what an approval seen for the first time is given from the
// event's request (nextRow).
type request struct {
	a        *approval.Approval
	frozen   Frozen // from the tenant's configuration (Freeze)
	function string // redacted: it is shown in answers and digests
}

// weight is what the event counts against a group's bound.
func (p *prepared) weight() int {
	if p.work == nil {
		return 0
	}
	return len(p.work.body)
}

// contentWork is what an event's request becomes in the store, worked out
// from the approval as it stood (base).
type contentWork struct {
	base approvalBase
	kept *approval.Stored // the revision as kept (approval.StoredForm)
	body []byte           // kept's JSON
	// reask is what the request changed from the revision people saw; nil
	// when it asks nothing again.
	reask *approval.Reask
}

// approvalBase is what of a stored approval the content work depends on.
type approvalBase struct {
	found    bool
	revision int
	seen     bool
	plan     []byte
}

func baseOf(row *store.Approval) approvalBase {
	if row == nil {
		return approvalBase{}
	}
	return approvalBase{found: true, revision: row.Revision, seen: row.Seen, plan: row.Plan}
}

func (b approvalBase) same(o approvalBase) bool {
	return b.found == o.found && b.revision == o.revision && b.seen == o.seen && bytes.Equal(b.plan, o.plan)
}

// prepare does an event's content work, before its transaction.
func (s *Service) prepare(ctx context.Context, tenant *tenant.Tenant, ev *approval.Event, now time.Time) (*prepared, error) {
	p := &prepared{tenant: tenant, ev: ev, now: now}
	a := ev.Approval
	if a == nil {
		return p, nil
	}
	p.request = &request{a: a, frozen: Freeze(tenant, a), function: approval.RedactText(a.Call.Function)}
	if a.IsQuestion() {
		// Listings and digests name a question by its kind, never by its
		// text (a restricted question's is nowhere in the store).
		p.request.function = string(approval.KindQuestion)
	}
	row, err := s.store.ApprovalGet(ctx, ev.ApprovalID())
	switch {
	case errors.Is(err, store.ErrNotFound):
		row = nil
	case err != nil:
		return nil, fmt.Errorf("read approval %s: %w", ev.ApprovalID(), err)
	case row.Tenant != ev.Tenant || row.Pruned():
		// The transaction refuses (another tenant's) or ignores (a tombstone) it.
		return p, nil
	}
	if p.work, err = s.workOn(ctx, row, ev); err != nil {
		return nil, err
	}
	return p, nil
}

// workOn works out what ev's request becomes in the store, from row (nil
// when there is none).
func (s *Service) workOn(ctx context.Context, row *store.Approval, ev *approval.Event) (*contentWork, error) {
	if s.contentWork != nil {
		s.contentWork(ctx)
	}
	w := &contentWork{base: baseOf(row)}
	cur, err := recordOf(row)
	if err != nil {
		return nil, err
	}
	a, err := stickyRestriction(row, cur, ev.Approval)
	if err != nil {
		return nil, err
	}
	// The revision keeps what the bot shows: the backend's arguments before
	// redaction, and a restricted call's content, never reach the store.
	if w.kept, err = approval.StoredForm(a, s.fingerprints...); err != nil {
		return nil, fmt.Errorf("stored form of revision %d of %s: %w", a.Revision, a.ID, err)
	}
	if w.body, err = json.Marshal(w.kept); err != nil {
		return nil, fmt.Errorf("encode revision %d of %s: %w", a.Revision, a.ID, err)
	}
	if cur != nil && cur.Seen && a.Revision > cur.Revision {
		change, err := s.reaskChange(ctx, row.ID, cur.Revision, &w.kept.Approval)
		if err != nil {
			return nil, err
		}
		w.reask = &change
	}
	return w, nil
}

// turns lets one caller at a time hold a key (an approval id).
type turns struct {
	mu   sync.Mutex
	held map[string]chan struct{} // closed when its holder is done
}

// take waits until key is free (or ctx ends) and holds it until done.
func (t *turns) take(ctx context.Context, key string) (done func(), err error) {
	for {
		t.mu.Lock()
		wait, busy := t.held[key]
		if !busy {
			mine := make(chan struct{})
			if t.held == nil {
				t.held = map[string]chan struct{}{}
			}
			t.held[key] = mine
			t.mu.Unlock()
			return func() {
				t.mu.Lock()
				delete(t.held, key)
				t.mu.Unlock()
				close(mine)
			}, nil
		}
		t.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
