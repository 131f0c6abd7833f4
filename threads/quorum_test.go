package threads_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// quorumConfig is testConfig where a merge needs two approvals from the
// finance rotation (kevin, lee, nocontent), and its ladder pages those
// still missing after 15 minutes. max is an admin outside finance.
var quorumConfig = strings.NewReplacer(
	`    tools:
      "payments.*": {deadline: 2h, post: [slack:C0FINANCE]}`,
	`    rotations:
      finance:
        members: [user:kevin, user:lee, user:nocontent]
        every: 1w
        handoff: "mon 09:00"
        start: 2026-11-23
    tools:
      "payments.*": {deadline: 2h, post: [slack:C0FINANCE]}
      "acme_github.*":
        ladder: quorum
        quorum: {approvals: 2, from: [rotation:finance]}
      "oz0_github.*":
        quorum: {approvals: 2, from: [user:ada, user:kevin, user:lee]}`,
	`    ladders:
      default:`,
	`    ladders:
      quorum:
        - after: 15m
          mention: [approvers]
          dm: [approvers]
      default:`,
	`      - {user: "user:vic", role: viewer, slack: U0VIC}`,
	`      - {user: "user:vic", role: viewer, slack: U0VIC}
      - {user: "user:max", role: admin, content: true, slack: U0MAX}`,
).Replace(testConfig)

func newQuorumHarness(t *testing.T) *decideHarness {
	t.Helper()
	if !strings.Contains(quorumConfig, "approvals: 2") || !strings.Contains(quorumConfig, "user:max") {
		t.Fatal("quorumConfig did not take: testConfig changed")
	}
	h := newDecideHarnessWith(t, quorumConfig, time.Minute, []string{backend.FeatureApprovers}, nil)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	return h
}

// approveAs approves a-merge1's revision rev as person.
func (h *decideHarness) approveAs(t *testing.T, rev int, p threads.Person) threads.DecideResult {
	t.Helper()
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: rev, Approve: true, Person: p})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// quorumShown is the quorum line's standing on a card.
func quorumShown(t *testing.T, c *threads.Card) *templates.Quorum {
	t.Helper()
	if c == nil {
		t.Fatal("no card")
	}
	return c.Input().Quorum
}

func actors(q *templates.Quorum) string {
	var s []string
	for _, a := range q.Approvals {
		s = append(s, a.Actor)
	}
	return strings.Join(s, ",")
}

func TestAQuorumCountsEachEligiblePersonOnce(t *testing.T) {
	h := newQuorumHarness(t)

	res := h.approveAs(t, 1, slackPerson("U0KEVIN"))
	if !res.Sent || res.Reason.Kind != say.Voted || res.Reason.Count != 1 || res.Reason.Need != 2 {
		t.Fatalf("kevin's approval: %+v", res)
	}
	if want := "1 of 2 approvals given; it needs 1 more from rotation finance"; !strings.Contains(res.Reason.String(), want) {
		t.Errorf("kevin is told %q; want it to say %q", res.Reason.String(), want)
	}
	if q := quorumShown(t, res.Card); q.Need != 2 || actors(q) != "user:kevin" || q.From != "rotation finance" {
		t.Errorf("the clicked card shows %+v", q)
	}
	edits := len(h.surf.edits)
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("one approval of two sent %d decisions", len(got))
	}
	shown := h.surf.edits[edits:]
	if len(shown) != 2 {
		t.Fatalf("%d copies edited; want both (Slack and Discord)", len(shown))
	}
	for _, e := range shown {
		if q := e.Card.Input().Quorum; q == nil || actors(q) != "user:kevin" {
			t.Errorf("copy %s shows quorum %+v", e.Post.Target, q)
		}
	}

	// The same person again, on another surface, counts once.
	again := h.approveAs(t, 1, threads.Person{Surface: "discord", User: "223344556677889900", Channel: "112233445566778899"})
	if again.Sent || again.Reason.Kind != say.VotedAlready {
		t.Fatalf("kevin again on Discord: %+v", again)
	}
	// Outside the rule, and the job's starter: refused, not counted.
	if r := h.approveAs(t, 1, slackPerson("U0MAX")); r.Sent || r.Reason.Kind != say.NotEligible {
		t.Fatalf("max (outside finance): %+v", r)
	}
	// The starter, in a tenant that forbids deciding one's own job
	// (TestTheStarterNeverCountsWhateverTheTenantAllows: one that does not).
	if r := h.approveAs(t, 1, slackPerson("U0ADA")); r.Sent || r.Reason.Kind != say.OwnJob {
		t.Fatalf("ada (the starter): %+v", r)
	}
	if r := h.approveAs(t, 1, slackPerson("U0VIC")); r.Sent || r.Reason.Kind != say.CannotDecide {
		t.Fatalf("vic (a viewer): %+v", r)
	}
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("refused approvals sent %d decisions", len(got))
	}

	res = h.approveAs(t, 1, slackPerson("U0LEE"))
	if !res.Sent || res.Reason.Kind != say.Sending {
		t.Fatalf("lee's approval, the second: %+v", res)
	}
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Actor != "user:lee" {
		t.Fatalf("backend got %+v; want one approval by user:lee", got)
	}
	// Every approver goes with it, each bound to the call they saw.
	_, ev := readEvent(t, "merge.json")
	var who []string
	for _, a := range got[0].Request.Approvers {
		who = append(who, a.Actor+"@"+a.Via.Surface)
		if a.ArgsSHA256 != ev.Approval.Call.ArgsSHA256 || a.At == "" {
			t.Errorf("approver %+v: want the call's digest and a time", a)
		}
	}
	if strings.Join(who, " ") != "user:kevin@slack user:lee@slack" {
		t.Errorf("the decision carried approvers %v; want kevin then lee", who)
	}
	if st := h.state(t, "a-merge1"); st.State != string(approval.StateApproved) {
		t.Fatalf("state %s", st.State)
	}
	final := h.surf.edits[len(h.surf.edits)-1].Card
	if q := final.Input().Quorum; q == nil || actors(q) != "user:kevin,user:lee" || final.State != approval.StateApproved {
		t.Errorf("the approved card shows %s, quorum %+v", final.State, q)
	}
}

func TestAnyDenyEndsAQuorum(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	// max may not approve this call, but may deny it: a Deny never runs anything.
	if res := h.decide(t, "a-merge1", 1, false, "U0MAX"); !res.Sent {
		t.Fatalf("max's deny: %s", res.Reason.String())
	}
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Actor != "user:max" {
		t.Fatalf("backend got %+v", got)
	}
	final := h.surf.edits[len(h.surf.edits)-1].Card
	if q := final.Input().Quorum; final.State != approval.StateDenied || q == nil || actors(q) != "user:kevin" {
		t.Errorf("the denied card shows %s, quorum %+v; want the one approval given", final.State, q)
	}
	if r := h.approveAs(t, 1, slackPerson("U0LEE")); r.Sent || r.Reason.Kind != say.Closed {
		t.Fatalf("an approval after the deny: %+v", r)
	}
}

func TestAReaskVoidsTheApprovalsGiven(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	h.fake.AddApproval("a-merge1", 2, arguments(t, "a-merge1.r2.json"), false)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)

	if r := h.approveAs(t, 1, slackPerson("U0LEE")); r.Sent || r.Reason.Kind != say.Superseded {
		t.Fatalf("an approval of the old card: %+v", r)
	}
	res := h.approveAs(t, 2, slackPerson("U0LEE"))
	if !res.Sent || res.Reason.Kind != say.Voted || res.Reason.Count != 1 {
		t.Fatalf("lee's approval of the new card: %+v; want 1 of 2 (kevin's was voided)", res)
	}
	if q := quorumShown(t, res.Card); actors(q) != "user:lee" || q.Voided != 1 {
		t.Errorf("the new card shows %+v; want lee's approval and 1 voided", q)
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("a voided approval made a quorum: %+v", got)
	}
	if res := h.approveAs(t, 2, slackPerson("U0KEVIN")); !res.Sent || res.Reason.Kind != say.Sending {
		t.Fatalf("kevin approving the new revision: %+v", res)
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 1 || got[0].Request.Revision != 2 || got[0].Request.Actor != "user:kevin" {
		t.Fatalf("backend got %+v", got)
	}
}

func TestTheDeadlineDeniesAQuorumNotMet(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	h.drain(t)
	h.at(t, 24*time.Hour)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("at the deadline: %+v", r)
	}
	// The deny waits RecordBound for clicks received before it.
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Actor != threads.DeadlineActor ||
		got[0].Request.Comment != "nobody answered" {
		t.Fatalf("backend got %+v; want the deadline's deny, \"nobody answered\"", got)
	}
	final := h.surf.edits[len(h.surf.edits)-1].Card
	if q := final.Input().Quorum; final.State != approval.StateExpired || q == nil || actors(q) != "user:kevin" {
		t.Errorf("the expired card shows %s, quorum %+v; want how many had approved", final.State, q)
	}
}

func TestTheLadderPagesTheApproversStillMissing(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	h.drain(t)
	posts := len(h.surf.posts)
	h.at(t, 15*time.Minute)
	h.tick(t)
	h.drain(t)
	var dms []string
	for _, p := range h.surf.posts[posts:] {
		dms = append(dms, p.Target)
	}
	if strings.Join(dms, " ") != "slack:U0LEE slack:U0NOC" {
		t.Errorf("the step DMed %v; want the finance members who have not approved (lee, nocontent)", dms)
	}
	esc := h.escalations()
	if len(esc) == 0 {
		t.Fatal("no escalation reply")
	}
	for _, r := range esc {
		m := mentionTargets(r)
		if strings.Contains(m, "U0KEVIN") || strings.Contains(m, "U0ADA") || strings.Contains(m, "U0MAX") {
			t.Errorf("the reply in %s mentions %q: someone who approved or is not eligible", r.Root.Target, m)
		}
		if strings.HasPrefix(r.Root.Target, "slack:") && (!strings.Contains(m, "slack:U0LEE") || !strings.Contains(m, "slack:U0NOC")) {
			t.Errorf("the reply in %s mentions %q; want lee and nocontent", r.Root.Target, m)
		}
	}
}

func TestAQuorumNeverLoosensTheConsoleOnlyCalls(t *testing.T) {
	h := newDecideHarnessFrom(t, quorumConfig, time.Minute, nil)
	h.ingest(t, "protected.json")
	h.drain(t)
	for _, u := range []string{"U0KEVIN", "U0LEE"} {
		res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-prot1",
			Revision: 1, Approve: true, Person: slackPerson(u)})
		if err != nil {
			t.Fatal(err)
		}
		if res.Sent || res.Reason.Kind != say.ProtectedPaths {
			t.Fatalf("%s approving protected paths under a quorum: %+v", u, res)
		}
	}
	var given struct{ Approvals []json.RawMessage }
	if v := h.state(t, "a-prot1").Votes; v != nil && (json.Unmarshal(v, &given) != nil || len(given.Approvals) > 0) {
		t.Errorf("approvals of a protected-paths change were counted: %s", v)
	}
}

func TestAQuorumDecisionThatDoesNotLandGivesItsApprovalBack(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	h.fake.SetForbidden("user:lee")
	if res := h.approveAs(t, 1, slackPerson("U0LEE")); res.Reason.Kind != say.Sending {
		t.Fatalf("lee: %+v", res)
	}
	h.drain(t)
	if st := h.state(t, "a-merge1"); st.State != string(approval.StatePending) || st.Deciding != nil {
		t.Fatalf("after the backend refused: state %s, deciding %s", st.State, st.Deciding)
	}
	final := h.surf.edits[len(h.surf.edits)-1].Card
	if q := final.Input().Quorum; q == nil || actors(q) != "user:kevin" {
		t.Errorf("after the refusal the card shows %+v; want kevin's approval alone", q)
	}
	// Lee may try again; nocontent's approval completes the quorum.
	if res := h.approveAs(t, 1, slackPerson("U0NOC")); res.Reason.Kind != say.Sending {
		t.Fatalf("nocontent: %+v", res)
	}
}

func TestTheStarterNeverCountsWhateverTheTenantAllows(t *testing.T) {
	cfg := strings.Replace(quorumConfig, "forbid_self_approval: true", "forbid_self_approval: false", 1)
	h := newDecideHarnessFrom(t, cfg, time.Minute, nil)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	body, ev := readEvent(t, "merge.json")
	ev.Approval.Call.Function = "oz0_github.merge" // from user:ada, user:kevin, user:lee
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	res := h.approveAs(t, 1, slackPerson("U0ADA"))
	if res.Sent || res.Reason.Kind != say.StarterNoCount {
		t.Fatalf("ada approving her own job's call: %+v", res)
	}
	if !strings.Contains(res.Reason.String(), "never counts its starter") {
		t.Errorf("ada is told %q", res.Reason.String())
	}
}
