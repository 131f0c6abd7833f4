package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

const day = 24 * time.Hour

// closedApproval is an approval decided at closed, with its request's
// plan and a decision.
func closedApproval(id string, closed time.Time) *store.Approval {
	a := pendingApproval(id, "t1", closed.Add(-time.Hour))
	a.Revision = 2
	a.State = stateApproved
	a.Decision = []byte(`{"actor":"user:kevin","comment":"fine by me","at":"2025-06-01T12:00:00Z"}`)
	a.NextStepAt, a.DeadlineAt = time.Time{}, time.Time{}
	a.UpdatedAt = closed
	return a
}

// withHistory stores a with two revisions, a post of each and the events
// that made it, as ingest would have.
func withHistory(t *testing.T, s store.Store, a *store.Approval) {
	t.Helper()
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		if err := tx.ApprovalUpsert(ctx, a); err != nil {
			return err
		}
		for rev := 1; rev <= a.Revision; rev++ {
			err := tx.RevisionInsert(ctx, &store.Revision{ApprovalID: a.ID, Revision: rev,
				Body: []byte(`{"call":{"arguments":{"to":"ada@example.com"}}}`), CreatedAt: a.CreatedAt})
			if err != nil {
				return err
			}
		}
		for _, typ := range []string{"approval.requested", "approval.resolved"} {
			_, err := tx.EventInsert(ctx, store.EventInsertParams{ID: a.ID + "/" + typ, Tenant: a.Tenant, Type: typ,
				BodySHA256: "sha-" + typ, ApprovalID: a.ID, ReceivedAt: a.CreatedAt})
			if err != nil {
				return err
			}
		}
		return nil
	})
	for rev := 1; rev <= a.Revision; rev++ {
		id := fmt.Sprintf("post-%s-%d", a.ID, rev)
		row := effect(id, a.CreatedAt)
		row.ApprovalID, row.Kind = a.ID, "post_card"
		enqueue(t, s, row)
		got := claimIDs(t, s, a.CreatedAt, id)
		err := s.OutboxComplete(t.Context(), store.OutboxCompleteParams{ID: got, Worker: "seed", Now: a.CreatedAt,
			Post: &store.Post{ApprovalID: a.ID, Target: "slack:C1", Revision: rev, Channel: "C1", Ref: id}})
		if err != nil {
			t.Fatalf("record post: %v", err)
		}
	}
}

// claimIDs claims the due rows as worker "seed" and returns want's id,
// failing unless it was among them.
func claimIDs(t *testing.T, s store.Store, now time.Time, want string) string {
	t.Helper()
	for _, r := range claim(t, s, "seed", now, 100) {
		if r.ID == want {
			return want
		}
	}
	t.Fatalf("row %s was not claimable", want)
	return ""
}

// redelivered reports whether an event id is still held: inserting it
// again is refused as a redelivery, with the digest it was stored with.
// It inserts the id when it was not held.
func redelivered(t *testing.T, s store.Store, id, digest string) bool {
	t.Helper()
	var res store.EventInsertResult
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		var err error
		res, err = tx.EventInsert(ctx, store.EventInsertParams{ID: id, Tenant: "t1", Type: "approval.requested",
			BodySHA256: digest, ApprovalID: "a-redelivery", ReceivedAt: at(400 * day)})
		return err
	})
	if !res.Inserted && res.BodySHA256 != digest {
		t.Errorf("event %s held with digest %q, want %q", id, res.BodySHA256, digest)
	}
	return !res.Inserted
}

func testApprovalPruneLeavesTombstone(t *testing.T, s store.Store) {
	ctx := t.Context()
	old := closedApproval("a-old", at(0))
	old.LadderState = []byte(`{"looking":{"actor":"user:ada"}}`) // goes with the plan
	old.Votes = []byte(`{"revision":2,"approvals":[{"actor":"user:ada"}]}`)
	withHistory(t, s, old)
	// Not prunable: closed too recently; pending however old; closed but
	// an edit still to be made; closed with a decision in flight.
	young := closedApproval("a-young", at(10*day))
	withHistory(t, s, young)
	pending := pendingApproval("a-pending", "t1", at(-day))
	busy := closedApproval("a-busy", at(0))
	inFlight := closedApproval("a-deciding", at(0))
	inFlight.Deciding = []byte(`{"actor":"user:ada"}`)
	upsert(t, s, pending, busy, inFlight)
	edit := effect("edit-busy", at(0))
	edit.ApprovalID = "a-busy"
	enqueue(t, s, edit)
	before := map[string]*store.Approval{}
	for _, id := range []string{"a-young", "a-pending", "a-busy", "a-deciding"} {
		before[id] = mustGet(t, s, id)
	}

	n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 100})
	if err != nil || n != 1 {
		t.Fatalf("ApprovalPrune = %d, %v; want 1", n, err)
	}
	want := &store.Approval{ID: "a-old", Tenant: "t1", Revision: 2, State: stateApproved, Seen: true,
		RequestedAt: old.RequestedAt, CreatedAt: old.CreatedAt, UpdatedAt: old.UpdatedAt}
	if diff := cmp.Diff(want, mustGet(t, s, "a-old")); diff != "" {
		t.Errorf("tombstone (-want +got):\n%s", diff)
	}
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		got, err := tx.ApprovalGetForUpdate(ctx, "a-old")
		if err != nil {
			return err
		}
		if !got.Pruned() || got.State != stateApproved {
			t.Errorf("ApprovalGetForUpdate of the tombstone: %+v, want it closed and pruned", got)
		}
		return nil
	})
	for rev := 1; rev <= 2; rev++ {
		_, err := s.RevisionGet(ctx, "a-old", rev)
		wantErr(t, fmt.Sprintf("revision %d of the tombstone", rev), err, store.ErrNotFound)
	}
	if posts, err := s.PostList(ctx, "a-old"); err != nil || len(posts) != 0 {
		t.Errorf("posts of the tombstone: %v, %v; want none", posts, err)
	}
	// Its event ids stay, so a redelivery is still a redelivery.
	for _, typ := range []string{"approval.requested", "approval.resolved"} {
		if !redelivered(t, s, "a-old/"+typ, "sha-"+typ) {
			t.Errorf("event %s of the tombstone was forgotten", typ)
		}
	}
	for id, a := range before {
		if diff := cmp.Diff(a, mustGet(t, s, id)); diff != "" {
			t.Errorf("%s changed (-before +after):\n%s", id, diff)
		}
		if mustGet(t, s, id).Pruned() {
			t.Errorf("%s reported pruned", id)
		}
	}
	if _, err := s.RevisionGet(ctx, "a-young", 2); err != nil {
		t.Errorf("revision of a young approval: %v", err)
	}
	if posts, err := s.PostList(ctx, "a-young"); err != nil || len(posts) != 2 {
		t.Errorf("posts of a young approval: %d, %v", len(posts), err)
	}

	// Again: nothing more to do.
	if n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 100}); err != nil || n != 0 {
		t.Errorf("second ApprovalPrune = %d, %v; want 0", n, err)
	}
	// The edit made, a-busy is pruned next time.
	complete(t, s, claimIDs(t, s, at(day), "edit-busy"), "seed", at(day))
	if n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 100}); err != nil || n != 1 {
		t.Errorf("ApprovalPrune after the edit = %d, %v; want 1", n, err)
	}
	if !mustGet(t, s, "a-busy").Pruned() {
		t.Error("a-busy not pruned once its edit was made")
	}
	// A tombstone given a decision again (a re-check) is pruned again.
	tomb := mustGet(t, s, "a-old")
	tomb.State, tomb.Decision, tomb.UpdatedAt = "refused", []byte(`{"message":"re-check"}`), at(2*day)
	upsert(t, s, tomb)
	if n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(3 * day), Limit: 100}); err != nil || n != 1 {
		t.Errorf("ApprovalPrune of a re-decided tombstone = %d, %v; want 1", n, err)
	}
	if got := mustGet(t, s, "a-old"); got.Decision != nil || got.State != "refused" {
		t.Errorf("re-pruned tombstone %+v", got)
	}
}

func testApprovalPruneBatches(t *testing.T, s store.Store) {
	ctx := t.Context()
	var ids []string
	for i := range 7 {
		a := closedApproval(fmt.Sprintf("a%d", i), at(time.Duration(7-i)*time.Minute)) // a6 is the oldest
		upsert(t, s, a)
		ids = append(ids, a.ID)
	}
	var got []int
	for {
		n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 3})
		if err != nil {
			t.Fatalf("ApprovalPrune: %v", err)
		}
		got = append(got, n)
		if n < 3 {
			break
		}
		if len(got) == 1 {
			// The oldest change goes first.
			var pruned []string
			for _, id := range ids {
				if mustGet(t, s, id).Pruned() {
					pruned = append(pruned, id)
				}
			}
			wantIDs(t, "first batch", pruned, []string{"a4", "a5", "a6"})
		}
	}
	if diff := cmp.Diff([]int{3, 3, 1}, got); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 0}); err != nil || n != 0 {
		t.Errorf("Limit 0: %d, %v", n, err)
	}
}

func testApprovalForget(t *testing.T, s store.Store) {
	ctx := t.Context()
	withHistory(t, s, closedApproval("a-tomb", at(0)))
	withHistory(t, s, closedApproval("a-kept", at(0)))
	upsert(t, s, pendingApproval("a-pending", "t1", at(-day)))
	if n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 1}); err != nil || n != 1 {
		t.Fatalf("ApprovalPrune = %d, %v", n, err)
	}
	// ApprovalPrune takes ties by id: a-kept went first.
	kept, tomb := mustGet(t, s, "a-kept"), mustGet(t, s, "a-tomb")
	if !kept.Pruned() || tomb.Pruned() {
		t.Fatalf("pruned a-kept %v a-tomb %v; want a-kept only", kept.Pruned(), tomb.Pruned())
	}
	// Too young a tombstone stays.
	if n, err := s.ApprovalForget(ctx, store.ApprovalForgetParams{Before: at(-time.Millisecond), Limit: 10}); err != nil || n != 0 {
		t.Fatalf("ApprovalForget before its time = %d, %v", n, err)
	}
	// The request sent again later (a new event id about it) keeps the
	// tombstone a while longer.
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		_, err := tx.EventInsert(ctx, store.EventInsertParams{ID: "again", Tenant: "t1", Type: "approval.requested",
			BodySHA256: "x", ApprovalID: "a-kept", ReceivedAt: at(30 * day)})
		return err
	})
	if n, err := s.ApprovalForget(ctx, store.ApprovalForgetParams{Before: at(30*day - time.Millisecond), Limit: 10}); err != nil || n != 0 {
		t.Fatalf("ApprovalForget before the last event's time = %d, %v; want 0", n, err)
	}
	// Only tombstones go: not a closed approval not pruned, not a pending one.
	if n, err := s.ApprovalForget(ctx, store.ApprovalForgetParams{Before: at(30 * day), Limit: 10}); err != nil || n != 1 {
		t.Fatalf("ApprovalForget = %d, %v; want 1", n, err)
	}
	_, err := s.ApprovalGet(ctx, "a-kept")
	wantErr(t, "forgotten tombstone", err, store.ErrNotFound)
	mustGet(t, s, "a-tomb")
	mustGet(t, s, "a-pending")
}

func testEventPrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	withHistory(t, s, closedApproval("a-held", at(0)))
	withHistory(t, s, closedApproval("a-gone", at(0)))
	inTx(t, s, func(ctx context.Context, tx store.Tx) error {
		for _, e := range []store.EventInsertParams{
			{ID: "auto-old", Type: "approval.auto_granted", ApprovalID: "", ReceivedAt: at(0)},
			{ID: "unknown-old", Type: "call.finished", ApprovalID: "a-never", ReceivedAt: at(0)},
			{ID: "unknown-young", Type: "call.finished", ApprovalID: "a-never", ReceivedAt: at(200 * day)},
		} {
			e.Tenant, e.BodySHA256 = "t1", "sha-"+e.ID
			if _, err := tx.EventInsert(ctx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 10}); err != nil || n != 2 {
		t.Fatalf("ApprovalPrune = %d, %v; want 2", n, err)
	}
	// a-held changes later, so only a-gone is forgotten.
	held := mustGet(t, s, "a-held")
	held.UpdatedAt = at(300 * day)
	upsert(t, s, held)
	if n, err := s.ApprovalForget(ctx, store.ApprovalForgetParams{Before: at(100 * day), Limit: 10}); err != nil || n != 1 {
		t.Fatalf("ApprovalForget = %d, %v; want 1", n, err)
	}
	var got []int
	for {
		n, err := s.EventPrune(ctx, store.EventPruneParams{Before: at(100 * day), Limit: 2})
		if err != nil {
			t.Fatalf("EventPrune: %v", err)
		}
		got = append(got, n)
		if n < 2 {
			break
		}
	}
	if diff := cmp.Diff([]int{2, 2, 0}, got); diff != "" {
		t.Errorf("EventPrune batches (-want +got):\n%s", diff)
	}
	for id, held := range map[string]bool{
		"a-held/approval.requested": true, "a-held/approval.resolved": true, // its tombstone is held
		"unknown-young":             true, // too young
		"a-gone/approval.requested": false, "a-gone/approval.resolved": false,
		"auto-old": false, "unknown-old": false,
	} {
		digest := "sha-" + id
		if i := strings.IndexByte(id, '/'); i >= 0 {
			digest = "sha-" + id[i+1:]
		}
		if got := redelivered(t, s, id, digest); got != held {
			t.Errorf("event %s held %v, want %v", id, got, held)
		}
	}
}

func testOutboxPrune(t *testing.T, s store.Store) {
	ctx := t.Context()
	now := at(0)
	enqueue(t, s, effect("done-old", now), effect("dead-old", now), effect("done-young", now), effect("pending-old", now.Add(time.Hour)))
	claim(t, s, "w1", now, 10)
	complete(t, s, "done-old", "w1", now)
	if err := s.OutboxDead(ctx, store.OutboxDeadParams{ID: "dead-old", Worker: "w1", Now: now, Error: "gone"}); err != nil {
		t.Fatal(err)
	}
	complete(t, s, "done-young", "w1", now.Add(10*day))

	var got []int
	for {
		n, err := s.OutboxPrune(ctx, store.OutboxPruneParams{Before: now.Add(day), Limit: 1})
		if err != nil {
			t.Fatalf("OutboxPrune: %v", err)
		}
		got = append(got, n)
		if n < 1 {
			break
		}
	}
	if diff := cmp.Diff([]int{1, 1, 0}, got); diff != "" {
		t.Errorf("OutboxPrune batches (-want +got):\n%s", diff)
	}
	// A deleted row is unknown (ErrNotFound); a finished one kept is not
	// (ErrLeaseLost); the pending one is still claimable.
	for id, want := range map[string]error{"done-old": store.ErrNotFound, "dead-old": store.ErrNotFound, "done-young": store.ErrLeaseLost} {
		err := s.OutboxComplete(ctx, store.OutboxCompleteParams{ID: id, Worker: "w1", Now: now})
		wantErr(t, "complete "+id, err, want)
	}
	wantIDs(t, "pending row after pruning", outboxIDs(claim(t, s, "w2", now.Add(2*day), 10)), []string{"pending-old"})
	st, err := s.OutboxStats(ctx, now)
	if err != nil || st.Dead != 0 || st.Pending != 1 {
		t.Errorf("OutboxStats after pruning: %+v, %v; want 1 pending, 0 dead", st, err)
	}
}

// dropReply removes the mark scrubTests look for, recording each payload
// it was given.
type dropReply struct{ seen []string }

func (d *dropReply) scrub(b []byte) []byte {
	d.seen = append(d.seen, string(b))
	return []byte(strings.Replace(string(b), `"reply":"h",`, "", 1))
}

func testOutboxScrub(t *testing.T, s store.Store) {
	ctx := t.Context()
	row := func(id, kind, target string, created time.Time) store.OutboxInsertParams {
		r := effect(id, created)
		r.Kind, r.Target = kind, target
		r.Payload = []byte(`{"reply":"h","id":"` + id + `"}`)
		return r
	}
	// A done row is scrubbed as much as a pending one.
	enqueue(t, s, row("slack-done", "tell", "slack:U2", at(time.Minute)))
	complete(t, s, claimIDs(t, s, at(time.Minute), "slack-done"), "seed", at(time.Minute))
	enqueue(t, s,
		row("slack-old", "tell", "slack:U1", at(0)),
		row("slack-young", "tell", "slack:U1", at(time.Hour)),
		row("discord-old", "tell", "discord:user:1", at(0)),
		row("reply-old", "reply", "slack:C1", at(0)),
		row("slack-before-window", "tell", "slack:U3", at(-time.Hour)),
	)
	d := &dropReply{}
	p := store.OutboxScrubParams{Kind: "tell", TargetPrefix: "slack:", CreatedAfter: at(-time.Minute),
		CreatedBefore: at(30 * time.Minute), Contains: `"reply":`, Limit: 10, Scrub: d.scrub}
	n, err := s.OutboxScrub(ctx, p)
	if err != nil || n != 2 {
		t.Fatalf("OutboxScrub = %d, %v; want 2 (slack-old, slack-done)", n, err)
	}
	if len(d.seen) != 2 || !strings.Contains(d.seen[0], "slack-old") || !strings.Contains(d.seen[1], "slack-done") {
		t.Errorf("Scrub saw %q, want slack-old then slack-done", d.seen)
	}
	// Scrubbed rows no longer hold the mark: not read again.
	if n, err := s.OutboxScrub(ctx, p); err != nil || n != 0 {
		t.Errorf("second OutboxScrub = %d, %v", n, err)
	}
	// A nil from Scrub leaves the row and does not count.
	p.TargetPrefix, p.Scrub = "discord:", func([]byte) []byte { return nil }
	if n, err := s.OutboxScrub(ctx, p); err != nil || n != 0 {
		t.Errorf("OutboxScrub leaving rows = %d, %v", n, err)
	}
	p.Contains = "50%_off"
	if _, err := s.OutboxScrub(ctx, p); err == nil {
		t.Error("OutboxScrub took LIKE wildcards")
	}
	// What the rows hold now, read through a claim.
	want := map[string]string{
		"slack-old":           `{"id":"slack-old"}`,
		"slack-young":         `{"reply":"h","id":"slack-young"}`,
		"discord-old":         `{"reply":"h","id":"discord-old"}`,
		"reply-old":           `{"reply":"h","id":"reply-old"}`,
		"slack-before-window": `{"reply":"h","id":"slack-before-window"}`,
	}
	got := map[string]string{}
	for _, r := range claim(t, s, "w2", at(2*time.Hour), 10) {
		got[r.ID] = string(r.Payload)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payloads (-want +got):\n%s", diff)
	}
}

func testApprovalScrub(t *testing.T, s store.Store) {
	ctx := t.Context()
	mk := func(id, deciding string, updated time.Time) *store.Approval {
		a := pendingApproval(id, "t1", updated)
		a.UpdatedAt, a.Deciding = updated, []byte(deciding)
		return a
	}
	upsert(t, s,
		mk("a-old", `{"reply":"h","actor":"user:kevin"}`, at(0)),
		mk("a-young", `{"reply":"h","actor":"user:ada"}`, at(time.Hour)),
		mk("a-none", `{"actor":"system:deadline"}`, at(0)),
		pendingApproval("a-idle", "t1", at(0)),
	)
	before := map[string]*store.Approval{}
	for _, id := range []string{"a-old", "a-young", "a-none", "a-idle"} {
		before[id] = mustGet(t, s, id)
	}
	d := &dropReply{}
	n, err := s.ApprovalScrub(ctx, store.ApprovalScrubParams{UpdatedBefore: at(15 * time.Minute), Contains: `"reply":`,
		Limit: 10, Scrub: d.scrub})
	if err != nil || n != 1 {
		t.Fatalf("ApprovalScrub = %d, %v; want 1", n, err)
	}
	want := before["a-old"]
	want.Deciding = []byte(`{"actor":"user:kevin"}`)
	for id, a := range before {
		if diff := cmp.Diff(a, mustGet(t, s, id)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", id, diff)
		}
	}
	if len(d.seen) != 1 {
		t.Errorf("Scrub saw %q, want a-old's only", d.seen)
	}
	if n, err := s.ApprovalScrub(ctx, store.ApprovalScrubParams{UpdatedBefore: at(15 * time.Minute), Contains: `"reply":`,
		Limit: 10, Scrub: d.scrub}); err != nil || n != 0 {
		t.Errorf("second ApprovalScrub = %d, %v", n, err)
	}
}

// A write to an approval being pruned, in another transaction, is not
// lost, and the prune does not fail: afterwards the approval is either a
// tombstone with the write's state, or closed with its decision (the
// prune passed over it), never a mix.
func testApprovalPruneBesideWriter(t *testing.T, s store.Store) {
	ctx := t.Context()
	for i := range 20 {
		withHistory(t, s, closedApproval(fmt.Sprintf("a%02d", i), at(0)))
	}
	errs := make(chan error, 1)
	go func() {
		var err error
		for i := range 20 {
			id := fmt.Sprintf("a%02d", i)
			err = errors.Join(err, s.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
				a, err := tx.ApprovalGetForUpdate(ctx, id)
				if err != nil {
					return err
				}
				a.Seen = false // stands for any write of a closed approval's row
				return tx.ApprovalUpsert(ctx, a)
			}))
		}
		errs <- err
	}()
	for {
		n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 3})
		if err != nil {
			t.Fatalf("ApprovalPrune: %v", err)
		}
		if n == 0 {
			break
		}
	}
	if err := <-errs; err != nil {
		t.Fatalf("writer: %v", err)
	}
	// What the first loop passed over while the writer held it.
	for {
		n, err := s.ApprovalPrune(ctx, store.ApprovalPruneParams{Before: at(day), Limit: 3})
		if err != nil {
			t.Fatalf("ApprovalPrune: %v", err)
		}
		if n == 0 {
			break
		}
	}
	for i := range 20 {
		a := mustGet(t, s, fmt.Sprintf("a%02d", i))
		if a.Seen || !a.Pruned() || a.Plan != nil || a.Function != "" {
			t.Errorf("%s after prune beside a writer: %+v", a.ID, a)
		}
	}
}
