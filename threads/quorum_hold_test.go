package threads_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// The quorum holds against what happens around a click: a replica of a
// release before quorums, a member removed by a reload, a backend that
// refuses one approval, a deadline.

// rewriteRow changes a-merge1's row in one transaction, as another
// replica would.
func (h *decideHarness) rewriteRow(t *testing.T, change func(row *store.Approval) []store.OutboxInsertParams) {
	t.Helper()
	err := h.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		row, err := tx.ApprovalGetForUpdate(ctx, "a-merge1")
		if err != nil {
			return err
		}
		rows := change(row)
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		if len(rows) == 0 {
			return nil
		}
		return tx.OutboxInsert(ctx, rows)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// reload gives the service the configuration text, as SIGHUP does.
func (h *decideHarness) reload(t *testing.T, text string) {
	t.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(text), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	h.opts.Tenants = cfg
	h.restart(t)
}

// quorumConfigWithout is quorumConfig after a reload that takes user:name
// out of every list, and out of the tenant, or, with role, keeps them as
// a member with that role.
func quorumConfigWithout(t *testing.T, name, role string) string {
	t.Helper()
	lines := map[string]string{
		"kevin": `      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN, discord: "223344556677889900"}`,
		"lee":   `      - {user: "user:lee", role: operator, content: true, slack: U0LEE}`,
	}
	line := lines[name]
	if !strings.Contains(quorumConfig, line+"\n") {
		t.Fatalf("quorumConfig names %s differently", name)
	}
	now := ""
	if role != "" {
		now = strings.Replace(line, "role: operator", "role: "+role, 1) + "\n"
	}
	out := strings.Replace(quorumConfig, line+"\n", now, 1)
	for _, list := range []string{"user:" + name + ", ", ", user:" + name} {
		out = strings.ReplaceAll(out, list, "")
	}
	return out
}

func TestAnOlderReleaseRewritingThePlanKeepsTheQuorum(t *testing.T) {
	h := newQuorumHarness(t)
	// A replica of the release before quorums reads the plan into a
	// struct without the rule and writes it back whole (a reask's note).
	h.rewriteRow(t, func(row *store.Approval) []store.OutboxInsertParams {
		var plan map[string]json.RawMessage
		if err := json.Unmarshal(row.Plan, &plan); err != nil {
			t.Fatal(err)
		}
		delete(plan, "quorum")
		row.Plan, _ = json.Marshal(plan)
		return nil
	})
	res := h.approveAs(t, 1, slackPerson("U0KEVIN"))
	if res.Reason.Kind != say.Voted || res.Reason.Need != 2 {
		t.Fatalf("kevin's approval after the plan was rewritten: %+v; want 1 of 2 recorded", res)
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("one approval of two sent %+v", got)
	}
}

func TestAnUnreadableQuorumDecidesNothing(t *testing.T) {
	h := newQuorumHarness(t)
	h.rewriteRow(t, func(row *store.Approval) []store.OutboxInsertParams {
		row.Votes = []byte(`{"rule": [`)
		return nil
	})
	if _, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN")}); err == nil {
		t.Fatal("an approval was taken on a row whose quorum cannot be read")
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("sent %+v", got)
	}
}

func TestALoneApproveInFlightIsNotSent(t *testing.T) {
	h := newQuorumHarness(t)
	// A replica of the release before quorums records kevin's Approve as
	// the decision, alone, with the row that sends it (`{}`).
	h.rewriteRow(t, func(row *store.Approval) []store.OutboxInsertParams {
		d := map[string]any{"actor": "user:kevin", "approve": true, "surface": "slack", "user": "U0KEVIN",
			"revision": 1, "at": h.clock.Now()}
		row.Deciding, _ = json.Marshal(d)
		return []store.OutboxInsertParams{{ID: "old-release-decision", Tenant: "acme", ApprovalID: "a-merge1",
			Kind: threads.KindDecision, Target: "backend", Payload: []byte(`{}`), NotBefore: h.clock.Now(), Now: h.clock.Now()}}
	})
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("the backend got %+v; want nothing: one approval of two", got)
	}
	st := h.state(t, "a-merge1")
	if st.State != string(approval.StatePending) || st.Deciding != nil {
		t.Fatalf("state %s, deciding %s; want pending, nothing in flight", st.State, st.Deciding)
	}
	tell := h.lastTell(t)
	if tell.User != "U0KEVIN" || !strings.Contains(tell.Text, "needs 2 approvals from rotation finance, and only 0 of those given with it count") {
		t.Errorf("kevin is told %q", tell.Text)
	}
	// Kevin approves again, through this release: counted, 1 of 2.
	if res := h.approveAs(t, 1, slackPerson("U0KEVIN")); res.Reason.Kind != say.Voted {
		t.Fatalf("kevin again: %+v", res)
	}
}

func TestAnApproverRemovedByAReloadNoLongerCounts(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	h.drain(t)
	// Kevin leaves the tenant: his approval no longer counts.
	h.reload(t, quorumConfigWithout(t, "kevin", ""))

	res := h.approveAs(t, 1, slackPerson("U0LEE"))
	if !res.Sent || res.Reason.Kind != say.Voted || res.Reason.Count != 1 {
		t.Fatalf("lee's approval with kevin removed: %+v; want 1 of 2, not the quorum met", res)
	}
	if q := quorumShown(t, res.Card); actors(q) != "user:lee" || q.Dropped != 1 {
		t.Errorf("the card shows %+v; want lee's approval and kevin's as no longer counting", q)
	}
	if words := templates.Build(res.Card.Input()).Quorum; !strings.Contains(words, "(1 no longer counts: removed, or may no longer decide)") {
		t.Errorf("the card's quorum line is %q; want it to say an approval no longer counts", words)
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("a removed member's approval made a quorum: %+v", got)
	}
}

func TestAnApproverRemovedWhileTheDecisionIsInFlight(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	if res := h.approveAs(t, 1, slackPerson("U0LEE")); res.Reason.Kind != say.Sending {
		t.Fatalf("lee completes the quorum: %+v", res)
	}
	// Before the decision leaves, a reload makes kevin a viewer.
	h.reload(t, quorumConfigWithout(t, "kevin", "viewer"))
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("the backend got %+v; want nothing: kevin may no longer decide", got)
	}
	tell := h.lastTell(t)
	if tell.User != "U0LEE" || !strings.Contains(tell.Text, "only 1 of those given with it count") {
		t.Errorf("lee is told %q", tell.Text)
	}
	st := h.state(t, "a-merge1")
	if st.State != string(approval.StatePending) || st.Deciding != nil {
		t.Fatalf("state %s, deciding %s", st.State, st.Deciding)
	}
	// Lee's approval still counts; nocontent's completes the quorum.
	if r := h.approveAs(t, 1, slackPerson("U0LEE")); r.Reason.Kind != say.VotedAlready {
		t.Fatalf("lee again: %+v; want her approval kept", r)
	}
	if r := h.approveAs(t, 1, slackPerson("U0NOC")); r.Reason.Kind != say.Sending {
		t.Fatalf("nocontent: %+v", r)
	}
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || len(got[0].Request.Approvers) != 2 || got[0].Request.Approvers[0].Actor != "user:lee" {
		t.Fatalf("the backend got %+v; want lee and nocontent", got)
	}
}

func TestTheLadderStopsPagingAnApproverRemoved(t *testing.T) {
	h := newQuorumHarness(t)
	h.reload(t, quorumConfigWithout(t, "lee", ""))
	posts := len(h.surf.posts)
	h.at(t, 15*time.Minute)
	h.tick(t)
	h.drain(t)
	var dms []string
	for _, p := range h.surf.posts[posts:] {
		dms = append(dms, p.Target)
	}
	if strings.Join(dms, " ") != "slack:U0KEVIN discord:user:223344556677889900 slack:U0NOC" {
		t.Errorf("the step DMed %v; want kevin and nocontent, not lee (removed since)", dms)
	}
}

func TestARefusedEarlierApprovalLeavesTheQuorum(t *testing.T) {
	h := newQuorumHarness(t)
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	// The backend refuses kevin, the first approver, from now on.
	h.fake.SetForbidden("user:kevin")
	if res := h.approveAs(t, 1, slackPerson("U0LEE")); res.Reason.Kind != say.Sending {
		t.Fatalf("lee: %+v", res)
	}
	h.drain(t)
	tell := h.lastTell(t)
	if tell.User != "U0LEE" || !strings.Contains(tell.Text, "refused the approval of user:kevin") {
		t.Errorf("lee is told %q", tell.Text)
	}
	final := h.surf.edits[len(h.surf.edits)-1].Card
	if q := final.Input().Quorum; q == nil || actors(q) != "user:lee" {
		t.Errorf("the card shows %+v; want lee's approval alone", q)
	}
	// The quorum is met again without kevin's: no stall.
	if r := h.approveAs(t, 1, slackPerson("U0NOC")); r.Reason.Kind != say.Sending {
		t.Fatalf("nocontent: %+v", r)
	}
	h.drain(t)
	if st := h.state(t, "a-merge1"); st.State != string(approval.StateApproved) {
		t.Fatalf("state %s; want approved by lee and nocontent", st.State)
	}
}

func TestAnApprovalInTimeAtTheDeadlineIsCounted(t *testing.T) {
	h := newQuorumHarness(t)
	h.at(t, 24*time.Hour)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("at the deadline: %+v", r)
	}
	// Received a moment before the deadline, recorded in the deny's wait.
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: true, Person: slackPerson("U0KEVIN"), ReceivedAt: h.clock.Now().Add(-time.Second)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reason.Kind != say.VotedAtDeadline || !strings.Contains(res.Reason.String(), "came before the deadline") {
		t.Fatalf("kevin: %+v (%s)", res, res.Reason.String())
	}
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.drain(t)
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Actor != threads.DeadlineActor || got[0].Request.Comment != "nobody answered" {
		t.Fatalf("backend got %+v; want the deadline's deny alone", got)
	}
	final := h.surf.edits[len(h.surf.edits)-1].Card
	if q := final.Input().Quorum; final.State != approval.StateExpired || q == nil || actors(q) != "user:kevin" {
		t.Errorf("the expired card shows %s, quorum %+v; want kevin's approval counted", final.State, q)
	}
}

// No dialog opens for an Approve the quorum would not count: the person
// is told at once, before typing a comment or a confirmation.
func TestNoDialogForAnApproveTheQuorumWouldNotCount(t *testing.T) {
	h := newQuorumHarness(t)
	ask := func(user string) threads.Clicked {
		return h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickAsk,
			Action: templates.Action{Kind: templates.ActionApproveNote, ApprovalID: "a-merge1", Revision: 1},
			Person: slackPerson(user)})
	}
	if out := ask("U0MAX"); out.Dialog != nil || out.Reason.Kind != say.NotEligible {
		t.Fatalf("max (outside finance): %+v; want no dialog, and why", out)
	}
	h.approveAs(t, 1, slackPerson("U0KEVIN"))
	if out := ask("U0KEVIN"); out.Dialog != nil || out.Reason.Kind != say.VotedAlready {
		t.Fatalf("kevin, who approved: %+v; want no dialog, and why", out)
	}
	if out := ask("U0LEE"); out.Dialog == nil {
		t.Fatalf("lee, who may complete the quorum: %+v; want the dialog", out)
	}
}
