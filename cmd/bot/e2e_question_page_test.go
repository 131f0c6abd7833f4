package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/notify/smtptest"
)

// An agent's question end to end on the decision page: the built binary
// mails a member the question, a mail scanner opens the link, the member
// answers in a real browser (a choice, words, and a restricted question
// shown first), the backend receives each answer once, and the member
// hears how it ended by mail.

// questionPageConfig is mailConfig for questions: the backend sends them,
// the page takes answers, and kevin alone is mailed.
func questionPageConfig(t *testing.T, dir, listen, backendURL, smtpAddr string) string {
	t.Helper()
	cfg := fmt.Sprintf(`listen: %q
public_url: "http://%s"
link_secrets: ["${BOT_LINK_SECRET}"]
store:
  driver: sqlite
  dsn: "file:%s"
tick: 1s
backend:
  url: %q
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
  features: [questions]
smtp:
  addr: %q
  tls: none
  from: "Approvals <approvals@acme.example>"
tenants:
  acme:
    deadline: 10m
    post: [slack:C0APPROVALS]
    page_decisions: approve
    ladders:
      default:
        - after: 1s
          email: [kevin@acme.example]
    members:
      - {user: user:kevin, role: operator, content: true, slack: U0KEVIN, email: kevin@acme.example}
`, listen, listen, filepath.Join(dir, "bot.db"), backendURL, smtpAddr)
	path := filepath.Join(dir, "bot.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestQuestionPageInABrowser is the whole loop of a question as a person
// meets it: the mail, a scanner that opens its link, the page in a
// browser where a choice or words answer it (a restricted question only
// after Show the question), the one answer at the backend, and the
// outcome mail.
func TestQuestionPageInABrowser(t *testing.T) {
	browser, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not installed (Debian's chromium package; .ci/run installs it): the browser test cannot run")
	}
	t.Parallel()
	dir := t.TempDir()
	sink := smtptest.Start(t, smtptest.Options{})
	standOut := &syncBuffer{}
	fake := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(e2eCallsSecret)}, Out: standOut})
	listen := freeAddr(t)
	bot := startBot(t, questionPageConfig(t, dir, listen, fake.URL(), sink.Addr))
	dump := func() string { return bot.stderr.String() + standOut.String() }

	// ask sends the fixture question name moved to now under fresh ids,
	// after telling the stand-in the same question, as a backend knows
	// what it asks.
	ask := func(name string) *approval.Approval {
		t.Helper()
		path, err := fixtures.Path("events", name)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		moved, err := moveEventToNow(raw, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		body := moved.Body
		ev, err := approval.Parse(body)
		if err != nil || ev.Type != approval.EventQuestionAsked {
			t.Fatalf("%s moved to now: %v\n%s", name, err, body)
		}
		a := ev.Approval
		fake.AddQuestion(a.ID, a.Revision, *a.Question, a.ContentRestricted())
		if got := bot.send(t, body, nil); got.Status != http.StatusAccepted {
			t.Fatalf("question %s: %+v", a.ID, got)
		}
		return a
	}
	choice, words, private := ask("question.json"), ask("question.json"), ask("question-private.json")
	if len(choice.Question.Choices) < 2 || !choice.Question.FreeText || !private.ContentRestricted() {
		t.Fatalf("the fixtures no longer ask what this test answers: %+v, %+v", choice.Question, private.Question)
	}

	// mailsAbout are kevin's mails about question id, in the order sent.
	mailsAbout := func(id string) []smtptest.Message {
		var out []smtptest.Message
		for _, m := range mailsTo(t, sink, "kevin@acme.example") {
			if s, _ := m.Header.Subject(); strings.HasSuffix(s, " · "+id) {
				out = append(out, m)
			}
		}
		return out
	}
	pollUntil(t, 15*time.Second, "the step's mails", func() bool {
		return len(mailsAbout(choice.ID)) == 1 && len(mailsAbout(words.ID)) == 1 && len(mailsAbout(private.ID)) == 1
	}, dump)
	// link is the one decision link of kevin's mail about a; the mail
	// says the question where it is not restricted, and its subject says
	// who asks, never what.
	link := func(a *approval.Approval) string {
		t.Helper()
		m := mailsAbout(a.ID)[0]
		text := m.Parts["text/plain"]
		if s, _ := m.Header.Subject(); s != "Answer needed: "+a.Job.Agent+"'s question · "+a.ID || strings.Contains(s, a.Question.Text) {
			t.Errorf("%s: subject %q", a.ID, s)
		}
		shown := strings.Contains(text, a.Question.Text) && strings.Contains(m.Parts["text/html"], a.Question.Choices[0])
		if shown == a.ContentRestricted() {
			t.Errorf("%s: the mail shows the question %v, restricted %v:\n%s", a.ID, shown, a.ContentRestricted(), text)
		}
		links := linkPattern.FindAllString(text, -1)
		if len(links) != 1 || !strings.Contains(text, "Open the page to answer: "+links[0]) {
			t.Fatalf("%s: kevin's mail has %d links:\n%s", a.ID, len(links), text)
		}
		return links[0]
	}
	choiceLink, wordsLink, privateLink := link(choice), link(words), link(private)

	// A mail scanner opens every link: nothing is answered, nothing looked
	// up.
	for _, l := range []string{choiceLink, wordsLink, privateLink} {
		resp, err := http.Get(l)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d", l, resp.StatusCode)
		}
	}
	if got, looked := fake.Answers(), fake.QuestionLookups(); len(got) != 0 || len(looked) != 0 {
		t.Fatalf("opening links sent %d answers and %d look-ups: %+v", len(got), len(looked), got)
	}

	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	// The first run starts the browser, and lives as long as its context:
	// no timeout on that one.
	if err := chromedp.Do(browserCtx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start the browser: %v", err)
	}
	ctx, cancel := context.WithTimeout(browserCtx, 120*time.Second)
	defer cancel()
	do := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\n%s", what, err, dump())
		}
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	// closed waits for the page to say the question is closed, and
	// returns what it says then: the POST's 303 leads to a page that
	// reloads itself while the answer is on its way, so a read may meet
	// a page being replaced, and is then tried again.
	closed := func(id string) string {
		t.Helper()
		var lead string
		pollUntil(t, 30*time.Second, "the page of "+id+" showing the outcome", func() bool {
			s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#lead")))
			if err != nil {
				if ctx.Err() != nil {
					t.Fatalf("read the page: %v", err)
				}
				return false
			}
			lead = s
			return strings.HasPrefix(lead, "This question is closed: ")
		}, func() string { return lead + "\n" + dump() })
		return lead
	}
	// answerOf is the one answer the backend received to a: signed,
	// taken, kevin's of revision 1 via email, bound to the question he
	// read (he holds the content permission).
	answerOf := func(a *approval.Approval) standin.AnswerRequest {
		t.Helper()
		var got []standin.ReceivedAnswer
		for _, r := range fake.Answers() {
			if r.QuestionID == a.ID {
				got = append(got, r)
			}
		}
		if len(got) != 1 {
			t.Fatalf("the backend received %d answers to %s, want the browser's one: %+v", len(got), a.ID, got)
		}
		r := got[0]
		if !r.SignatureOK || r.Status != http.StatusOK || r.Request.Revision != 1 || r.Request.Actor != "user:kevin" ||
			r.Request.Via.Surface != "email" || r.Request.Via.User != "kevin@acme.example" ||
			r.Request.QuestionSHA256 != approval.QuestionDigest(a.Question) || r.Request.Answer == nil {
			t.Errorf("the backend received %+v (signature ok %v, status %d), want kevin's answer to revision 1 via email bound to %s",
				r.Request, r.SignatureOK, r.Status, approval.QuestionDigest(a.Question))
		}
		if r.Request.Answer == nil {
			t.FailNow()
		}
		return r.Request
	}

	// A choice: the page shows the question and each choice as a button;
	// kevin presses the second.
	do("open the page", chromedp.Navigate(choiceLink), chromedp.WaitVisible(chromedp.CSS("#choice-1")))
	if page := text("main"); !strings.Contains(page, choice.Question.Text) {
		t.Errorf("the page does not show the question:\n%s", page)
	}
	for i, c := range choice.Question.Choices {
		if b := text(fmt.Sprintf("button#choice-%d", i)); b != c {
			t.Errorf("choice %d's button reads %q, want %q", i, b, c)
		}
	}
	do("press the second choice", chromedp.Click(chromedp.CSS("#choice-1")))
	if lead := closed(choice.ID); lead != "This question is closed: Answered by user:kevin: "+choice.Question.Choices[1]+"." {
		t.Errorf("the page after the answer says %q", lead)
	}
	if r := answerOf(choice); r.Answer.Choice == nil || *r.Answer.Choice != 1 || r.Answer.Text != "" {
		t.Errorf("the backend received answer %+v, want choice 1", r.Answer)
	}

	// Words, typed as a person types them, with a secret's shape in them:
	// the backend receives them as written, and neither the page nor the
	// bot's output shows the secret.
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	const typed = "Neither: refund acct-2 later, and put GITHUB_TOKEN " + token + " in the refund note"
	do("open the page", chromedp.Navigate(wordsLink), chromedp.WaitVisible(chromedp.CSS("#words")))
	do("type the answer", chromedp.SendKeys(chromedp.CSS("#words"), typed), chromedp.Click(chromedp.CSS("#answer-words")))
	redacted := approval.RedactText(typed)
	if !strings.Contains(redacted, "GITHUB_TOKEN ghp_[redacted] in") {
		t.Fatalf("the words redact to %q: not the secret alone", redacted)
	}
	if lead := closed(words.ID); lead != "This question is closed: Answered by user:kevin: "+redacted+"." {
		t.Errorf("the page after the answer says %q, want the words redacted", lead)
	}
	if page := text("html"); strings.Contains(page, token) {
		t.Errorf("the page after the answer shows the secret:\n%s", page)
	}
	if r := answerOf(words); r.Answer.Choice != nil || r.Answer.Text != typed {
		t.Errorf("the backend received answer %+v, want the words as typed %q", r.Answer, typed)
	}

	// A restricted question: the page shows none of it until kevin asks
	// to see it (a POST, looked up at the backend as him); then he
	// answers as above.
	do("open the page", chromedp.Navigate(privateLink), chromedp.WaitVisible(chromedp.CSS("#show-question")))
	if page := text("html"); strings.Contains(page, private.Question.Text) || strings.Contains(page, private.Question.Choices[0]) {
		t.Errorf("the restricted question's first view shows it:\n%s", page)
	}
	if n := len(fake.QuestionLookups()); n != 0 {
		t.Fatalf("opening the page looked the question up %d times", n)
	}
	do("show the question", chromedp.Click(chromedp.CSS("#show-question")), chromedp.WaitVisible(chromedp.CSS("#choice-1")))
	if page := text("main"); !strings.Contains(page, private.Question.Text) {
		t.Errorf("Show the question does not show it:\n%s", page)
	}
	if looked := fake.QuestionLookups(); len(looked) != 1 || looked[0].Request.Actor != "user:kevin" || looked[0].Status != http.StatusOK {
		t.Errorf("Show the question looked it up as %+v", looked)
	}
	if b := text("button#choice-1"); b != private.Question.Choices[1] {
		t.Errorf("choice 1's button reads %q, want %q", b, private.Question.Choices[1])
	}
	do("press the second choice", chromedp.Click(chromedp.CSS("#choice-1")))
	if lead := closed(private.ID); !strings.HasPrefix(lead, "This question is closed: Answered by user:kevin") {
		t.Errorf("the page after the answer says %q", lead)
	}
	if page := text("html"); strings.Contains(page, private.Question.Text) || strings.Contains(page, private.Question.Choices[1]) {
		t.Errorf("the closed page shows the restricted question:\n%s", page)
	}
	if r := answerOf(private); r.Answer.Choice == nil || *r.Answer.Choice != 1 {
		t.Errorf("the backend received answer %+v, want choice 1", r.Answer)
	}

	// kevin hears how each ended, in the thread of its first mail.
	pollUntil(t, 15*time.Second, "the outcome mails", func() bool {
		return len(mailsAbout(choice.ID)) == 2 && len(mailsAbout(words.ID)) == 2 && len(mailsAbout(private.ID)) == 2
	}, dump)
	for _, a := range []*approval.Approval{choice, words, private} {
		ms := mailsAbout(a.ID)
		first, _ := ms[0].Header.MessageID()
		subject, _ := ms[0].Header.Subject()
		end := ms[1]
		if s, _ := end.Header.Subject(); s != "Re: "+subject {
			t.Errorf("%s: outcome subject %q", a.ID, s)
		}
		if ids, _ := end.Header.MsgIDList("In-Reply-To"); len(ids) != 1 || ids[0] != first {
			t.Errorf("%s: the outcome answers %q, want the first mail %s", a.ID, ids, first)
		}
		if text := end.Parts["text/plain"]; !strings.HasPrefix(text, "Answered by user:kevin") || linkPattern.MatchString(text) {
			t.Errorf("%s: outcome mail\n%s", a.ID, text)
		}
	}
	if end := mailsAbout(words.ID)[1]; strings.Contains(end.Parts["text/plain"]+end.Parts["text/html"], token) ||
		!strings.Contains(end.Parts["text/plain"], "  > "+redacted) {
		t.Errorf("the outcome mail of the words shows the secret, or not the words redacted:\n%s", end.Parts["text/plain"])
	}
	// The restricted question's outcome is mail too, and says neither the
	// question nor the answer.
	if end := mailsAbout(private.ID)[1]; strings.Contains(end.Parts["text/plain"]+end.Parts["text/html"], private.Question.Text) ||
		strings.Contains(end.Parts["text/plain"]+end.Parts["text/html"], private.Question.Choices[1]) {
		t.Errorf("the restricted question's outcome mail shows it:\n%s", end.Parts["text/plain"])
	}
	for name, out := range map[string]string{"the bot's output": bot.stdout.String() + bot.stderr.String(), "the stand-in's": standOut.String()} {
		if strings.Contains(out, token) {
			t.Errorf("%s shows the answer's secret:\n%s", name, out)
		}
	}
	if !strings.Contains(standOut.String(), "answered "+words.ID+" revision 1 by user:kevin via email") {
		t.Errorf("the stand-in did not print the answer in words:\n%s", standOut.String())
	}
	if n := len(fake.Answers()); n != 3 {
		t.Errorf("the backend received %d answers, want the 3 pressed", n)
	}
}
