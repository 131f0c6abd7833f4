package threads_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// newQuestionHarness is a harness whose backend sends questions.
func newQuestionHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, func(o *threads.Options) { o.Questions = true })
}

// answer presses a choice (choice ≥ 0) or submits Answer…'s words.
func (h *harness) answer(t *testing.T, id string, rev, choice int, words, user string) threads.Clicked {
	t.Helper()
	act := templates.Action{Kind: templates.ActionAnswer, ApprovalID: id, Revision: rev, Choice: choice}
	if choice < 0 {
		act = templates.Action{Kind: templates.ActionAnswerText, ApprovalID: id, Revision: rev}
	}
	return h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord, Action: act,
		Person: slackPerson(user), Comment: words})
}

// A question's card is posted where a call's would be, with its text in
// the agent's box, a button per choice and Answer…; none of a call's lines.
func TestQuestionCardIsPosted(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingest(t, "question.json")
	h.drain(t)
	if len(h.surf.posts) != 2 {
		t.Fatalf("%d posts, want one per target", len(h.surf.posts))
	}
	for _, p := range h.surf.posts {
		c := templates.Build(p.Card.Input())
		if c.Question == nil || !strings.Contains(c.Question.Text, "Which one should I refund") {
			t.Fatalf("card %+v has no question", c)
		}
		if len(c.Question.Choices) != 2 || c.Question.Choices[1].Label != "acct-2 (Ruiz Trading Ltd)" ||
			c.Question.Choices[1].Action.Choice != 1 || c.Question.Choices[1].Action.Kind != templates.ActionAnswer {
			t.Fatalf("choices %+v", c.Question.Choices)
		}
		if c.Function != "" || c.Effect != "" || c.Arguments != nil || c.Digest != "" || len(c.Flags) != 0 {
			t.Fatalf("a question's card shows a call's lines: %+v", c)
		}
		if c.Status != "Waiting for an answer" || c.Headline != "refund-bot asks: Order 7781 was paid from two accounts. Which one should I refund the 250 EUR to?" {
			t.Fatalf("status %q headline %q", c.Status, c.Headline)
		}
		var labels []string
		for _, b := range c.Buttons {
			labels = append(labels, b.Label)
		}
		if got := strings.Join(labels, ","); got != "Answer…,I'm looking,Escalate now" {
			t.Fatalf("buttons %s", got)
		}
	}
	if row := h.state(t, "q-refund1"); row.Function != "question" {
		t.Fatalf("listed as %q, want question (never its text)", row.Function)
	}
}

// Who may not answer is refused before anything is recorded: a stranger,
// a viewer, a non-holder on a restricted question, an Approve or Deny
// aimed at a question, a choice that is not one, blank or overlong
// words, words on a question of choices only.
func TestQuestionRefusalsRecordNothing(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingest(t, "question.json")
	h.ingest(t, "question-private.json")
	h.drain(t)
	cases := []struct {
		name, id string
		choice   int
		words    string
		user     string
		want     string
	}{
		{"stranger", "q-refund1", 0, "", "U0STRANGER", "not a member of tenant acme"},
		{"viewer", "q-refund1", 0, "", "U0VIC", "cannot answer the agent's questions"},
		{"the job's starter, where the tenant forbids it", "q-refund1", 0, "", "U0ADA", "forbids answering your own job's questions"},
		{"no content permission, restricted", "q-priv1", 0, "", "U0NOC", "only members of tenant acme with the content permission"},
		{"a choice that is not one", "q-refund1", 2, "", "U0KEVIN", "not one of the question's choices"},
		{"blank words", "q-refund1", -1, " \n\t", "U0KEVIN", "answer is empty"},
		{"overlong words", "q-refund1", -1, strings.Repeat("x", approval.MaxAnswerText+1), "U0KEVIN", "longer than 2000 characters"},
		{"words on a question of choices only", "q-priv1", -1, "neither", "U0KEVIN", "takes one of its choices only"},
	}
	for _, c := range cases {
		out := h.answer(t, c.id, 1, c.choice, c.words, c.user)
		if out.Sent || !strings.Contains(out.Reason.String(), c.want) {
			t.Errorf("%s: %+v (%s), want a refusal with %q", c.name, out, out.Reason.String(), c.want)
		}
	}
	// An Approve or a Deny names a question: refused, never sent as a decision.
	for _, approve := range []bool{true, false} {
		res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "q-refund1",
			Revision: 1, Approve: approve, Person: slackPerson("U0KEVIN")})
		if err != nil || res.Sent {
			t.Fatalf("decision on a question: %+v %v", res, err)
		}
	}
	for _, id := range []string{"q-refund1", "q-priv1"} {
		if row := h.state(t, id); len(row.Deciding) != 0 || row.State != "pending" {
			t.Fatalf("%s: something was recorded: %s %s", id, row.State, row.Deciding)
		}
	}
	if n := h.drain(t); n != 0 {
		t.Fatalf("%d rows went out after refusals", n)
	}
}

// Two answers at once: one is in flight, the other is told who is
// answering; the words stay only in the answer in flight.
func TestQuestionOneAnswerInFlight(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingest(t, "question.json")
	h.drain(t)
	var wg sync.WaitGroup
	outs := make([]threads.Clicked, 2)
	for i, user := range []string{"U0KEVIN", "U0LEE"} {
		wg.Go(func() {
			outs[i] = h.answer(t, "q-refund1", 1, -1, "acct-2 please, token ghp_"+strings.Repeat("a", 36), user)
		})
	}
	wg.Wait()
	sent := 0
	for _, o := range outs {
		switch {
		case o.Sent:
			sent++
			if o.Card == nil || o.Card.Deciding == nil {
				t.Fatalf("the clicked card does not show the answer on its way: %+v", o.Card)
			}
			c := templates.Build(o.Card.Input())
			if !strings.HasPrefix(c.Status, "Sending user:") || len(c.Buttons) != 0 || len(c.Question.Choices) != 0 {
				t.Fatalf("clicked card while sending: %q %+v", c.Status, c.Buttons)
			}
		case !strings.Contains(o.Reason.String(), "is answering this question already"):
			t.Fatalf("the other answer was told %q", o.Reason.String())
		}
	}
	if sent != 1 {
		t.Fatalf("%d answers in flight, want 1", sent)
	}
}

// A restricted question's text and choices never reach the store or a
// shared card: the card offers Show question; Answer… asks nothing of a
// non-holder.
func TestRestrictedQuestionStaysOffSharedPlaces(t *testing.T) {
	h := newQuestionHarness(t)
	body, _ := readEvent(t, "question-private.json")
	h.ingest(t, "question-private.json")
	h.drain(t)
	rev, err := h.store.RevisionGet(context.Background(), "q-priv1", 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Dr. Lee", "diagnosis", "Tell Dr. Lee now", "Keep it for the meeting"} {
		if !strings.Contains(string(body), secret) {
			t.Fatalf("the fixture lacks %q", secret)
		}
		if strings.Contains(string(rev.Body), secret) {
			t.Fatalf("the store keeps %q of a restricted question", secret)
		}
		for _, p := range h.surf.posts {
			c := templates.Build(p.Card.Input())
			if strings.Contains(c.Headline+c.Status+c.Question.Text+c.RestrictedNote, secret) || len(c.Question.Choices) != 0 {
				t.Fatalf("a shared card shows %q: %+v", secret, c)
			}
			if len(c.Buttons) == 0 || c.Buttons[len(c.Buttons)-1].Label != "Show question" {
				t.Fatalf("buttons %+v", c.Buttons)
			}
		}
	}
	out := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickAsk,
		Action: templates.Action{Kind: templates.ActionAnswerText, ApprovalID: "q-priv1", Revision: 1}, Person: slackPerson("U0NOC")})
	if out.Dialog != nil || !strings.Contains(out.Reason.String(), "content permission") {
		t.Fatalf("Answer… for a non-holder: %+v", out)
	}
	out = h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickShow,
		Action: templates.Action{Kind: templates.ActionShowDetails, ApprovalID: "q-priv1", Revision: 1}, Person: slackPerson("U0NOC")})
	if out.Shown != nil || !strings.Contains(out.Reason.String(), "content permission") {
		t.Fatalf("Show question for a non-holder: %+v", out)
	}
}

// Answer…'s dialog shows the question, redacted, and the words' bound.
func TestAnswerDialog(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingest(t, "question.json")
	out := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickAsk,
		Action: templates.Action{Kind: templates.ActionAnswerText, ApprovalID: "q-refund1", Revision: 1}, Person: slackPerson("U0KEVIN")})
	if out.Dialog == nil || out.Dialog.Question == nil {
		t.Fatalf("no dialog: %+v (%s)", out, out.Reason.String())
	}
	q := out.Dialog.Question
	if !strings.Contains(q.Text, "Which one should I refund") || q.Max != approval.MaxAnswerText || q.Restricted || q.Label == "" {
		t.Fatalf("dialog %+v", q)
	}
}

// newAnsweringHarness answers through the real client to the stand-in,
// which checks signatures, revisions and digests, with both example
// questions known to it.
func newAnsweringHarness(t *testing.T, maxElapsed time.Duration) *decideHarness {
	t.Helper()
	h := newDecideHarnessWith(t, testConfig, maxElapsed, []string{backend.FeatureQuestions},
		func(o *threads.Options) { o.Questions = true })
	for _, name := range []string{"question.json", "question-private.json"} {
		_, ev := readEvent(t, name)
		a := ev.Approval
		h.fake.AddQuestion(a.ID, a.Revision, *a.Question, a.ContentRestricted())
	}
	return h
}

// A choice and an answer in words each reach the backend once, bound to
// the revision and the question's digest; every copy says who answered
// what, the thread hears it, and the person is told it was recorded. A
// second answer is told who answered first, and nothing more is sent.
func TestAnswersReachTheBackendOnce(t *testing.T) {
	for _, c := range []struct {
		name     string
		choice   int
		words    string
		want     string // on the card and in the thread
		wantSent approval.Answer
	}{
		{"a choice", 1, "", "acct-2 (Ruiz Trading Ltd)", approval.Answer{Choice: ptr(1)}},
		{"words", -1, "acct-2, token ghp_" + strings.Repeat("a", 36), "acct-2, token ghp_[redacted]", approval.Answer{Text: "acct-2, token ghp_" + strings.Repeat("a", 36)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newAnsweringHarness(t, time.Minute)
			h.ingest(t, "question.json")
			h.drain(t)
			out := h.answer(t, "q-refund1", 1, c.choice, c.words, "U0KEVIN")
			if !out.Sent || !strings.Contains(out.Reason.String(), "on its way") {
				t.Fatalf("not sent: %+v (%s)", out, out.Reason.String())
			}
			h.drain(t)
			got := h.fake.Answers()
			if len(got) != 1 {
				t.Fatalf("the backend got %d answers", len(got))
			}
			a := got[0]
			_, ev := readEvent(t, "question.json")
			if !a.SignatureOK || a.Status != 200 || a.Request.Revision != 1 || a.Request.Actor != "user:kevin" ||
				a.Request.Via.Surface != "slack" || a.Request.Via.User != "U0KEVIN" || a.IdempotencyKey == "" ||
				a.Request.QuestionSHA256 != approval.QuestionDigest(ev.Approval.Question) || a.Request.Unanswered {
				t.Fatalf("answer %+v", a)
			}
			if diff := cmp.Diff(c.wantSent, *a.Request.Answer); diff != "" {
				t.Fatalf("the backend got another answer (-want +got):\n%s", diff)
			}
			row := h.state(t, "q-refund1")
			if row.State != "answered" || len(row.Deciding) != 0 {
				t.Fatalf("state %s, in flight %s", row.State, row.Deciding)
			}
			if strings.Contains(string(row.Decision), strings.Repeat("a", 36)) {
				t.Fatalf("the store keeps the answer's secret: %s", row.Decision)
			}
			if len(h.surf.edits) != 2 {
				t.Fatalf("%d copies edited, want 2", len(h.surf.edits))
			}
			for _, e := range h.surf.edits {
				card := templates.Build(e.Card.Input())
				if card.Status != "Answered by user:kevin" || !strings.Contains(card.Question.Answer, c.want) || len(card.Buttons) != 0 {
					t.Fatalf("edited card: %q %q %+v", card.Status, card.Question.Answer, card.Buttons)
				}
			}
			if len(h.surf.replies) != 2 || !strings.Contains(h.surf.replies[0].Text, "user:kevin answered: "+c.want) {
				t.Fatalf("thread replies %+v", h.surf.replies)
			}
			if tell := h.lastTell(t); tell.User != "U0KEVIN" || !strings.Contains(tell.Text, "your answer reached the job") {
				t.Fatalf("tell %+v", tell)
			}
			second := h.answer(t, "q-refund1", 1, 0, "", "U0LEE")
			if second.Sent || !strings.Contains(second.Reason.String(), "already answered by user:kevin") {
				t.Fatalf("second answer: %+v (%s)", second, second.Reason.String())
			}
			h.drain(t)
			if n := len(h.fake.Answers()); n != 1 {
				t.Fatalf("the backend got %d answers", n)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

// Answered first elsewhere (the backend says so): the person is told
// who, and the cards say the question is answered.
func TestAnsweredElsewhereFirst(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.ingest(t, "question.json")
	h.drain(t)
	if _, err := h.fake.AnswerElsewhere("acme", "q-refund1", "user:ada", approval.Answer{Choice: ptr(0)}, clockNow(h)); err != nil {
		t.Fatal(err)
	}
	h.answer(t, "q-refund1", 1, 1, "", "U0KEVIN")
	h.drain(t)
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "user:ada answered this question first") {
		t.Fatalf("tell %+v", tell)
	}
	if row := h.state(t, "q-refund1"); row.State != "answered" {
		t.Fatalf("state %s", row.State)
	}
}

func clockNow(h *decideHarness) time.Time { return h.clock.Now() }

// The deadline closes a question without an answer: the backend hears
// that nobody answered (never an answer), the cards say so, and a later
// answer is refused.
func TestTheDeadlineClosesAQuestionUnanswered(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.ingest(t, "question.json") // its deadline: 24 h after the request
	h.drain(t)
	h.at(t, 24*time.Hour+threads.RecordBound)
	if r := h.tick(t); r.Deadlines != 1 {
		t.Fatalf("tick %+v", r)
	}
	h.at(t, 24*time.Hour+2*threads.RecordBound)
	h.drain(t)
	got := h.fake.Answers()
	if len(got) != 1 || !got[0].Request.Unanswered || got[0].Request.Answer != nil || got[0].Request.Actor != threads.DeadlineActor ||
		got[0].Request.Via.Surface != threads.DeadlineSurface || got[0].Request.Comment != threads.DeadlineComment || got[0].Status != 200 {
		t.Fatalf("the backend got %+v", got)
	}
	if row := h.state(t, "q-refund1"); row.State != "expired" {
		t.Fatalf("state %s", row.State)
	}
	last := h.surf.edits[len(h.surf.edits)-1]
	if c := templates.Build(last.Card.Input()); c.Status != "Nobody answered by the deadline" || c.Question.Answer != "" {
		t.Fatalf("card after the deadline: %q %q", c.Status, c.Question.Answer)
	}
	if out := h.answer(t, "q-refund1", 1, 0, "", "U0KEVIN"); out.Sent || !strings.Contains(out.Reason.String(), "Nobody answered this question by its deadline") {
		t.Fatalf("answer after the deadline: %+v (%s)", out, out.Reason.String())
	}
}

// The backend refuses a walled member (403): they are told, every copy
// gets its buttons back, and another member may still answer.
func TestWalledMemberIsRefusedByTheBackend(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.fake.SetForbidden("user:lee")
	h.ingest(t, "question.json")
	h.drain(t)
	h.answer(t, "q-refund1", 1, 0, "", "U0LEE")
	h.drain(t)
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "The platform refused your answer") {
		t.Fatalf("tell %+v", tell)
	}
	if row := h.state(t, "q-refund1"); row.State != "pending" || len(row.Deciding) != 0 {
		t.Fatalf("after a refusal: %s %s", row.State, row.Deciding)
	}
	if out := h.answer(t, "q-refund1", 1, 1, "", "U0KEVIN"); !out.Sent {
		t.Fatalf("kevin's answer after lee's refusal: %s", out.Reason.String())
	}
	h.drain(t)
	if row := h.state(t, "q-refund1"); row.State != "answered" {
		t.Fatalf("state %s", row.State)
	}
}

// Show question on a restricted question looks it up for a content
// holder and shows it to them alone, with choices that answer it; the
// answer's thread reply names no part of it.
func TestShowQuestionThenAnswer(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.ingest(t, "question-private.json")
	h.drain(t)
	out := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickShow,
		Action: templates.Action{Kind: templates.ActionShowDetails, ApprovalID: "q-priv1", Revision: 1}, Person: slackPerson("U0KEVIN")})
	if out.Shown == nil || out.Shown.Question == nil {
		t.Fatalf("not shown: %+v (%s)", out, out.Reason.String())
	}
	sq := out.Shown.Question
	if !strings.Contains(sq.Text, "Dr. Lee") || len(sq.Choices) != 2 || sq.Choices[0].Label != "Tell Dr. Lee now" || sq.AnswerText != nil {
		t.Fatalf("shown %+v", sq)
	}
	if n := len(h.fake.QuestionLookups()); n != 1 {
		t.Fatalf("%d look-ups", n)
	}
	act := sq.Choices[1].Action
	res := h.svc.Click(context.Background(), threads.ClickRequest{Do: threads.ClickRecord, Action: act, Person: slackPerson("U0KEVIN")})
	if !res.Sent {
		t.Fatalf("answer from the showing: %s", res.Reason.String())
	}
	h.drain(t)
	if got := h.fake.Answers(); len(got) != 1 || got[0].Status != 200 || *got[0].Request.Answer.Choice != 1 {
		t.Fatalf("the backend got %+v", got)
	}
	for _, r := range h.surf.replies {
		if strings.Contains(r.Text, "meeting") || strings.Contains(r.Text, "Lee") || strings.Contains(r.Text, "choice") {
			t.Fatalf("a thread reply says what a restricted question was answered: %q", r.Text)
		}
	}
	for _, e := range h.surf.edits {
		c := templates.Build(e.Card.Input())
		if c.Question.Answer != "" || c.StatusNote == "" || c.Status != "Answered by user:kevin" {
			t.Fatalf("restricted card after the answer: %+v", c)
		}
	}
}

// With the backend down, the answer is not recorded: the person is told,
// and the card can be answered again.
func TestAnswerWithTheBackendDown(t *testing.T) {
	h := newAnsweringHarness(t, time.Nanosecond)
	h.ingest(t, "question.json")
	h.drain(t)
	h.fake.Close()
	h.answer(t, "q-refund1", 1, 0, "", "U0KEVIN")
	h.drain(t)
	if tell := h.lastTell(t); !strings.Contains(tell.Text, "did not answer, so your answer was not recorded") {
		t.Fatalf("tell %+v", tell)
	}
	if row := h.state(t, "q-refund1"); row.State != "pending" || len(row.Deciding) != 0 {
		t.Fatalf("after the backend was down: %s %s", row.State, row.Deciding)
	}
}

// A restricted question's answer in words is its content holders' alone:
// the store keeps who answered, never the words, whether the answer was
// given here or the backend says it was given elsewhere; an unrestricted
// question's answer keeps its words, redacted, for its cards.
func TestRestrictedAnswerWordsAreNotKept(t *testing.T) {
	const words = "Tell Dr. Lee the DIAGNOSIS-WORDS now"
	private := func(h *decideHarness) {
		q := approval.Question{Text: "Should I tell Dr. Lee about the diagnosis?", FreeText: true}
		h.fake.AddQuestion("q-priv1", 1, q, true)
		threadstest.Ingest(t, h.svc, "question-private.json", func(ev map[string]any) {
			ev["data"].(map[string]any)["question"] = map[string]any{"text": q.Text, "free_text": true}
		})
		h.drain(t)
	}
	kept := func(t *testing.T, h *decideHarness, id string, want bool) {
		t.Helper()
		row := h.state(t, id)
		if row.State != "answered" || strings.Contains(string(row.Decision), "DIAGNOSIS-WORDS") != want {
			t.Errorf("%s: state %s, decision %s: want the words kept %v", id, row.State, row.Decision, want)
		}
	}
	t.Run("answered here", func(t *testing.T) {
		h := newAnsweringHarness(t, time.Minute)
		private(h)
		if out := h.answer(t, "q-priv1", 1, -1, words, "U0KEVIN"); !out.Sent {
			t.Fatalf("answer: %s", out.Reason.String())
		}
		h.drain(t)
		if got := h.fake.Answers(); len(got) != 1 || got[0].Request.Answer == nil || got[0].Request.Answer.Text != words {
			t.Fatalf("the backend got %+v, want the words as written", got)
		}
		kept(t, h, "q-priv1", false)
	})
	t.Run("answered elsewhere", func(t *testing.T) {
		h := newAnsweringHarness(t, time.Minute)
		private(h)
		threadstest.Ingest(t, h.svc, "question-answered.json", func(ev map[string]any) {
			d := ev["data"].(map[string]any)
			d["question_id"], d["answer"] = "q-priv1", map[string]any{"text": words}
		})
		h.drain(t)
		kept(t, h, "q-priv1", false)
	})
	t.Run("unrestricted", func(t *testing.T) {
		h := newAnsweringHarness(t, time.Minute)
		h.ingest(t, "question.json")
		h.drain(t)
		if out := h.answer(t, "q-refund1", 1, -1, words, "U0KEVIN"); !out.Sent {
			t.Fatalf("answer: %s", out.Reason.String())
		}
		h.drain(t)
		kept(t, h, "q-refund1", true)
	})
}

// An answer in flight when the bot no longer takes questions (the
// feature turned off, or a replica configured without it) never holds
// the question for good: a person's answer is handed back, the person
// told and the words gone; the deadline's word that nobody answered
// waits until a bot that takes questions sends it.
func TestAnswerInFlightWhenQuestionsAreOff(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	on := h.opts
	h.ingest(t, "question.json")
	h.drain(t)
	if out := h.answer(t, "q-refund1", 1, -1, "acct-2 WORDS-IN-FLIGHT", "U0KEVIN"); !out.Sent {
		t.Fatalf("answer: %s", out.Reason.String())
	}
	off := on
	off.Worker, off.Questions = "", false
	svc, err := threads.New(off)
	if err != nil {
		t.Fatal(err)
	}
	h.svc = svc
	h.drain(t)
	if tell := h.lastTell(t); tell.User != "U0KEVIN" || !strings.Contains(tell.Text, "takes no answers to questions") {
		t.Fatalf("the person was told %+v", tell)
	}
	row := h.state(t, "q-refund1")
	if row.State != "pending" || len(row.Deciding) != 0 || strings.Contains(string(row.Decision)+string(row.Deciding), "WORDS-IN-FLIGHT") {
		t.Fatalf("after the answer met a bot without questions: state %s, in flight %s, decision %s", row.State, row.Deciding, row.Decision)
	}
	if n := len(h.fake.Answers()); n != 0 {
		t.Fatalf("the backend got %d answers", n)
	}

	// The deadline, still without questions: nothing is sent, and the
	// question waits; once questions are on again, the job is told
	// nobody answered.
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.tick(t)
	h.at(t, 24*time.Hour+2*threads.RecordBound)
	h.drain(t)
	if n := len(h.fake.Answers()); n != 0 {
		t.Fatalf("the backend got %d answers from a bot without questions", n)
	}
	if row := h.state(t, "q-refund1"); row.State != "pending" || !strings.Contains(string(row.Deciding), threads.DeadlineActor) {
		t.Fatalf("state %s, in flight %s: want the deadline's word waiting to be sent", row.State, row.Deciding)
	}
	on.Worker = ""
	if h.svc, err = threads.New(on); err != nil {
		t.Fatal(err)
	}
	h.at(t, 25*time.Hour)
	h.tick(t)
	h.drain(t)
	got := h.fake.Answers()
	if len(got) != 1 || !got[0].Request.Unanswered || got[0].Request.Actor != threads.DeadlineActor {
		t.Fatalf("the backend got %+v, want the deadline's word that nobody answered", got)
	}
	if row := h.state(t, "q-refund1"); row.State != "expired" {
		t.Fatalf("state %s, want expired", row.State)
	}
}

// A call's dialog (Approve, Deny, a note, a grant) asked for on a
// question's id, with a crafted button, opens nothing: a question is
// answered, never approved or denied. Its restricted kind opens nothing
// either, and reveals nothing.
func TestCallDialogOnAQuestionOpensNothing(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.ingest(t, "question.json")
	h.ingest(t, "question-private.json")
	h.drain(t)
	for _, id := range []string{"q-refund1", "q-priv1"} {
		for _, kind := range []templates.ActionKind{templates.ActionApprove, templates.ActionDeny, templates.ActionApproveNote,
			templates.ActionApproveSeen, templates.ActionGrant} {
			out := h.svc.Click(context.Background(), click(threads.ClickAsk, kind, id, "U0KEVIN"))
			if out.Dialog != nil || out.Reveal || !strings.Contains(out.Reason.String(), "button") {
				t.Errorf("%s on %s: dialog %+v, reveal %v, told %q", kind, id, out.Dialog, out.Reveal, out.Reason.String())
			}
		}
	}
	if n := len(h.fake.Answers()); n != 0 {
		t.Errorf("the backend got %d answers", n)
	}
}

// An answer the backend says was given at a revision the bot never saw
// asked names its choice by number on every copy: the card's choices are
// revision 1's, not the ones the answer chose from.
func TestAnswerAtAnUnseenRevisionNamesItsChoiceByNumber(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.ingest(t, "question.json")
	h.drain(t)
	threadstest.Ingest(t, h.svc, "question-answered.json", func(ev map[string]any) {
		d := ev["data"].(map[string]any)
		d["revision"], d["answer"] = 2, map[string]any{"choice": 0}
	})
	h.drain(t)
	if len(h.surf.edits) == 0 {
		t.Fatal("no copy was edited")
	}
	for _, e := range h.surf.edits {
		c := templates.Build(e.Card.Input())
		if c.Status != "Answered by user:kevin" || strings.Contains(c.Question.Answer, "acct-1") || !strings.Contains(c.Question.Answer, "choice 1") {
			t.Errorf("edited card: %q, answer %q: want choice 1 by number", c.Status, c.Question.Answer)
		}
	}
}
