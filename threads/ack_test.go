package threads_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

func (h *harness) look(t *testing.T, id string, rev int, user string) threads.LadderResult {
	t.Helper()
	res, err := h.svc.Acknowledge(context.Background(), threads.LadderRequest{Tenant: "acme", ApprovalID: id,
		Revision: rev, Person: slackPerson(user)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (h *harness) escalateNow(t *testing.T, id string, rev, seen int, user string) threads.LadderResult {
	t.Helper()
	res, err := h.svc.EscalateNow(context.Background(), threads.LadderRequest{Tenant: "acme", ApprovalID: id,
		Revision: rev, Person: slackPerson(user), Escalations: seen})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// shownNow is the card of the approval's first revision as every copy
// now shows it.
func (h *harness) shownNow(t *testing.T, id string) templates.Card {
	t.Helper()
	c, err := h.svc.Card(context.Background(), id, 1)
	if err != nil {
		t.Fatal(err)
	}
	return templates.Build(c.Input())
}

// lastEdits is the cards the edits after the first n showed.
func (h *harness) editsSince(n int) []templates.Card {
	var out []templates.Card
	for _, e := range h.surf.edits[n:] {
		out = append(out, templates.Build(e.Card.Input()))
	}
	return out
}

// I'm looking holds the ladder's next steps for the ladder's ack_pause
// (30m by default): a step due meanwhile waits for the hold's end, then
// goes (it is not lost), and the steps after it keep their times. The
// deadline never moves. Every copy of the card says who is looking, and
// the hold survives a restart.
func TestAcknowledgeHoldsTheStepsUntilThePauseRunsOut(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	deadline := h.state(t, "a-merge1").DeadlineAt

	h.at(t, 10*time.Minute)
	edits := len(h.surf.edits)
	res := h.look(t, "a-merge1", 1, "U0KEVIN")
	if !res.Done || !strings.Contains(res.Reason.String(), "until 18:40 UTC") {
		t.Fatalf("acknowledge: %+v", res)
	}
	a := h.state(t, "a-merge1")
	if !a.NextStepAt.Equal(requested.Add(40*time.Minute)) || !a.DeadlineAt.Equal(deadline) {
		t.Fatalf("next step %v, deadline %v", a.NextStepAt, a.DeadlineAt)
	}
	h.drain(t)
	const line = "user:kevin is looking since 18:10 UTC; the ladder's next steps wait until 18:40 UTC"
	shown := h.editsSince(edits)
	if len(shown) != 2 { // the Slack and the Discord copy
		t.Fatalf("%d copies edited, want 2", len(shown))
	}
	for _, c := range shown {
		if c.Looking != line {
			t.Errorf("a copy says %q, want %q", c.Looking, line)
		}
	}

	h.at(t, 15*time.Minute)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("a held step fired at its time: %+v", r)
	}
	h.restart(t) // the hold is in the store, not in memory
	h.at(t, 40*time.Minute-time.Millisecond)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("a held step fired before the hold's end: %+v", r)
	}
	h.at(t, 40*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the held step at the hold's end: %+v", r)
	}
	h.drain(t)
	esc := h.escalations()
	if len(esc) != 2 || mentionTargets(esc[0]) != "slack:U0KEVIN=kevin slack:S0ONCALL=S0ONCALL" || esc[0].Waited != 40*time.Minute || esc[0].By != "" {
		t.Fatalf("replies after the hold: %+v", esc)
	}
	// The next step keeps its own time.
	if a := h.state(t, "a-merge1"); !a.NextStepAt.Equal(requested.Add(time.Hour)) {
		t.Fatalf("next step after the hold %v", a.NextStepAt)
	}
	// The card still says who looked, and until when the steps waited.
	if c := h.shownNow(t, "a-merge1"); c.Looking != line {
		t.Errorf("after the hold the card says %q", c.Looking)
	}
}

// A hold never moves the deadline: one that reaches past it holds the
// steps to the deadline, which denies at its time as ever.
func TestAcknowledgeNeverMovesTheDeadline(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 22*time.Hour+50*time.Minute)
	h.tick(t) // the 15m, 1h and 4h steps
	h.drain(t)
	before := len(h.escalations())
	res := h.look(t, "a-merge1", 1, "U0LEE")
	if !res.Done {
		t.Fatal(res.Reason.String())
	}
	h.at(t, 23*time.Hour) // the last call, held
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("the last call fired during the hold: %+v", r)
	}
	h.at(t, 23*time.Hour+20*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the last call at the hold's end: %+v", r)
	}
	h.drain(t)
	if n := len(h.escalations()) - before; n != 2 {
		t.Errorf("%d replies at the hold's end, want the last call's 2", n)
	}
	// Pressed again, the hold reaches past the deadline: the card says
	// the steps wait until the deadline, and the deadline is as it was.
	h.at(t, 23*time.Hour+50*time.Minute)
	res = h.look(t, "a-merge1", 1, "U0LEE")
	if !res.Done || !strings.Contains(res.Reason.String(), "until the deadline") {
		t.Fatalf("a hold past the deadline: %+v", res)
	}
	if c := h.shownNow(t, "a-merge1"); !strings.HasSuffix(c.Looking, "wait until the deadline") {
		t.Errorf("card: %q", c.Looking)
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("the deadline did not deny at its time under a hold: %+v", r)
	}
	h.drain(t)
	if got := h.state(t, "a-merge1").State; got != string(approval.StateExpired) {
		t.Fatalf("state %s", got)
	}
}

// One acknowledgement at a time: another member's press takes over (the
// card says from whom) and holds the steps from then; the same member's
// press holds them again from then, since stays; once a hold is over a
// press is a new one.
func TestAcknowledgeTakesOverAndHoldsAgain(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 5*time.Minute)
	h.look(t, "a-merge1", 1, "U0KEVIN")
	h.at(t, 8*time.Minute)
	res := h.look(t, "a-merge1", 1, "U0LEE")
	if !res.Done || !strings.Contains(res.Reason.String(), "took over from user:kevin") {
		t.Fatalf("take-over: %+v", res)
	}
	if c := h.shownNow(t, "a-merge1"); c.Looking != "user:lee is looking since 18:08 UTC, taking over from user:kevin; the ladder's next steps wait until 18:38 UTC" {
		t.Errorf("card: %q", c.Looking)
	}
	h.at(t, 12*time.Minute)
	res = h.look(t, "a-merge1", 1, "U0LEE")
	if !res.Done || !strings.Contains(res.Reason.String(), "still looking") {
		t.Fatalf("again: %+v", res)
	}
	if c := h.shownNow(t, "a-merge1"); c.Looking != "user:lee is looking since 18:08 UTC, taking over from user:kevin; the ladder's next steps wait until 18:42 UTC" {
		t.Errorf("card: %q", c.Looking)
	}
	if a := h.state(t, "a-merge1"); !a.NextStepAt.Equal(requested.Add(42 * time.Minute)) {
		t.Fatalf("next step %v", a.NextStepAt)
	}
	h.at(t, 43*time.Minute)
	res = h.look(t, "a-merge1", 1, "U0KEVIN")
	if !res.Done || strings.Contains(res.Reason.String(), "took over") {
		t.Fatalf("after the hold: %+v", res)
	}
	if c := h.shownNow(t, "a-merge1"); c.Looking != "user:kevin is looking since 18:43 UTC; the ladder's next steps wait until 19:13 UTC" {
		t.Errorf("card: %q", c.Looking)
	}
}

// Only a member who may decide the call may hold or hurry its ladder,
// and only while a card can still decide it; nothing is recorded
// otherwise.
func TestLadderClicksRefused(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	for _, id := range []string{"a-merge1", "a-refund1"} {
		h.fake.AddApproval(id, 1, arguments(t, id+".json"), false)
	}
	h.ingest(t, "merge.json")
	h.ingest(t, "refund.json")
	h.ingest(t, "merge-reasked.json")
	if res := h.decide(t, "a-refund1", 1, false, "U0KEVIN"); !res.Sent {
		t.Fatalf("deny: %+v", res)
	}
	cases := []struct {
		name, id string
		rev      int
		user     string
		want     string
		escalate bool
	}{
		{"a stranger", "a-merge1", 2, "U0STRANGER", "not a member of tenant acme", false},
		{"a viewer", "a-merge1", 2, "U0VIC", "viewer, which cannot decide", true},
		{"the job's starter, who may not decide it", "a-merge1", 2, "U0ADA", "forbids deciding your own job's calls", false},
		{"a superseded card", "a-merge1", 1, "U0KEVIN", "superseded", true},
		{"an unknown card", "a-none", 1, "U0KEVIN", "knows no such card", true},
		{"a decision on its way", "a-refund1", 1, "U0LEE", "user:kevin is deciding this call already", true},
	}
	for _, c := range cases {
		for _, escalate := range []bool{false, true} {
			if escalate && !c.escalate {
				continue
			}
			res := h.look(t, c.id, c.rev, c.user)
			if escalate {
				res = h.escalateNow(t, c.id, c.rev, 0, c.user)
			}
			if res.Done || !strings.Contains(res.Reason.String(), c.want) || !strings.Contains(res.Reason.String(), "nothing was recorded") {
				t.Errorf("%s (escalate %v): %+v, want a refusal with %q", c.name, escalate, res, c.want)
			}
		}
	}
	for _, id := range []string{"a-merge1", "a-refund1"} {
		if a := h.state(t, id); a.LadderState != nil {
			t.Errorf("%s: recorded %s", id, a.LadderState)
		}
	}
	// The job's starter may hurry the ladder (it only widens), but not
	// hold it.
	if res := h.escalateNow(t, "a-merge1", 2, 0, "U0ADA"); !res.Done {
		t.Errorf("the starter's escalate now: %+v", res)
	}
	// After the deadline, neither.
	h.at(t, 24*time.Hour)
	for _, res := range []threads.LadderResult{h.look(t, "a-merge1", 2, "U0KEVIN"), h.escalateNow(t, "a-merge1", 2, 1, "U0KEVIN")} {
		if res.Done || !strings.Contains(res.Reason.String(), "deadline has passed") {
			t.Errorf("after the deadline: %+v", res)
		}
	}
}

// Escalate now fires the next step at once, named on the card and in the
// replies; the step does not fire again at its time. A second press of
// the same card (a double click, two members at once) fires nothing and
// says what the first fired; a press on the card as it now is fires the
// step after it.
func TestEscalateNowFiresEachStepOnce(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 5*time.Minute)

	var wg sync.WaitGroup
	results := make([]threads.LadderResult, 2)
	for i, user := range []string{"U0KEVIN", "U0LEE"} {
		wg.Go(func() {
			res, err := h.svc.EscalateNow(context.Background(), threads.LadderRequest{Tenant: "acme", ApprovalID: "a-merge1",
				Revision: 1, Person: slackPerson(user)})
			if err != nil {
				t.Error(err)
			}
			results[i] = res
		})
	}
	wg.Wait()
	done, first := 0, ""
	for i, r := range results {
		if r.Done {
			done++
			first = []string{"user:kevin", "user:lee"}[i]
			if r.Reason.String() != "Escalated now: mention user:kevin and Slack group S0ONCALL went out (planned for 18:15 UTC)." {
				t.Errorf("told %q", r.Reason.String())
			}
		} else if !strings.Contains(r.Reason.String(), "escalated this call at 18:05 UTC, after the card you pressed was shown: mention user:kevin and Slack group S0ONCALL went out then") {
			t.Errorf("the other press was told %q", r.Reason.String())
		}
	}
	if done != 1 {
		t.Fatalf("%d presses fired a step, want exactly 1: %+v", done, results)
	}
	h.drain(t)
	esc := h.escalations()
	if len(esc) != 2 || esc[0].By != first || esc[0].Waited != 5*time.Minute {
		t.Fatalf("replies %+v", esc)
	}
	c := h.shownNow(t, "a-merge1")
	if len(c.Escalated) != 1 || c.Escalated[0] != "Escalated now by "+first+" at 18:05 UTC: mention user:kevin and Slack group S0ONCALL (planned for 18:15 UTC)" {
		t.Fatalf("card: %q", c.Escalated)
	}
	var button templates.Button
	for _, b := range c.Buttons {
		if b.Action.Kind == templates.ActionEscalate {
			button = b
		}
	}
	if button.Action.Escalations != 1 {
		t.Fatalf("the card's Escalate now carries %d", button.Action.Escalations)
	}
	if a := h.state(t, "a-merge1"); a.StepsDone != 1 || !a.NextStepAt.Equal(requested.Add(time.Hour)) {
		t.Fatalf("steps done %d, next %v", a.StepsDone, a.NextStepAt)
	}

	h.at(t, 15*time.Minute)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("the escalated step fired again at its time: %+v", r)
	}
	// The card as it is now fires the next step: a DM and a mail.
	h.at(t, 20*time.Minute)
	if res := h.escalateNow(t, "a-merge1", 1, 1, "U0KEVIN"); !res.Done || !strings.Contains(res.Reason.String(), "DM user:lee; email leads@acme.example went out (planned for 19:00 UTC)") {
		t.Fatalf("second step: %+v", res)
	}
	h.drain(t)
	if len(h.surf.mails) != 1 || h.surf.mails[0].To != "leads@acme.example" {
		t.Fatalf("mails %+v", h.surf.mails)
	}
	// A mail counts the addresses an escalated step mailed; a chat card
	// names them.
	mail := h.surf.mails[0].Render().Card
	if n := len(mail.Escalated); n != 2 || !strings.Contains(mail.Escalated[1], ": DM user:lee; email 1 person (planned for 19:00 UTC)") {
		t.Errorf("the mail's card: %q", mail.Escalated)
	}
	h.at(t, time.Hour)
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("the second escalated step fired again: %+v", r)
	}
	h.at(t, 4*time.Hour)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the 4h step: %+v", r)
	}
	h.escalateNow(t, "a-merge1", 1, 2, "U0KEVIN") // the last call
	if res := h.escalateNow(t, "a-merge1", 1, 3, "U0KEVIN"); res.Done || !strings.Contains(res.Reason.String(), "Every step of this call's ladder has gone out already") {
		t.Fatalf("with no step left: %+v", res)
	}
}

// Escalate now during a hold fires the next step; the member looking is
// still looking, so the steps after it still wait for the hold's end.
func TestEscalateNowDuringAHold(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 50*time.Minute)
	h.tick(t) // the 15m step
	h.look(t, "a-merge1", 1, "U0KEVIN")
	if a := h.state(t, "a-merge1"); !a.NextStepAt.Equal(requested.Add(80 * time.Minute)) {
		t.Fatalf("held to %v", a.NextStepAt)
	}
	h.at(t, 55*time.Minute)
	if res := h.escalateNow(t, "a-merge1", 1, 0, "U0KEVIN"); !res.Done {
		t.Fatal(res.Reason.String())
	}
	a := h.state(t, "a-merge1")
	if a.StepsDone != 2 || !a.NextStepAt.Equal(requested.Add(4*time.Hour)) {
		t.Fatalf("steps done %d, next %v", a.StepsDone, a.NextStepAt)
	}
	if c := h.shownNow(t, "a-merge1"); c.Looking == "" || len(c.Escalated) != 1 {
		t.Fatalf("card: %q %q", c.Looking, c.Escalated)
	}
}

// A hold longer than the gaps between repetitions keeps them all
// waiting; when it runs out they go at once, merged into one message per
// thread (none twice, none lost), and the repetitions after the hold keep
// their times.
func TestAcknowledgeHoldsRepetitionsAndMergesThem(t *testing.T) {
	cfg := strings.Replace(oncallConfig, "      default:\n        - after: 15m", "      default:\n        ack_pause: 1h\n        steps:\n        - after: 15m", 1)
	cfg = strings.Replace(cfg, "          mention: [rotation:primary]\n          repeat: {every: 30m, times: 2}\n        - after: 1h\n          dm: [rotation:primary]\n          email: [rotation:primary]\n          during: {days: mon-fri, hours: \"09:00-18:00\"}\n",
		"          mention: [rotation:primary]\n          repeat: {every: 30m, times: 2}\n", 1)
	h := newDecideHarness(t, time.Minute)
	src := &reloadable{}
	src.reload(t, cfg)
	h.opts.Tenants = src
	h.restart(t)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 10*time.Minute)
	if res := h.look(t, "a-merge1", 1, "U0KEVIN"); !res.Done || !strings.Contains(res.Reason.String(), "until 20:10 CET") {
		t.Fatalf("acknowledge: %+v", res)
	}
	for _, d := range []time.Duration{15 * time.Minute, 45 * time.Minute, 69 * time.Minute} {
		h.at(t, d)
		if r := h.tick(t); r.Steps != 0 {
			t.Fatalf("at %v, during the hold: %+v", d, r)
		}
	}
	h.at(t, 70*time.Minute)
	if r := h.tick(t); r.Steps != 2 {
		t.Fatalf("at the hold's end: %+v, want the two held firings", r)
	}
	h.drain(t)
	if n := len(h.escalations()); n != 2 {
		t.Fatalf("%d replies at the hold's end, want one per thread", n)
	}
	h.at(t, 75*time.Minute)
	if r := h.tick(t); r.Steps != 1 {
		t.Fatalf("the repetition after the hold: %+v", r)
	}
	h.drain(t)
	if n := len(h.escalations()); n != 4 {
		t.Fatalf("%d replies in all, want 4", n)
	}
}

// Escalate now fires a step as the tick would at that moment: a rotation
// tells whoever is on duty now, not at the step's planned time, and a
// step held to working hours goes at once, for a member asked for it.
func TestEscalateNowTellsWhoIsOnDutyNow(t *testing.T) {
	h, _ := newOncallHarness(t)
	h.ingest(t, "merge.json") // Sunday 2026-11-29 19:00 in Berlin: kevin's week, ada's from Monday 09:00
	h.drain(t)
	h.at(t, 20*time.Minute)
	h.tick(t) // the 15m mention
	for seen := range 2 {
		h.escalateNow(t, "a-merge1", 1, seen, "U0LEE") // the two repetitions
	}
	a := h.state(t, "a-merge1")
	monday := time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	if !a.NextStepAt.Equal(monday) {
		t.Fatalf("next step %v, want the DM step held to Monday 09:00 in Berlin", a.NextStepAt)
	}
	res := h.escalateNow(t, "a-merge1", 1, 2, "U0LEE")
	if !res.Done || !strings.Contains(res.Reason.String(), "(planned for 2026-11-30 09:00 CET)") {
		t.Fatalf("the DM step: %+v", res)
	}
	h.drain(t)
	var dms, mails []string
	for _, p := range h.surf.posts {
		if strings.HasPrefix(p.Target, "slack:U") || strings.HasPrefix(p.Target, "discord:user:") {
			dms = append(dms, p.Target)
		}
	}
	for _, m := range h.surf.mails {
		mails = append(mails, m.To)
	}
	if strings.Join(dms, " ") != "slack:U0KEVIN discord:user:223344556677889900" || strings.Join(mails, " ") != "kevin@acme.example" {
		t.Fatalf("DMs %v, mails %v: want kevin, on duty now", dms, mails)
	}
	if a := h.state(t, "a-merge1"); !a.NextStepAt.IsZero() {
		t.Fatalf("a step left at %v", a.NextStepAt)
	}
	h.clock.Advance(monday.Sub(h.clock.Now()))
	if r := h.tick(t); r.Steps != 0 {
		t.Fatalf("the escalated step fired again at its time: %+v", r)
	}
}

// TestTimeAt: a time (a deadline in the lists, say) is worded in the tenant's zone, its date
// left out only when it falls on today's date there, whatever the date
// in UTC.
func TestTimeAt(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name     string
		deadline time.Time
		zone     *time.Location
		want     string
	}{
		{"UTC today", now.Add(2 * time.Hour), nil, "20:00 UTC"},
		{"UTC tomorrow", now.Add(24 * time.Hour), time.UTC, "2026-11-30 18:00 UTC"},
		{"Berlin today", now.Add(2 * time.Hour), berlin, "21:00 CET"},
		{"Berlin: today in UTC, tomorrow there", now.Add(5*time.Hour + 30*time.Minute), berlin, "2026-11-30 00:30 CET"},
		{"Berlin in summer time", time.Date(2027, 7, 1, 12, 0, 0, 0, time.UTC), berlin, "2027-07-01 14:00 CEST"},
		// At 03:00 on the 30th in Tokyo, 05:00 there is today, though
		// UTC's today is the 29th.
		{"Tokyo: today there", now.Add(2 * time.Hour), tokyo, "05:00 JST"},
		{"Tokyo: the 29th there is not today", now.Add(-10 * time.Hour), tokyo, "2026-11-29 17:00 JST"},
	} {
		if got := threads.TimeAt(c.deadline, now, c.zone); got != c.want {
			t.Errorf("%s: TimeAt(%s) = %q, want %q", c.name, c.deadline, got, c.want)
		}
	}
}
