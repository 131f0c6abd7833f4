package templates_test

import (
	"html"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/golden"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// questionMail is one question's mail and plain text card, each surface
// named, the HTML part unescaped so a test reads what a person reads.
type questionMail struct {
	subject, text, html, plain string
}

func renderQuestion(t *testing.T, r *templates.Renderer, m templates.Mail) questionMail {
	t.Helper()
	e := r.Mail(m)
	return questionMail{subject: e.Subject, text: e.Text, html: e.HTML, plain: r.Text(m.Card)}
}

func (q questionMail) each(f func(surface, s string)) {
	f("subject", q.subject)
	f("email text", q.text)
	f("email html", q.html)
	f("text", q.plain)
}

// TestQuestionMail: a question's mail and text card say who asks and the
// job, show the question in the agent's box with its choices and what it
// takes, and how to answer: the page's link where the member has one,
// else the console; once answered, who answered and the answer.
func TestQuestionMail(t *testing.T) {
	t.Parallel()
	r := newRenderer(t)
	a := templatestest.Approval(t, "question.json")
	link := &templates.MailLink{URL: "https://bot.example/decide/q-refund1?t=tok"}
	const text = "Order 7781 was paid from two accounts. Which one should I refund the 250 EUR to?"
	tests := []struct {
		name     string
		state    string
		mail     templates.Mail
		want     []string // in every part but the subject
		wantText []string // in the mail's text part
		not      []string // in no part
	}{
		{"pending with a link", "pending", templates.Mail{Why: templates.MailQuestionWhy(20*time.Minute, 1, "default"), Link: link, ActAs: "user:kevin",
			Expires: a.Deadline.UTC()},
			[]string{"Waiting for an answer", "refund-bot asks", "j-42", "started by user:ada", text,
				"acct-1 (Ana Ruiz, personal)", "acct-2 (Ruiz Trading Ltd)", "Answer with one of these, or in your own words.",
				"Nobody has answered for 20 minutes; you are on step 1 of the default ladder."},
			[]string{"Answer as user:kevin:\n  Open the page to answer: " + link.URL,
				"nothing is answered until you press a button on that page",
				"1. acct-1 (Ana Ruiz, personal)\n  2. acct-2 (Ruiz Trading Ltd)"},
			[]string{"Approval", "approve", "Approve", "Deny", "Decide", "autonomy level", "counts as a no"}},
		{"asked again", "pending", templates.Mail{Kind: templates.MailReask, Reply: true, Link: link, ActAs: "user:kevin"},
			[]string{"refund-bot asks", text},
			[]string{"The agent asked its question again: this mail is for revision 1, and the links in earlier mails no longer work.",
				"Open the page to answer: " + link.URL},
			[]string{"The call changed", "Decide"}},
		{"pending without a link", "pending", templates.Mail{},
			[]string{"refund-bot asks", text},
			[]string{"Answer in the console."},
			[]string{"Decide", "Open the page"}},
		{"answered", "answered", templates.Mail{Kind: templates.MailOutcome, Reply: true},
			[]string{"Answered by user:reviewer", "refund-bot asks", "acct-1 (Ana Ruiz, personal)"},
			nil,
			[]string{"Answer in the console", "Open the page", "Waiting"}},
		{"nobody answered", "expired", templates.Mail{Kind: templates.MailOutcome, Reply: true},
			[]string{"Nobody answered by the deadline", "refund-bot asks"},
			nil,
			[]string{"Denied", "Answer in the console", "Answer with"}},
		{"cancelled", "cancelled", templates.Mail{Kind: templates.MailOutcome, Reply: true},
			[]string{"Cancelled", "refund-bot asks"},
			nil,
			[]string{"Answer in the console", "Answer with"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := tt.mail
			m.Card = templatestest.Card(t, a, tt.state)
			x := renderQuestion(t, r, m)
			wantSubject := "Answer needed: refund-bot's question · q-refund1"
			if m.Reply {
				wantSubject = "Re: " + wantSubject
			}
			if x.subject != wantSubject {
				t.Errorf("subject %q, want %q", x.subject, wantSubject)
			}
			x.each(func(surface, s string) {
				if surface == "html" || surface == "email html" {
					s = html.UnescapeString(s)
				}
				for _, w := range tt.want {
					if surface == "subject" || (surface == "text" && strings.HasPrefix(w, "Nobody has answered for")) {
						continue
					}
					if tt.mail.Kind == templates.MailOutcome && surface != "text" && w == text {
						continue // an outcome mail says how it ended, not the question again
					}
					if !strings.Contains(s, w) {
						t.Errorf("%s lacks %q:\n%s", surface, w, s)
					}
				}
				for _, n := range tt.not {
					if strings.Contains(s, n) {
						t.Errorf("%s says %q:\n%s", surface, n, s)
					}
				}
			})
			for _, w := range tt.wantText {
				if !strings.Contains(x.text, w) {
					t.Errorf("the mail's text lacks %q:\n%s", w, x.text)
				}
			}
			if strings.Contains(x.html, "<form") || strings.Contains(x.html, "<input") {
				t.Error("a mail holds a form: it must only link to the page")
			}
		})
	}
}

// TestAnswerAtUnseenRevision: an answer from elsewhere may name a
// revision the bot never saw asked, whose choices are not this card's:
// every surface then names the choice by its number, never the card's
// choice of that index. Words answered are shown as given either way.
func TestAnswerAtUnseenRevision(t *testing.T) {
	t.Parallel()
	r := newRenderer(t)
	a := templatestest.Approval(t, "question.json") // revision 1
	at := a.RequestedAt.Add(10 * time.Minute)
	for _, tt := range []struct {
		name   string
		held   int
		answer approval.Decision // as the transition keeps it: a choice's words are not kept
		want   string
		not    string
	}{
		{"a choice at the card's revision", 1, approval.Decision{Choice: 1}, "acct-1 (Ana Ruiz, personal)", "choice 1"},
		{"a choice, the revision not given", 0, approval.Decision{Choice: 2}, "acct-2 (Ruiz Trading Ltd)", "choice 2"},
		{"a choice at a revision never seen", 2, approval.Decision{Choice: 1}, "choice 1", "acct-1"},
		{"words at a revision never seen", 2, approval.Decision{Answer: "the second one"}, "the second one", "acct-"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			in := templatestest.Input(t, a, "answered")
			d := tt.answer
			d.Actor, d.Via, d.At = "user:kevin", "console", at
			in.Decision, in.HeldRevision = &d, tt.held
			c := templates.Build(in)
			if c.Question == nil || c.Question.Answer != tt.want {
				t.Fatalf("the card's answer is %+v, want %q", c.Question, tt.want)
			}
			renderAll(t, r, c).each(func(surface, s string) {
				if surface == "email subject" {
					return
				}
				if !strings.Contains(s, tt.want) {
					t.Errorf("%s lacks the answer %q", surface, tt.want)
				}
				if strings.Contains(s, tt.not) {
					t.Errorf("%s says %q", surface, tt.not)
				}
			})
		})
	}
}

// TestQuestionMailRestricted: a restricted question's mail, as a
// restricted call's, shows neither the question, nor its choices, nor
// the answer; it says why, and names no chat button.
func TestQuestionMailRestricted(t *testing.T) {
	t.Parallel()
	r := newRenderer(t)
	a := templatestest.Approval(t, "question-private.json")
	secret := []string{a.Question.Text, "Dr. Lee", "diagnosis"}
	secret = append(secret, a.Question.Choices...)
	for _, state := range templates.PreviewStatesOf(a) {
		for _, kind := range []string{templates.MailEscalation, templates.MailOutcome} {
			t.Run(state+"/"+cmpOr(kind, "escalation"), func(t *testing.T) {
				t.Parallel()
				c := templatestest.Card(t, a, state)
				x := renderQuestion(t, r, templates.Mail{Card: c, Kind: kind, Link: &templates.MailLink{URL: "https://bot.example/decide/x"}, ActAs: "user:kevin"})
				x.each(func(surface, s string) {
					s = html.UnescapeString(s)
					for _, sec := range secret {
						if strings.Contains(s, sec) {
							t.Errorf("%s shows the restricted %q", surface, sec)
						}
					}
					if surface != "subject" && !strings.Contains(s, "assistant asks") {
						t.Errorf("%s lacks who asks", surface)
					}
					if strings.HasPrefix(surface, "email") && kind == templates.MailEscalation && strings.Contains(s, "Show question") {
						t.Errorf("%s names the chat's Show question", surface)
					}
				})
				if kind == templates.MailEscalation && !strings.Contains(x.text, "The question is restricted") {
					t.Errorf("the mail does not say the question is restricted:\n%s", x.text)
				}
			})
		}
	}
}

func cmpOr(s, or string) string {
	if s == "" {
		return or
	}
	return s
}

// hostileQuestion is a question whoever steers the agent shaped: secrets,
// markup of every surface, mentions, control and invisible characters,
// and the longest text the protocol takes.
func hostileQuestion(t *testing.T) *approval.Approval {
	t.Helper()
	a := templatestest.Approval(t, "question.json")
	q := *a.Question
	q.Text = "<script>alert(1)</script> @everyone <!channel> *bold* [click](https://evil.invalid) " +
		"token Bearer sk-live-0123456789abcdef and ghp_0123456789abcdefghijklmnopqrstuvwxyzAB\u202e\u200b\x07 " +
		"</blockquote><a href=\"https://evil.invalid\">x</a>\n" + strings.Repeat("W", approval.MaxQuestionText-300)
	q.Choices = []string{"<b>acct-1</b> @here", "password=hunter2hunter2", "x\u200by"}
	a.Question = &q
	return a
}

// fillerRuns are runs of the hostile question's filler, however a
// surface wraps them.
var fillerRuns = regexp.MustCompile(`W{8,}`)

// TestQuestionMailHostile: the hostile question's text, choices and
// answer are escaped and redacted on mail and text; mail shows the whole
// question, the text card the card's bounded part.
func TestQuestionMailHostile(t *testing.T) {
	t.Parallel()
	r := newRenderer(t)
	a := hostileQuestion(t)
	for _, state := range []string{"pending", "answered"} {
		t.Run(state, func(t *testing.T) {
			t.Parallel()
			in := templatestest.Input(t, a, state)
			if state == "answered" {
				in.Decision.Choice, in.Decision.Answer = 0, approval.RedactText("use Bearer sk-live-0123456789abcdef <img src=x> @everyone")
			}
			c := templates.Build(in)
			x := renderQuestion(t, r, templates.Mail{Card: c, Link: &templates.MailLink{URL: "https://bot.example/decide/q"}, ActAs: "user:kevin"})
			x.each(func(surface, s string) {
				for _, sec := range []string{"sk-live-0123456789abcdef", "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "hunter2hunter2"} {
					if strings.Contains(s, sec) {
						t.Errorf("%s shows the secret %q", surface, sec)
					}
				}
				for _, raw := range []string{"\u202e", "\u200b", "\x07"} {
					if strings.Contains(s, raw) {
						t.Errorf("%s carries the invisible %q raw", surface, raw)
					}
				}
				// Mail has no chat's bounds: it shows all of what the
				// member answers, which the protocol bounds. The text
				// card keeps the card's bound, and the subject none of it.
				want, whole := 0, approval.MaxQuestionText-300
				switch surface {
				case "email text", "email html":
					want = whole
				case "text":
					want = -1
				}
				n := 0 // the filler's Ws, not a word's
				for _, run := range fillerRuns.FindAllString(s, -1) {
					n += len(run)
				}
				switch {
				case want < 0 && (n == 0 || n > 1600):
					t.Errorf("%s shows %d characters of the question, want some and at most the card's bound", surface, n)
				case want >= 0 && n != want:
					t.Errorf("%s shows %d characters of the question, want %d", surface, n, want)
				}
			})
			for _, tag := range []string{"<script", "<b>", "<img", "</blockquote><a", "<a href=\"https://evil"} {
				if strings.Contains(x.html, tag) {
					t.Errorf("the HTML part carries %q unescaped", tag)
				}
			}
			if !strings.Contains(x.html, "&lt;script&gt;") {
				t.Error("the HTML part lost the question's text instead of escaping it")
			}
			if !strings.Contains(x.plain, "[U+202E]") || !strings.Contains(x.text, "[U+200B]") {
				t.Errorf("invisible characters are not shown as code points:\n%s", x.text)
			}
		})
	}
}

// TestQuestionGolden renders the hostile question and a question asked
// in words only, pending and answered, as mail and text, against the
// files under testdata/question (-update rewrites them).
func TestQuestionGolden(t *testing.T) {
	r := newRenderer(t)
	words := templatestest.Approval(t, "question.json")
	q := *words.Question
	q.Choices = nil
	words.Question = &q
	for name, a := range map[string]*approval.Approval{"hostile": hostileQuestion(t), "words": words} {
		for _, state := range []string{"pending", "answered"} {
			c := templatestest.Card(t, a, state)
			m := templates.Mail{Card: c, Why: templates.MailQuestionWhy(time.Hour, 2, "default")}
			if state == "pending" {
				m.Link, m.ActAs, m.Expires = &templates.MailLink{URL: "https://bot.example/decide/" + a.ID + "?t=tok"}, "user:kevin", a.Deadline.UTC()
			} else {
				m.Kind, m.Reply = templates.MailOutcome, true
			}
			e := r.Mail(m)
			base := filepath.Join("testdata", "question", name+"-"+state)
			golden.Check(t, base+".email.txt", "Subject: "+e.Subject+"\n\n"+e.Text, *update)
			golden.Check(t, base+".email.html", e.HTML, *update)
			golden.Check(t, base+".text.txt", r.Text(c), *update)
		}
	}
}
