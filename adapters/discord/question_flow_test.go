package discord_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bwmarrin/discordgo"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads/threadstest"
)

// An agent's question on Discord, end to end: the card from the event,
// the answer from a choice (a button, the menu) or from Answer…'s modal,
// recorded before Discord is answered, sent once to the stand-in backend
// (which checks its signature and its revision), every copy edited and
// the thread told; refusals to the person alone, nothing sent.

// newQuestionHarness is the harness with a backend that asks questions.
func newQuestionHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, harnessOptions{features: []string{"questions"}, config: func(y string) string {
		return strings.Replace(y, `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n", `  calls_secrets: ["${BOT_CALLS_SECRET}"]`+"\n  features: [questions]\n", 1)
	}})
}

// ask ingests a question fixture (edit may change it), tells the
// stand-in backend about it, and posts its cards.
func (h *harness) ask(t *testing.T, name string, edit func(map[string]any)) *approval.Approval {
	t.Helper()
	ev := threadstest.Ingest(t, h.svc, name, edit)
	a := ev.Approval
	if a == nil || !a.IsQuestion() {
		t.Fatalf("%s asks no question", name)
	}
	h.backend.AddQuestion(a.ID, a.Revision, *a.Question, a.ContentRestricted())
	h.drain(t)
	return a
}

// choiceID is the payload of a question's choice i.
func choiceID(a *approval.Approval, i int) string {
	return templates.EncodeAction(templates.Action{Kind: templates.ActionAnswer, ApprovalID: a.ID, Revision: a.Revision, Choice: i})
}

// threadText is a thread's replies as read, one a line.
func (h *harness) threadText(t *testing.T, thread string) string {
	t.Helper()
	var b strings.Builder
	for _, m := range h.discord.Messages(thread) {
		b.WriteString(plain(m.Text()) + "\n")
	}
	return b.String()
}

// TestQuestionChoiceReachesTheBackendOnce: a choice is recorded before
// the click is answered (the card changes at once, its buttons gone),
// sent once, signed, for the card's revision; the card says who answered
// and what, and so does the thread; a second answer is told who answered
// first, and nothing more is sent.
func TestQuestionChoiceReachesTheBackendOnce(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question.json", nil)
	card := h.card(t, a.ID, approvalTarget, 1)
	text := plain(card.Text())
	if !strings.Contains(text, "refund-bot asks") || !strings.Contains(text, "The agent asks") ||
		!strings.Contains(text, a.Question.Text) || !strings.Contains(text, "Waiting for an answer") || card.Thread == "" {
		t.Fatalf("card %q in thread %q", text, card.Thread)
	}
	var kinds []string
	for _, b := range card.Buttons {
		kinds = append(kinds, string(mustAction(t, b.CustomID).Kind))
	}
	if strings.Join(kinds, " ") != "answer answer answer_text look escalate" || len(card.Menus) != 0 {
		t.Fatalf("buttons %v, menus %+v: want the two choices, then Answer…, I'm looking and Escalate now", kinds, card.Menus)
	}

	res := h.click(t, kevin, chApproval, choiceID(a, 1))
	if m := h.deciding(t, res, card.ID, "Sending user:kevin's answer to the job"); len(m.Buttons) != 0 {
		t.Fatalf("buttons %+v left while the answer is sent", m.Buttons)
	}
	if n := len(h.backend.Answers()); n != 0 {
		t.Fatalf("%d answers at the backend before the outbox ran: the click records, the outbox sends", n)
	}
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 {
		t.Fatalf("the backend got %d answers: %+v", len(got), got)
	}
	r := got[0].Request
	if !got[0].SignatureOK || got[0].Status != 200 || r.QuestionID != a.ID || r.Revision != 1 || r.Answer == nil ||
		r.Answer.Choice == nil || *r.Answer.Choice != 1 || r.Answer.Text != "" || r.Actor != "user:kevin" ||
		r.Via.Surface != "discord" || r.Via.User != kevin {
		t.Fatalf("answer %+v", got[0])
	}
	edited := h.card(t, a.ID, approvalTarget, 1)
	if text := plain(edited.Text()); !strings.Contains(text, "Answered by user:kevin") || !strings.Contains(text, "acct-2 (Ruiz Trading Ltd)") ||
		len(edited.Buttons)+len(edited.Menus) != 0 {
		t.Fatalf("card %q with buttons %+v: want it answered, the answer shown, no buttons", text, edited.Buttons)
	}
	if thread := h.threadText(t, card.Thread); !strings.Contains(thread, "user:kevin answered") ||
		!strings.Contains(thread, "acct-2 (Ruiz Trading Ltd)") {
		t.Fatalf("thread %q: want who answered and what", thread)
	}
	// The person who answered sees the clicked card edited to the
	// outcome through the click's webhook, and is told, alone.
	h.outcome(t, res, card.ID, "Answered by user:kevin", "Recorded: your answer reached the job")

	// A second answer, from a copy that still shows the choices: told
	// who answered first, at once and alone; nothing changes or is sent.
	late := h.discord.ClickButton(discordtest.Click{User: lee, Channel: chApproval, CustomID: choiceID(a, 0), MessageID: card.ID})
	answeredAtOnce(t, late, "already answered by user:kevin")
	if after := h.card(t, a.ID, approvalTarget, 1); after.Edits != edited.Edits {
		t.Fatalf("a refused answer changed the card: %+v", after)
	}
	h.drain(t)
	if n := len(h.backend.Answers()); n != 1 {
		t.Fatalf("%d answers", n)
	}
}

// TestQuestionMenuChoiceAnswers: with more choices than Discord's rows
// hold as buttons, the rest are in one menu; a choice there answers as a
// button does, and a forged value is refused.
func TestQuestionMenuChoiceAnswers(t *testing.T) {
	h := newQuestionHarness(t)
	choices := make([]any, 25)
	for i := range choices {
		choices[i] = "Account " + string(rune('A'+i))
	}
	a := h.ask(t, "question.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["choices"] = choices
	})
	card := h.card(t, a.ID, approvalTarget, 1)
	if len(card.Menus) != 1 || len(card.Menus[0].Options) != 10 || len(card.Buttons) != 15+3 || card.Rows != 5 {
		t.Fatalf("buttons %d, menus %+v in %d rows: want 15 choices as buttons, 10 in the menu, then Answer…, I'm looking and Escalate now",
			len(card.Buttons), card.Menus, card.Rows)
	}
	menu := card.Menus[0]
	forged := h.discord.ChooseOption(discordtest.Choose{User: kevin, Channel: chApproval, CustomID: menu.CustomID,
		Values: []string{"ab1|approve|" + a.ID + "|1"}})
	answeredAtOnce(t, forged, "not one the bot knows")

	res := h.discord.ChooseOption(discordtest.Choose{User: kevin, Channel: chApproval, CustomID: menu.CustomID,
		Values: []string{menu.Options[9].Value}})
	h.deciding(t, res, card.ID, "Sending user:kevin's answer to the job")
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || got[0].Request.Answer == nil || got[0].Request.Answer.Choice == nil || *got[0].Request.Answer.Choice != 24 {
		t.Fatalf("answers %+v: want the 25th choice", got)
	}
	if text := plain(h.card(t, a.ID, approvalTarget, 1).Text()); !strings.Contains(text, "Account Y") {
		t.Fatalf("card %q: want the answer", text)
	}
}

// TestQuestionAnsweredInWords: Answer… opens a modal (nothing recorded);
// its submission is the answer, sent as written, secrets and all, once;
// the card and the thread show it with secrets hidden and nobody pinged.
func TestQuestionAnsweredInWords(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question.json", nil)
	card := h.card(t, a.ID, approvalTarget, 1)
	answerText := button(t, card, templates.ActionAnswerText)

	res := h.click(t, kevin, chApproval, answerText)
	m := res.Response
	if m.Type != discordgo.InteractionResponseModal || m.CustomID != answerText || len([]rune(m.Title)) > 45 {
		t.Fatalf("Answer… answered %+v, want its modal", m)
	}
	if len(m.Inputs) != 1 || m.Inputs[0].Style != discordgo.TextInputParagraph || m.Inputs[0].MaxLength != approval.MaxAnswerText ||
		!m.Inputs[0].Required || len(m.Texts) != 1 || !strings.Contains(plain(m.Texts[0]), a.Question.Text) {
		t.Fatalf("modal inputs %+v, texts %q: want one required paragraph of at most 2000 under the question", m.Inputs, m.Texts)
	}
	if n := len(h.backend.Answers()); n != 0 {
		t.Fatal("Answer… sent an answer before the words")
	}

	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	words := "Neither: refund to the card on file @everyone <@" + ada + "> **now**; token " + secret
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: m.CustomID,
		Values: map[string]string{m.Inputs[0].CustomID: words}})
	h.deciding(t, sub, card.ID, "Sending user:kevin's answer to the job")
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || !got[0].SignatureOK || got[0].Request.Answer == nil || got[0].Request.Answer.Text != words ||
		got[0].Request.Answer.Choice != nil || got[0].Request.Revision != 1 {
		t.Fatalf("answers %+v: want the words exactly as written, once", got)
	}
	edited := h.card(t, a.ID, approvalTarget, 1)
	thread := h.discord.Messages(card.Thread)
	shown := append([]discordtest.Message{edited}, thread...)
	for _, msg := range shown {
		if strings.Contains(msg.Text(), secret) || strings.Contains(msg.Text(), "@everyone") {
			t.Fatalf("a shared message shows the secret or a live @everyone: %q", msg.Text())
		}
		if am := msg.AllowedMentions; am == nil || len(am.Parse)+len(am.Users)+len(am.Roles) != 0 {
			t.Fatalf("an answer may ping nobody: %+v on %q", am, msg.Text())
		}
	}
	if text := plain(edited.Text()); !strings.Contains(text, "Answered by user:kevin") || !strings.Contains(text, "Neither: refund to the card on file") {
		t.Fatalf("card %q", text)
	}
	if text := h.threadText(t, card.Thread); !strings.Contains(text, "user:kevin answered") || !strings.Contains(text, "Neither: refund") {
		t.Fatalf("thread %q", text)
	}
}

// TestQuestionStrangerIsRefused: someone who is no member of the tenant
// is told why, privately; no modal opens and nothing is sent.
func TestQuestionStrangerIsRefused(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question.json", nil)
	card := h.card(t, a.ID, approvalTarget, 1)
	answeredAtOnce(t, h.click(t, stranger, chApproval, choiceID(a, 0)), "not a member of tenant acme")
	res := h.click(t, stranger, chApproval, button(t, card, templates.ActionAnswerText))
	if res.Response.Type == discordgo.InteractionResponseModal {
		t.Fatal("a modal opened for a stranger")
	}
	answeredAtOnce(t, res, "not a member of tenant acme")
	forged := h.discord.SubmitModal(discordtest.Submit{User: stranger, Channel: chApproval,
		CustomID: button(t, card, templates.ActionAnswerText), Values: map[string]string{"answer": "acct-1"}})
	answeredAtOnce(t, forged, "not a member of tenant acme")
	if m, _ := h.discord.Message(card.ID); m.Edits != 0 {
		t.Fatalf("a refused answer changed the card: %+v", m)
	}
	h.drain(t)
	if n := len(h.backend.Answers()); n != 0 {
		t.Fatalf("%d answers reached the backend", n)
	}
}

// TestRestrictedQuestionStaysOffSharedPlaces: a restricted question's
// card shows no text; Show question answers a content holder alone with
// the question, its choices and no Answer… (it takes choices only), and a
// member without the permission is refused; the answer from the private
// answer reaches the backend; and no channel message, edit or thread
// reply (everything the fake received but the holder's private
// answers) ever holds the question or the answer's words.
func TestRestrictedQuestionStaysOffSharedPlaces(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question-private.json", nil)
	card := h.card(t, a.ID, approvalTarget, 1)
	const private = "diagnosis"
	if strings.Contains(card.Text(), private) || len(card.Buttons) != 3 || len(card.Menus) != 0 {
		t.Fatalf("restricted card %q with %+v", card.Text(), card.Buttons)
	}
	show := button(t, card, templates.ActionShowDetails)

	h.click(t, noc, chApproval, show)
	h.told(t, noc, "content permission")

	h.click(t, kevin, chApproval, show)
	shown := h.told(t, kevin, private)
	if shown.Components == 0 || !strings.Contains(plain(shown.Text()), a.Question.Text) {
		t.Fatalf("Show question %+v: want the question and its choices", shown)
	}
	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: choiceID(a, 1), Ephemeral: true})
	if !res.Answered() {
		t.Fatalf("the choice on the private answer: %+v", res)
	}
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || got[0].Request.Answer == nil || got[0].Request.Answer.Choice == nil || *got[0].Request.Answer.Choice != 1 ||
		got[0].Request.Actor != "user:kevin" {
		t.Fatalf("answers %+v", got)
	}
	if text := plain(h.card(t, a.ID, approvalTarget, 1).Text()); !strings.Contains(text, "Answered by user:kevin") {
		t.Fatalf("card %q", text)
	}
	// The thread is told the question is closed, and nothing of it.
	if thread := h.threadText(t, card.Thread); !strings.Contains(thread, "The question is closed") {
		t.Fatalf("thread %q: want it told the question is closed", thread)
	}
	leaks := []string{private, a.Question.Choices[1], a.Question.Choices[0]}
	for _, r := range h.discord.Requests() {
		if r.Route == discordtest.RouteFollowup {
			continue // the private answers, checked below
		}
		for _, leak := range leaks {
			if strings.Contains(string(r.Body), leak) {
				t.Fatalf("%s %s carries %q: %s", r.Method, r.Path, leak, r.Body)
			}
		}
	}
	for _, f := range h.discord.AllFollowups() {
		for _, leak := range leaks {
			if strings.Contains(f.Text(), leak) && (f.User != kevin || !f.Ephemeral()) {
				t.Fatalf("a follow-up to %s (ephemeral %v) carries %q", f.User, f.Ephemeral(), leak)
			}
		}
	}
	for _, ch := range []string{chApproval, chAudit, chFinance, chQuiet, card.Thread} {
		for _, m := range h.discord.Messages(ch) {
			for _, leak := range leaks {
				if strings.Contains(m.Text(), leak) {
					t.Fatalf("a message in %s shows %q: %q", ch, leak, m.Text())
				}
			}
		}
	}
}

// TestRestrictedQuestionAnsweredInWords: a restricted question that
// takes words is answered from Show question's private answer: its
// Answer… opens a modal that shows nothing of the question, and the words
// reach the backend as written, once; neither the question nor the words
// reach a channel message, an edit of the card or its thread.
func TestRestrictedQuestionAnsweredInWords(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question-private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["free_text"] = true
	})
	card := h.card(t, a.ID, approvalTarget, 1)
	if hasKind(t, card, templates.ActionAnswerText) {
		t.Fatal("a restricted card offers Answer… where anyone may press it")
	}
	h.click(t, kevin, chApproval, button(t, card, templates.ActionShowDetails))
	h.told(t, kevin, "diagnosis")

	answerText := templates.EncodeAction(templates.Action{Kind: templates.ActionAnswerText, ApprovalID: a.ID, Revision: a.Revision})
	res := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: answerText, Ephemeral: true})
	m := res.Response
	if !res.Answered() || m.Type != discordgo.InteractionResponseModal || len(m.Inputs) != 1 {
		t.Fatalf("Answer… on the private answer: %+v (%s), want its modal", m, res.Problem)
	}
	for _, text := range m.Texts {
		if strings.Contains(text, "diagnosis") {
			t.Fatalf("the modal shows the restricted question: %q", text)
		}
	}
	const words = "Keep it for the meeting; Dr. Lee hears it from me."
	// The fake keeps no private answer a modal was opened from: the
	// submission is on the card, as the Approve with comment… of a
	// revealed call is.
	sub := h.discord.SubmitModal(discordtest.Submit{User: kevin, Channel: chApproval, CustomID: m.CustomID,
		Values: map[string]string{m.Inputs[0].CustomID: words}, MessageID: card.ID})
	if !sub.Answered() || strings.Contains(sub.Body, "Dr. Lee hears") {
		t.Fatalf("the submission: %+v", sub)
	}
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || got[0].Request.Answer == nil || got[0].Request.Answer.Text != words || got[0].Request.Actor != "user:kevin" {
		t.Fatalf("answers %+v: want the words as written, once", got)
	}
	for _, r := range h.discord.Requests() {
		if r.Route != discordtest.RouteFollowup && (strings.Contains(string(r.Body), "diagnosis") || strings.Contains(string(r.Body), "Dr. Lee hears")) {
			t.Fatalf("%s %s carries the question or the answer: %s", r.Method, r.Path, r.Body)
		}
	}
	for _, ch := range []string{chApproval, card.Thread} {
		for _, msg := range h.discord.Messages(ch) {
			if strings.Contains(msg.Text(), "diagnosis") || strings.Contains(msg.Text(), "Dr. Lee hears") {
				t.Fatalf("a message in %s shows the question or the answer: %q", ch, msg.Text())
			}
		}
	}
}

// hasKind reports whether the message carries a button of kind.
func hasKind(t *testing.T, m discordtest.Message, kind templates.ActionKind) bool {
	t.Helper()
	for _, b := range m.Buttons {
		if mustAction(t, b.CustomID).Kind == kind {
			return true
		}
	}
	return false
}

// TestQuestionDeadlineSaysNobodyAnswered: at its deadline the question
// closes with no answer: the backend is told nobody answered (never an
// answer), every copy says so without its controls, and a late choice is
// told why nothing was sent.
func TestQuestionDeadlineSaysNobodyAnswered(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question.json", nil)
	card := h.card(t, a.ID, approvalTarget, 1)
	h.clock.Advance(a.Deadline.Add(time.Minute).Sub(h.clock.Now()))
	if _, err := h.svc.Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || !got[0].SignatureOK || !got[0].Request.Unanswered || got[0].Request.Answer != nil ||
		got[0].Request.Actor != "system:deadline" || got[0].Request.Revision != 1 {
		t.Fatalf("answers %+v: want the deadline's word that nobody answered, once", got)
	}
	edited := h.card(t, a.ID, approvalTarget, 1)
	if text := plain(edited.Text()); !strings.Contains(text, "Nobody answered by the deadline") || len(edited.Buttons)+len(edited.Menus) != 0 {
		t.Fatalf("card %q with %+v", text, edited.Buttons)
	}
	late := h.discord.ClickButton(discordtest.Click{User: kevin, Channel: chApproval, CustomID: choiceID(a, 0), MessageID: card.ID})
	answeredAtOnce(t, late, "Nobody answered this question by its deadline")
	h.drain(t)
	if n := len(h.backend.Answers()); n != 1 {
		t.Fatalf("%d answers", n)
	}
}

// TestHostileQuestionIsPostedDefused: a question whoever steers the
// agent wrote (a secret, @everyone and a user's mention, markdown, an
// invisible character, 4,000 characters) is posted as Discord takes it:
// pinging nobody, its secret hidden, its @everyone broken, its
// invisible character shown, cut visibly to Discord's bounds.
func TestHostileQuestionIsPostedDefused(t *testing.T) {
	h := newQuestionHarness(t)
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	text := "@everyone <@" + ada + "> **now** # big\u200b " + secret + " " + strings.Repeat("x", 3900)
	a := h.ask(t, "question.json", func(ev map[string]any) {
		q := ev["data"].(map[string]any)["question"].(map[string]any)
		q["text"], q["choices"] = text, []any{"@everyone pay", secret}
	})
	card := h.card(t, a.ID, approvalTarget, 1)
	all := card.Text()
	for _, b := range card.Buttons {
		all += "\n" + b.Label
	}
	read := plain(card.Text())
	if strings.Contains(all, secret) || strings.Contains(card.Text(), "@everyone") || !strings.Contains(read, "big[U+200B]") ||
		!strings.Contains(read, "[cut]") {
		t.Fatalf("card %q with buttons %+v: want the secret hidden, @everyone broken, the invisible character shown, the text cut",
			card.Text(), card.Buttons)
	}
	if am := card.AllowedMentions; am == nil || len(am.Parse)+len(am.Users)+len(am.Roles) != 0 {
		t.Fatalf("a question may ping nobody: %+v", am)
	}
}

// TestSimultaneousAnswersMakeOne: two members choose at once; one answer
// is recorded and sent, the other is told, at once and alone, that
// someone answers already (or answered).
func TestSimultaneousAnswersMakeOne(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ask(t, "question.json", nil)
	card := h.card(t, a.ID, approvalTarget, 1)
	users := []string{kevin, lee}
	results := make([]discordtest.Result, len(users))
	var wg sync.WaitGroup
	for i, u := range users {
		wg.Go(func() {
			results[i] = h.discord.ClickButton(discordtest.Click{User: u, Channel: chApproval, CustomID: choiceID(a, i), MessageID: card.ID})
		})
	}
	wg.Wait()
	var sent, told []int
	for i, res := range results {
		if !res.Answered() {
			t.Fatalf("%s's click not answered: %+v", users[i], res)
		}
		switch r := res.Response; {
		case r.Type == discordgo.InteractionResponseUpdateMessage:
			sent = append(sent, i)
		case r.Type == discordgo.InteractionResponseChannelMessageWithSource && r.Ephemeral() &&
			(strings.Contains(plain(r.Content), "is answering this question already") || strings.Contains(plain(r.Content), "already answered")):
			told = append(told, i)
		}
	}
	if len(sent) != 1 || len(told) != 1 {
		t.Fatalf("answers %+v / %+v: want one card update, one told someone answers", results[0].Response, results[1].Response)
	}
	winner := map[string]string{kevin: "user:kevin", lee: "user:lee"}[users[sent[0]]]
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || got[0].Request.Actor != winner || got[0].Request.Answer == nil || got[0].Request.Answer.Choice == nil ||
		*got[0].Request.Answer.Choice != sent[0] {
		t.Fatalf("answers %+v, want one, %s's choice", got, winner)
	}
}

// TestShowQuestionShowsALongQuestionWhole: a restricted question as long
// as the protocol takes, looked up for its content holder, is told to
// them whole within Discord's bounds (which the fake enforces): its end,
// beyond the card's bound, is there.
func TestShowQuestionShowsALongQuestionWhole(t *testing.T) {
	h := newQuestionHarness(t)
	const tail = "Tell Dr. Lee only after the second test."
	long := strings.Repeat("The first test was unclear. ", (approval.MaxQuestionText-len(tail))/28) + tail
	a := h.ask(t, "question-private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["text"] = long
	})
	card := h.card(t, a.ID, approvalTarget, 1)
	h.click(t, kevin, chApproval, button(t, card, templates.ActionShowDetails))
	shown := h.told(t, kevin, "Tell Dr. Lee only after the second test")
	if got := strings.Count(shown.Text(), "The first test was unclear"); got != strings.Count(long, "The first test was unclear") {
		t.Errorf("the private answer shows %d of the question's %d sentences", got, strings.Count(long, "The first test was unclear"))
	}
}
