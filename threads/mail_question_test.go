package threads_test

import (
	"bytes"
	"context"
	"html"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/notify"
	"approvalsbot/notify/smtpconf"
	"approvalsbot/notify/smtptest"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// questionFeatures are the backend features the question tests' backend
// takes.
var questionFeatures = []string{backend.FeatureQuestions}

// newQuestionSMTPHarness is the SMTP harness for questions, its tenant
// acme taking emailDecisions on the decision page ("" keeps the
// default, denials only).
func newQuestionSMTPHarness(t *testing.T, emailDecisions string) *smtpHarness {
	t.Helper()
	cfg := smtpConfig
	if emailDecisions != "" {
		cfg = strings.Replace(cfg, "    forbid_self_approval: true\n", "    forbid_self_approval: true\n    email_decisions: "+emailDecisions+"\n", 1)
	}
	sink := smtptest.Start(t, smtptest.Options{})
	links, err := decidepage.NewLinks("https://approvals.example", []string{testLinkSecret})
	if err != nil {
		t.Fatal(err)
	}
	h := newDecideHarnessWith(t, cfg, time.Minute, questionFeatures, func(o *threads.Options) {
		o.Links, o.Questions = links, true
		m, err := notify.NewMailer(notify.Options{
			SMTP:     smtpconf.Settings{Addr: sink.Addr, TLS: smtpconf.TLSNone, From: "Approvals <approvals@acme.example>"},
			Renderer: threadstest.Renderer(t), Now: o.Clock.Now, CommandTimeout: 5 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		o.Mailer = m
	})
	return &smtpHarness{decideHarness: h, sink: sink}
}

// questionAtStep2 is the fixture question an hour in: the default
// ladder's step 2 has mailed the list address and kevin.
func questionAtStep2(t *testing.T, h *smtpHarness, fixture string) {
	t.Helper()
	h.ingest(t, fixture)
	h.drain(t)
	h.at(t, time.Hour)
	h.tick(t)
	h.drain(t)
}

const questionSubject = "Answer needed: refund-bot's question · q-refund1"

// TestQuestionEscalationMail: a ladder step's mail carries the question
// (who asks, the job, the text, the choices, what it takes) under the
// question's own subject; kevin, a member, gets his link to answer on
// the page where the tenant takes answers there, and the list address
// none; where the tenant takes only denials on the page, nobody gets a
// link, and the mail says to answer in the console.
func TestQuestionEscalationMail(t *testing.T) {
	t.Parallel()
	const text = "Order 7781 was paid from two accounts. Which one should I refund the 250 EUR to?"
	for _, tt := range []struct {
		name      string
		decisions string
		kevinLink bool
	}{
		{"answers on the page", "approve", true},
		{"denials only on the page", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newQuestionSMTPHarness(t, tt.decisions)
			questionAtStep2(t, h, "question.json")
			all := h.sent(t)
			for _, addr := range []string{leadsAddr, kevinAddr} {
				ms := sentTo(all, addr)
				if len(ms) != 1 {
					t.Fatalf("%s got %d mails, want the step's one", addr, len(ms))
				}
				m := ms[0]
				if m.Subject != questionSubject {
					t.Errorf("%s: subject %q, want %q", addr, m.Subject, questionSubject)
				}
				page := html.UnescapeString(m.HTML)
				for _, want := range []string{"Nobody has answered for 1 hour; you are on step 2 of the default ladder.",
					"refund-bot asks", "j-42", text, "acct-1 (Ana Ruiz, personal)", "acct-2 (Ruiz Trading Ltd)",
					"Answer with one of these, or in your own words.", "Waiting for an answer"} {
					if !strings.Contains(m.Text, want) || !strings.Contains(page, want) {
						t.Errorf("%s: the mail lacks %q:\n%s", addr, want, m.Text)
					}
				}
				for _, not := range []string{"Approve", "Deny", "Decide", "autonomy level"} {
					if strings.Contains(m.Text, not) || strings.Contains(page, not) {
						t.Errorf("%s: the question's mail says %q:\n%s", addr, not, m.Text)
					}
				}
				link := linkPattern.FindString(m.Text)
				wantLink := addr == kevinAddr && tt.kevinLink
				switch {
				case wantLink && (link == "" || !strings.Contains(m.Text, "Answer as user:kevin:") || !strings.Contains(m.Text, "Open the page to answer")):
					t.Errorf("%s: no link to answer on the page:\n%s", addr, m.Text)
				case !wantLink && link != "":
					t.Errorf("%s: a link %s where none is due", addr, link)
				case !wantLink && !strings.Contains(m.Text, "Answer in the console"):
					t.Errorf("%s: the mail does not say where to answer:\n%s", addr, m.Text)
				}
			}
		})
	}
}

// TestRestrictedQuestionMail: a restricted question's mail shows neither
// its text nor its choices, to a list or to a member, and says it is
// restricted.
func TestRestrictedQuestionMail(t *testing.T) {
	t.Parallel()
	h := newQuestionSMTPHarness(t, "approve")
	questionAtStep2(t, h, "question-private.json")
	all := h.sent(t)
	if len(all) == 0 {
		t.Fatal("the step mailed nobody")
	}
	for _, m := range all {
		page := html.UnescapeString(m.HTML)
		for _, secret := range []string{"Dr. Lee", "diagnosis", "Tell Dr. Lee now", "Keep it for the meeting"} {
			if strings.Contains(m.Subject+m.Text+page, secret) {
				t.Errorf("%s: the mail shows the restricted %q", m.To, secret)
			}
		}
		if !strings.Contains(m.Text, "The question is restricted") || !strings.Contains(m.Text, "assistant asks") {
			t.Errorf("%s: the mail does not say who asks and that the question is restricted:\n%s", m.To, m.Text)
		}
	}
}

// questionStories are a question's ends that each recipient mailed
// hears of once, as a call's (TestOutcomeMailReachesEachRecipientOnce):
// answered elsewhere, answered on the decision page, nobody answered by
// the deadline, and cancelled.
var questionStories = []struct {
	name    string
	end     func(t *testing.T, h *smtpHarness)
	outcome []string
	not     []string
}{
	{"answered in the console", func(t *testing.T, h *smtpHarness) { h.ingest(t, "question-answered.json") },
		[]string{"Answered by user:kevin", "via console", "acct-2, and add a note to the order"}, []string{"Waiting for an answer"}},
	{"answered on the page", func(t *testing.T, h *smtpHarness) {
		res := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord,
			Action:  templates.Action{Kind: templates.ActionAnswerText, ApprovalID: "q-refund1", Revision: 1},
			Person:  threads.Person{Surface: threads.SurfaceEmail, User: kevinAddr},
			Comment: "acct-2 — the token is Bearer sk-live-0123456789abcdef"})
		if !res.Sent {
			t.Fatalf("answer on the page: %+v", res)
		}
	}, []string{"Answered by user:kevin", "via email", "acct-2 — the token is Bearer [redacted]"}, []string{"sk-live-0123456789abcdef"}},
	{"nobody answered", func(t *testing.T, h *smtpHarness) {
		h.at(t, 24*time.Hour+threads.RecordBound)
		h.tick(t)
		h.drain(t)
	}, []string{"Nobody answered by the deadline"}, []string{"Answered", "Denied"}},
	{"cancelled", func(t *testing.T, h *smtpHarness) {
		// The fixture's cancel is of the restricted question: here, of
		// this one.
		body, _ := readEvent(t, "question-cancelled.json")
		body = bytes.ReplaceAll(body, []byte(`"q-priv1"`), []byte(`"q-refund1"`))
		ev, err := approval.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.ingestBody(body, ev); err != nil {
			t.Fatal(err)
		}
	}, []string{"Cancelled: the job was stopped by user:ada"}, []string{"Answered"}},
}

// TestQuestionOutcomeMail: everyone mailed about a question gets one
// outcome mail, the last of their thread, answering it ("Re: …"), that
// says how it ended (and the answer, where answered), with no link.
func TestQuestionOutcomeMail(t *testing.T) {
	t.Parallel()
	for _, s := range questionStories {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			h := newQuestionSMTPHarness(t, "approve")
			questionAtStep2(t, h, "question.json")
			h.fake.AddQuestion("q-refund1", 1, *questionOf(t, "question.json"), false)
			h.at(t, 65*time.Minute)
			s.end(t, h)
			h.drain(t)
			// Nothing more once it is closed: not later ticks, not a restart.
			h.at(t, 48*time.Hour)
			h.tick(t)
			h.drain(t)
			h.restart(t)
			h.tick(t)
			h.drain(t)
			all := h.sent(t)
			for _, addr := range []string{leadsAddr, kevinAddr} {
				ms := sentTo(all, addr)
				if len(ms) != 2 {
					t.Fatalf("%s got %d mails, want the step's and the outcome", addr, len(ms))
				}
				end := ms[1]
				page := html.UnescapeString(end.HTML)
				for _, want := range s.outcome {
					if !strings.Contains(end.Text, want) || !strings.Contains(page, want) {
						t.Errorf("%s: the outcome mail lacks %q:\n%s", addr, want, end.Text)
					}
				}
				for _, not := range append(s.not, "/decide/", "Answer as", "Answer in the console") {
					if strings.Contains(end.Text, not) || strings.Contains(page, not) {
						t.Errorf("%s: the outcome mail says %q:\n%s", addr, not, end.Text)
					}
				}
				checkThread(t, addr, ms, questionSubject)
			}
		})
	}
}

// questionOf is the question a fixture asks.
func questionOf(t *testing.T, name string) *approval.Question {
	t.Helper()
	_, ev := readEvent(t, name)
	if ev.Approval == nil || ev.Approval.Question == nil {
		t.Fatalf("%s asks no question", name)
	}
	return ev.Approval.Question
}
