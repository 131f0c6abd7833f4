package decidepage_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// quorumPageConfig is pageConfig where acme takes Approve and Deny by
// mail, its members have Slack users, max is an admin outside the rule,
// and a merge (a-merge1, started by user:ada) needs two approvals from
// FROM.
func quorumPageConfig(from string) string {
	return strings.NewReplacer(
		"EMAIL_DECISIONS", tenant.EmailDecisionsApprove,
		`{user: "user:kevin", role: operator, content: true, email: kevin@acme.example}
      - {user: "user:ada"`,
		`{user: "user:kevin", role: operator, content: true, email: kevin@acme.example, slack: U0KEVIN}
      - {user: "user:ada"`,
		`{user: "user:lee", role: operator, content: true}`,
		`{user: "user:lee", role: operator, content: true, email: lee@acme.example, slack: U0LEE}
      - {user: "user:max", role: admin, content: true, email: max@acme.example, slack: U0MAX}`,
		`  denyonly:`,
		`    tools:
      "acme_github.*":
        quorum: {approvals: 2, from: [`+from+`]}
  denyonly:`,
	).Replace(pageConfig)
}

// newQuorumPage serves a page on cfg, with a-merge1 waiting.
func newQuorumPage(t *testing.T, cfg string) *page {
	t.Helper()
	for _, want := range []string{"slack: U0KEVIN", "slack: U0LEE", "user:max", "approvals: 2"} {
		if !strings.Contains(cfg, want) {
			t.Fatalf("the quorum configuration lacks %q: pageConfig changed", want)
		}
	}
	p := newPageSetUp(t, pageSetup{config: cfg, publicURL: "https://approvals.example"})
	p.ingest("merge.json")
	p.drain()
	return p
}

// approveOnSlack is an Approve of a-merge1's first revision clicked on
// its Slack card by the Slack user.
func (p *page) approveOnSlack(user string) threads.Clicked {
	p.t.Helper()
	return p.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord,
		Action: templates.Action{Kind: templates.ActionApprove, ApprovalID: "a-merge1", Revision: 1},
		Person: threads.Person{Surface: "slack", User: user, Channel: "C0APPROVALS"}})
}

// quorumNow is where a-merge1's quorum stands, as every copy of its card
// shows it.
func (p *page) quorumNow() *templates.Quorum {
	p.t.Helper()
	c, err := p.svc.Card(context.Background(), "a-merge1", 1)
	if err != nil {
		p.t.Fatal(err)
	}
	q := c.Input().Quorum
	if q == nil {
		p.t.Fatal("the card shows no quorum")
	}
	return q
}

func approvalActors(q *templates.Quorum) string {
	var s []string
	for _, a := range q.Approvals {
		s = append(s, a.Actor)
	}
	return strings.Join(s, ",")
}

// checkNoApprove: the page offers no Approve form, and no decision form
// at all.
func checkNoApprove(t *testing.T, who string, a answer) {
	t.Helper()
	if strings.Contains(a.body, `value="approve"`) || strings.Contains(a.body, `id="show-to-approve"`) {
		t.Errorf("%s's page offers an Approve:\n%s", who, a.body)
	}
}

// An Approve a quorum would not count is not offered on the page, and
// a forged POST of it counts nothing: kevin approved on Slack already,
// and his Approve form, taken before, records no second approval; max is
// outside the rule, and may still deny.
func TestTheQuorumPageOffersNoApproveThatWouldNotCount(t *testing.T) {
	p := newQuorumPage(t, quorumPageConfig("user:kevin, user:lee"))
	kevin := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	before := p.checkOf(kevin)

	if res := p.approveOnSlack("U0KEVIN"); !res.Sent || res.Reason.Kind != say.Voted {
		t.Fatalf("kevin's approval on Slack: %+v (%s)", res, res.Reason.String())
	}
	a := p.get(kevin)
	checkSecure(t, a)
	if a.status != http.StatusOK {
		t.Fatalf("kevin's Approve link: %d\n%s", a.status, a.body)
	}
	for _, want := range []string{"1 of 2 approvals: user:kevin at ", "You approved this call already, at ",
		"each person counts once, on whichever surface"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("kevin's page lacks %q:\n%s", want, a.body)
		}
	}
	checkNoApprove(t, "kevin", a)

	forged := p.post(kevin, url.Values{"check": {before}, "action": {"approve"}})
	checkSecure(t, forged)
	if forged.status != http.StatusConflict || !strings.Contains(forged.body, "You approved this call already") {
		t.Errorf("kevin's Approve posted again: %d\n%s", forged.status, forged.body)
	}
	checkNoApprove(t, "kevin (after posting)", forged)
	// lee's form check is lee's link's: it is not kevin's.
	lee := p.link("acme", "a-merge1", 1, "user:lee", "approve")
	if a := p.post(kevin, url.Values{"check": {p.checkOf(lee)}, "action": {"approve"}}); a.status != http.StatusForbidden {
		t.Errorf("kevin's link posted with lee's form check: %d\n%s", a.status, a.body)
	}
	p.drain()
	if q := p.quorumNow(); approvalActors(q) != "user:kevin" {
		t.Errorf("after kevin's POSTs the card counts %q, want kevin's one approval", approvalActors(q))
	}
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("the backend received %+v", got)
	}

	maxApprove := p.get(p.link("acme", "a-merge1", 1, "user:max", "approve"))
	checkSecure(t, maxApprove)
	if maxApprove.status != http.StatusOK ||
		!strings.Contains(maxApprove.body, "This call needs 2 approvals from user:kevin or user:lee, and yours is not counted") {
		t.Errorf("max's Approve link: %d\n%s", maxApprove.status, maxApprove.body)
	}
	checkNoApprove(t, "max", maxApprove)

	// Any Deny ends the call at once, whoever gives it.
	maxDeny := p.link("acme", "a-merge1", 1, "user:max", "deny")
	if a := p.submit(maxDeny, url.Values{"reason": {"not this week"}}); a.status != http.StatusSeeOther {
		t.Fatalf("max's Deny: %d\n%s", a.status, a.body)
	}
	p.drain()
	got := p.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "deny" || got[0].Request.Actor != "user:max" ||
		got[0].Request.Via.Surface != "email" || got[0].Request.Comment != "not this week" {
		t.Fatalf("the backend received %+v, want max's deny via email", got)
	}
	if a := p.get(kevin); !strings.Contains(a.body, "This call is closed: Denied by user:max") ||
		!strings.Contains(a.body, "1 of 2 approvals had been given") {
		t.Errorf("kevin's page after max's deny:\n%s", a.body)
	}
}

// An approval on the page and one on Slack, from two eligible people,
// meet the quorum: one decision, by the second, reaches the backend, and
// the page shows the call approved with both.
func TestTheQuorumMetFromThePageAndSlack(t *testing.T) {
	p := newQuorumPage(t, quorumPageConfig("user:kevin, user:lee"))
	kevin := p.link("acme", "a-merge1", 1, "user:kevin", "approve")
	a := p.submit(kevin, nil)
	checkSecure(t, a)
	if a.status != http.StatusSeeOther {
		t.Fatalf("kevin's Approve: %d\n%s", a.status, a.body)
	}
	shown := p.get(kevin)
	if shown.status != http.StatusOK || !strings.Contains(shown.body, "1 of 2 approvals: user:kevin at ") ||
		!strings.Contains(shown.body, "You approved this call already") {
		t.Errorf("kevin's page after his Approve: %d\n%s", shown.status, shown.body)
	}
	checkNoApprove(t, "kevin", shown)
	row, err := p.store.ApprovalGet(context.Background(), "a-merge1")
	if err != nil {
		t.Fatal(err)
	}
	if v := string(row.Votes); !strings.Contains(v, `"actor":"user:kevin"`) || !strings.Contains(v, `"surface":"email"`) {
		t.Errorf("stored votes %s, want kevin's via email", v)
	}
	p.drain()
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("one approval of two sent %+v", got)
	}

	if res := p.approveOnSlack("U0LEE"); !res.Sent || res.Reason.Kind != say.Sending {
		t.Fatalf("lee's approval on Slack: %+v (%s)", res, res.Reason.String())
	}
	p.drain()
	got := p.fake.Decisions()
	if len(got) != 1 || got[0].Request.Decision != "approve" || got[0].Request.Actor != "user:lee" ||
		got[0].Request.Via.Surface != "slack" {
		t.Fatalf("the backend received %+v, want one approve by user:lee", got)
	}
	closed := p.get(kevin)
	if closed.status != http.StatusOK || !strings.Contains(closed.body, "This call is closed: Approved by user:lee") ||
		!strings.Contains(closed.body, "2 of 2 approvals: user:kevin at ") || !strings.Contains(closed.body, ", user:lee at ") {
		t.Errorf("kevin's page after lee's approval: %d\n%s", closed.status, closed.body)
	}
	checkNoApprove(t, "kevin", closed)
	if q := p.quorumNow(); approvalActors(q) != "user:kevin,user:lee" {
		t.Errorf("the card counts %q", approvalActors(q))
	}
}

// The job's starter is never counted towards a quorum, even where the
// tenant lets members decide their own jobs, and even when the rule
// names them: the page offers them no Approve.
func TestTheQuorumPageNeverCountsTheStarter(t *testing.T) {
	for _, from := range []string{"user:kevin, user:lee", "user:ada, user:kevin, user:lee"} {
		t.Run(from, func(t *testing.T) {
			cfg := strings.Replace(quorumPageConfig(from), "forbid_self_approval: true", "forbid_self_approval: false", 1)
			if !strings.Contains(cfg, "forbid_self_approval: false") {
				t.Fatal("pageConfig no longer sets forbid_self_approval")
			}
			p := newQuorumPage(t, cfg)
			ada := p.link("acme", "a-merge1", 1, "user:ada", "approve")
			a := p.get(ada)
			checkSecure(t, a)
			if a.status != http.StatusOK ||
				!strings.Contains(a.body, "You started job j-42, and a call that needs 2 approvals never counts its starter&#39;s") {
				t.Errorf("ada's Approve link: %d\n%s", a.status, a.body)
			}
			checkNoApprove(t, "ada", a)
			if q := p.quorumNow(); len(q.Approvals) != 0 {
				t.Errorf("the card counts %q", approvalActors(q))
			}
			p.drain()
			if got := p.fake.Decisions(); len(got) != 0 {
				t.Fatalf("the backend received %+v", got)
			}
		})
	}
}
