package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

// outcomeReq is a revision's outcome row of tenant, requested at req.
func outcomeReq(id, tenant, function, digest string, revision int, req time.Time) store.OutcomeRequestParams {
	return store.OutcomeRequestParams{ApprovalID: id, Tenant: tenant, Job: "job-" + id, Function: function,
		ArgsSHA256: digest, Effect: "destructive", Ladder: "payments", Restricted: revision > 1,
		Revision: revision, RequestedAt: req}
}

func outcomeWrite(t *testing.T, s store.Store, fn func(ctx context.Context, tx store.Tx) error) {
	t.Helper()
	inTx(t, s, fn)
}

// testOutcomes: a row's every field round-trips; a reask replaces the
// call but not the ladder; a close of an unknown approval changes
// nothing; listings page in decision order, per tenant or all, within
// their window.
func testOutcomes(t *testing.T, s store.Store) {
	ctx := t.Context()
	outcomeWrite(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.OutcomeRequest(ctx, outcomeReq("a1", "acme", "github.merge", "d1", 1, at(0))); err != nil {
			return err
		}
		// A reask: a new digest and revision; the ladder stays.
		r := outcomeReq("a1", "acme", "github.merge", "d2", 2, at(0))
		r.Ladder = ""
		if err := tx.OutcomeRequest(ctx, r); err != nil {
			return err
		}
		// An older revision arriving late changes nothing.
		if err := tx.OutcomeRequest(ctx, outcomeReq("a1", "acme", "other", "d0", 1, at(0))); err != nil {
			return err
		}
		if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: "a1", State: stateApproved, Actor: "user:kevin",
			Surface: "slack", Steps: 2, Quick: true, DecidedAt: at(90 * time.Second), FirstLookAt: at(30 * time.Second)}); err != nil {
			return err
		}
		// A re-check refuses it: the state changes, the decision stays.
		if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: "a1", State: "refused", Actor: "system",
			Surface: "", DecidedAt: at(time.Hour)}); err != nil {
			return err
		}
		// No row: nothing happens, and no error.
		return tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: "ghost", State: stateApproved, DecidedAt: at(time.Minute)})
	})
	got, err := s.OutcomeList(ctx, store.OutcomeListParams{Since: at(0), Limit: 10})
	if err != nil {
		t.Fatalf("OutcomeList: %v", err)
	}
	want := []*store.Outcome{{ApprovalID: "a1", Tenant: "acme", Job: "job-a1", Function: "github.merge", ArgsSHA256: "d2",
		Effect: "destructive", Ladder: "payments", Restricted: true, Revision: 2, State: "refused", Actor: "user:kevin",
		Surface: "slack", Steps: 2, Quick: true, RequestedAt: at(0), DecidedAt: at(90 * time.Second), FirstLookAt: at(30 * time.Second)}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("OutcomeList (-want +got):\n%s", diff)
	}

	// Pending rows are never listed; decided ones page in order.
	outcomeWrite(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := range 5 {
			for _, tenant := range []string{"acme", "zeta"} {
				id := fmt.Sprintf("%s-%d", tenant, i)
				if err := tx.OutcomeRequest(ctx, outcomeReq(id, tenant, "f", "d", 1, at(time.Hour))); err != nil {
					return err
				}
				if i == 4 {
					continue // stays pending
				}
				if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: id, State: stateExpired,
					DecidedAt: at(time.Hour + time.Duration(i%2)*time.Minute)}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	var ids []string
	p := store.OutcomeListParams{Tenant: "acme", Since: at(time.Hour), Limit: 2}
	for {
		page, err := s.OutcomeList(ctx, p)
		if err != nil {
			t.Fatalf("OutcomeList: %v", err)
		}
		for _, o := range page {
			ids = append(ids, o.ApprovalID)
		}
		if len(page) < p.Limit {
			break
		}
		last := page[len(page)-1]
		p.AfterAt, p.AfterID = last.DecidedAt, last.ApprovalID
	}
	if diff := cmp.Diff([]string{"acme-0", "acme-2", "acme-1", "acme-3"}, ids); diff != "" {
		t.Errorf("acme's pages since 1h (-want +got):\n%s", diff)
	}
	all, err := s.OutcomeList(ctx, store.OutcomeListParams{Since: at(0), Until: at(time.Hour + time.Minute), Limit: 100})
	if err != nil {
		t.Fatalf("OutcomeList: %v", err)
	}
	ids = nil
	for _, o := range all {
		ids = append(ids, o.ApprovalID)
	}
	if diff := cmp.Diff([]string{"a1", "acme-0", "acme-2", "zeta-0", "zeta-2"}, ids); diff != "" {
		t.Errorf("every tenant's until 1h1m (-want +got):\n%s", diff)
	}
	if _, err := s.OutcomeList(ctx, store.OutcomeListParams{Since: at(0)}); err == nil {
		t.Error("OutcomeList without a Limit: no error")
	}
}

// testOutcomeRepeated: an approval repeats an approved call of the same
// tenant, function and digest within the window before it; of two at one
// instant the higher id repeats; a denial, another tenant, another digest
// or an approval outside the window does not count.
func testOutcomeRepeated(t *testing.T, s store.Store) {
	ctx := t.Context()
	type row struct {
		id, tenant, function, digest, state string
		decided                             time.Duration
	}
	rows := []row{
		{"first", "acme", "f", "d", stateApproved, 0},
		{"again", "acme", "f", "d", stateApproved, 2 * time.Hour},
		{"twin-a", "acme", "g", "d", stateApproved, time.Hour},
		{"twin-b", "acme", "g", "d", stateApproved, time.Hour},
		{"late", "acme", "h", "d", stateApproved, 0},
		{"later", "acme", "h", "d", stateApproved, 25 * time.Hour},
		{"denied", "acme", "k", "d", "denied", 0},
		{"after-deny", "acme", "k", "d", stateApproved, time.Hour},
		{"other-tenant", "zeta", "f", "d", stateApproved, time.Hour},
		{"other-digest", "acme", "f", "e", stateApproved, time.Hour},
		{"no-digest-1", "acme", "m", "", stateApproved, 0},
		{"no-digest-2", "acme", "m", "", stateApproved, time.Minute},
	}
	outcomeWrite(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, r := range rows {
			if err := tx.OutcomeRequest(ctx, outcomeReq(r.id, r.tenant, r.function, r.digest, 1, at(0))); err != nil {
				return err
			}
			if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: r.id, State: r.state, DecidedAt: at(r.decided)}); err != nil {
				return err
			}
		}
		return nil
	})
	want := map[string]bool{"again": true, "twin-b": true}
	for _, r := range append(rows, row{id: "unknown"}) {
		got, err := s.OutcomeRepeated(ctx, store.OutcomeRepeatedParams{ApprovalID: r.id, Window: 24 * time.Hour})
		if err != nil {
			t.Fatalf("OutcomeRepeated(%s): %v", r.id, err)
		}
		if got != want[r.id] {
			t.Errorf("OutcomeRepeated(%s) = %v, want %v", r.id, got, want[r.id])
		}
	}
}

// testOutcomePrune: decided rows at or before the time go, in batches;
// pending rows stay whatever their age.
func testOutcomePrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	outcomeWrite(t, s, func(ctx context.Context, tx store.Tx) error {
		for i := range 5 {
			id := fmt.Sprintf("o%d", i)
			if err := tx.OutcomeRequest(ctx, outcomeReq(id, "acme", "f", "d", 1, at(0))); err != nil {
				return err
			}
			if i == 4 {
				continue
			}
			if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: id, State: stateApproved,
				DecidedAt: at(time.Duration(i) * time.Hour)}); err != nil {
				return err
			}
		}
		return nil
	})
	n, err := s.OutcomePrune(ctx, store.OutcomePruneParams{Before: at(2 * time.Hour), Limit: 2})
	if err != nil || n != 2 {
		t.Fatalf("OutcomePrune = %d, %v; want 2", n, err)
	}
	n, err = s.OutcomePrune(ctx, store.OutcomePruneParams{Before: at(2 * time.Hour), Limit: 2})
	if err != nil || n != 1 {
		t.Fatalf("OutcomePrune again = %d, %v; want 1", n, err)
	}
	left, err := s.OutcomeList(ctx, store.OutcomeListParams{Since: at(-time.Hour), Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if len(left) != 1 || left[0].ApprovalID != "o3" {
		t.Errorf("left after pruning: %+v, want o3 alone (o4 is pending, unlisted)", left)
	}
}
