package slack_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/slack/slacktest"
	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

func newQuestionHarness(t *testing.T) *harness {
	t.Helper()
	return newHarnessWith(t, harnessOptions{questions: true})
}

// ingestQuestion feeds a question fixture, changed by edit, to threads,
// and tells the stand-in the question stands behind it.
func (h *harness) ingestQuestion(t *testing.T, name string, edit func(ev map[string]any)) *approval.Approval {
	t.Helper()
	a := threadstest.Ingest(t, h.svc, name, edit).Approval
	h.backend.AddQuestion(a.ID, a.Revision, *a.Question, a.ContentRestricted())
	return a
}

// choice is the payload of a card's choice button i (from 0).
func choice(t *testing.T, m slacktest.Message, i int) string {
	t.Helper()
	for _, b := range m.Buttons() {
		if a, err := templates.ParseAction(b.ActionID); err == nil && a.Kind == templates.ActionAnswer && a.Choice == i {
			return b.ActionID
		}
	}
	t.Fatalf("no choice %d on %+v", i, m.Buttons())
	return ""
}

// answerButtons are a message's buttons and options that answer.
func answerButtons(m slacktest.Message) []string {
	var out []string
	for _, b := range m.Buttons() {
		if a, err := templates.ParseAction(b.ActionID); err == nil && (a.Kind == templates.ActionAnswer || a.Kind == templates.ActionAnswerText) {
			out = append(out, b.Text)
		}
	}
	for _, o := range m.Options() {
		out = append(out, o.Text)
	}
	return out
}

// pick chooses an option of a card's choices' menu, as Slack posts it.
func (h *harness) pick(t *testing.T, user, channel, value string) {
	t.Helper()
	p := h.clickPayload(user, channel, value)
	p["actions"] = []any{map[string]any{"type": "static_select", "block_id": "b1", "action_id": "ab1-choice",
		"selected_option": map[string]any{"text": map[string]any{"type": "plain_text", "text": "x"}, "value": value},
		"action_ts":       "1700000001.000002"}}
	if status, body := h.send(t, signedRequest{path: "/slack/interactions", body: interaction(p)}); status != http.StatusOK || body != "" {
		t.Fatalf("pick answered %d %q", status, body)
	}
}

// threadReplies are the replies in the thread of the card at ts.
func (h *harness) threadReplies(channel, ts string) []slacktest.Message {
	var out []slacktest.Message
	for _, m := range h.slack.Channel(channel) {
		if m.ThreadTS == ts && m.TS != ts {
			out = append(out, m)
		}
	}
	return out
}

// everything is all Slack received: each message, each view, each
// edit, as one text per item.
func (h *harness) everything() []string {
	var out []string
	for _, m := range h.slack.Messages() {
		out = append(out, m.Method+" "+m.Channel+" "+m.User+": "+m.AllText())
	}
	for _, v := range h.slack.Views() {
		out = append(out, "views.open: "+string(v.Raw))
	}
	return out
}

// answeredEverywhere checks that every copy of the question's card reads
// want, and that none offers an answer any more.
func (h *harness) answeredEverywhere(t *testing.T, id string, want ...string) {
	t.Helper()
	posts, err := h.store.PostList(context.Background(), id)
	if err != nil || len(posts) == 0 {
		t.Fatalf("posts %+v %v", posts, err)
	}
	for _, p := range posts {
		c := h.card(t, id, p.Channel, p.Revision)
		for _, w := range want {
			if !strings.Contains(c.AllText(), w) {
				t.Errorf("the copy in %s reads %q, want %q", p.Channel, c.AllText(), w)
			}
		}
		if b := answerButtons(c); len(b) != 0 {
			t.Errorf("the answered copy in %s still offers %q", p.Channel, b)
		}
	}
}

// TestQuestionChoiceIsAnsweredOnce: a choice's button is recorded before
// the click is answered; the backend receives that choice once, signed
// and bound to the revision; every copy then says who answered what, the
// thread says it, and whoever presses a choice afterwards is told who
// answered first, with nothing more sent.
func TestQuestionChoiceIsAnsweredOnce(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ingestQuestion(t, "question.json", nil)
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-refund1", ch, 1)
	if got := strings.Join(answerButtons(card), "|"); got != "acct-1 (Ana Ruiz, personal)|acct-2 (Ruiz Trading Ltd)|Answer…" {
		t.Fatalf("the card offers %q", got)
	}
	second := choice(t, card, 0)

	h.click(t, "U0KEVIN", ch, choice(t, card, 1))
	if !h.committed(t, "q-refund1") {
		t.Fatal("the click was answered before the answer was recorded")
	}
	h.replaced(t, ch, card.TS, "Sending user:kevin's answer to the job")
	h.drain(t)

	got := h.backend.Answers()
	if len(got) != 1 {
		t.Fatalf("the backend got %d answers", len(got))
	}
	r := got[0].Request
	if !got[0].SignatureOK || got[0].Status != http.StatusOK || r.QuestionID != "q-refund1" || r.Revision != 1 ||
		r.Answer == nil || r.Answer.Choice == nil || *r.Answer.Choice != 1 || r.Answer.Text != "" || r.Actor != "user:kevin" ||
		r.Via.Surface != "slack" || r.Via.User != "U0KEVIN" || r.QuestionSHA256 != approval.QuestionDigest(a.Question) {
		t.Fatalf("the answer %+v", got[0])
	}
	h.answeredEverywhere(t, "q-refund1", "Answered by user:kevin", "acct-2 (Ruiz Trading Ltd)")
	if rs := h.threadReplies(ch, card.TS); len(rs) != 1 || !strings.Contains(rs[0].AllText(), "user:kevin answered: acct-2 (Ruiz Trading Ltd)") {
		t.Fatalf("thread replies %+v", rs)
	}
	h.told(t, "U0KEVIN", "Recorded: your answer reached the job.")

	// A second answer, from a card not yet edited: told who answered.
	h.click(t, "U0LEE", ch, second)
	h.told(t, "U0LEE", "This question was already answered by user:kevin; your answer was not sent.")
	h.drain(t)
	if n := len(h.backend.Answers()); n != 1 {
		t.Fatalf("the backend got %d answers after a second click, want the first alone", n)
	}
}

// TestQuestionAnsweredFirstElsewhere: the backend says another answered
// first; the person is told who, and every copy says it is answered.
func TestQuestionAnsweredFirstElsewhere(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingestQuestion(t, "question.json", nil)
	h.drain(t)
	card := h.card(t, "q-refund1", "C0APPROVALS", 1)
	zero := 0
	if _, err := h.backend.AnswerElsewhere("acme", "q-refund1", "user:ada", approval.Answer{Choice: &zero}, h.clock.Now()); err != nil {
		t.Fatal(err)
	}
	h.click(t, "U0KEVIN", "C0APPROVALS", choice(t, card, 1))
	h.drain(t)
	h.told(t, "U0KEVIN", "user:ada answered this question first; your answer was not sent.")
	h.answeredEverywhere(t, "q-refund1", "Answered by user:ada")
}

// TestQuestionMenuAnswers: a question of eight choices shows five as
// buttons and three in one menu; a pick from the menu answers with its
// choice, as a button would.
func TestQuestionMenuAnswers(t *testing.T) {
	h := newQuestionHarness(t)
	choices := []any{"acct-1", "acct-2", "acct-3", "acct-4", "acct-5", "acct-6", "acct-7", "acct-8"}
	h.ingestQuestion(t, "question.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["choices"] = choices
	})
	h.drain(t)
	card := h.card(t, "q-refund1", "C0APPROVALS", 1)
	opts := card.Options()
	if len(card.Buttons()) != 5+3 || len(opts) != 3 || opts[2].Text != "acct-8" || opts[0].ActionID != "ab1-choice" {
		t.Fatalf("buttons %+v, options %+v: want five choices, Answer…, I'm looking, Escalate now and a menu of three", card.Buttons(), opts)
	}
	h.pick(t, "U0KEVIN", "C0APPROVALS", opts[1].Value)
	if !h.committed(t, "q-refund1") {
		t.Fatal("the pick was answered before the answer was recorded")
	}
	h.drain(t)
	if got := h.backend.Answers(); len(got) != 1 || got[0].Status != http.StatusOK || *got[0].Request.Answer.Choice != 6 {
		t.Fatalf("the backend got %+v, want choice 6 (acct-7)", got)
	}
	h.answeredEverywhere(t, "q-refund1", "Answered by user:kevin", "acct-7")
}

// TestQuestionAnswerInWords: Answer… opens a dialog with the question
// and one field of 2,000 characters; its submission is recorded before
// the dialog closes, the backend receives the words exactly as written,
// and Slack sees them only redacted, on every copy and in the thread.
// Blank words keep the dialog open, saying why, and send nothing.
func TestQuestionAnswerInWords(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingestQuestion(t, "question.json", nil)
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-refund1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionAnswerText))
	threadstest.Eventually(t, "the answer dialog", func() bool { return len(h.slack.Views()) == 1 })
	v := h.slack.Views()[0]
	if v.CallbackID != "ab1-answer" || !strings.Contains(string(v.Raw), "Which one should I refund the 250 EUR to?") {
		t.Fatalf("view %+v %s", v, v.Raw)
	}
	in := modalInput(t, v)
	if in.Type != "input" || in.Optional || in.Element.MaxLength != approval.MaxAnswerText {
		t.Fatalf("answer input %+v", in)
	}
	if h.committed(t, "q-refund1") {
		t.Fatal("Answer… recorded something before the words")
	}

	status, body := h.submitModal(t, "U0KEVIN", v, in, " \n ")
	if status != http.StatusOK || !strings.Contains(body, `"response_action":"errors"`) || !strings.Contains(body, "The answer is empty") {
		t.Fatalf("blank words answered %d %q", status, body)
	}
	if h.committed(t, "q-refund1") {
		t.Fatal("blank words were recorded")
	}

	const words = "acct-2, and add a note: <!channel> *done* password=hunter2"
	if status, body := h.submitModal(t, "U0KEVIN", v, in, words); status != http.StatusOK || body != "" {
		t.Fatalf("submission answered %d %q (an empty 200 closes the modal)", status, body)
	}
	if !h.committed(t, "q-refund1") {
		t.Fatal("the dialog closed before the answer was recorded")
	}
	h.replaced(t, ch, card.TS, "Sending user:kevin's answer to the job")
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || got[0].Status != http.StatusOK || got[0].Request.Answer == nil || got[0].Request.Answer.Text != words ||
		got[0].Request.Answer.Choice != nil || got[0].Request.Revision != 1 {
		t.Fatalf("the backend got %+v, want the words as written", got)
	}
	const shown = "acct-2, and add a note: <!channel> *done* password=[redacted]"
	h.answeredEverywhere(t, "q-refund1", "Answered by user:kevin", shown)
	rs := h.threadReplies(ch, card.TS)
	if len(rs) != 1 || !strings.Contains(rs[0].AllText(), "user:kevin answered: "+shown) || strings.Contains(rs[0].Text, "<!channel>") {
		t.Fatalf("thread replies %+v: want the words redacted, literal, the notification escaped", rs)
	}
	for _, m := range h.slack.Messages() {
		if m.Blocks != nil {
			literalOnly(t, m.Method, m.Blocks, "<!channel>")
		}
	}
	for _, s := range h.everything() {
		if strings.Contains(s, "hunter2") {
			t.Fatalf("Slack received the secret: %s", s)
		}
	}
}

// TestQuestionStrangerIsRefused: someone who is no member of the tenant
// is refused a choice, a pick and Answer… alike: told why, no dialog,
// nothing recorded, nothing sent, the card as it was.
func TestQuestionStrangerIsRefused(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingestQuestion(t, "question.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["choices"] = []any{"a", "b", "c", "d", "e", "f"}
	})
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-refund1", ch, 1)
	h.click(t, "U0STRANGER", ch, choice(t, card, 0))
	h.pick(t, "U0STRANGER", ch, card.Options()[0].Value)
	h.click(t, "U0STRANGER", ch, button(t, card, templates.ActionAnswerText))
	threadstest.Eventually(t, "three refusals", func() bool {
		n := 0
		for _, m := range h.slack.Messages() {
			if m.User == "U0STRANGER" && strings.Contains(m.AllText(), "not a member of tenant acme") {
				n++
			}
		}
		return n == 3
	})
	if len(h.slack.Views()) != 0 {
		t.Fatal("a dialog opened for a stranger")
	}
	if h.committed(t, "q-refund1") {
		t.Fatal("a stranger's answer was recorded")
	}
	h.drain(t)
	if got := h.backend.Answers(); len(got) != 0 {
		t.Fatalf("the backend got %+v", got)
	}
	if r := h.replacements(ch, card.TS); len(r) != 0 {
		t.Fatalf("the card was replaced: %q", r[0].AllText())
	}
	if now := h.card(t, "q-refund1", ch, 1); len(answerButtons(now)) != 6+1 {
		t.Fatalf("the card lost its answers: %q", answerButtons(now))
	}
}

// TestRestrictedQuestionNeverReachesAChannel: a restricted question's
// card says nothing of it; Show question tells it (with its choices) to
// a content holder alone, and refuses a member without the permission
// before asking the backend; the holder answers from that private
// answer, and nothing Slack received outside it (cards, edits, thread
// replies, dialogs, answers to others) holds a word of the question or
// its choices.
func TestRestrictedQuestionNeverReachesAChannel(t *testing.T) {
	h := newQuestionHarness(t)
	a := h.ingestQuestion(t, "question-private.json", nil)
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-priv1", ch, 1)
	if b := answerButtons(card); len(b) != 0 {
		t.Fatalf("the restricted card offers %q", b)
	}

	h.click(t, "U0NOC", ch, button(t, card, templates.ActionShowDetails))
	h.told(t, "U0NOC", "This question is restricted")
	if n := len(h.backend.QuestionLookups()); n != 0 {
		t.Fatalf("%d look-ups for a member without the content permission", n)
	}

	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionShowDetails))
	shown := h.told(t, "U0KEVIN", "Should I tell Dr. Lee about the diagnosis")
	if got := strings.Join(answerButtons(shown), "|"); got != "Tell Dr. Lee now|Keep it for the meeting" {
		t.Fatalf("the private answer offers %q", got)
	}
	h.clickAnswer(t, "U0KEVIN", ch, choice(t, shown, 1))
	h.drain(t)
	if got := h.backend.Answers(); len(got) != 1 || got[0].Status != http.StatusOK || *got[0].Request.Answer.Choice != 1 ||
		got[0].Request.Revision != 1 {
		t.Fatalf("the backend got %+v", got)
	}
	h.answeredEverywhere(t, "q-priv1", "Answered by user:kevin")

	words := append([]string{"Dr. Lee", "diagnosis", "the meeting"}, a.Question.Choices...)
	for _, m := range h.slack.Messages() {
		private := m.User == "U0KEVIN" && (m.Method == "chat.postEphemeral" || m.Method == "response_url" && !m.ReplaceOriginal)
		if private {
			continue
		}
		for _, w := range words {
			if strings.Contains(m.AllText(), w) {
				t.Errorf("a %s message in %s says %q: %q", m.Method, m.Channel, w, m.AllText())
			}
		}
	}
	for _, v := range h.slack.Views() {
		raw, _ := json.Marshal(v)
		for _, w := range words {
			if strings.Contains(string(raw), w) {
				t.Errorf("a dialog says %q", w)
			}
		}
	}
	// The thread hears that the question closed, and nothing of it.
	if rs := h.threadReplies(ch, card.TS); len(rs) != 1 || !strings.Contains(rs[0].AllText(), "this question is restricted") {
		t.Fatalf("thread replies %+v", rs)
	}
}

// TestWalledMemberIsToldTheBackendRefused: the bot cannot know who is
// walled; the backend's 403 says so. The member is told the platform
// refused, every copy offers its answers again, and another member's
// answer is taken.
func TestWalledMemberIsToldTheBackendRefused(t *testing.T) {
	h := newQuestionHarness(t)
	h.backend.SetForbidden("user:lee")
	h.ingestQuestion(t, "question.json", nil)
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-refund1", ch, 1)
	h.click(t, "U0LEE", ch, choice(t, card, 0))
	h.drain(t)
	h.told(t, "U0LEE", "The platform refused your answer")
	if got := h.backend.Answers(); len(got) != 1 || got[0].Status != http.StatusForbidden {
		t.Fatalf("the backend got %+v", got)
	}
	if now := h.card(t, "q-refund1", ch, 1); len(answerButtons(now)) != 3 {
		t.Fatalf("after the refusal the card offers %q", answerButtons(now))
	}
	h.click(t, "U0KEVIN", ch, choice(t, card, 1))
	h.drain(t)
	h.answeredEverywhere(t, "q-refund1", "Answered by user:kevin", "acct-2 (Ruiz Trading Ltd)")
}

// TestTheDeadlineClosesAQuestionUnanswered: nobody answered by the
// deadline: the backend is told so (never an answer), every copy says
// nobody answered and offers nothing, and a later choice is refused with
// nothing more sent.
func TestTheDeadlineClosesAQuestionUnanswered(t *testing.T) {
	h := newHarnessWith(t, harnessOptions{questions: true, alone: true})
	h.ingestQuestion(t, "question.json", nil)
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-refund1", ch, 1)
	h.clock.Advance(time.Date(2026, 11, 30, 18, 0, 0, 1e6, time.UTC).Sub(h.clock.Now())) // question.json's deadline
	if r, err := h.svc.Tick(context.Background()); err != nil || r.Deadlines != 1 {
		t.Fatalf("the deadline's tick: %+v %v", r, err)
	}
	h.drain(t)
	got := h.backend.Answers()
	if len(got) != 1 || !got[0].Request.Unanswered || got[0].Request.Answer != nil || got[0].Request.Actor != threads.DeadlineActor {
		t.Fatalf("the backend got %+v, want the deadline's word that nobody answered", got)
	}
	h.answeredEverywhere(t, "q-refund1", "Nobody answered by the deadline")
	h.click(t, "U0KEVIN", ch, choice(t, card, 0))
	h.told(t, "U0KEVIN", "Nobody answered this question by its deadline")
	h.drain(t)
	if n := len(h.backend.Answers()); n != 1 {
		t.Fatalf("the backend got %d calls, want the deadline's alone", n)
	}
}

// TestHostileQuestionReachesSlackBoundedAndLiteral: a question whoever
// steers the agent crafted (a secret, mentions, mrkdwn, invisible
// characters, the longest text, hostile choices) is posted within
// Slack's bounds (the fake refuses a card beyond them), redacted, and
// only as literal text; its notification text is escaped.
func TestHostileQuestionReachesSlackBoundedAndLiteral(t *testing.T) {
	h := newQuestionHarness(t)
	head := "<!channel> *Approve now* <https://evil.example|console> password=hunter2 pay\u200bment\n"
	text := head + strings.Repeat("x", approval.MaxQuestionText-len([]rune(head)))
	choices := []any{"<!here> all", "*bold*", "token: abc123def456", "acct\u202e-1", "a", "b", "c", "<@U0ADA>"}
	h.ingestQuestion(t, "question.json", func(ev map[string]any) {
		q := ev["data"].(map[string]any)["question"].(map[string]any)
		q["text"], q["choices"] = text, choices
	})
	h.drain(t)
	card := h.card(t, "q-refund1", "C0APPROVALS", 1)
	for _, hostile := range []string{"<!channel>", "<!here>", "<@U0ADA>", "<https://evil.example|console>"} {
		if n := literalOnly(t, "the card", card.Blocks, hostile); n == 0 {
			t.Errorf("%q is not shown at all", hostile)
		}
	}
	if strings.ContainsAny(card.Text, "<>") {
		t.Errorf("the notification text %q is not escaped", card.Text)
	}
	for _, secret := range []string{"hunter2", "abc123def456", "\u200b", "\u202e"} {
		if strings.Contains(card.AllText(), secret) {
			t.Errorf("the card shows %q", secret)
		}
	}
	if len(card.Options()) != 3 || !strings.Contains(card.AllText(), "[U+200B]") {
		t.Errorf("options %+v; the invisible character marked: %v", card.Options(), strings.Contains(card.AllText(), "[U+200B]"))
	}
}

// TestImLookingHoldsAQuestion: I'm looking on a question's card is
// recorded as on a call's: the card says who looks, and still offers
// every answer; nothing goes to the backend.
func TestImLookingHoldsAQuestion(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingestQuestion(t, "question.json", nil)
	h.drain(t)
	const ch = "C0APPROVALS"
	card := h.card(t, "q-refund1", ch, 1)
	h.click(t, "U0KEVIN", ch, button(t, card, templates.ActionLook))
	now := h.replaced(t, ch, card.TS, "user:kevin is looking since")
	if got := strings.Join(answerButtons(now), "|"); got != "acct-1 (Ana Ruiz, personal)|acct-2 (Ruiz Trading Ltd)|Answer…" {
		t.Fatalf("after I'm looking the card offers %q", got)
	}
	h.drain(t)
	if n := len(h.backend.Answers()); n != 0 {
		t.Fatalf("the backend got %d answers", n)
	}
}

// TestShowQuestionIsLiteral: a hostile restricted question, looked up for
// its content holder, is told to them redacted and as literal text only.
func TestShowQuestionIsLiteral(t *testing.T) {
	h := newQuestionHarness(t)
	h.ingestQuestion(t, "question-private.json", func(ev map[string]any) {
		q := ev["data"].(map[string]any)["question"].(map[string]any)
		q["text"] = "<!channel> tell *everyone*? password=hunter2"
		q["choices"] = []any{"<!here> yes", "no", "a", "b", "c", "d"}
	})
	h.drain(t)
	card := h.card(t, "q-priv1", "C0APPROVALS", 1)
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionShowDetails))
	shown := h.told(t, "U0KEVIN", "tell *everyone*?")
	for _, hostile := range []string{"<!channel>", "<!here>"} {
		if n := literalOnly(t, "the private answer", shown.Blocks, hostile); n == 0 {
			t.Errorf("%q is not shown", hostile)
		}
	}
	if strings.Contains(shown.AllText(), "hunter2") || len(shown.Options()) != 1 {
		t.Fatalf("the private answer %q, options %+v", shown.AllText(), shown.Options())
	}
}

// TestShowQuestionShowsALongQuestionWhole: a restricted question as long
// as the protocol takes, looked up for its content holder, is told to
// them whole (in as many quotes as Slack's bounds need, which the fake
// enforces): its end, beyond the card's bound, is there.
func TestShowQuestionShowsALongQuestionWhole(t *testing.T) {
	h := newQuestionHarness(t)
	const tail = "Tell Dr. Lee only after the second test."
	long := strings.Repeat("The first test was unclear. ", (approval.MaxQuestionText-len(tail))/28) + tail
	h.ingestQuestion(t, "question-private.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["question"].(map[string]any)["text"] = long
	})
	h.drain(t)
	card := h.card(t, "q-priv1", "C0APPROVALS", 1)
	h.click(t, "U0KEVIN", "C0APPROVALS", button(t, card, templates.ActionShowDetails))
	shown := h.told(t, "U0KEVIN", tail)
	// The quotes split the text where Slack's bounds fall: read across
	// them, it is the whole question.
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	if !strings.Contains(squeeze(shown.AllText()), squeeze(long)) {
		t.Errorf("the private answer does not show the whole question:\n%s", shown.AllText())
	}
}
