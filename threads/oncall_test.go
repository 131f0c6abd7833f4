package threads_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/store"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// oncallConfig is acme paging like an on-call tool: in Berlin's zone, a
// weekly rotation handing off Monday 09:00 (kevin's week from 2026-11-23,
// ada's from 2026-11-30), a mention of whoever is on duty that repeats
// every 30m twice more, and a DM and mail to them held to office hours.
const oncallConfig = `
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
slack:
  bot_token: "${SLACK_BOT_TOKEN}"
  signing_secret: "${SLACK_SIGNING_SECRET}"
discord:
  bot_token: "${DISCORD_BOT_TOKEN}"
  application_id: "1100000000000000000"
tenants:
  acme:
    zone: Europe/Berlin
    deadline: 72h
    post: [slack:C0APPROVALS, discord:channel:112233445566778899]
    rotations:
      primary:
        members: [user:kevin, user:ada]
        every: 1w
        handoff: "mon 09:00"
        start: 2026-11-23
    ladders:
      default:
        - after: 15m
          mention: [rotation:primary]
          repeat: {every: 30m, times: 2}
        - after: 1h
          dm: [rotation:primary]
          email: [rotation:primary]
          during: {days: mon-fri, hours: "09:00-18:00"}
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN, discord: "223344556677889900", email: kevin@acme.example}
      - {user: "user:ada", role: owner, content: true, slack: U0ADA, email: ada@acme.example}
      - {user: "user:lee", role: operator, content: true, slack: U0LEE, email: lee@acme.example}
`

// reloadable is the tenants of a configuration a reload replaces, as
// SIGHUP does.
type reloadable struct {
	mu  sync.Mutex
	cfg *config.Config
}

func (r *reloadable) Tenant(id string) (*tenant.Tenant, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	tn, ok := r.cfg.Tenants[id]
	return tn, ok
}

func (r *reloadable) reload(t *testing.T, text string) {
	t.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(text), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cfg = cfg
}

func newOncallHarness(t *testing.T) (*decideHarness, *reloadable) {
	t.Helper()
	h := newDecideHarness(t, time.Minute)
	src := &reloadable{}
	src.reload(t, oncallConfig)
	h.opts.Tenants = src
	h.restart(t)
	return h, src
}

// repliesSince is the escalation replies after the first n, by thread.
func repliesSince(h *decideHarness, n int) map[string]string {
	out := map[string]string{}
	for _, r := range h.escalations()[n:] {
		out[r.Root.Target] += mentionTargets(r) + ";"
	}
	return out
}

func frozenOf(t *testing.T, h *decideHarness, id string) threads.Frozen {
	t.Helper()
	var fz threads.Frozen
	if err := json.Unmarshal(h.state(t, id).Plan, &fz); err != nil {
		t.Fatal(err)
	}
	return fz
}

// A repeating step fires each repetition as one message per thread;
// repetitions missed while the bot was down go out once, merged; a step
// held to office hours waits for Monday 09:00; and a rotation tells whom
// its definition, frozen at request, puts on duty when the step fires,
// whatever a reload changed since, a hand-off at that very instant
// included.
func TestRepeatWindowAndRotationAtFireTime(t *testing.T) {
	h, src := newOncallHarness(t)
	h.ingest(t, "merge.json") // Sunday 2026-11-29 19:00 in Berlin: kevin's week
	h.drain(t)
	const slackThread, discordThread = "slack:C0APPROVALS", "discord:channel:112233445566778899"
	kevinIn := map[string]string{
		slackThread:   "slack:U0KEVIN=kevin;",
		discordThread: "discord:user:223344556677889900=kevin;",
	}

	h.at(t, 15*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("at 15m: %+v", r)
	}
	h.drain(t)
	if got := repliesSince(h, 0); len(got) != 2 || got[slackThread] != kevinIn[slackThread] || got[discordThread] != kevinIn[discordThread] {
		t.Fatalf("first firing: %v; want kevin, by the user of each thread's surface", got)
	}

	// Down from 15m to 1h20m: both repetitions were missed.
	h.restart(t)
	h.at(t, time.Hour+20*time.Minute)
	if r := h.tick(t); r.Steps != 2 {
		t.Fatalf("after downtime: %+v, want the two missed repetitions", r)
	}
	h.drain(t)
	if got := repliesSince(h, 2); len(got) != 2 || got[slackThread] != kevinIn[slackThread] || got[discordThread] != kevinIn[discordThread] {
		t.Fatalf("missed repetitions: %v; want one reply per thread naming kevin once", got)
	}
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("a repetition fired twice: %+v", r)
	}
	if n := len(h.escalations()); n != 4 {
		t.Fatalf("%d escalation replies, want 4: two firings, two threads", n)
	}

	// The DM step was due Sunday 20:00 in Berlin: it waits for Monday 09:00
	// there, 08:00 UTC, which is also the hand-off to ada.
	monday := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	if a := h.state(t, "a-merge1"); !a.NextStepAt.Equal(monday) {
		t.Fatalf("next step at %s, want %s", a.NextStepAt, monday)
	}
	h.clock.Advance(monday.Add(-time.Minute).Sub(h.clock.Now()))
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("a held step fired outside its window: %+v", r)
	}

	// A reload puts only lee in the rotation and changes the ladder:
	// a-merge1 keeps what it was given; a request after the reload gets
	// the new ladder.
	reloaded := strings.Replace(oncallConfig, "members: [user:kevin, user:ada]", "members: [user:lee]", 1)
	from, to := strings.Index(reloaded, "    ladders:\n"), strings.Index(reloaded, "    members:\n")
	src.reload(t, reloaded[:from]+"    ladders:\n      default:\n        - after: 5m\n          mention: [rotation:primary]\n"+reloaded[to:])
	h.ingest(t, "mail.json")
	h.drain(t)
	if fz := frozenOf(t, h, "a-mail1"); len(fz.Plan.Rotations["primary"].Members) != 1 || fz.Plan.Rotations["primary"].Members[0].User != "user:lee" {
		t.Fatalf("a request after the reload froze %+v", fz.Plan.Rotations)
	}
	before := len(h.escalations())
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("a-mail1's step: %+v", r)
	}
	h.drain(t)
	if got := repliesSince(h, before); got[slackThread] != "slack:U0LEE=lee;" {
		t.Fatalf("a-mail1 mentions %v, want lee", got)
	}

	h.clock.Advance(monday.Sub(h.clock.Now()))
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("at Monday 09:00 in Berlin: %+v", r)
	}
	h.drain(t)
	var dms []string
	for _, p := range h.surf.posts {
		if strings.HasPrefix(p.Target, "slack:U") || strings.HasPrefix(p.Target, "discord:user:") {
			dms = append(dms, p.Target)
		}
	}
	if strings.Join(dms, " ") != "slack:U0ADA" {
		t.Errorf("DMs %v, want ada's Slack only: she is on duty from the hand-off at this instant, and has no Discord", dms)
	}
	var mails []string
	for _, m := range h.surf.mails {
		mails = append(mails, m.To)
	}
	if strings.Join(mails, " ") != "ada@acme.example" {
		t.Errorf("mails %v, want ada's", mails)
	}
	if a := h.state(t, "a-merge1"); !a.NextStepAt.IsZero() || a.StepsDone != 4 {
		t.Errorf("after the last step: next %s, done %d", a.NextStepAt, a.StepsDone)
	}
}

// A decision that lands while a repetition is on its way stops it: the
// repetition's replies are moot, and no later one fires.
func TestDecisionWhileARepetitionIsSent(t *testing.T) {
	h, _ := newOncallHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 15*time.Minute)
	h.tick(t)
	h.drain(t)
	sent := len(h.escalations())
	h.at(t, 45*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the first repetition: %+v", r)
	}
	h.ingest(t, "merge-resolved.json") // decided in the console meanwhile
	h.drain(t)
	if n := len(h.escalations()) - sent; n != 0 {
		t.Fatalf("%d replies of the repetition went out after the decision", n)
	}
	h.at(t, 2*time.Hour)
	if r := h.tick(t); r.Approvals != 0 || r.Steps != 0 {
		t.Fatalf("a decided approval was claimed: %+v", r)
	}
}

// A person's decision on its way to the backend quiets the ladder: a
// repetition falling due while another worker has the decision at the
// backend does not fire (the replies of one queued before the click go
// out: they were due before it). Should the backend refuse the decision,
// the ladder goes on where it was, what it missed merged into one message
// per thread.
func TestARepetitionWaitsWhileADecisionIsOnItsWay(t *testing.T) {
	h, _ := newOncallHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 15*time.Minute)
	h.tick(t)
	h.drain(t)
	h.at(t, 45*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the first repetition: %+v", r)
	}
	// The repetition's replies are still queued when kevin denies, just
	// before the next repetition, and another worker (of another
	// replica, say) takes the denial to the backend.
	h.at(t, 74*time.Minute)
	h.fake.SetForbidden("user:kevin") // the backend will refuse the denial
	if res := h.decide(t, "a-merge1", 1, false, "U0KEVIN"); !res.Sent {
		t.Fatal(res.Reason.String())
	}
	claimDecisions(t, h, 1, 3*time.Minute)
	h.drain(t)
	sent := len(h.escalations())
	if got := repliesSince(h, 0); len(got) != 2 || strings.Count(got["slack:C0APPROVALS"], ";") != 2 {
		t.Fatalf("before the denial: %v; want step 1 and its first repetition in each thread", got)
	}
	for _, at := range []time.Duration{75 * time.Minute, 75*time.Minute + 20*time.Second, 76*time.Minute + 50*time.Second} {
		h.at(t, at)
		if r := h.tick(t); r.Steps != 0 {
			t.Fatalf("at %v a repetition fired while kevin's denial was on its way: %+v", at, r)
		}
	}
	h.drain(t)
	if n := len(h.escalations()) - sent; n != 0 {
		t.Fatalf("%d replies sent while kevin's denial was on its way", n)
	}

	// The other worker is gone; its lease runs out, the denial is sent
	// again and refused: the call still waits, and the ladder takes up
	// the repetition it held back at the next tick (the claim the last
	// tick left for the hold, to 77m05s, is let go).
	h.at(t, 77*time.Minute+time.Second)
	h.drain(t)
	if st := h.state(t, "a-merge1"); st.State != "pending" || len(st.Deciding) != 0 {
		t.Fatalf("after the refusal: state %s, deciding %s", st.State, st.Deciding)
	}
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("after the refusal, the held repetition: %+v", r)
	}
	h.drain(t)
	if got := repliesSince(h, sent); len(got) != 2 {
		t.Fatalf("after the refusal: %v; want one reply in each thread", got)
	}
}

// claimDecisions has another worker take n decision rows to the backend
// for lease, and checks it got them.
func claimDecisions(t *testing.T, h *decideHarness, n int, lease time.Duration) {
	t.Helper()
	rows, err := h.store.OutboxClaim(context.Background(), store.OutboxClaimParams{Worker: "other-worker",
		Now: h.clock.Now(), Lease: lease, Limit: n + 1, Lane: threads.LaneBackend})
	if err != nil || len(rows) != n {
		t.Fatalf("the other worker's claim: %v, %d rows, want %d", err, len(rows), n)
	}
	for _, r := range rows {
		if r.Kind != threads.KindDecision {
			t.Fatalf("the other worker claimed a %s row", r.Kind)
		}
	}
}

// A repetition held for a decision never fires once the decision lands.
func TestARepetitionHeldForADecisionNeverFiresOnceItLands(t *testing.T) {
	h, _ := newOncallHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 42*time.Minute)
	if res := h.decide(t, "a-merge1", 1, false, "U0KEVIN"); !res.Sent {
		t.Fatal(res.Reason.String())
	}
	claimDecisions(t, h, 1, 8*time.Minute)
	h.at(t, 45*time.Minute)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("while the denial is on its way: %+v", r)
	}
	h.at(t, 50*time.Minute+time.Second) // the lease lapsed: the denial lands
	h.drain(t)
	if st := h.state(t, "a-merge1"); st.State != "denied" {
		t.Fatalf("state %s", st.State)
	}
	h.at(t, 2*time.Hour)
	if r := h.tick(t); r.Approvals != 0 || r.Steps != 0 {
		t.Fatalf("a decided approval was claimed: %+v", r)
	}
}

// The hold is bounded: a decision stuck on its way (its row dead, say)
// keeps the ladder quiet for decisionHoldMax at most, and a decision on
// a revision a reask replaced holds nothing, since the backend refuses it.
func TestADecisionHoldsTheLadderOnlyWhileItCanLand(t *testing.T) {
	t.Run("stuck", func(t *testing.T) {
		h, _ := newOncallHarness(t)
		h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
		h.ingest(t, "merge.json")
		h.drain(t)
		h.at(t, 14*time.Minute)
		if res := h.decide(t, "a-merge1", 1, false, "U0KEVIN"); !res.Sent {
			t.Fatal(res.Reason.String())
		}
		claimDecisions(t, h, 1, time.Hour) // a worker that hangs
		h.at(t, 15*time.Minute)
		if r := h.tick(t); r.Steps != 0 {
			t.Fatalf("while the denial can still land: %+v", r)
		}
		h.at(t, 19*time.Minute) // 5m after the click
		if r := h.tick(t); r.Steps != 1 {
			t.Fatalf("a decision stuck for 5m still holds the ladder: %+v", r)
		}
	})
	t.Run("on an older revision", func(t *testing.T) {
		h, _ := newOncallHarness(t)
		h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
		h.ingest(t, "merge.json")
		h.drain(t)
		h.at(t, 14*time.Minute)
		if res := h.decide(t, "a-merge1", 1, false, "U0KEVIN"); !res.Sent {
			t.Fatal(res.Reason.String())
		}
		claimDecisions(t, h, 1, time.Hour)
		h.fake.AddApproval("a-merge1", 2, arguments(t, "a-merge1.r2.json"), false)
		h.ingest(t, "merge-reasked.json")
		h.drain(t)
		h.at(t, 15*time.Minute)
		if r := h.tick(t); r.Steps != 1 {
			t.Fatalf("revision 1's denial held revision 2's ladder: %+v", r)
		}
	})
}

// However many approvals wait on a decision on its way, a tick reaches
// the approvals behind them: 200 held fill a whole claim, and the 201st,
// with no decision in flight, still has its due step fired.
func TestHeldApprovalsDoNotStarveTheTick(t *testing.T) {
	h, _ := newOncallHarness(t)
	heldApprovals(t, h, 14*time.Minute, 5*time.Minute)
	h.at(t, 15*time.Minute)
	r := h.tick(t)
	if r.Steps != 1 {
		t.Fatalf("the tick: %+v; want the one step of the approval with no decision in flight", r)
	}
	if st := h.state(t, "a-h200"); st.StepsDone == 0 {
		t.Fatal("a-h200's due step did not fire while 200 others were held")
	}
}

// heldApprovals are 201 copies of merge.json's approval, a-h000 to
// a-h200: at at, kevin denies the first 200 and another worker takes the
// denials to the backend for lease; a-h200 has no decision in flight.
func heldApprovals(t *testing.T, h *decideHarness, at, lease time.Duration) {
	t.Helper()
	body, _ := readEvent(t, "merge.json")
	const n = 201
	for i := range n {
		b := bytes.ReplaceAll(body, []byte("a-merge1"), []byte(fmt.Sprintf("a-h%03d", i)))
		b = bytes.ReplaceAll(b, []byte(`"evt-0001"`), []byte(fmt.Sprintf(`"evt-h%03d"`, i)))
		ev, err := approval.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.ingestBody(b, ev); err != nil {
			t.Fatal(err)
		}
	}
	h.drain(t)
	h.at(t, at)
	for i := range n - 1 {
		if res := h.decide(t, fmt.Sprintf("a-h%03d", i), 1, false, "U0KEVIN"); !res.Sent {
			t.Fatal(res.Reason.String())
		}
	}
	claimDecisions(t, h, n-1, lease)
}

// dmsTo counts the cards posted to target (a DM) so far.
func dmsTo(h *decideHarness, target string) int {
	n := 0
	for _, p := range h.surf.posts {
		if p.Target == target {
			n++
		}
	}
	return n
}

// A step held to office hours that comes due late, when the bot was down
// through its time and its window has closed since, waits for the next
// opening rather than paging anyone at night; the steps before it go at
// once, merged, as missed steps do.
func TestAStepMissedPastItsWindowWaitsForTheOpening(t *testing.T) {
	h, _ := newOncallHarness(t)
	h.ingest(t, "merge.json") // Sunday 19:00 in Berlin: step 2 is held to Monday 09:00, ada's week
	h.drain(t)
	// The bot is down from the request to Monday 19:00 in Berlin, past
	// the window's closing at 18:00.
	h.at(t, 24*time.Hour)
	if r := h.tick(t); r.Steps != 3 {
		t.Fatalf("after the downtime: %+v; want step 1 and its two repetitions", r)
	}
	h.drain(t)
	if n := dmsTo(h, "slack:U0ADA"); n != 0 {
		t.Fatalf("ada was sent %d DMs at 19:00, outside step 2's window", n)
	}
	if n := len(h.mailsTo("ada@acme.example")); n != 0 {
		t.Fatalf("ada was mailed %d times at 19:00, outside step 2's window", n)
	}
	// Tuesday 09:00 in Berlin is 08:00 UTC, 38h after the request.
	if got, want := h.state(t, "a-merge1").NextStepAt, requested.Add(38*time.Hour); !got.Equal(want) {
		t.Fatalf("next step at %v, want the window's opening %v", got, want)
	}
	h.restart(t)
	h.at(t, 38*time.Hour-time.Second)
	if r := h.tick(t); r.Approvals != 0 || r.Steps != 0 {
		t.Fatalf("before the opening: %+v", r)
	}
	h.at(t, 38*time.Hour)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("at the opening: %+v", r)
	}
	h.drain(t)
	if n := dmsTo(h, "slack:U0ADA"); n != 1 {
		t.Fatalf("ada was sent %d DMs at the opening, want 1", n)
	}
	if n := len(h.mailsTo("ada@acme.example")); n != 1 {
		t.Fatalf("ada was mailed %d times at the opening, want 1", n)
	}
}

// A pause that runs out after the window closed holds the step it kept
// waiting to the window's next opening.
func TestAPauseThatRunsOutAfterTheWindowHoldsTheStepToItsOpening(t *testing.T) {
	h, src := newOncallHarness(t)
	// The ladder as a mapping, its steps (at the same indentation) kept.
	src.reload(t, strings.Replace(oncallConfig, "      default:\n", "      default:\n        ack_pause: 10h\n        steps:\n", 1))
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	// Monday 08:50 in Berlin: ada looks for ten hours, to 18:50, past
	// step 2's window (it was due at 09:00).
	h.at(t, 13*time.Hour+50*time.Minute)
	h.tick(t) // step 1's firings, missed, merged
	h.drain(t)
	if res := h.look(t, "a-merge1", 1, "U0ADA"); !res.Done {
		t.Fatalf("acknowledge: %+v", res)
	}
	h.at(t, 23*time.Hour+50*time.Minute)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("when the pause ran out at 18:50: %+v", r)
	}
	h.drain(t)
	if n := dmsTo(h, "slack:U0ADA"); n != 0 {
		t.Fatalf("ada was sent %d DMs at 18:50, outside step 2's window", n)
	}
	h.at(t, 38*time.Hour)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("at Tuesday's opening: %+v", r)
	}
	h.drain(t)
	if n := dmsTo(h, "slack:U0ADA"); n != 1 {
		t.Fatalf("ada was sent %d DMs at the opening, want 1", n)
	}
}

// Under a deadline the window does not open before, the held step is
// skipped, and the deadline denies as always.
func TestWindowShutUntilTheDeadlineSkipsTheStep(t *testing.T) {
	h, src := newOncallHarness(t)
	src.reload(t, strings.Replace(oncallConfig, "deadline: 72h", "deadline: 12h", 1))
	h.ingest(t, "merge.json") // Sunday 19:00 in Berlin: the window opens Monday 09:00, after 07:00 Monday
	h.drain(t)
	fz := frozenOf(t, h, "a-merge1")
	var reasons []string
	for _, s := range fz.Plan.Steps {
		if s.Skipped {
			reasons = append(reasons, fz.Plan.SkipReason(s))
		}
	}
	if strings.Join(reasons, ";") != "its window does not open before the deadline" {
		t.Fatalf("skipped: %v", reasons)
	}
	h.at(t, 12*time.Hour+threads.RecordBound)
	r := h.tick(t)
	if r.Deadlines != 1 || r.Steps != 0 {
		t.Fatalf("at the deadline: %+v", r)
	}
	h.drain(t)
	if d := h.fake.Decisions(); len(d) != 1 || d[0].Request.Decision != "deny" {
		t.Fatalf("decisions %+v", d)
	}
	for _, p := range h.surf.posts {
		if p.Target == "slack:U0KEVIN" || p.Target == "slack:U0ADA" {
			t.Fatalf("the skipped step sent a DM to %s", p.Target)
		}
	}
}

// Steps missed across a hand-off go out once, merged, to whoever is on
// duty when they go out: due in kevin's week, sent in ada's.
func TestMissedStepsAcrossAHandOffTellWhoIsOnDutyNow(t *testing.T) {
	h, _ := newOncallHarness(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.restart(t) // down from the request until Monday 09:30 in Berlin
	h.clock.Advance(time.Date(2026, 11, 30, 8, 30, 0, 0, time.UTC).Sub(h.clock.Now()))
	if r := h.tick(t); r.Steps != 4 {
		t.Fatalf("after downtime: %+v, want all four firings at once", r)
	}
	h.drain(t)
	got := repliesSince(h, 0)
	if len(got) != 2 || got["slack:C0APPROVALS"] != "slack:U0ADA=ada;" || got["discord:channel:112233445566778899"] != "slack:U0ADA=ada;" {
		t.Fatalf("replies %v: want one per thread naming ada (named by her Slack user where she has no Discord)", got)
	}
	var dms []string
	for _, p := range h.surf.posts {
		if strings.HasPrefix(p.Target, "slack:U") || strings.HasPrefix(p.Target, "discord:user:") {
			dms = append(dms, p.Target)
		}
	}
	if strings.Join(dms, " ") != "slack:U0ADA" {
		t.Errorf("DMs %v, want ada's", dms)
	}
}
