package decidepage_test

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/internal/golden"
	"approvalsbot/tenant"
	"approvalsbot/threads/threadstest"
)

// questionPage is a decision page whose backend (the stand-in) takes
// questions, for tenant acme taking emailDecisions on the page, with
// the question fixture (testdata/events/name) ingested and known to the
// backend.
func questionPage(t *testing.T, emailDecisions, fixture string) (*page, *backendtest.Fake) {
	t.Helper()
	return questionPageEdited(t, emailDecisions, fixture, nil)
}

// questionPageEdited is questionPage with the fixture edited first.
func questionPageEdited(t *testing.T, emailDecisions, fixture string, edit func(ev map[string]any)) (*page, *backendtest.Fake) {
	t.Helper()
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", emailDecisions),
		publicURL: "https://approvals.example", questions: true})
	ev := threadstest.Ingest(t, p.svc, fixture, edit)
	a := ev.Approval
	p.fake.AddQuestion(a.ID, a.Revision, *a.Question, a.ContentRestricted())
	p.drain()
	return p, p.fake
}

// questionForm is the page's form of one answer, as a browser sends it.
func questionForm(p *page, link string, fields url.Values) url.Values {
	p.t.Helper()
	m := checkField.FindStringSubmatch(p.get(link).body)
	if m == nil {
		p.t.Fatalf("the page has no form")
	}
	form := url.Values{"check": {htmlUnescape(m[1])}}
	for k, v := range fields {
		form[k] = v
	}
	return form
}

func (p *page) postForm(link string, form url.Values) answer {
	p.t.Helper()
	return p.do(http.MethodPost, link, "application/x-www-form-urlencoded", form.Encode())
}

const refundQuestion = "Order 7781 was paid from two accounts. Which one should I refund the 250 EUR to?"

// TestQuestionPageShowsAndAnswersNothing: a GET of a question's link,
// however often, shows the question in the agent's box, one POST form
// per choice with the page's form check, a text box for words of at most
// 2000 characters, and I'm looking; no Approve, Deny or arguments; and
// sends nothing.
func TestQuestionPageShowsAndAnswersNothing(t *testing.T) {
	p, qb := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	for range 3 {
		a := p.get(link)
		checkSecure(t, a)
		if a.status != http.StatusOK {
			t.Fatalf("GET %d:\n%s", a.status, a.body)
		}
		body := html.UnescapeString(a.body)
		for _, want := range []string{"refund-bot asks · question</title>", "refund-bot asks", refundQuestion,
			"Opening this page answered nothing", "You act as user:kevin (kevin@acme.example).",
			`name="action" value="answer"`, `name="choice" value="0"`, `name="choice" value="1"`,
			">acct-1 (Ana Ruiz, personal)</button>", ">acct-2 (Ruiz Trading Ltd)</button>",
			`name="action" value="answer_text"`, `<textarea id="words" name="words" rows="4" maxlength="2000"`,
			`name="action" value="look"`} {
			if !strings.Contains(body, want) {
				t.Errorf("the page lacks %q", want)
			}
		}
		if n := strings.Count(a.body, `<form method="post"`); n != 4 {
			t.Errorf("%d forms, want one per choice, the words' and I'm looking's", n)
		}
		if n := strings.Count(a.body, `name="check" value="`); n != 4 {
			t.Errorf("%d forms carry the form check, want 4", n)
		}
		for _, not := range []string{`value="approve"`, `value="deny"`, `value="arguments"`, "Approve", "Deny"} {
			if strings.Contains(a.body, not) {
				t.Errorf("a question's page offers %q", not)
			}
		}
		if a := p.do(http.MethodHead, link, "", ""); a.status != http.StatusOK || a.body != "" {
			t.Errorf("HEAD %d %q", a.status, a.body)
		}
	}
	p.drain()
	if got := qb.Answers(); len(got) != 0 {
		t.Fatalf("opening the page sent %d answers", len(got))
	}
}

// TestQuestionPageAnswersOff: where the tenant takes only denials on the
// page, a question's page shows the question and says to answer in the
// chat or the console, with no form; a POST of an answer (its check is
// the same link's) sends nothing.
func TestQuestionPageAnswersOff(t *testing.T) {
	on, _ := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	onLink := on.link("acme", "q-refund1", 1, "user:kevin", "")
	form := questionForm(on, onLink, url.Values{"action": {"answer"}, "choice": {"1"}})

	p, qb := questionPage(t, tenant.EmailDecisionsDeny, "question.json")
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	a := p.get(link)
	checkSecure(t, a)
	body := html.UnescapeString(a.body)
	if a.status != http.StatusForbidden || !strings.Contains(body, "Tenant acme takes no answers to questions on this page; answer in the chat or in the console.") ||
		!strings.Contains(body, refundQuestion) || strings.Contains(a.body, "<form") {
		t.Errorf("GET %d:\n%s", a.status, a.body)
	}
	for _, f := range []url.Values{form, {"check": form["check"], "action": {"answer_text"}, "words": {"acct-2"}}} {
		out := p.postForm(link, f)
		if out.status == http.StatusSeeOther || strings.Contains(out.body, "<form") {
			t.Errorf("POST %s: %d\n%s", f.Get("action"), out.status, out.body)
		}
	}
	p.drain()
	if got := qb.Answers(); len(got) != 0 {
		t.Fatalf("the backend received %d answers from a page that takes none", len(got))
	}
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("the backend received %d decisions", len(got))
	}
}

// TestQuestionPageRefusesOtherForms: a question's page takes no Approve
// or Deny, a choice it does not have, or words that are blank or too
// long; a call's page takes no answer. Nothing is sent.
func TestQuestionPageRefusesOtherForms(t *testing.T) {
	p, qb := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	p.ingest("merge.json")
	p.drain()
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	callLink := p.link("acme", "a-merge1", 1, "user:kevin", "")
	for _, tt := range []struct {
		name   string
		link   string
		fields url.Values
		status int
		says   string
	}{
		{"deny", link, url.Values{"action": {"deny"}}, http.StatusForbidden, "did not come from the page's own form"},
		{"approve", link, url.Values{"action": {"approve"}, "again": {"yes"}}, http.StatusForbidden, "did not come from the page's own form"},
		{"a choice it has not", link, url.Values{"action": {"answer"}, "choice": {"2"}}, http.StatusUnprocessableEntity, "not one of the question's choices"},
		{"a choice not a number", link, url.Values{"action": {"answer"}, "choice": {"01"}}, http.StatusUnprocessableEntity, "not one of the question's choices"},
		{"blank words", link, url.Values{"action": {"answer_text"}, "words": {" \n\t"}}, http.StatusUnprocessableEntity, "The answer is empty"},
		{"words too long", link, url.Values{"action": {"answer_text"}, "words": {strings.Repeat("é", approval.MaxAnswerText+1)}},
			http.StatusUnprocessableEntity, "longer than 2000 characters"},
		{"an answer to a call", callLink, url.Values{"action": {"answer"}, "choice": {"0"}}, http.StatusForbidden, "did not come from the page's own form"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := p.postForm(tt.link, questionForm(p, tt.link, tt.fields))
			checkSecure(t, out)
			if out.status != tt.status || !strings.Contains(html.UnescapeString(out.body), tt.says) {
				t.Errorf("POST %d, want %d saying %q:\n%s", out.status, tt.status, tt.says, out.body)
			}
		})
	}
	// Words at the bound, four bytes each and percent-encoded, are
	// larger than a decision's form may be, and still taken in.
	big := questionForm(p, link, url.Values{"action": {"answer_text"}, "words": {strings.Repeat("😀", approval.MaxAnswerText+1)}})
	if out := p.postForm(link, big); out.status != http.StatusUnprocessableEntity || !strings.Contains(out.body, "longer than 2000 characters") {
		t.Errorf("POST of 2001 emoji: %d\n%s", out.status, out.body)
	}
	// The same size is too large for a decision's form.
	bigDeny := questionForm(p, callLink, url.Values{"action": {"deny"}, "reason": {strings.Repeat("😀", approval.MaxAnswerText)}})
	if out := p.postForm(callLink, bigDeny); out.status != http.StatusRequestEntityTooLarge {
		t.Errorf("POST of a 24 KiB deny: %d, want 413", out.status)
	}
	p.drain()
	if got := qb.Answers(); len(got) != 0 {
		t.Fatalf("the backend received %d answers", len(got))
	}
	if got := p.fake.Decisions(); len(got) != 0 {
		t.Fatalf("the backend received %d decisions", len(got))
	}
}

// TestQuestionPageHostile: a question whose text and choices whoever
// steers the agent shaped shows them as text: escaped, redacted, every
// invisible character shown, never markup of the page.
func TestQuestionPageHostile(t *testing.T) {
	const evilText = "</blockquote><script>alert(1)</script><form action=https://evil.invalid method=post><button>Approve</button></form> Bearer sk-live-0123456789abcdef \u202e @everyone"
	p, _ := questionPageEdited(t, tenant.EmailDecisionsApprove, "question.json", func(ev map[string]any) {
		q := ev["data"].(map[string]any)["question"].(map[string]any)
		q["text"] = evilText
		q["choices"].([]any)[0] = "<img src=x onerror=alert(1)> password=hunter2hunter2"
	})
	a := p.get(p.link("acme", "q-refund1", 1, "user:kevin", ""))
	checkSecure(t, a)
	if a.status != http.StatusOK {
		t.Fatalf("GET %d:\n%s", a.status, a.body)
	}
	for _, bad := range []string{"<script", "<img", "</blockquote><", "<form action=", "sk-live-0123456789abcdef", "hunter2hunter2", "\u202e"} {
		if strings.Contains(a.body, bad) {
			t.Errorf("the page carries %q", bad)
		}
	}
	for _, want := range []string{"&lt;script&gt;", "&lt;img src=x", "Bearer [redacted]", "[U&#43;202E]", "@everyone"} {
		if !strings.Contains(a.body, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if n := strings.Count(a.body, "<form"); n != 4 {
		t.Errorf("%d forms: the question's text made one", n)
	}
}

// TestRestrictedQuestionPage: a restricted question's page shows no
// text to a member without the content permission and takes no answer
// from them.
func TestRestrictedQuestionPage(t *testing.T) {
	p, qb := questionPage(t, tenant.EmailDecisionsApprove, "question-private.json")
	link := p.link("acme", "q-priv1", 1, "user:noc", "")
	a := p.get(link)
	checkSecure(t, a)
	if a.status != http.StatusForbidden || strings.Contains(a.body, "<form") || strings.Contains(a.body, "Dr. Lee") {
		t.Errorf("GET %d:\n%s", a.status, a.body)
	}
	if !strings.Contains(html.UnescapeString(a.body), "only members of tenant acme with the content permission") {
		t.Errorf("the page does not say why:\n%s", a.body)
	}
	p.drain()
	if got := qb.Answers(); len(got) != 0 {
		t.Fatalf("the backend received %d answers", len(got))
	}
}

// answered is the one answer the backend received, checked: signed,
// bound to revision 1, as kevin via email.
func answeredOnce(t *testing.T, fake *backendtest.Fake, id string) standin.AnswerRequest {
	t.Helper()
	got := fake.Answers()
	if len(got) != 1 {
		t.Fatalf("the backend received %d answers, want 1: %+v", len(got), got)
	}
	r := got[0]
	if !r.SignatureOK || r.Status != http.StatusOK || r.QuestionID != id || r.Request.Revision != 1 ||
		r.Request.Actor != "user:kevin" || r.Request.Via.Surface != "email" || r.Request.Via.User != "kevin@acme.example" {
		t.Errorf("the backend received %+v (signature ok %v, status %d), want kevin's answer to revision 1 via email",
			r.Request, r.SignatureOK, r.Status)
	}
	return r.Request
}

// TestAnswerFromThePage: a choice's POST and a POST of words are each
// recorded before the page answers and reach the backend once, bound to
// the revision, as the member via email, the words exactly as written;
// the page then shows the answer on its way and how the question ended,
// with no form, and a reload sends nothing more.
func TestAnswerFromThePage(t *testing.T) {
	const words = "acct-2, and note it on the order \u2014 token Bearer sk-live-0123456789abcdef <b>now</b>"
	for _, tt := range []struct {
		name   string
		fields url.Values
		check  func(t *testing.T, r standin.AnswerRequest)
		closed string
	}{
		{"a choice", url.Values{"action": {"answer"}, "choice": {"1"}}, func(t *testing.T, r standin.AnswerRequest) {
			if r.Answer == nil || r.Answer.Choice == nil || *r.Answer.Choice != 1 || r.Answer.Text != "" {
				t.Errorf("answer %+v, want choice 1", r.Answer)
			}
		}, "Answered by user:kevin"},
		{"words", url.Values{"action": {"answer_text"}, "words": {words}}, func(t *testing.T, r standin.AnswerRequest) {
			if r.Answer == nil || r.Answer.Choice != nil || r.Answer.Text != words {
				t.Errorf("answer %+v, want the words as written %q", r.Answer, words)
			}
		}, "Answered by user:kevin"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, fake := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
			link := p.link("acme", "q-refund1", 1, "user:kevin", "")
			form := questionForm(p, link, tt.fields)
			a := p.postForm(link, form)
			checkSecure(t, a)
			if a.status != http.StatusSeeOther || a.header.Get("Location") != strings.TrimPrefix(link, p.srv.URL+decidepage.Path) {
				t.Fatalf("POST %d to %q:\n%s", a.status, a.header.Get("Location"), a.body)
			}
			// Recorded before the answer: in flight, the page says whose
			// answer is on its way and offers nothing.
			inFlight := p.get(link)
			if !strings.Contains(inFlight.body, `http-equiv="refresh"`) || strings.Contains(inFlight.body, "<form") ||
				!strings.Contains(html.UnescapeString(inFlight.body), "Sending user:kevin's answer to the job") {
				t.Errorf("the page after the POST:\n%s", inFlight.body)
			}
			if again := p.postForm(link, form); again.status == http.StatusSeeOther {
				t.Errorf("the same POST again while the first is on its way: %d", again.status)
			}
			p.drain()
			tt.check(t, answeredOnce(t, fake, "q-refund1"))
			if status, actor, _ := fake.QuestionStatus("q-refund1"); status != standin.QuestionAnswered || actor != "user:kevin" {
				t.Errorf("the backend holds the question %s by %s", status, actor)
			}
			closed := p.get(link)
			body := html.UnescapeString(closed.body)
			if closed.status != http.StatusOK || !strings.Contains(body, "This question is closed: "+tt.closed) ||
				strings.Contains(closed.body, "<form") || strings.Contains(body, "sk-live-0123456789abcdef") {
				t.Errorf("the page after the outcome (%d):\n%s", closed.status, closed.body)
			}
			if again := p.postForm(link, form); again.status == http.StatusSeeOther {
				t.Errorf("the same POST after the outcome: %d", again.status)
			}
			p.drain()
			answeredOnce(t, fake, "q-refund1")
		})
	}
}

// TestAnswerWithLineBreaks: a browser sends a textarea's line breaks as
// CRLF while its maxlength counts each once, so words of 2000 characters
// as typed arrive longer; the page takes them, and the backend receives
// them with LF line breaks, as from a chat.
func TestAnswerWithLineBreaks(t *testing.T) {
	lines := make([]string, 100)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %03d of answer", i) + "." // 19 characters
	}
	// 100 lines of 19 characters, 99 line breaks and a last full stop.
	typed := strings.Join(lines, "\n") + "."
	if n := utf8.RuneCountInString(typed); n != approval.MaxAnswerText {
		t.Fatalf("the answer as typed is %d characters, want %d", n, approval.MaxAnswerText)
	}
	// A lone CR (an old Mac's line break) is one too.
	sent := strings.Replace(strings.ReplaceAll(typed, "\n", "\r\n"), "\r\n", "\r", 1)
	want := typed

	p, fake := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	a := p.postForm(link, questionForm(p, link, url.Values{"action": {"answer_text"}, "words": {sent}}))
	if a.status != http.StatusSeeOther {
		t.Fatalf("POST of %d characters as typed: %d\n%s", approval.MaxAnswerText, a.status, a.body)
	}
	p.drain()
	r := answeredOnce(t, fake, "q-refund1")
	if r.Answer == nil || r.Answer.Text != want {
		t.Errorf("the backend received %+v, want the words with LF line breaks", r.Answer)
	}
}

// TestSecondAnswerIsToldWhoAnswered: a second member's answer, from a
// page opened before the first answer, is refused while the first is on
// its way and after it landed, saying who answered; the backend gets the
// first answer only.
func TestSecondAnswerIsToldWhoAnswered(t *testing.T) {
	p, fake := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	kevin := p.link("acme", "q-refund1", 1, "user:kevin", "")
	noc := p.link("acme", "q-refund1", 1, "user:noc", "")
	nocForm := questionForm(p, noc, url.Values{"action": {"answer"}, "choice": {"0"}})
	if a := p.postForm(kevin, questionForm(p, kevin, url.Values{"action": {"answer"}, "choice": {"1"}})); a.status != http.StatusSeeOther {
		t.Fatalf("kevin's POST %d:\n%s", a.status, a.body)
	}
	for _, when := range []string{"on its way", "landed"} {
		if when == "landed" {
			p.drain()
		}
		a := p.postForm(noc, nocForm)
		checkSecure(t, a)
		body := html.UnescapeString(a.body)
		if a.status == http.StatusSeeOther || !strings.Contains(body, "user:kevin") || strings.Contains(a.body, `value="answer"`) {
			t.Errorf("noc's answer while kevin's is %s: %d\n%s", when, a.status, a.body)
		}
	}
	p.drain()
	answeredOnce(t, fake, "q-refund1")
}

// TestRestrictedQuestionShownToAnswer: a restricted question's page
// shows a content holder no question and no answer until they press Show
// the question (a POST: a GET looks nothing up); then the question,
// looked up at the backend as them, and its choices; their answer
// reaches the backend once.
func TestRestrictedQuestionShownToAnswer(t *testing.T) {
	p, fake := questionPage(t, tenant.EmailDecisionsApprove, "question-private.json")
	link := p.link("acme", "q-priv1", 1, "user:kevin", "")
	a := p.get(link)
	checkSecure(t, a)
	if a.status != http.StatusOK || strings.Contains(a.body, "Dr. Lee") || strings.Contains(a.body, `value="answer"`) ||
		!strings.Contains(a.body, `value="question"`) {
		t.Fatalf("GET %d:\n%s", a.status, a.body)
	}
	if got := fake.QuestionLookups(); len(got) != 0 {
		t.Fatalf("opening the page looked the question up %d times", len(got))
	}
	shown := p.postForm(link, questionForm(p, link, url.Values{"action": {"question"}}))
	body := html.UnescapeString(shown.body)
	if shown.status != http.StatusOK || !strings.Contains(body, "Should I tell Dr. Lee about the diagnosis") ||
		!strings.Contains(body, ">Tell Dr. Lee now</button>") || !strings.Contains(body, "shown to you alone") {
		t.Fatalf("Show the question %d:\n%s", shown.status, shown.body)
	}
	if a := p.postForm(link, questionForm(p, link, url.Values{"action": {"answer"}, "choice": {"1"}})); a.status != http.StatusSeeOther {
		t.Fatalf("POST %d:\n%s", a.status, a.body)
	}
	p.drain()
	r := answeredOnce(t, fake, "q-priv1")
	if r.Answer == nil || r.Answer.Choice == nil || *r.Answer.Choice != 1 {
		t.Errorf("answer %+v, want choice 1", r.Answer)
	}
	// The closed page says only how it ended, never the answer.
	closed := p.get(link)
	if strings.Contains(closed.body, "Keep it for the meeting") || strings.Contains(closed.body, "Dr. Lee") {
		t.Errorf("the closed page shows the restricted question:\n%s", closed.body)
	}
}

// TestGoldenQuestionPages compares a question's pages as a person reads
// them with the files under testdata/question (-update rewrites them):
// waiting, where the tenant takes no answers on the page, a restricted
// question before and after Show the question, and answered.
func TestGoldenQuestionPages(t *testing.T) {
	p, _ := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	pages := map[string]string{"waiting.html": p.get(link).body}
	if a := p.postForm(link, questionForm(p, link, url.Values{"action": {"answer"}, "choice": {"1"}})); a.status != http.StatusSeeOther {
		t.Fatalf("POST %d:\n%s", a.status, a.body)
	}
	pages["sending.html"] = p.get(link).body
	p.drain()
	pages["answered.html"] = p.get(link).body

	off, _ := questionPage(t, tenant.EmailDecisionsDeny, "question.json")
	pages["answers-off.html"] = off.get(off.link("acme", "q-refund1", 1, "user:kevin", "")).body

	priv, _ := questionPage(t, tenant.EmailDecisionsApprove, "question-private.json")
	privLink := priv.link("acme", "q-priv1", 1, "user:kevin", "")
	pages["restricted.html"] = priv.get(privLink).body
	pages["restricted-shown.html"] = priv.postForm(privLink, questionForm(priv, privLink, url.Values{"action": {"question"}})).body
	for name, got := range pages {
		golden.Check(t, filepath.Join("testdata", "question", name), checkField.ReplaceAllString(got, `name="check" value="…"`), *update)
	}
}

// TestChangedQuestionLinkAnswersNothing: once the agent asks its
// question again (revision 2), the link to revision 1 says so and
// answers nothing, even with the form its page gave before.
func TestChangedQuestionLinkAnswersNothing(t *testing.T) {
	p, fake := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	form := questionForm(p, link, url.Values{"action": {"answer"}, "choice": {"0"}})
	ev := threadstest.Ingest(t, p.svc, "question.json", func(ev map[string]any) {
		d := ev["data"].(map[string]any)
		d["revision"] = 2
		d["question"].(map[string]any)["choices"] = []any{"acct-1", "acct-2", "neither: ask the customer"}
		ev["id"] = "evt-q001-r2"
	})
	fake.AddQuestion("q-refund1", 2, *ev.Approval.Question, false)
	p.drain()
	a := p.get(link)
	checkSecure(t, a)
	if a.status != http.StatusGone || !strings.Contains(a.body, "The question changed since this link was sent: it is now revision 2") ||
		strings.Contains(a.body, "<form") {
		t.Errorf("GET of the old link %d:\n%s", a.status, a.body)
	}
	if out := p.postForm(link, form); out.status == http.StatusSeeOther || strings.Contains(out.body, "<form") {
		t.Errorf("POST of the old link's form %d:\n%s", out.status, out.body)
	}
	p.drain()
	if got := fake.Answers(); len(got) != 0 {
		t.Fatalf("the backend received %d answers", len(got))
	}
}

// TestLookingAtAQuestion: I'm looking on a question's page is recorded
// and shown on its card, as on a call's; it answers nothing.
func TestLookingAtAQuestion(t *testing.T) {
	p, fake := questionPage(t, tenant.EmailDecisionsApprove, "question.json")
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	if a := p.postForm(link, questionForm(p, link, url.Values{"action": {"look"}})); a.status != http.StatusSeeOther {
		t.Fatalf("I'm looking: %d\n%s", a.status, a.body)
	}
	a := p.get(link)
	if !strings.Contains(a.body, "user:kevin is looking") || !strings.Contains(a.body, `value="answer"`) {
		t.Errorf("the page after I'm looking:\n%s", a.body)
	}
	p.drain()
	if got := fake.Answers(); len(got) != 0 {
		t.Fatalf("I'm looking sent %d answers", len(got))
	}
}

// TestLongQuestionShownWhole: the page has no chat's bounds, so a
// question as long as the protocol takes is shown whole, once, where a
// chat's card cuts it: what comes last in it (here what the person must
// not miss) is on the page, waiting and, for a restricted question,
// once shown; nothing says it was cut.
func TestLongQuestionShownWhole(t *testing.T) {
	const tail = "Refund acct-2 only if the invoice names Ruiz Trading Ltd."
	long := strings.Repeat("Order 7781 was paid from two accounts. ", (approval.MaxQuestionText-len(tail))/39) + tail
	if n := len([]rune(long)); n > approval.MaxQuestionText || n < approval.MaxQuestionText-40 {
		t.Fatalf("the question is %d characters, want close under %d", n, approval.MaxQuestionText)
	}
	edit := func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["text"] = long
	}
	shownWhole := func(t *testing.T, what, body string) {
		t.Helper()
		body = html.UnescapeString(body)
		if n := strings.Count(body, tail); n != 1 || strings.Contains(body, "[cut]") {
			t.Errorf("%s shows the question's end %d times (want once, uncut):\n%s", what, n, body)
		}
	}

	p, fake := questionPageEdited(t, tenant.EmailDecisionsApprove, "question.json", edit)
	link := p.link("acme", "q-refund1", 1, "user:kevin", "")
	a := p.get(link)
	if a.status != http.StatusOK {
		t.Fatalf("GET %d:\n%s", a.status, a.body)
	}
	shownWhole(t, "the page", a.body)
	if a := p.postForm(link, questionForm(p, link, url.Values{"action": {"answer"}, "choice": {"1"}})); a.status != http.StatusSeeOther {
		t.Fatalf("POST %d:\n%s", a.status, a.body)
	}
	p.drain()
	if r := answeredOnce(t, fake, "q-refund1"); r.Answer == nil || r.Answer.Choice == nil || *r.Answer.Choice != 1 {
		t.Errorf("answer %+v, want choice 1", r.Answer)
	}

	p, _ = questionPageEdited(t, tenant.EmailDecisionsApprove, "question-private.json", edit)
	link = p.link("acme", "q-priv1", 1, "user:kevin", "")
	if a := p.get(link); strings.Contains(a.body, tail) {
		t.Fatalf("the restricted question's page shows its text before Show:\n%s", a.body)
	}
	shown := p.postForm(link, questionForm(p, link, url.Values{"action": {"question"}}))
	if shown.status != http.StatusOK {
		t.Fatalf("Show the question %d:\n%s", shown.status, shown.body)
	}
	shownWhole(t, "the shown restricted question", shown.body)
}
