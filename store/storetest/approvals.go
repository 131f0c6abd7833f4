package storetest

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

func testEventInsertDeduplicates(t *testing.T, s store.Store) {
	first := store.EventInsertParams{
		ID: "evt-1", Tenant: "t1", Type: "approval.requested",
		BodySHA256: "aaaa", ApprovalID: "a1", ReceivedAt: at(0),
	}
	// The same id again, with a different body: a reused id, not a
	// redelivery; the store says so by returning the first digest.
	again := first
	again.BodySHA256 = "bbbb"
	again.ReceivedAt = at(time.Minute)

	var got []store.EventInsertResult
	record := func(p store.EventInsertParams) {
		inTx(t, s, func(ctx context.Context, tx store.Tx) error {
			r, err := tx.EventInsert(ctx, p)
			got = append(got, r)
			return err
		})
	}
	record(first)
	record(again)
	record(first)
	other := first
	other.ID = "evt-2"
	record(other)

	want := []store.EventInsertResult{
		{Inserted: true},
		{Inserted: false, BodySHA256: "aaaa"},
		{Inserted: false, BodySHA256: "aaaa"},
		{Inserted: true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("EventInsert results (-want +got):\n%s", diff)
	}
}

func testApprovalRoundTrip(t *testing.T, s store.Store) {
	a := &store.Approval{
		ID:           "a1",
		Tenant:       "t1",
		Revision:     3,
		State:        statePending,
		Seen:         true,
		Function:     "stripe.refund",
		Decision:     nil,
		Plan:         []byte(`{"steps":[{"after":"15m"}],"deadline":"24h"}`),
		StepsDone:    2,
		NextStepAt:   at(15*time.Minute + 1*time.Millisecond),
		DeadlineAt:   at(24*time.Hour + 2*time.Millisecond),
		RequestedAt:  at(3 * time.Millisecond),
		CreatedAt:    at(4 * time.Millisecond),
		UpdatedAt:    at(5 * time.Millisecond),
		ClaimedBy:    "ladder-1",
		ClaimedUntil: at(time.Minute + 6*time.Millisecond),
		Deciding:     []byte(`{"actor":"user:kevin","decision":"approve"}`),
		LadderState:  []byte(`{"looking":{"actor":"user:ada"}}`),
		Votes:        []byte(`{"revision":3,"approvals":[{"actor":"user:ada"}]}`),
	}
	check := func(step string, want *store.Approval) {
		t.Helper()
		if diff := cmp.Diff(want, mustGet(t, s, want.ID)); diff != "" {
			t.Errorf("%s: ApprovalGet (-want +got):\n%s", step, diff)
		}
		inTx(t, s, func(ctx context.Context, tx store.Tx) error {
			got, err := tx.ApprovalGetForUpdate(ctx, want.ID)
			if err != nil {
				return err
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s: ApprovalGetForUpdate (-want +got):\n%s", step, diff)
			}
			return nil
		})
	}

	upsert(t, s, a)
	check("insert", a)

	// The update path writes every field too, including back to NULL.
	b := *a
	b.Revision = 4
	b.State = stateApproved
	b.Seen = true
	b.Function = "stripe.refund_v2"
	b.Decision = []byte(`{"actor":"U1","via":"slack","at":"2025-06-01T12:30:00Z"}`)
	b.Plan = []byte(`{"steps":[],"deadline":"1h"}`)
	b.StepsDone = 3
	b.NextStepAt = time.Time{}
	b.DeadlineAt = time.Time{}
	b.RequestedAt = at(7 * time.Millisecond)
	b.CreatedAt = at(8 * time.Millisecond)
	b.UpdatedAt = at(30 * time.Minute)
	b.ClaimedBy = ""
	b.ClaimedUntil = time.Time{}
	b.LadderState = nil
	b.Votes = nil
	upsert(t, s, &b)
	check("update", &b)

	// Another approval leaves the first as it was.
	upsert(t, s, pendingApproval("a2", "t1", at(0)))
	check("after another", &b)
}

func testApprovalTombstoneRoundTrip(t *testing.T, s store.Store) {
	// A decision that arrived before its request: no plan, no times but
	// its own, not seen.
	tomb := &store.Approval{
		ID:        "a-tomb",
		Tenant:    "t1",
		Revision:  1,
		State:     stateExpired,
		Seen:      false,
		Decision:  []byte(`{"message":"nobody answered"}`),
		CreatedAt: at(0),
		UpdatedAt: at(0),
	}
	upsert(t, s, tomb)
	if diff := cmp.Diff(tomb, mustGet(t, s, "a-tomb")); diff != "" {
		t.Errorf("ApprovalGet (-want +got):\n%s", diff)
	}
}

func testApprovalTimesAtMillisecondPrecision(t *testing.T, s store.Store) {
	// Times are stored as Unix milliseconds: finer parts are dropped and
	// the location does not matter (cmp compares times with Equal).
	a := pendingApproval("a1", "t1", at(0))
	paris := time.FixedZone("CEST", 2*60*60)
	a.RequestedAt = at(1*time.Millisecond + 999*time.Microsecond).In(paris)
	a.NextStepAt = at(2*time.Millisecond + 1)
	upsert(t, s, a)

	got := mustGet(t, s, "a1")
	for _, c := range []struct {
		name      string
		got, want time.Time
	}{
		{"RequestedAt", got.RequestedAt, at(1 * time.Millisecond)},
		{"NextStepAt", got.NextStepAt, at(2 * time.Millisecond)},
	} {
		if !c.got.Equal(c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}

func testNotFound(t *testing.T, s store.Store) {
	ctx := t.Context()
	_, err := s.ApprovalGet(ctx, "nope")
	wantErr(t, "ApprovalGet", err, store.ErrNotFound)

	err = s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.ApprovalGetForUpdate(ctx, "nope")
		return err
	})
	wantErr(t, "ApprovalGetForUpdate", err, store.ErrNotFound)

	_, err = s.RevisionGet(ctx, "nope", 1)
	wantErr(t, "RevisionGet", err, store.ErrNotFound)

	err = s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "nope", Worker: "w", Now: at(0)})
	wantErr(t, "OutboxComplete", err, store.ErrNotFound)
	err = s.OutboxRetry(ctx, store.OutboxRetryParams{ID: "nope", Worker: "w", Now: at(0), NextAttemptAt: at(0)})
	wantErr(t, "OutboxRetry", err, store.ErrNotFound)
	err = s.OutboxDead(ctx, store.OutboxDeadParams{ID: "nope", Worker: "w", Now: at(0)})
	wantErr(t, "OutboxDead", err, store.ErrNotFound)

	// A list that finds nothing is empty, not an error.
	posts, err := s.PostList(ctx, "nope")
	if err != nil || len(posts) != 0 {
		t.Errorf("PostList = %v, %v; want empty, nil", posts, err)
	}
	pending, err := s.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: "nope"})
	if err != nil || len(pending) != 0 {
		t.Errorf("ApprovalListPending = %v, %v; want empty, nil", pending, err)
	}
}

func testRevisionInsertKeepsFirst(t *testing.T, s store.Store) {
	r1 := &store.Revision{ApprovalID: "a1", Revision: 1, Body: []byte(`{"rev":1}`), CreatedAt: at(0)}
	r1again := &store.Revision{ApprovalID: "a1", Revision: 1, Body: []byte(`{"rev":"other"}`), CreatedAt: at(time.Hour)}
	r2 := &store.Revision{ApprovalID: "a1", Revision: 2, Body: []byte(`{"rev":2}`), CreatedAt: at(time.Minute)}
	other := &store.Revision{ApprovalID: "a2", Revision: 1, Body: []byte(`{"a2":1}`), CreatedAt: at(0)}
	for _, r := range []*store.Revision{r1, r1again, r2, other} {
		inTx(t, s, func(ctx context.Context, tx store.Tx) error { return tx.RevisionInsert(ctx, r) })
	}
	for _, want := range []*store.Revision{r1, r2, other} {
		got, err := s.RevisionGet(t.Context(), want.ApprovalID, want.Revision)
		if err != nil {
			t.Fatalf("RevisionGet(%s, %d): %v", want.ApprovalID, want.Revision, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("RevisionGet(%s, %d) (-want +got):\n%s", want.ApprovalID, want.Revision, diff)
		}
	}
}

func testPostRecordedWithCompletion(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	enqueue(t, s, effect("o1", now), effect("o2", now), effect("o3", now), effect("o4", now))
	claim(t, s, "w1", now, 10)

	channel := &store.Post{ApprovalID: "a1", Target: "slack:C1", Revision: 1, Channel: "C1", Ref: "1700000000.000100", CreatedAt: at(time.Second)}
	dm := &store.Post{ApprovalID: "a1", Target: "dm:slack:U1", Revision: 1, Channel: "D1", Ref: "1700000000.000200", ThreadRef: "1700000000.000150"}
	rev2 := &store.Post{ApprovalID: "a1", Target: "slack:C1", Revision: 2, Channel: "C1", Ref: "1700000000.000300", ThreadRef: "1700000000.000100", CreatedAt: at(time.Hour)}
	for _, c := range []struct {
		id   string
		post *store.Post
		now  time.Time
	}{
		{"o1", channel, at(time.Second)},
		{"o2", dm, at(2 * time.Second)}, // no CreatedAt: the completion's Now
		{"o3", rev2, at(time.Hour)},
	} {
		if err := s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: c.id, Worker: "w1", Now: c.now, Post: c.post}); err != nil {
			t.Fatalf("OutboxComplete(%s): %v", c.id, err)
		}
	}
	dmWant := *dm
	dmWant.CreatedAt = at(2 * time.Second)

	// The same (approval, target, revision) posted again, e.g. a card
	// re-posted after its message was deleted: the new reference wins,
	// created_at stays.
	repost := *channel
	repost.Ref = "1700000000.000900"
	repost.CreatedAt = at(3 * time.Hour)
	if err := s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o4", Worker: "w1", Now: at(3 * time.Hour), Post: &repost}); err != nil {
		t.Fatalf("OutboxComplete(o4): %v", err)
	}
	channelWant := *channel
	channelWant.Ref = repost.Ref

	want := []*store.Post{&channelWant, &dmWant, rev2} // by revision, time, target
	got, err := s.PostList(ctx, "a1")
	if err != nil {
		t.Fatalf("PostList: %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PostList (-want +got):\n%s", diff)
	}
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.PostList(ctx, "a1")
		if err != nil {
			return err
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Tx.PostList (-want +got):\n%s", diff)
		}
		return nil
	})

	// A completion that loses its lease records no post.
	enqueue(t, s, effect("o5", now))
	claim(t, s, "w1", now, 10)
	claim(t, s, "w2", now.Add(time.Minute), 10) // w1's lease lapsed
	lost := &store.Post{ApprovalID: "a9", Target: "slack:C9", Revision: 1, Channel: "C9", Ref: "x"}
	err = s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: "o5", Worker: "w1", Now: now.Add(time.Minute), Post: lost})
	wantErr(t, "OutboxComplete after lease lost", err, store.ErrLeaseLost)
	if got, err := s.PostList(ctx, "a9"); err != nil || len(got) != 0 {
		t.Errorf("PostList(a9) = %v, %v; want none", got, err)
	}
}

func testApprovalListPending(t *testing.T, s store.Store) {
	ctx := t.Context()
	approved := pendingApproval("a-approved", "t1", at(-time.Hour))
	approved.State = stateApproved
	upsert(t, s,
		pendingApproval("a-late", "t1", at(2*time.Minute)),
		pendingApproval("a-early", "t1", at(0)),
		pendingApproval("a-mid", "t1", at(time.Minute)),
		pendingApproval("a-tie", "t1", at(time.Minute)), // same time: by id
		approved,
		pendingApproval("b-1", "t2", at(-2*time.Hour)),
	)
	for _, c := range []struct {
		name   string
		params store.ApprovalListPendingParams
		want   []string
	}{
		{"all of t1", store.ApprovalListPendingParams{Tenant: "t1"}, []string{"a-early", "a-mid", "a-tie", "a-late"}},
		{"limit", store.ApprovalListPendingParams{Tenant: "t1", Limit: 2}, []string{"a-early", "a-mid"}},
		{"other tenant", store.ApprovalListPendingParams{Tenant: "t2", Limit: 10}, []string{"b-1"}},
		{"unknown tenant", store.ApprovalListPendingParams{Tenant: "t3"}, nil},
	} {
		got, err := s.ApprovalListPending(ctx, c.params)
		if err != nil {
			t.Fatalf("%s: ApprovalListPending: %v", c.name, err)
		}
		wantIDs(t, c.name, approvalIDs(got), c.want)
	}
	// Rows come back whole.
	got, err := s.ApprovalListPending(ctx, store.ApprovalListPendingParams{Tenant: "t2"})
	if err != nil {
		t.Fatalf("ApprovalListPending: %v", err)
	}
	if diff := cmp.Diff([]*store.Approval{pendingApproval("b-1", "t2", at(-2*time.Hour))}, got); diff != "" {
		t.Errorf("ApprovalListPending rows (-want +got):\n%s", diff)
	}
}

// dueApprovals builds approvals in every position relative to now = at(0)
// and returns them with the ids a claim at now takes, in due order.
func dueApprovals() ([]*store.Approval, []string) {
	now := at(0)
	mk := func(id string, nextStep, deadline time.Time) *store.Approval {
		a := pendingApproval(id, "t1", now.Add(-time.Hour))
		a.NextStepAt, a.DeadlineAt = nextStep, deadline
		return a
	}
	approved := mk("approved", now.Add(-time.Hour), now.Add(-time.Hour))
	approved.State = stateApproved
	leased := mk("leased", now.Add(-10*time.Minute), now.Add(time.Hour))
	leased.ClaimedBy, leased.ClaimedUntil = "other", now.Add(30*time.Second)
	lapsed := mk("lapsed", now.Add(-3*time.Minute), now.Add(time.Hour))
	lapsed.ClaimedBy, lapsed.ClaimedUntil = "other", now.Add(-time.Second)

	as := []*store.Approval{
		mk("step-due", now.Add(-2*time.Minute), now.Add(time.Hour)),
		mk("deadline-due", time.Time{}, now.Add(-1*time.Minute)),          // no step left
		mk("both-due", now.Add(-30*time.Second), now.Add(-5*time.Minute)), // due at the earlier
		mk("due-now", now, now.Add(time.Hour)),                            // ≤ now is due
		mk("not-due", now.Add(time.Minute), now.Add(time.Hour)),
		mk("no-times", time.Time{}, time.Time{}),
		approved, // not pending: never claimed, however late
		leased,   // held by another worker
		lapsed,   // its holder's lease ran out
	}
	return as, []string{"both-due", "lapsed", "step-due", "deadline-due", "due-now"}
}

func testApprovalClaimDue(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	as, wantDue := dueApprovals()
	upsert(t, s, as...)
	claimDue := func(worker string, now time.Time) []*store.Approval {
		t.Helper()
		got, err := s.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{Worker: worker, Now: now, Lease: time.Minute, Limit: 100})
		if err != nil {
			t.Fatalf("ApprovalClaimDue(%s): %v", worker, err)
		}
		return got
	}

	got := claimDue("w1", now)
	wantIDs(t, "w1 at now", approvalIDs(got), wantDue)
	for _, a := range got {
		if a.ClaimedBy != "w1" || !a.ClaimedUntil.Equal(now.Add(time.Minute)) {
			t.Errorf("%s: claimed by %q until %v, want w1 until %v", a.ID, a.ClaimedBy, a.ClaimedUntil, now.Add(time.Minute))
		}
	}
	// The lease is stored; the rest of the row is as it was.
	stored := mustGet(t, s, "step-due")
	want := as[0]
	want.ClaimedBy, want.ClaimedUntil = "w1", now.Add(time.Minute)
	if diff := cmp.Diff(want, stored); diff != "" {
		t.Errorf("claimed approval (-want +got):\n%s", diff)
	}
	if got := mustGet(t, s, "leased"); got.ClaimedBy != "other" {
		t.Errorf("leased approval now claimed by %q, want other", got.ClaimedBy)
	}

	wantIDs(t, "w2 at now", approvalIDs(claimDue("w2", now)), nil)
	// "leased" lapses at +30s; w1's at +1m.
	wantIDs(t, "w2 at +30s", approvalIDs(claimDue("w2", now.Add(30*time.Second))), []string{"leased"})
	wantIDs(t, "w3 at +1m", approvalIDs(claimDue("w3", now.Add(time.Minute))), append(slices.Clone(wantDue), "not-due"))
}

func testApprovalClaimDueOrderAndLimit(t *testing.T, s store.Store) {
	ctx := t.Context()
	as, wantDue := dueApprovals()
	upsert(t, s, as...)
	var got []string
	for i, worker := range []string{"w1", "w2", "w3", "w4"} {
		claimed, err := s.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{Worker: worker, Now: at(0), Lease: time.Minute, Limit: 2})
		if err != nil {
			t.Fatalf("ApprovalClaimDue(%s): %v", worker, err)
		}
		if len(claimed) > 2 {
			t.Errorf("claim %d took %d approvals, limit 2", i, len(claimed))
		}
		got = append(got, approvalIDs(claimed)...)
	}
	wantIDs(t, "claims of 2", got, wantDue)

	none, err := s.ApprovalClaimDue(ctx, store.ApprovalClaimDueParams{Worker: "w5", Now: at(time.Hour), Lease: time.Minute, Limit: 0})
	if err != nil || len(none) != 0 {
		t.Errorf("ApprovalClaimDue with Limit 0 = %v, %v; want none", none, err)
	}
}
