package threads_test

import (
	"bytes"
	"context"
	"errors"
	"html"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/threads"
)

// TestOutcomeMailReachesEachRecipientOnce plays each of mailStories
// (approved, denied with a reason, nobody answered, cancelled, refused by
// the re-check) over SMTP: each recipient who was mailed gets exactly one
// outcome mail, the last of their thread, that says the state, who and
// the reason where the card shows one, with no decision link; nobody
// else is mailed; every mail keeps the approval's one subject, answered
// ("Re: …") after the first; and each follow-up's In-Reply-To and
// References name only that recipient's own earlier mails.
func TestOutcomeMailReachesEachRecipientOnce(t *testing.T) {
	for _, s := range mailStories {
		t.Run(s.name, func(t *testing.T) {
			h, all := s.play(t) // checks who is mailed, how often
			if got := h.state(t, s.id).State; got != string(s.state) {
				t.Fatalf("the approval ended %s, want %s", got, s.state)
			}
			subject := "Approval needed: " + s.function + " · " + s.id
			var addrs []string
			for _, m := range s.mails {
				if !slices.Contains(addrs, m.to) {
					addrs = append(addrs, m.to)
				}
			}
			if len(addrs) < 2 {
				t.Fatalf("the story mails %v: it must mail a list and a member", addrs)
			}
			for _, addr := range addrs {
				ms := sentTo(all, addr)
				var ends []int
				for i, m := range ms {
					if strings.Contains(m.Text, s.outcome[0]) {
						ends = append(ends, i)
					}
				}
				if len(ends) != 1 || ends[0] != len(ms)-1 {
					t.Errorf("%s: the outcome %q is in mails %v of %d, want once, in the last", addr, s.outcome[0], ends, len(ms))
				}
				end := ms[len(ms)-1]
				page := html.UnescapeString(end.HTML)
				for _, want := range s.outcome {
					if !strings.Contains(end.Text, want) {
						t.Errorf("%s: the outcome mail's text lacks %q:\n%s", addr, want, end.Text)
					}
					if !strings.Contains(page, want) {
						t.Errorf("%s: the outcome mail's HTML lacks %q:\n%s", addr, want, end.HTML)
					}
				}
				for part, body := range map[string]string{"text": end.Text, "html": end.HTML} {
					if strings.Contains(body, "/decide/") || strings.Contains(body, "Decide as") {
						t.Errorf("%s: the outcome mail's %s part still invites a decision:\n%s", addr, part, body)
					}
				}
				checkThread(t, addr, ms, subject)
			}
		})
	}
}

// checkThread checks one recipient's mails about one approval: the first
// carries the subject and answers nothing; each later one answers it
// ("Re: "), its In-Reply-To is the recipient's previous mail and its
// References the recipient's own earlier mails, the first of them first.
func checkThread(t *testing.T, addr string, ms []sentMail, subject string) {
	t.Helper()
	for i, m := range ms {
		if i == 0 {
			if m.Subject != subject || len(m.InReplyTo) != 0 || len(m.References) != 0 {
				t.Errorf("%s's first mail: subject %q, In-Reply-To %v, References %v; want %q answering nothing",
					addr, m.Subject, m.InReplyTo, m.References, subject)
			}
			continue
		}
		if m.Subject != "Re: "+subject {
			t.Errorf("%s's mail %d: subject %q, want %q", addr, i+1, m.Subject, "Re: "+subject)
		}
		var own []string
		for _, e := range ms[:i] {
			own = append(own, e.ID)
		}
		if len(m.InReplyTo) != 1 || m.InReplyTo[0] != own[i-1] {
			t.Errorf("%s's mail %d answers %v, want their previous mail %s", addr, i+1, m.InReplyTo, own[i-1])
		}
		if len(m.References) == 0 || m.References[0] != own[0] || m.References[len(m.References)-1] != own[i-1] {
			t.Errorf("%s's mail %d: References %v, want their first mail %s first and their previous %s last",
				addr, i+1, m.References, own[0], own[i-1])
		}
		for _, ref := range m.References {
			if !slices.Contains(own, ref) {
				t.Errorf("%s's mail %d references %s, a mail they never received", addr, i+1, ref)
			}
		}
	}
}

// downMailer fails every mail while down, as an unreachable SMTP server
// does, and hands the rest to the recorder. With hold set, the first
// outcome mail to leads waits at SMTP until hold closes, having said so
// on arrived.
type downMailer struct {
	rec     *recorder
	down    atomic.Bool
	hold    chan struct{}
	arrived chan struct{}
	held    atomic.Bool
}

func (m *downMailer) Mail(ctx context.Context, req threads.MailRequest) (string, error) {
	if m.down.Load() {
		return "", errors.New("smtp: connection refused")
	}
	if m.hold != nil && req.Kind == threads.MailOutcome && req.To == leadsAddr && m.held.CompareAndSwap(false, true) {
		m.arrived <- struct{}{}
		<-m.hold
	}
	return m.rec.Mail(ctx, req)
}

// recheckMerge ingests refund-recheck.json's refusal, of a-merge1.
func recheckMerge(t *testing.T, h *decideHarness) {
	t.Helper()
	body, _ := readEvent(t, "refund-recheck.json")
	body = bytes.ReplaceAll(body, []byte("a-refund1"), []byte("a-merge1"))
	body = bytes.ReplaceAll(body, []byte("payments.refund"), []byte("acme_github.merge"))
	body = bytes.ReplaceAll(body, []byte(`"evt-0013"`), []byte(`"evt-0013-merge"`))
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
}

// A re-check's refusal that comes while the approval's outcome mails
// still wait (SMTP down) or while one is at SMTP tells each recipient
// once: a waiting outcome row takes the refusal in (it mails the approval
// as it ended), and the re-check's own row goes a minute after, not side
// by side with the one at SMTP, and finds it was told.
func TestARecheckWhileTheOutcomeWaitsTellsOnce(t *testing.T) {
	for _, atSMTP := range []bool{false, true} {
		name := "the outcome waits"
		if atSMTP {
			name = "the outcome is at SMTP"
		}
		t.Run(name, func(t *testing.T) {
			var m *downMailer
			h := newDecideHarnessFrom(t, mailConfig, time.Minute, func(o *threads.Options) {
				m = &downMailer{rec: o.Fallback.(*recorder)}
				o.Mailer = m
			})
			h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
			h.ingest(t, "merge.json")
			h.drain(t)
			h.at(t, time.Hour)
			h.tick(t)
			h.drain(t)
			if len(h.mailsTo(leadsAddr)) == 0 {
				t.Fatal("leads was not mailed at step 2")
			}
			m.down.Store(true)
			h.at(t, 80*time.Minute)
			if res := h.decide(t, "a-merge1", 1, true, "U0LEE"); !res.Sent {
				t.Fatalf("approve: %+v", res)
			}
			h.drain(t) // the approval lands; its outcome mails fail, and wait
			if got := h.state(t, "a-merge1").State; got != string(approval.StateApproved) {
				t.Fatalf("state %s", got)
			}
			h.at(t, 85*time.Minute) // past the outcome rows' backoff
			if !atSMTP {
				pending := func() int {
					st, err := h.store.OutboxStats(context.Background(), h.clock.Now())
					if err != nil {
						t.Fatal(err)
					}
					return st.Lanes[threads.LaneMail].Pending
				}
				waiting := pending()
				recheckMerge(t, h)
				if n := pending(); n != waiting {
					t.Fatalf("the refusal added %d mail rows beside the %d outcome mails still waiting", n-waiting, waiting)
				}
				m.down.Store(false)
			} else {
				// One worker takes leads' outcome to SMTP, which holds it;
				// the refusal arrives meanwhile, and another worker drains.
				m.down.Store(false)
				m.hold, m.arrived = make(chan struct{}), make(chan struct{})
				first := make(chan error, 1)
				go func() { _, err := h.svc.DrainOutbox(context.Background()); first <- err }()
				<-m.arrived
				recheckMerge(t, h)
				h.drain(t)
				close(m.hold)
				if err := <-first; err != nil {
					t.Fatal(err)
				}
			}
			for _, at := range []time.Duration{85 * time.Minute, 87 * time.Minute, 5 * time.Hour} {
				h.at(t, at)
				h.drain(t)
			}
			for _, addr := range []string{leadsAddr, kevinAddr} {
				var states []approval.State
				for _, o := range h.mailsTo(addr) {
					if o.Kind == threads.MailOutcome {
						states = append(states, o.Card.State)
					}
				}
				if n := slices.Index(states, approval.StateRefused); n != len(states)-1 {
					t.Errorf("%s got outcome mails %v; want the re-check's refusal once, last", addr, states)
				}
			}
		})
	}
}

// A recipient told "Approved" who still has an outcome row waiting (one
// a mail recorded after the close enqueued, say) gets the re-check's
// refusal through it, when the refusal coalesced into it: the row finds
// the recipient told how it ended, but not that it changed since.
func TestARecheckCoalescedIntoALaterOutcomeRowIsTold(t *testing.T) {
	h := newMailHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
	h.at(t, 80*time.Minute)
	if res := h.decide(t, "a-merge1", 1, true, "U0LEE"); !res.Sent {
		t.Fatalf("approve: %+v", res)
	}
	h.drain(t)
	if got := outcomesOf(h, leadsAddr); len(got) != 1 || got[0] != approval.StateApproved {
		t.Fatalf("leads' outcomes after the approval: %v", got)
	}
	// A second outcome row for leads waits (due in an hour) when the
	// re-check's refusal comes.
	now := h.clock.Now()
	if err := h.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		return tx.OutboxInsert(ctx, []store.OutboxInsertParams{{ID: "o-later-outcome", Tenant: "acme", ApprovalID: "a-merge1",
			Kind: threads.KindEmail, Target: leadsAddr, CoalesceKey: "mail-outcome:a-merge1:" + leadsAddr,
			Payload: []byte(`{"revision":1,"mail":"outcome"}`), NotBefore: now.Add(time.Hour), Now: now, Lane: threads.LaneMail}})
	}); err != nil {
		t.Fatal(err)
	}
	recheckMerge(t, h)
	h.at(t, 3*time.Hour)
	h.drain(t)
	if got := outcomesOf(h, leadsAddr); len(got) != 2 || got[1] != approval.StateRefused {
		t.Errorf("leads' outcomes: %v; want approved, then the re-check's refusal", got)
	}
}

// outcomesOf lists the states the outcome mails to addr said, in order.
func outcomesOf(h *decideHarness, addr string) []approval.State {
	var out []approval.State
	for _, m := range h.mailsTo(addr) {
		if m.Kind == threads.MailOutcome {
			out = append(out, m.Card.State)
		}
	}
	return out
}
