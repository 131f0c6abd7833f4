package threads_test

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/threads"
)

// mailConfig is testConfig with a member on the ladder's mail: step 2
// mails a list and kevin's address, step 3 kevin again (written in
// other case, as people do).
var mailConfig = strings.NewReplacer(
	"          email: [leads@acme.example]", "          email: [leads@acme.example, kevin@acme.example]",
	"          mention: [slack:U0ADA]", "          mention: [slack:U0ADA]\n          email: [Kevin@ACME.example]",
	`slack: U0KEVIN, discord: "223344556677889900"}`, `slack: U0KEVIN, discord: "223344556677889900", email: kevin@acme.example}`,
).Replace(testConfig)

const testLinkSecret = "link-secret-of-the-tests-0123456789abcdef"

func newMailHarness(t *testing.T) *decideHarness {
	t.Helper()
	links, err := decidepage.NewLinks("https://approvals.example", []string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	return newDecideHarnessFrom(t, mailConfig, time.Minute, func(o *threads.Options) { o.Links = links })
}

// mailedAtStep2 is merge.json's approval an hour in: step 2 has mailed
// the list address and kevin.
func mailedAtStep2(t *testing.T) *decideHarness {
	t.Helper()
	h := newMailHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	return h
}

// mailsTo is what addr was sent, in order.
func (h *harness) mailsTo(addr string) []threads.MailRequest {
	h.surf.mu.Lock()
	defer h.surf.mu.Unlock()
	var out []threads.MailRequest
	for _, m := range h.surf.mails {
		if strings.EqualFold(m.To, addr) {
			out = append(out, m)
		}
	}
	return out
}

// idOf is the Message-ID the recorder gave the i-th mail it was sent
// (its position in the list, from 1).
func (h *harness) idOf(m threads.MailRequest) string {
	h.surf.mu.Lock()
	defer h.surf.mu.Unlock()
	for i := range h.surf.mails {
		if h.surf.mails[i].Key == m.Key {
			return "mail-" + strconv.Itoa(i+1) + "@bot.test"
		}
	}
	return ""
}

// TestMailIsOneConversationPerRecipient: each recipient's mails answer
// the mails that recipient received, never another's; a member gets a
// Deny link (the tenant's default) and a list address none; the close
// reaches everyone mailed, once, with no link.
func TestMailIsOneConversationPerRecipient(t *testing.T) {
	h := newMailHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)

	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	leads, kevin := h.mailsTo("leads@acme.example"), h.mailsTo("kevin@acme.example")
	if len(leads) != 1 || len(kevin) != 1 {
		t.Fatalf("step 2 mailed leads %d, kevin %d times", len(leads), len(kevin))
	}
	for _, m := range []threads.MailRequest{leads[0], kevin[0]} {
		if m.Kind != threads.MailEscalation || m.Step != 2 || m.Waited != time.Hour || m.Thread != (threads.MailThread{}) {
			t.Errorf("step 2 mail to %s: kind %q step %d waited %v thread %+v", m.To, m.Kind, m.Step, m.Waited, m.Thread)
		}
	}
	if leads[0].Member != "" || leads[0].Link != nil {
		t.Errorf("a list address got member %q and link %v", leads[0].Member, leads[0].Link)
	}
	if kevin[0].Member != "user:kevin" || kevin[0].Link == nil || kevin[0].Link.Approve ||
		!strings.HasPrefix(kevin[0].Link.URL, "https://approvals.example/decide/") {
		t.Fatalf("kevin's link (the tenant takes only denials on the page): member %q %+v", kevin[0].Member, kevin[0].Link)
	}
	checkLink(t, kevin[0].Link.URL, decidepage.Claims{Tenant: "acme", ApprovalID: "a-merge1", Revision: 1,
		Member: "user:kevin"}, h.clock.Now())

	h.at(t, 4*time.Hour)
	h.tick(t)
	h.drain(t)
	kevin = h.mailsTo("kevin@acme.example")
	if len(kevin) != 2 || len(h.mailsTo("leads@acme.example")) != 1 {
		t.Fatalf("step 3 mailed kevin %d times in all, leads %d", len(kevin), len(h.mailsTo("leads@acme.example")))
	}
	first := h.idOf(kevin[0])
	if got := kevin[1].Thread; got.Root != first || got.Last != first {
		t.Errorf("kevin's second mail answers %+v, want his first %s", got, first)
	}

	if res := h.decide(t, "a-merge1", 1, true, "U0LEE"); !res.Sent {
		t.Fatalf("approve: %+v", res)
	}
	h.drain(t)
	leads, kevin = h.mailsTo("leads@acme.example"), h.mailsTo("kevin@acme.example")
	if len(leads) != 2 || len(kevin) != 3 {
		t.Fatalf("after the approval: leads %d mails, kevin %d", len(leads), len(kevin))
	}
	for _, x := range []struct {
		m          threads.MailRequest
		root, last string
	}{
		{leads[1], h.idOf(leads[0]), h.idOf(leads[0])},
		{kevin[2], h.idOf(kevin[0]), h.idOf(kevin[1])},
	} {
		if x.m.Kind != threads.MailOutcome || x.m.Card.State != approval.StateApproved || x.m.Link != nil {
			t.Errorf("outcome to %s: kind %q state %s link %v", x.m.To, x.m.Kind, x.m.Card.State, x.m.Link)
		}
		if x.m.Thread.Root != x.root || x.m.Thread.Last != x.last {
			t.Errorf("outcome to %s answers %+v, want root %s last %s", x.m.To, x.m.Thread, x.root, x.last)
		}
	}

	// Later events about the closed approval mail nobody again.
	n := len(h.surf.mails)
	h.ingest(t, "merge-resolved.json")
	h.drain(t)
	if len(h.surf.mails) != n {
		t.Errorf("a later event mailed %d more", len(h.surf.mails)-n)
	}
}

// TestReaskMailsTheNewRevision: whoever was mailed revision 1 is mailed
// revision 2 in their thread, with links bound to revision 2.
func TestReaskMailsTheNewRevision(t *testing.T) {
	h := mailedAtStep2(t)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	for _, addr := range []string{"leads@acme.example", "kevin@acme.example"} {
		ms := h.mailsTo(addr)
		if len(ms) != 2 {
			t.Fatalf("%s got %d mails", addr, len(ms))
		}
		re := ms[1]
		if re.Kind != threads.MailReask || re.Card.Approval.Revision != 2 || re.Thread.Root != h.idOf(ms[0]) {
			t.Errorf("reask to %s: kind %q revision %d thread %+v", addr, re.Kind, re.Card.Approval.Revision, re.Thread)
		}
	}
	k := h.mailsTo("kevin@acme.example")[1]
	if k.Link == nil {
		t.Fatal("kevin's reask has no link")
	}
	checkLink(t, k.Link.URL, decidepage.Claims{Tenant: "acme", ApprovalID: "a-merge1", Revision: 2,
		Member: "user:kevin"}, h.clock.Now())
}

// checkLink verifies a link's token and compares its claims (but the
// expiry, which must lie ahead).
func checkLink(t *testing.T, link string, want decidepage.Claims, now time.Time) {
	t.Helper()
	u, err := url.Parse(link)
	if err != nil {
		t.Fatal(err)
	}
	s, err := decidepage.NewSigner([]string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(strings.TrimPrefix(u.Path, decidepage.Path), now)
	if err != nil {
		t.Fatalf("link %s: %v", link, err)
	}
	if !got.Expires.After(now) {
		t.Errorf("link expires at %v, before now %v", got.Expires, now)
	}
	got.Expires = time.Time{}
	if got != want {
		t.Errorf("link claims %+v, want %+v", got, want)
	}
}

// TestDeadlineOutcomeReachesEveryoneMailed: the deadline's deny is an
// outcome too: "nobody answered" reaches each recipient once.
func TestDeadlineOutcomeReachesEveryoneMailed(t *testing.T) {
	h := mailedAtStep2(t)
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.tick(t)
	h.drain(t)
	h.drain(t)
	for _, addr := range []string{"leads@acme.example", "kevin@acme.example"} {
		ms := h.mailsTo(addr)
		var ends []threads.MailRequest
		for _, m := range ms {
			if m.Kind == threads.MailOutcome {
				ends = append(ends, m)
			}
		}
		if len(ends) != 1 || ends[0].Card.State != approval.StateExpired || ends[0].Thread.Root != h.idOf(ms[0]) {
			t.Errorf("%s: outcome mails %+v", addr, ends)
		}
	}
}

// TestEmailDecisionThatDidNotLandIsMailed: a decision from the decision
// page that the backend did not take is told to the member by mail, in
// their thread; one that landed is told by the outcome mail alone.
func TestEmailDecisionThatDidNotLandIsMailed(t *testing.T) {
	h := mailedAtStep2(t)
	h.fake.SetForbidden("user:kevin")
	email := threads.Person{Surface: threads.SurfaceEmail, User: "kevin@acme.example"}
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-merge1",
		Revision: 1, Approve: false, Person: email})
	if err != nil || !res.Sent {
		t.Fatalf("decide by mail: %+v %v", res, err)
	}
	h.drain(t)
	ms := h.mailsTo("kevin@acme.example")
	last := ms[len(ms)-1]
	if last.Kind != threads.MailNote || !strings.Contains(last.Note, "refused") || last.Thread.Root != h.idOf(ms[0]) {
		t.Fatalf("kevin's last mail: kind %q note %q thread %+v", last.Kind, last.Note, last.Thread)
	}
	if n := len(h.surf.tells); n != 0 {
		t.Errorf("a chat surface was asked to tell an email decision: %d tells", n)
	}
	got := h.fake.Decisions()
	if len(got) != 1 || got[0].Request.Via.Surface != "email" || got[0].Request.Via.User != "kevin@acme.example" ||
		got[0].Request.Actor != "user:kevin" {
		t.Errorf("the backend received %+v", got)
	}
}

// A step's mail queued before a reask and sent after it shows the new
// revision, with its links: the reask's own mail went only to those
// mailed before, so this recipient would otherwise hold only a card
// that says it was superseded.
func TestAStepMailQueuedBeforeAReaskShowsTheNewRevision(t *testing.T) {
	h := newMailHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, time.Hour)
	h.tick(t) // step 2's mails are queued, not yet sent
	h.fake.AddApproval("a-merge1", 2, arguments(t, "a-merge1.r2.json"), false)
	h.ingest(t, "merge-reasked.json")
	h.drain(t)
	for _, addr := range []string{"leads@acme.example", "kevin@acme.example"} {
		ms := h.mailsTo(addr)
		if len(ms) != 1 {
			t.Fatalf("%s got %d mails, want step 2's", addr, len(ms))
		}
		m, rev := ms[0], 0
		if m.Card.Approval != nil {
			rev = m.Card.Approval.Revision
		}
		if m.Kind != threads.MailEscalation || m.Card.Superseded || rev != 2 {
			t.Errorf("%s got a %q mail of revision %d (superseded %v); want step 2's, of revision 2", addr, m.Kind, rev, m.Card.Superseded)
		}
	}
}
