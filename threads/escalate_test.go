package threads_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

var requested = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

func (h *harness) tick(t *testing.T) threads.TickResult {
	t.Helper()
	res, err := h.svc.Tick(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (h *harness) at(t *testing.T, d time.Duration) {
	t.Helper()
	h.clock.Advance(requested.Add(d).Sub(h.clock.Now()))
}

func (h *harness) escalations() []threads.ReplyRequest {
	var out []threads.ReplyRequest
	for _, r := range h.surf.replies {
		if r.Kind == templates.ThreadEscalation {
			out = append(out, r)
		}
	}
	return out
}

func mentionTargets(r threads.ReplyRequest) string {
	var s []string
	for _, m := range r.Mentions {
		s = append(s, m.Target+"="+m.Name)
	}
	return strings.Join(s, " ")
}

func TestLadderStepsFireAtTheirTimesAndTheDeadlineDenies(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)

	h.at(t, 15*time.Minute-time.Millisecond)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("a step fired early: %+v", r)
	}
	edits := len(h.surf.edits)
	h.at(t, 15*time.Minute)
	if r := h.tick(t); r.Steps != 1 || r.Approvals != 1 {
		t.Fatalf("at 15m: %+v", r)
	}
	h.drain(t)
	// No copy is edited for a step: a card shows the ladder as frozen at
	// request, so a step costs no edit of any card; its thread reply says
	// what happened.
	if n := len(h.surf.edits) - edits; n != 0 {
		t.Errorf("a ladder step edited %d cards", n)
	}
	esc := h.escalations()
	if len(esc) != 2 { // one reply per thread (Slack and Discord), never one per person
		t.Fatalf("escalation replies %d", len(esc))
	}
	if got := mentionTargets(esc[0]); got != "slack:U0KEVIN=kevin slack:S0ONCALL=S0ONCALL" {
		t.Fatalf("mentions %q", got)
	}
	if esc[0].Waited != 15*time.Minute {
		t.Errorf("waited %v", esc[0].Waited)
	}
	if a := h.state(t, "a-merge1"); !a.NextStepAt.Equal(requested.Add(time.Hour)) {
		t.Fatalf("next step at %v", a.NextStepAt)
	}

	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	var dm *threads.PostRequest
	for i := range h.surf.posts {
		if h.surf.posts[i].Target == "slack:U0LEE" {
			dm = &h.surf.posts[i]
		}
	}
	if dm == nil || dm.Card.State != approval.StatePending {
		t.Fatalf("no DM card for slack:U0LEE: %+v", h.surf.posts)
	}
	if len(h.surf.mails) != 1 || h.surf.mails[0].To != "leads@acme.example" || h.surf.mails[0].Step != 2 || h.surf.mails[0].Thread != (threads.MailThread{}) {
		t.Fatalf("mails %+v", h.surf.mails)
	}
	if u := h.surf.mails[0].Card.ThreadURL; !strings.HasPrefix(u, "https://chat.example/") {
		t.Errorf("the mail does not link to the card's thread: %q", u)
	}

	h.at(t, 4*time.Hour)
	h.tick(t)
	h.at(t, 23*time.Hour)
	h.tick(t)
	h.drain(t)
	if n := len(h.escalations()); n != 6 {
		t.Fatalf("escalation replies after four steps: %d", n)
	}
	h.at(t, 24*time.Hour-time.Millisecond)
	if r := h.tick(t); r.Deadlines != 0 {
		t.Fatal("the deadline fired early")
	}
	// A click received before the deadline may still be being recorded
	// for threads.RecordBound after it: the deny is recorded at the
	// deadline's tick, and waits as long to be sent.
	h.at(t, 24*time.Hour+threads.RecordBound-time.Millisecond)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("at the deadline: %+v", r)
	}
	h.drain(t)
	if n := len(h.fake.Decisions()); n != 0 {
		t.Fatalf("the backend got %d decisions while a click received before the deadline could still be being recorded", n)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 {
		t.Fatalf("backend got %d decisions", len(got))
	}
	d := got[0].Request
	if d.Decision != "deny" || d.Actor != "system:deadline" || d.Via.Surface != "deadline" || d.Comment != "nobody answered" || d.ArgsSHA256 != "" {
		t.Fatalf("the deadline sent %+v", d)
	}
	if a := h.state(t, "a-merge1"); a.State != "expired" {
		t.Fatalf("state %s", a.State)
	}
	for _, e := range h.surf.edits[len(h.surf.edits)-3:] {
		if e.Card.State != approval.StateExpired {
			t.Fatalf("a copy shows %s after the deadline", e.Card.State)
		}
	}
	// Nothing more fires for a closed approval.
	h.at(t, 48*time.Hour)
	if r := h.tick(t); r.Approvals != 0 {
		t.Fatalf("a closed approval was claimed: %+v", r)
	}
}

// Steps missed while the bot was down fire once, merged into one message
// per thread.
func TestMissedStepsFireOnceMerged(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 4*time.Hour+30*time.Minute)
	if r := h.tick(t); r.Steps != 3 {
		t.Fatalf("tick after downtime: %+v", r)
	}
	h.drain(t)
	esc := h.escalations()
	if len(esc) != 2 {
		t.Fatalf("%d escalation replies, want one per thread", len(esc))
	}
	if got := mentionTargets(esc[0]); got != "slack:U0KEVIN=kevin slack:S0ONCALL=S0ONCALL slack:U0ADA=ada" {
		t.Fatalf("merged mentions %q", got)
	}
	if len(h.surf.mails) != 1 {
		t.Fatalf("mails %d", len(h.surf.mails))
	}
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("missed steps fired twice: %+v", r)
	}
}

// A decision that lands after a step was claimed stops the step's messages.
func TestDecisionBetweenClaimAndSendStopsTheStep(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, time.Hour)
	if r := h.tick(t); r.Steps != 2 {
		t.Fatalf("tick: %+v", r)
	}
	h.ingest(t, "merge-resolved.json") // decided in the console meanwhile
	h.drain(t)
	if n := len(h.escalations()); n != 0 {
		t.Fatalf("%d escalation replies went out for a decided approval", n)
	}
	if len(h.surf.mails) != 0 {
		t.Fatal("an escalation mail went out for a decided approval")
	}
	for _, p := range h.surf.posts {
		if p.Target == "slack:U0LEE" {
			t.Fatal("a DM went out for a decided approval")
		}
	}
}

// A tool's shorter deadline skips the steps that would fall after it.
func TestStepsAfterTheDeadlineAreSkipped(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "refund.json") // its own deadline: 2h after the request
	h.drain(t)
	h.at(t, 2*time.Hour+threads.RecordBound)
	r := h.tick(t)
	if r.Deadlines != 1 {
		t.Fatalf("tick at the deadline: %+v", r)
	}
	if r.Steps != 0 {
		t.Fatalf("steps fired at the deadline: %+v", r)
	}
}

// No automatic path ever approves: random events, ticks, clicks and
// restarts; every approve the backend received came from a person's click.
func TestNothingAutomaticApproves(t *testing.T) {
	// Across the seeds both paths must really run, or the property would
	// hold of nothing: people's approves reach the backend, and deadlines
	// deny.
	var clickedApproves, deadlineDenies int
	for seed := uint64(1); seed <= 12; seed++ {
		h := newDecideHarness(t, 20*time.Millisecond)
		rng := rand.New(rand.NewPCG(seed, 7))
		for _, id := range []string{"a-merge1", "a-mail1", "a-refund1", "a-search1", "a-unk1", "a-priv1"} {
			name := id + ".json"
			h.fake.AddApproval(id, 1, arguments(t, name), id == "a-priv1")
		}
		events := []string{"merge.json", "mail.json", "refund.json", "search.json", "unknown.json", "private.json",
			"merge-reasked.json", "merge-resolved.json", "mail-cancelled.json", "refund-recheck.json", "search-finished.json", "auto.json"}
		approveClicks := 0 // approvals people sent
		for step := 0; step < 120; step++ {
			switch rng.IntN(7) {
			case 0, 1:
				name := events[rng.IntN(len(events))]
				h.ingest(t, name)
			case 2:
				h.clock.Advance(time.Duration(rng.IntN(180)) * time.Minute)
				h.tick(t)
			case 3:
				ids := []string{"a-merge1", "a-mail1", "a-refund1", "a-search1", "a-unk1", "a-priv1"}
				// Mostly people who may decide, some who may not (the
				// starter, a viewer); mostly the first revision.
				users := []string{"U0KEVIN", "U0LEE", "U0KEVIN", "U0LEE", "U0ADA", "U0VIC"}
				rev := 1
				if rng.IntN(4) == 0 {
					rev = 2
				}
				approve := rng.IntN(3) > 0
				res := h.decide(t, ids[rng.IntN(len(ids))], rev, approve, users[rng.IntN(len(users))])
				if res.Sent && approve {
					approveClicks++
				}
			case 4:
				h.drain(t)
			case 5:
				if rng.IntN(3) == 0 {
					h.fake.FailNext(rng.IntN(3), 503)
				}
			case 6:
				h.restart(t)
			}
		}
		h.clock.Advance(72 * time.Hour)
		h.tick(t)
		h.drain(t)
		keys := map[string]bool{} // one key per decision, however often retried
		for _, d := range h.fake.Decisions() {
			if d.Request.Decision != "approve" {
				continue
			}
			keys[d.IdempotencyKey] = true
			if d.Request.Via.Surface != "slack" || !strings.HasPrefix(d.Request.Actor, "user:") || d.Request.Via.User == "" {
				t.Fatalf("seed %d: an approve not from a person's click: %+v", seed, d.Request)
			}
		}
		clickedApproves += len(keys)
		if len(keys) > approveClicks {
			t.Fatalf("seed %d: the backend received %d approves from %d clicks", seed, len(keys), approveClicks)
		}
		for _, d := range h.fake.Decisions() {
			if d.Request.Actor == "system:deadline" {
				if d.Request.Decision != "deny" {
					t.Fatalf("seed %d: the deadline sent %s", seed, d.Request.Decision)
				}
				deadlineDenies++
			}
		}
	}
	if clickedApproves == 0 || deadlineDenies == 0 {
		t.Fatalf("the runs exercised %d clicked approves and %d deadline denies: both must happen", clickedApproves, deadlineDenies)
	}
	t.Logf("%d clicked approves and %d deadline denies across the seeds", clickedApproves, deadlineDenies)
}

func TestDigestListsWhatWaitsOldestFirst(t *testing.T) {
	items := []threads.Waiting{
		{ApprovalID: "a-old", Function: "mail.send", Requested: requested, Deadline: requested.Add(24 * time.Hour)},
		{ApprovalID: "a-new", Function: "acme_github.merge", Requested: requested.Add(90 * time.Minute)},
	}
	got := threads.DigestText("acme", items, true, requested.Add(2*time.Hour))
	want := "2 waiting for a decision in acme, oldest first:\n" +
		"• mail.send (a-old) · waiting 2h · deadline 2026-11-30 18:00 UTC\n" +
		"• acme_github.merge (a-new) · waiting 30m\n" +
		"… and more: the console lists them all."
	if got != want {
		t.Fatalf("digest:\n%s\nwant:\n%s", got, want)
	}
	if got := threads.DigestText("acme", nil, false, requested); got != "Nothing waits for a decision in acme." {
		t.Fatalf("empty digest %q", got)
	}
	h := newHarness(t)
	h.ingest(t, "mail.json")
	h.ingest(t, "merge.json")
	w, more, err := h.svc.Waiting(context.Background(), "acme", 10)
	if err != nil || more || len(w) != 2 {
		t.Fatalf("waiting %+v %v %v", w, more, err)
	}
}

// A reask reaches everyone who had a card: the DM the ladder sent gets
// the new card in the same conversation, not only the channels.
func TestReaskReachesTheLaddersDMs(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	var dmRevs []int
	for _, p := range h.surf.posts {
		if p.Target == "slack:U0LEE" {
			dmRevs = append(dmRevs, p.Card.Approval.Revision)
			if p.Card.Approval.Revision == 2 && (p.Thread == nil || p.Thread.Revision != 1) {
				t.Errorf("the new card did not go under the first DM card: %+v", p.Thread)
			}
		}
	}
	if len(dmRevs) != 2 || dmRevs[1] != 2 {
		t.Fatalf("cards in the DM: revisions %v, want 1 then 2", dmRevs)
	}
}
