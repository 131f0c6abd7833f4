package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
)

const day = 24 * time.Hour

// retentionHarness is the decision harness with its metrics kept, and
// the retention the configuration gives by default.
type retentionHarness struct {
	*decideHarness
	reg    *prometheus.Registry
	pruner *threads.Pruner
}

// pruned reads bot_pruned_total{what} as /metrics would show it.
func (h *retentionHarness) pruned(t *testing.T, what string) float64 {
	t.Helper()
	mfs, err := h.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "bot_pruned_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "what" && l.GetValue() == what {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

func newRetentionHarness(t *testing.T) *retentionHarness {
	t.Helper()
	secret := [][]byte{[]byte(testCallsSecret)}
	fake := backendtest.New(t, standin.Options{Secrets: secret})
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: fake.URL(), Secrets: secret,
		MaxElapsed: time.Minute, Sleep: func(ctx context.Context, d time.Duration) error { return ctx.Err() }})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	h := newHarnessWith(t, func(o *threads.Options) {
		o.Backend = client.ForThreads()
		o.Metrics = threads.NewMetrics(reg)
	})
	return &retentionHarness{decideHarness: &decideHarness{harness: h, fake: fake}, reg: reg,
		pruner: h.svc.Pruner(threads.Retention{Closed: 30 * day, Tombstones: 365 * day})}
}

func (h *retentionHarness) prune(t *testing.T) threads.PruneResult {
	t.Helper()
	res, err := h.pruner.Prune(context.Background())
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	return res
}

// seen is everything the surface was asked to do, to compare before and
// after.
func (h *retentionHarness) seen() [6]int {
	r := h.surf
	r.mu.Lock()
	defer r.mu.Unlock()
	return [6]int{len(r.posts), len(r.edits), len(r.replies), len(r.notices), len(r.tells), len(r.mails)}
}

// withNewID is an event's body with another event id: the same request
// sent again as a new event.
func withNewID(t *testing.T, name, id string) ([]byte, *approval.Event) {
	t.Helper()
	body, ev := readEvent(t, name)
	body = bytes.Replace(body, []byte(`"id": "`+ev.ID+`"`), []byte(`"id": "`+id+`"`), 1)
	again, err := approval.Parse(body)
	if err != nil || again.ID != id {
		t.Fatalf("re-id %s: %v (id %q)", name, err, again.ID)
	}
	return body, again
}

// An approval decided long ago is pruned to its tombstone, and the
// tombstone keeps deduplication whole: the original request redelivered
// is a duplicate, and the same request under a new event id (or a
// re-ask) is accepted and ignored. No card is posted and nothing is sent.
func TestPrunedApprovalNeverPostsAgain(t *testing.T) {
	h := newRetentionHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("not sent: %s", res.Reason.String())
	}
	h.drain(t)
	if a := h.state(t, "a-merge1"); a.State != string(approval.StateApproved) {
		t.Fatalf("state %s, want approved", a.State)
	}
	before := h.seen()
	if before[0] != 2 {
		t.Fatalf("posted %d cards, want 2", before[0])
	}

	// Within the retention only the handle of Kevin's click goes (its
	// 30 minutes are long past).
	h.clock.Advance(29 * day)
	if res := h.prune(t); res[threads.PrunedApprovals] != 0 || res[threads.PrunedOutbox] != 0 || res[threads.PrunedHandles] != 1 {
		t.Fatalf("pruned within the retention: %v, want the handle only", res)
	}
	h.clock.Advance(2 * day)
	res := h.prune(t)
	// Two posts, two edits, two replies, the decision and the answer to
	// Kevin: every row finished, every one deleted.
	if res[threads.PrunedApprovals] != 1 || res[threads.PrunedOutbox] != 8 || res[threads.PrunedHandles] != 0 {
		t.Fatalf("pruned %v, want 1 approval, 8 outbox rows", res)
	}
	for what, want := range map[string]float64{threads.PrunedApprovals: 1, threads.PrunedOutbox: 8, threads.PrunedHandles: 1, threads.PrunedEvents: 0} {
		if got := h.pruned(t, what); got != want {
			t.Errorf("bot_pruned_total{what=%q} = %v, want %v", what, got, want)
		}
	}
	ctx := context.Background()
	a := h.state(t, "a-merge1")
	if !a.Pruned() || a.State != string(approval.StateApproved) || a.Plan != nil || a.Function != "" || !a.Seen {
		t.Fatalf("tombstone %+v", a)
	}
	if _, err := h.store.RevisionGet(ctx, "a-merge1", 1); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the request body outlived the retention: %v", err)
	}
	if posts, err := h.store.PostList(ctx, "a-merge1"); err != nil || len(posts) != 0 {
		t.Errorf("posts outlived the retention: %v, %v", posts, err)
	}

	// The original request, redelivered.
	if res := h.ingest(t, "merge.json"); !res.Duplicate {
		t.Errorf("redelivered request: %+v, want duplicate", res)
	}
	// The same request as a new event, and a re-ask of it.
	body, ev := withNewID(t, "merge.json", "evt-0001-again")
	got, err := h.ingestBody(body, ev)
	if err != nil || got.Duplicate || !strings.Contains(got.Ignored, "already approved") {
		t.Errorf("request under a new event id: %+v, %v; want accepted and ignored (already approved)", got, err)
	}
	if got := h.ingest(t, "merge-reasked.json"); got.Duplicate || got.Ignored == "" {
		t.Errorf("re-ask: %+v, want ignored", got)
	}
	// A late re-check changes the tombstone no more: it would bring back
	// a refused record with no plan or revision.
	recheck, _ := readEvent(t, "refund-recheck.json")
	recheck = bytes.Replace(recheck, []byte(`"a-refund1"`), []byte(`"a-merge1"`), 1)
	recheck = bytes.Replace(recheck, []byte(`"evt-0013"`), []byte(`"evt-recheck-late"`), 1)
	late, err := approval.Parse(recheck)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := h.ingestBody(recheck, late); err != nil || got.Ignored == "" {
		t.Errorf("late re-check: %+v, %v; want ignored", got, err)
	}
	if a := h.state(t, "a-merge1"); !a.Pruned() || a.State != string(approval.StateApproved) {
		t.Errorf("after a late re-check the tombstone is %+v", a)
	}
	if n := h.drain(t); n != 0 {
		t.Errorf("performed %d rows for a pruned approval", n)
	}
	// A click on the old card sends nothing.
	if res := h.decide(t, "a-merge1", 1, false, "U0LEE"); res.Sent || !strings.Contains(res.Reason.String(), "nothing was sent") {
		t.Errorf("click on a pruned card: %+v", res)
	}
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 1 {
		t.Errorf("the backend got %d decisions, want the first only", n)
	}
	if after := h.seen(); after != before {
		t.Errorf("the surface was asked more after pruning: %v, then %v", before, after)
	}

	// The tombstone and its event ids are kept for a year after the last
	// event about it (the re-sends, 31 days after the close), then
	// forgotten.
	h.clock.Advance(335 * day) // 366 days after the close
	if res := h.prune(t); res[threads.PrunedTombstones] != 0 || res[threads.PrunedEvents] != 0 {
		t.Fatalf("forgot within a year of the last re-send: %v", res)
	}
	if res := h.ingest(t, "merge.json"); !res.Duplicate {
		t.Errorf("redelivered after 366 days: %+v, want duplicate", res)
	}
	h.clock.Advance(31 * day)
	res = h.prune(t)
	// merge.json, its copy under a new id, the re-ask and the late
	// re-check.
	if res[threads.PrunedTombstones] != 1 || res[threads.PrunedEvents] != 4 {
		t.Fatalf("a year after the last re-send: %v, want 1 tombstone and 4 event ids forgotten", res)
	}
	if _, err := h.store.ApprovalGet(ctx, "a-merge1"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("tombstone after a year: %v", err)
	}
}

// A chat handle leaves the store once its platform stops honouring it,
// from the answers still waiting and from a decision in flight; the
// person is then answered without it.
func TestLapsedHandlesAreDropped(t *testing.T) {
	h := newRetentionHarness(t)
	ctx := context.Background()
	now := h.clock.Now()
	tell := func(id, target, user, reply string) store.OutboxInsertParams {
		body, _ := json.Marshal(map[string]any{"user": user, "channel": "C0APPROVALS", "reply": reply, "text": "hello " + user})
		return store.OutboxInsertParams{ID: id, Tenant: "acme", ApprovalID: "a-merge1", Kind: threads.KindTell,
			Target: target, Payload: body, NotBefore: now.Add(time.Hour), Now: now}
	}
	err := h.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{
			tell("t-slack", "slack:U0KEVIN", "U0KEVIN", "https://hooks.slack.com/actions/T1/1/secret"),
			tell("t-discord", "discord:user:223344556677889900", "223344556677889900", "discord-interaction-token"),
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(14 * time.Minute)
	if res := h.prune(t); res[threads.PrunedHandles] != 0 {
		t.Fatalf("dropped a handle still alive: %v", res)
	}
	h.clock.Advance(2 * time.Minute) // 16 minutes: Discord's token has lapsed, Slack's URL lives
	if res := h.prune(t); res[threads.PrunedHandles] != 1 {
		t.Fatalf("16 minutes on: %v, want Discord's handle dropped", res)
	}
	h.clock.Advance(time.Hour)
	h.drain(t)
	replies := map[string]string{}
	for _, tl := range h.surf.tells {
		replies[tl.User] = tl.Reply
		if !strings.HasPrefix(tl.Text, "hello ") {
			t.Errorf("tell %+v lost its text", tl)
		}
	}
	if len(replies) != 2 || replies["223344556677889900"] != "" || replies["U0KEVIN"] == "" {
		t.Errorf("tells' handles %q: want Discord's dropped and Slack's kept", replies)
	}
	if res := h.prune(t); res[threads.PrunedHandles] != 1 {
		t.Errorf("an hour on: %v, want Slack's handle dropped from its done row", res)
	}
}

func TestLapsedHandleLeavesDecisionInFlight(t *testing.T) {
	h := newRetentionHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("not sent: %s", res.Reason.String())
	}
	// The backend does not answer for a while (the decision stays in
	// flight); the click's response_url lapses meanwhile.
	h.clock.Advance(29 * time.Minute)
	if res := h.prune(t); res[threads.PrunedHandles] != 0 {
		t.Fatalf("dropped a live handle: %v", res)
	}
	h.clock.Advance(2 * time.Minute)
	if res := h.prune(t); res[threads.PrunedHandles] != 1 {
		t.Fatalf("31 minutes on: %v, want the decision's handle dropped", res)
	}
	var d map[string]any
	if err := json.Unmarshal(h.state(t, "a-merge1").Deciding, &d); err != nil {
		t.Fatal(err)
	}
	if _, ok := d["reply"]; ok || d["actor"] != "user:kevin" || d["surface"] != "slack" {
		t.Fatalf("decision in flight %v: want it whole but its handle", d)
	}
	h.drain(t)
	if a := h.state(t, "a-merge1"); a.State != string(approval.StateApproved) {
		t.Fatalf("state %s: the decision did not land", a.State)
	}
	if tl := h.lastTell(t); tl.Reply != "" || tl.Card != nil || !strings.Contains(tl.Text, "Recorded") {
		t.Errorf("answer %+v: want it told without the lapsed handle", tl)
	}
}
