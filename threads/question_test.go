package threads_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
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
		{"no content permission, restricted", "q-priv1", 0, "", "U0NOC", "only members of tenant acme with the content permission"},
		{"a choice that is not one", "q-refund1", 2, "", "U0KEVIN", "not one of the question's choices"},
		{"blank words", "q-refund1", -1, " \n\t", "U0KEVIN", "answer is empty"},
		{"overlong words", "q-refund1", -1, strings.Repeat("x", approval.MaxAnswerText+1), "U0KEVIN", "longer than 2000 characters"},
		{"words on a question of choices only", "q-priv1", -1, "neither", "U0KEVIN", "takes one of its choices only"},
		{"a superseded revision", "q-refund1", 0, "", "U0KEVIN", ""},
	}
	for _, c := range cases {
		if c.name == "a superseded revision" {
			continue // below, with a second revision
		}
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
