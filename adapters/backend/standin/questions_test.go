package standin_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
)

const questionID = "q-refund1"

var refundQuestion = approval.Question{Text: "Which account should I refund the 250 EUR to?",
	Choices: []string{"acct-1 (Ana Ruiz, personal)", "acct-2 (Ruiz Trading Ltd)"}, FreeText: true}

// setupQuestion is a fake holding refundQuestion at revision 1.
func setupQuestion(t *testing.T, restricted bool) (*backendtest.Fake, *syncWriter) {
	t.Helper()
	out := &syncWriter{}
	f := backendtest.New(t, standin.Options{Secrets: [][]byte{secret}, Now: func() time.Time { return start }, Out: out})
	f.AddQuestion(questionID, 1, refundQuestion, restricted)
	return f, out
}

// answered is a 200's or an error's body.
type answered struct {
	Status, Message, Error, Actor string
	QuestionID                    string `json:"question_id"`
	Revision                      int
	Question                      *approval.Question
}

// send posts body, signed at start with secret, to path under key.
func send(t *testing.T, f *backendtest.Fake, path, key string, body any) (int, answered) {
	t.Helper()
	raw, ok := body.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, err := http.NewRequest(http.MethodPost, f.URL()+path, bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	req.Header.Set(backend.SignatureHeader, backend.Sign(secret, start, raw))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var a answered
	if err := json.Unmarshal(b, &a); err != nil {
		t.Fatalf("answer %d %s: %v", resp.StatusCode, b, err)
	}
	return resp.StatusCode, a
}

func choice(i int) *approval.Answer { return &approval.Answer{Choice: &i} }

func answerBody(rev int, ans *approval.Answer, actor string) standin.AnswerRequest {
	return standin.AnswerRequest{QuestionID: questionID, Revision: rev, Answer: ans, Actor: actor,
		Via: standin.Via{Surface: "slack", User: "U0" + strings.ToUpper(strings.TrimPrefix(actor, "user:"))}}
}

const answerPath = "/v1/questions/" + questionID + "/answer"

// TestQuestionAnswers: one answer wins, bound to the current revision;
// the second is told who answered first; the same key replays the first
// answer; every refusal the protocol lists.
func TestQuestionAnswers(t *testing.T) {
	t.Parallel()
	f, out := setupQuestion(t, false)
	f.AddQuestion(questionID, 2, refundQuestion, false) // asked again

	for _, tt := range []struct {
		name   string
		body   any
		status int
		code   string
	}{
		{"stale revision", answerBody(1, choice(1), "user:kevin"), http.StatusConflict, "stale_revision"},
		{"a revision not asked", answerBody(3, choice(1), "user:kevin"), http.StatusUnprocessableEntity, "invalid"},
		{"a choice out of range", answerBody(2, choice(2), "user:kevin"), http.StatusUnprocessableEntity, "invalid"},
		{"a negative choice", answerBody(2, choice(-1), "user:kevin"), http.StatusUnprocessableEntity, "invalid"},
		{"words too long", answerBody(2, &approval.Answer{Text: strings.Repeat("é", approval.MaxAnswerText+1)}, "user:kevin"),
			http.StatusUnprocessableEntity, "invalid"},
		{"blank words", answerBody(2, &approval.Answer{Text: " \n"}, "user:kevin"), http.StatusUnprocessableEntity, "invalid"},
		{"a choice and words", answerBody(2, &approval.Answer{Choice: choice(0).Choice, Text: "x"}, "user:kevin"),
			http.StatusUnprocessableEntity, "invalid"},
		{"no answer", answerBody(2, nil, "user:kevin"), http.StatusUnprocessableEntity, "invalid"},
		{"a person says unanswered", standin.AnswerRequest{QuestionID: questionID, Revision: 2, Unanswered: true, Actor: "user:kevin",
			Via: standin.Via{Surface: "slack"}}, http.StatusForbidden, "forbidden"},
		{"the deadline answers", answerBody(2, choice(0), "system:deadline"), http.StatusForbidden, "forbidden"},
		{"another question's id", standin.AnswerRequest{QuestionID: "q-other", Revision: 2, Answer: choice(0), Actor: "user:kevin",
			Via: standin.Via{Surface: "slack"}}, http.StatusUnprocessableEntity, "invalid"},
		{"an unknown field", []byte(`{"question_id":"q-refund1","revision":2,"answer":{"choice":0},"actor":"user:kevin","via":{"surface":"slack"},"decision":"approve"}`),
			http.StatusUnprocessableEntity, "invalid"},
	} {
		if status, a := send(t, f, answerPath, "k-"+tt.name, tt.body); status != tt.status || a.Error != tt.code {
			t.Errorf("%s: %d %+v, want %d %s", tt.name, status, a, tt.status, tt.code)
		}
	}
	if st, _, _ := f.QuestionStatus(questionID); st != standin.QuestionPending {
		t.Fatalf("refusals changed the question: %s", st)
	}

	status, a := send(t, f, answerPath, "k-kevin", answerBody(2, choice(1), "user:kevin"))
	if status != http.StatusOK || a.Status != standin.QuestionAnswered {
		t.Fatalf("answer: %d %+v", status, a)
	}
	// The same intent again: the first answer, not a conflict.
	if status, again := send(t, f, answerPath, "k-kevin", answerBody(2, choice(1), "user:kevin")); status != http.StatusOK || again != a {
		t.Errorf("replay: %d %+v, want %+v", status, again, a)
	}
	if status, e := send(t, f, answerPath, "k-kevin", answerBody(2, choice(0), "user:kevin")); status != http.StatusUnprocessableEntity ||
		e.Error != "idempotency_key_reused" {
		t.Errorf("another body under the key: %d %+v", status, e)
	}
	status, second := send(t, f, answerPath, "k-ada", answerBody(2, &approval.Answer{Text: "acct-1"}, "user:ada"))
	if status != http.StatusConflict || second.Error != "already_answered" || second.Actor != "user:kevin" {
		t.Errorf("second answer: %d %+v, want 409 already_answered naming user:kevin", status, second)
	}
	st, actor, ans := f.QuestionStatus(questionID)
	if st != standin.QuestionAnswered || actor != "user:kevin" || ans == nil || ans.Choice == nil || *ans.Choice != 1 {
		t.Errorf("recorded %s by %s: %+v", st, actor, ans)
	}
	recs := f.Answers()
	var ok, replays int
	for _, r := range recs {
		if !r.SignatureOK {
			t.Errorf("%s: signature not checked ok", r.IdempotencyKey)
		}
		if r.Status == http.StatusOK {
			ok++
		}
		if r.Replay {
			replays++
		}
	}
	if ok != 2 || replays != 1 {
		t.Errorf("%d answers 200 (%d replays), want the answer and its replay", ok, replays)
	}
	if want := `answered q-refund1 revision 2 by user:kevin via slack (U0KEVIN): choice 2 "acct-2 (Ruiz Trading Ltd)"`; !strings.Contains(out.String(), want+"\n") {
		t.Errorf("printed:\n%s\nwant a line %q", out, want)
	}
	if strings.Count(out.String(), "answered q-refund1") != 1 {
		t.Errorf("printed the answer more than once:\n%s", out)
	}
}

// TestQuestionWordsAsWritten: the words reach the backend as written; the
// stand-in's line shows them redacted, escaped and bounded.
func TestQuestionWordsAsWritten(t *testing.T) {
	t.Parallel()
	f, out := setupQuestion(t, false)
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
	words := "acct-2 \u202e@everyone <!channel> GITHUB_TOKEN=" + token + " \x1b[2J " + strings.Repeat("x", 500)
	status, a := send(t, f, answerPath, "k-1", answerBody(1, &approval.Answer{Text: words}, "user:kevin"))
	if status != http.StatusOK || a.Status != standin.QuestionAnswered {
		t.Fatalf("answer: %d %+v", status, a)
	}
	if _, _, ans := f.QuestionStatus(questionID); ans == nil || ans.Text != words {
		t.Errorf("recorded %+v, want the words as written", ans)
	}
	line := out.String()
	for _, bad := range []string{token, "\u202e", "\x1b", strings.Repeat("x", 300)} {
		if strings.Contains(line, bad) {
			t.Errorf("printed %q with %q in it", line, bad)
		}
	}
	if !strings.Contains(line, `\u202e@everyone`) || !strings.Contains(line, "…") {
		t.Errorf("printed %q, want the words escaped and cut", line)
	}
}

// TestQuestionDeadline: the deadline's "nobody answered" is recorded as
// such, and a person's later answer is told so.
func TestQuestionDeadline(t *testing.T) {
	t.Parallel()
	f, out := setupQuestion(t, false)
	deadline := standin.AnswerRequest{QuestionID: questionID, Revision: 1, Unanswered: true, Actor: "system:deadline",
		Via: standin.Via{Surface: "deadline"}, Comment: "nobody answered"}
	status, a := send(t, f, answerPath, "k-deadline", deadline)
	if status != http.StatusOK || a.Status != standin.QuestionUnanswered {
		t.Fatalf("deadline: %d %+v", status, a)
	}
	if st, actor, ans := f.QuestionStatus(questionID); st != standin.QuestionUnanswered || actor != "system:deadline" || ans != nil {
		t.Errorf("recorded %s by %s with %+v, want unanswered and no answer", st, actor, ans)
	}
	status, late := send(t, f, answerPath, "k-late", answerBody(1, choice(0), "user:kevin"))
	if status != http.StatusConflict || late.Error != "already_answered" || late.Actor != "system:deadline" {
		t.Errorf("late answer: %d %+v", status, late)
	}
	if !strings.Contains(out.String(), `unanswered q-refund1 revision 1 by system:deadline via deadline: "nobody answered"`) {
		t.Errorf("printed:\n%s", out)
	}
}

// TestQuestionRestricted: a restricted question is answered and looked up
// only by content holders; a walled or forbidden person gets 403.
func TestQuestionRestricted(t *testing.T) {
	t.Parallel()
	f, out := setupQuestion(t, true)
	f.SetNoContent("user:walled")
	f.SetForbidden("user:stranger")
	lookup := func(actor string) (int, answered) {
		return send(t, f, "/v1/questions/"+questionID+"/question", "k-look-"+actor,
			standin.QuestionLookupRequest{QuestionID: questionID, Revision: 1, Actor: actor})
	}
	for _, actor := range []string{"user:walled", "user:stranger"} {
		if status, e := lookup(actor); status != http.StatusForbidden || e.Error != "forbidden" {
			t.Errorf("look-up by %s: %d %+v", actor, status, e)
		}
		if status, e := send(t, f, answerPath, "k-"+actor, answerBody(1, choice(0), actor)); status != http.StatusForbidden || e.Actor != actor {
			t.Errorf("answer by %s: %d %+v", actor, status, e)
		}
	}
	status, a := lookup("user:kevin")
	if status != http.StatusOK || a.QuestionID != questionID || a.Revision != 1 || a.Question == nil ||
		a.Question.Text != refundQuestion.Text || len(a.Question.Choices) != 2 || !a.Question.FreeText {
		t.Fatalf("look-up by a content holder: %d %+v", status, a)
	}
	if status, a := send(t, f, answerPath, "k-kevin", answerBody(1, choice(0), "user:kevin")); status != http.StatusOK {
		t.Errorf("answer by a content holder: %d %+v", status, a)
	}
	f.AddQuestion(questionID, 2, refundQuestion, true) // asked again
	if status, e := lookup("user:kevin"); status != http.StatusConflict || e.Error != "stale_revision" {
		t.Errorf("look-up of the earlier revision: %d %+v", status, e)
	}
	if !strings.Contains(out.String(), "question q-refund1 revision 1 shown to user:kevin\n") {
		t.Errorf("printed:\n%s", out)
	}
	if n := len(f.QuestionLookups()); n != 4 {
		t.Errorf("%d look-ups recorded, want 4", n)
	}
}

// TestQuestionCancelledAndUnknown: a cancelled question is gone, an
// unknown one not found, and a bad signature refused before anything.
func TestQuestionCancelledAndUnknown(t *testing.T) {
	t.Parallel()
	f, _ := setupQuestion(t, false)
	body, err := f.CancelQuestion("acme", questionID, "the job was stopped", start)
	if err != nil {
		t.Fatal(err)
	}
	if ev, err := approval.Parse(body); err != nil || ev.Type != approval.EventQuestionCancelled || ev.ApprovalID() != questionID {
		t.Fatalf("cancel event %s: %+v %v", body, ev, err)
	}
	if status, e := send(t, f, answerPath, "k-1", answerBody(1, choice(0), "user:kevin")); status != http.StatusGone || e.Error != "cancelled" {
		t.Errorf("answer to a cancelled question: %d %+v", status, e)
	}
	if status, e := send(t, f, "/v1/questions/q-none/answer", "k-2", standin.AnswerRequest{QuestionID: "q-none", Revision: 1,
		Answer: choice(0), Actor: "user:kevin", Via: standin.Via{Surface: "slack"}}); status != http.StatusNotFound || e.Error != "not_found" {
		t.Errorf("answer to an unknown question: %d %+v", status, e)
	}
	raw, _ := json.Marshal(answerBody(1, choice(0), "user:kevin"))
	req, _ := http.NewRequest(http.MethodPost, f.URL()+answerPath, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", "k-3")
	req.Header.Set(backend.SignatureHeader, backend.Sign([]byte("another-secret-0123456789abcdef"), start, raw))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("another secret: %d, want 401", resp.StatusCode)
	}
}

// TestQuestionEvents: the events the stand-in sends are the protocol's,
// as the bot parses them.
func TestQuestionEvents(t *testing.T) {
	t.Parallel()
	f, _ := setupQuestion(t, false)
	deadline := start.Add(24 * time.Hour)
	asked, err := standin.QuestionAskedEvent("acme", approval.QuestionAskedData{ID: "q-2", Revision: 1, Tenant: "acme",
		Job: approval.Job{ID: "j-42", Agent: "refund-bot"}, Question: &refundQuestion, RequestedAt: start, Deadline: &deadline}, start)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(asked)
	if err != nil || ev.Type != approval.EventQuestionAsked || ev.Approval.Question.Text != refundQuestion.Text || !ev.Approval.Deadline.Equal(deadline) {
		t.Fatalf("question.asked %s: %+v %v", asked, ev, err)
	}
	if _, err := standin.QuestionAskedEvent("acme", approval.QuestionAskedData{ID: "q-3", Revision: 1, Tenant: "acme",
		Job: approval.Job{ID: "j-42"}, Question: &approval.Question{Text: "Which?"}, RequestedAt: start}, start); err == nil {
		t.Error("a question without choices or words was made into an event")
	}
	body, err := f.AnswerElsewhere("acme", questionID, "user:ada", approval.Answer{Text: "acct-2"}, start)
	if err != nil {
		t.Fatal(err)
	}
	ev, err = approval.Parse(body)
	if err != nil || ev.Type != approval.EventQuestionAnswered || ev.Resolved.Actor != "user:ada" || ev.Resolved.Answer.Text != "acct-2" {
		t.Fatalf("question.answered %s: %+v %v", body, ev, err)
	}
	if status, e := send(t, f, answerPath, "k-1", answerBody(1, choice(0), "user:kevin")); status != http.StatusConflict || e.Actor != "user:ada" {
		t.Errorf("answer after one elsewhere: %d %+v", status, e)
	}
	if _, err := f.AnswerElsewhere("acme", questionID, "user:kevin", approval.Answer{Text: "again"}, start); err == nil {
		t.Error("answered twice elsewhere")
	}
}

// TestQuestionsPath: bot question tells the stand-in its question before
// it asks the bot; a question the bot would refuse is refused here too.
func TestQuestionsPath(t *testing.T) {
	t.Parallel()
	f, _ := setupQuestion(t, false)
	post := func(d approval.QuestionAskedData) int {
		raw, _ := json.Marshal(d)
		resp, err := http.Post(f.URL()+standin.QuestionsPath, "application/json", bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	q := approval.Question{Text: "Ship it?", Choices: []string{"yes", "no"}}
	d := approval.QuestionAskedData{ID: "q-new", Revision: 1, Tenant: "acme", Job: approval.Job{ID: "j-1"}, Question: &q, RequestedAt: start}
	if s := post(d); s != http.StatusOK {
		t.Fatalf("ask: %d", s)
	}
	if st, _, _ := f.QuestionStatus("q-new"); st != standin.QuestionPending {
		t.Errorf("q-new is %s", st)
	}
	if s, e := send(t, f, "/v1/questions/q-new/answer", "k-1", standin.AnswerRequest{QuestionID: "q-new", Revision: 1,
		Answer: &approval.Answer{Text: "maybe"}, Actor: "user:kevin", Via: standin.Via{Surface: "slack"}}); s != http.StatusUnprocessableEntity {
		t.Errorf("words to a question of choices only: %d %+v", s, e)
	}
	d.ID, d.Question = "q-bad", &approval.Question{Text: "Ship it?", Choices: []string{"yes", "yes"}}
	if s := post(d); s != http.StatusUnprocessableEntity {
		t.Errorf("a choice twice: %d", s)
	}
}

// TestQuestionBoundToItsDigest: an answer that carries question_sha256 is
// taken only for the question asked, and only from a content holder.
func TestQuestionBoundToItsDigest(t *testing.T) {
	t.Parallel()
	f, _ := setupQuestion(t, false)
	f.SetNoContent("user:lee")
	bound := func(actor, digest string) standin.AnswerRequest {
		r := answerBody(1, choice(0), actor)
		r.QuestionSHA256 = digest
		return r
	}
	other := approval.QuestionDigest(&approval.Question{Text: "Another question?", FreeText: true})
	if status, e := send(t, f, answerPath, "k-other", bound("user:kevin", other)); status != http.StatusUnprocessableEntity || e.Error != "digest_mismatch" {
		t.Errorf("another question's digest: %d %+v", status, e)
	}
	right := approval.QuestionDigest(&refundQuestion)
	if status, e := send(t, f, answerPath, "k-lee", bound("user:lee", right)); status != http.StatusForbidden || e.Actor != "user:lee" {
		t.Errorf("a digest from a member without the content permission: %d %+v", status, e)
	}
	if status, a := send(t, f, answerPath, "k-kevin", bound("user:kevin", right)); status != http.StatusOK || a.Status != standin.QuestionAnswered {
		t.Errorf("the question's digest: %d %+v", status, a)
	}
	if _, _, ans := f.QuestionStatus(questionID); ans == nil || ans.Choice == nil || *ans.Choice != 0 {
		t.Errorf("recorded %+v", ans)
	}
}

// FuzzQuestionAnswer: whatever body a signed answer carries, the stand-in
// answers in the protocol's shape, never panics, and takes at most one
// answer per question; a second body under another key is never a 200.
func FuzzQuestionAnswer(f *testing.F) {
	for _, body := range []string{
		`{"question_id":"q-refund1","revision":1,"answer":{"choice":1},"actor":"user:kevin","via":{"surface":"slack"}}`,
		`{"question_id":"q-refund1","revision":1,"answer":{"text":"acct-2 \u202e @everyone"},"actor":"user:kevin","via":{"surface":"discord"}}`,
		`{"question_id":"q-refund1","revision":1,"unanswered":true,"actor":"system:deadline","via":{"surface":"deadline"},"comment":"nobody answered"}`,
		`{"question_id":"q-refund1","revision":1,"answer":{"choice":1,"text":"x"},"actor":"user:kevin","via":{"surface":"slack"}}`,
		`{"question_id":"q-refund1","revision":1,"answer":{"choice":99},"actor":"user:kevin","via":{"surface":"slack"}}`,
		`{"question_id":"q-refund1","revision":1,"unanswered":false,"answer":{"choice":0},"actor":"user:kevin","via":{"surface":"slack"}}`,
		`{"question_id":"q-refund1","Revision":1,"revision":1,"answer":{"choice":0},"actor":"user:kevin","via":{"surface":"slack"}}`,
		`[]`, `{}`, ``,
	} {
		f.Add([]byte(body), []byte(`{"question_id":"q-refund1","revision":1,"answer":{"choice":0},"actor":"user:ada","via":{"surface":"slack"}}`))
	}
	f.Fuzz(func(t *testing.T, first, second []byte) {
		b, err := standin.New(standin.Options{Secrets: [][]byte{secret}, Now: func() time.Time { return start }})
		if err != nil {
			t.Fatal(err)
		}
		b.AddQuestion(questionID, 1, refundQuestion, false)
		oks := 0
		for i, body := range [][]byte{first, second} {
			req := httptest.NewRequest(http.MethodPost, answerPath, bytes.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Idempotency-Key", fmt.Sprintf("k-%d", i))
			req.Header.Set(backend.SignatureHeader, backend.Sign(secret, start, body))
			rr := httptest.NewRecorder()
			b.ServeHTTP(rr, req)
			var a struct{ Status, Error, Message string }
			if err := json.Unmarshal(rr.Body.Bytes(), &a); err != nil {
				t.Fatalf("answer %d is not JSON: %q", rr.Code, rr.Body.Bytes())
			}
			switch {
			case rr.Code == http.StatusOK:
				oks++
				if a.Status != standin.QuestionAnswered && a.Status != standin.QuestionUnanswered {
					t.Fatalf("200 with status %q", a.Status)
				}
			case a.Error == "" || a.Message == "":
				t.Fatalf("answer %d without the error shape: %q", rr.Code, rr.Body.Bytes())
			}
		}
		if oks > 1 {
			t.Fatalf("two answers taken: %q then %q", first, second)
		}
	})
}
