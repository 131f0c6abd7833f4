package decidepage_test

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/tenant"
	"approvalsbot/threads/threadstest"
)

// questionBackend is the job backend's question routes in front of the
// fake backend: it checks each answer's signature, keeps every answer
// it was sent, and takes the first for each question (a later one is
// told who answered, 409 already_answered). Every other route is the
// fake's.
type questionBackend struct {
	verifier backend.Verifier
	next     http.Handler
	mu       sync.Mutex
	answers  []sentAnswer
	first    map[string]string // question id → the actor who answered
}

// sentAnswer is one answer call as the backend received it.
type sentAnswer struct {
	ID          string
	SignatureOK bool
	Body        map[string]any
}

func newQuestionBackend(next http.Handler, now func() time.Time) *questionBackend {
	return &questionBackend{verifier: backend.Verifier{Secrets: [][]byte{[]byte(testCallsSecret)}, Now: now},
		next: next, first: map[string]string{}}
}

func (b *questionBackend) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rest, ok := strings.CutPrefix(r.URL.Path, "/v1/questions/")
	id, ok2 := strings.CutSuffix(rest, "/answer")
	if !ok || !ok2 || r.Method != http.MethodPost {
		b.next.ServeHTTP(w, r)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var m map[string]any
	_ = json.Unmarshal(body, &m)
	sigOK := b.verifier.Verify(r.Header.Get(backend.SignatureHeader), body) == nil
	b.mu.Lock()
	b.answers = append(b.answers, sentAnswer{ID: id, SignatureOK: sigOK, Body: m})
	first, answered := b.first[id]
	actor, _ := m["actor"].(string)
	if sigOK && !answered {
		b.first[id] = actor
	}
	b.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case !sigOK:
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"error":"bad_signature"}`))
	case answered:
		w.WriteHeader(http.StatusConflict)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "already_answered", "actor": first})
	case m["unanswered"] == true:
		_, _ = w.Write([]byte(`{"status":"unanswered"}`))
	default:
		_ = json.NewEncoder(w).Encode(map[string]string{"status": "answered", "message": "The job received the answer of " + actor + "."})
	}
}

// sent is every answer call received.
func (b *questionBackend) sent() []sentAnswer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]sentAnswer(nil), b.answers...)
}

// questionPage is a decision page whose backend takes questions, for
// tenant acme taking emailDecisions on the page, with the question
// fixture (testdata/events/name) ingested.
func questionPage(t *testing.T, emailDecisions, fixture string) (*page, *questionBackend) {
	t.Helper()
	return questionPageEdited(t, emailDecisions, fixture, nil)
}

// questionPageEdited is questionPage with the fixture edited first.
func questionPageEdited(t *testing.T, emailDecisions, fixture string, edit func(ev map[string]any)) (*page, *questionBackend) {
	t.Helper()
	var qb *questionBackend
	p := newPageSetUp(t, pageSetup{config: strings.ReplaceAll(pageConfig, "EMAIL_DECISIONS", emailDecisions),
		publicURL: "https://approvals.example", questions: true,
		backend: func(fake http.Handler) http.Handler {
			qb = newQuestionBackend(fake, func() time.Time { return fixtureNow })
			return qb
		}})
	qb.verifier.Now = p.clock.Now
	threadstest.Ingest(t, p.svc, fixture, edit)
	p.drain()
	return p, qb
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
	if got := qb.sent(); len(got) != 0 {
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
	if got := qb.sent(); len(got) != 0 {
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
	if got := qb.sent(); len(got) != 0 {
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
	if got := qb.sent(); len(got) != 0 {
		t.Fatalf("the backend received %d answers", len(got))
	}
}
