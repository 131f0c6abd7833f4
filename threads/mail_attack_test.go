package threads_test

// Adversarial tests of escalation mail: races between a mail on its way
// and the approval's life, and what a mail may carry.

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// hookedMailer is the recorder as a Mailer that runs a hook once, while
// the first mail to hookTo is "in SMTP" (before the mail is accepted).
type hookedMailer struct {
	rec    *recorder
	hookTo string
	once   sync.Once
	hook   func()
	fired  bool
}

func (m *hookedMailer) Mail(ctx context.Context, req threads.MailRequest) (string, error) {
	if strings.EqualFold(req.To, m.hookTo) {
		m.once.Do(func() { m.fired = true; m.hook() })
	}
	return m.rec.Mail(ctx, req)
}

func newHookedMailHarness(t *testing.T, hookTo string) (*decideHarness, *hookedMailer) {
	t.Helper()
	links, err := decidepage.NewLinks("https://approvals.example", []string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	hm := &hookedMailer{hookTo: hookTo}
	h := newDecideHarnessFrom(t, mailConfig, time.Minute, func(o *threads.Options) {
		o.Links = links
		hm.rec = o.Fallback.(*recorder)
		o.Mailer = hm
	})
	return h, hm
}

func kinds(ms []threads.MailRequest) []string {
	var out []string
	for _, m := range ms {
		k := m.Kind
		if k == threads.MailEscalation {
			k = "escalation"
		}
		out = append(out, k)
	}
	return out
}

// TestAttackMailInFlightAtCloseGetsItsOutcome: an escalation mail that
// is on its way (passed stillWaiting, in SMTP) when the approval closes
// is recorded only after closingMail listed who was mailed, so its
// recipient reads "Approval needed" and never hears how it ended. The
// same happens after a crash between the SMTP accept and the record.
func TestAttackMailInFlightAtCloseGetsItsOutcome(t *testing.T) {
	h, hm := newHookedMailHarness(t, "kevin@acme.example")
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	hm.hook = func() { h.ingest(t, "merge-resolved.json") } // decided in the console meanwhile
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	h.drain(t)
	if !hm.fired {
		t.Fatal("kevin was not mailed")
	}
	if got := h.state(t, "a-merge1").State; got != string(approval.StateDenied) {
		t.Fatalf("state %s", got)
	}
	ms := h.mailsTo("kevin@acme.example")
	outcome := 0
	for _, m := range ms {
		if m.Kind == threads.MailOutcome {
			outcome++
		}
	}
	if len(ms) == 0 || ms[0].Kind != threads.MailEscalation || outcome != 1 {
		t.Errorf("MEDIUM: kevin was sent %v: an escalation whose send overlapped the close, and %d outcome mails "+
			"(want 1). closingMail lists mail posts only, and the post of a mail in flight is written after it; "+
			"record the post and, if the approval is final by then, enqueue that recipient's outcome in the same "+
			"transaction", kinds(ms), outcome)
	}
}

// TestAttackMailWhileADecisionIsInFlightKeepsItsLinks: mail is a
// snapshot read later; a chat click in flight when it is rendered must
// not strip its links (the page itself shows a decision in flight and
// refuses a second one). MemberLinks returns none when card.Deciding is
// set, and Mail.Asks drops even "decide in the console"; when that click
// then does not land, the escalated member holds a mail that offers no
// way to decide, and nothing mails the links later.
func TestAttackMailWhileADecisionIsInFlightKeepsItsLinks(t *testing.T) {
	h, hm := newHookedMailHarness(t, "leads@acme.example")
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.fake.SetForbidden("user:lee") // lee's click will not land
	hm.hook = func() {
		if res := h.decide(t, "a-merge1", 1, false, "U0LEE"); !res.Sent {
			t.Errorf("lee's click: %+v", res)
		}
	}
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	h.drain(t)
	if !hm.fired {
		t.Fatal("leads was not mailed")
	}
	if got := h.state(t, "a-merge1"); got.State != string(approval.StatePending) || len(got.Deciding) != 0 {
		t.Fatalf("state %s deciding %s: lee's refused click should leave it pending", got.State, got.Deciding)
	}
	kevin := h.mailsTo("kevin@acme.example")
	if len(kevin) != 1 {
		t.Fatalf("kevin got %d mails", len(kevin))
	}
	if kevin[0].Card.Deciding == nil {
		t.Skip("kevin's mail was rendered before lee's click (order of the outbox); the race was not hit")
	}
	if kevin[0].Link == nil {
		r, err := templates.New(templates.Options{})
		if err != nil {
			t.Fatal(err)
		}
		text := r.Mail(kevin[0].Render()).Text
		t.Errorf("MEDIUM: kevin's step-2 mail, rendered while lee's click was in flight, carries no decision link "+
			"(and says nothing of how to decide: %v); lee's click was then refused and the call is pending: "+
			"kevin cannot decide from the mail he was escalated with until a later step mails him again. "+
			"Mail is never edited: give links whatever is in flight (the page shows a decision on its way)", strings.Contains(text, "Decide"))
	}
}

// TestAttackMergedStepsMailOnePersonOnce: steps that fall due together
// (a tick late, a restart) are merged "one mail per address", but the
// address is compared as written: kevin@acme.example on step 2 and
// Kevin@ACME.example on step 3 are two mails to one person at once.
func TestAttackMergedStepsMailOnePersonOnce(t *testing.T) {
	h := newMailHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, 4*time.Hour) // no tick at 1h: steps 2 and 3 are due together
	h.tick(t)
	h.drain(t)
	if n := len(h.mailsTo("kevin@acme.example")); n != 1 {
		t.Errorf("LOW: steps 2 and 3 fired together mailed kevin %d times; stepRows dedupes email targets by their "+
			"text, not case-insensitively as mailTarget and MemberOn(email) compare them", n)
	}
	if n := len(h.mailsTo("leads@acme.example")); n != 1 {
		t.Errorf("leads got %d mails", n)
	}
}

// TestAttackRestrictedOutcomeMailShowsNoContent: a content-restricted
// call denied from the decision page with a reason: neither the outcome
// mail nor the note mail carries the reason, the arguments or the
// agent's text.
func TestAttackRestrictedOutcomeMailShowsNoContent(t *testing.T) {
	h := newMailHarness(t)
	h.fake.AddApproval("a-priv1", 1, arguments(t, "a-priv1.json"), true)
	h.ingest(t, "private.json")
	h.drain(t)
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	if len(h.mailsTo("kevin@acme.example")) != 1 {
		t.Fatalf("kevin was mailed %d times", len(h.mailsTo("kevin@acme.example")))
	}
	const secret = "SECRET-REASON-bea.private"
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-priv1",
		Revision: 1, Approve: false, Comment: secret,
		Person: threads.Person{Surface: threads.SurfaceEmail, User: "kevin@acme.example"}})
	if err != nil || !res.Sent {
		t.Fatalf("decide: %+v %v", res, err)
	}
	h.drain(t)
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outcomes := 0
	for _, addr := range []string{"kevin@acme.example", "leads@acme.example"} {
		for _, m := range h.mailsTo(addr) {
			if m.Kind == threads.MailOutcome {
				outcomes++
			}
			e := r.Mail(m.Render())
			for _, bad := range []string{secret, "bea.private@example.com", "Deleting my old customer record"} {
				if strings.Contains(e.Text+e.HTML+e.Subject, bad) {
					t.Errorf("%s's %q mail shows %q of a restricted call", addr, m.Kind, bad)
				}
			}
		}
	}
	if outcomes != 2 {
		t.Errorf("%d outcome mails, want one each", outcomes)
	}
}
