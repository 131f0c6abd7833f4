package approval_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
)

// choicesOf is n distinct choices, each of length runes (n < 100).
func choicesOf(n, length int) []any {
	out := make([]any, n)
	for i := range out {
		c := fmt.Sprintf("%02d", i)
		out[i] = c + strings.Repeat("é", length-len(c))
	}
	return out
}

// TestParseQuestionAccepts: the edges docs/protocol.md#questions allows
// are taken, and read as sent.
func TestParseQuestionAccepts(t *testing.T) {
	t.Parallel()
	type mut = func(t testing.TB, m map[string]any)
	question := func(t testing.TB, m map[string]any) map[string]any { return obj(t, m, "data", "question") }
	tests := []struct {
		name  string
		file  string
		f     mut
		check func(t testing.TB, ev *approval.Event)
	}{
		{"text of 4000 characters", "question.json", func(t testing.TB, m map[string]any) {
			question(t, m)["text"] = strings.Repeat("é", approval.MaxQuestionText)
		}, func(t testing.TB, ev *approval.Event) {
			if got := len([]rune(ev.Approval.Question.Text)); got != approval.MaxQuestionText {
				t.Errorf("text of %d characters", got)
			}
		}},
		{"25 choices of 75 characters", "question.json", func(t testing.TB, m map[string]any) {
			question(t, m)["choices"] = choicesOf(approval.MaxChoices, approval.MaxChoiceLen)
		}, func(t testing.TB, ev *approval.Event) {
			if got := ev.Approval.Question.Choices; len(got) != approval.MaxChoices || got[24] != choicesOf(25, 75)[24] {
				t.Errorf("choices %q", got)
			}
		}},
		{"words only", "question.json", func(t testing.TB, m map[string]any) {
			delete(question(t, m), "choices")
			question(t, m)["free_text"] = true
		}, func(t testing.TB, ev *approval.Event) {
			if q := ev.Approval.Question; len(q.Choices) != 0 || !q.FreeText {
				t.Errorf("question %+v", q)
			}
		}},
		{"choices only, free_text absent", "question.json", func(t testing.TB, m map[string]any) {
			delete(question(t, m), "free_text")
		}, func(t testing.TB, ev *approval.Event) {
			if ev.Approval.Question.FreeText {
				t.Error("free_text true when absent")
			}
		}},
		{"choices that differ only in case", "question.json", func(t testing.TB, m map[string]any) {
			question(t, m)["choices"] = []any{"Yes", "yes"}
		}, nil},
		{"no deadline, ladder or console_url", "question.json", func(t testing.TB, m map[string]any) {
			d := obj(t, m, "data")
			delete(d, "deadline")
			delete(d, "ladder")
			delete(d, "console_url")
		}, func(t testing.TB, ev *approval.Event) {
			if a := ev.Approval; a.Deadline != nil || a.Ladder != "" || a.ConsoleURL != "" {
				t.Errorf("deadline %v ladder %q console_url %q, want none", a.Deadline, a.Ladder, a.ConsoleURL)
			}
		}},
		{"asked again at revision 2", "question.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["revision"] = 2
		}, func(t testing.TB, ev *approval.Event) {
			if ev.Approval.Revision != 2 || ev.Type != approval.EventQuestionAsked {
				t.Errorf("%s revision %d", ev.Type, ev.Approval.Revision)
			}
		}},
		{"answered with choice 0", "question-answered.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["answer"] = map[string]any{"choice": 0}
		}, func(t testing.TB, ev *approval.Event) {
			if a := ev.Resolved.Answer; a.Choice == nil || *a.Choice != 0 || a.Text != "" {
				t.Errorf("answer %+v, want choice 0", a)
			}
		}},
		{"answered with choice 24", "question-answered.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["answer"] = map[string]any{"choice": approval.MaxChoices - 1}
		}, nil},
		{"answered without via or message", "question-answered.json", func(t testing.TB, m map[string]any) {
			delete(obj(t, m, "data"), "via")
			delete(obj(t, m, "data"), "message")
		}, func(t testing.TB, ev *approval.Event) {
			if r := ev.Resolved; r.Via != "" || r.Message != "" || r.Status != approval.StateAnswered {
				t.Errorf("resolved %+v", r)
			}
		}},
		// Words answered in the console may be longer than chat allows.
		{"answered elsewhere in more than 2000 characters", "question-answered.json", func(t testing.TB, m map[string]any) {
			obj(t, m, "data")["answer"] = map[string]any{"text": strings.Repeat("a", approval.MaxAnswerText+1)}
		}, nil},
		{"cancelled without a reason", "question-cancelled.json", func(t testing.TB, m map[string]any) {
			delete(obj(t, m, "data"), "reason")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := approval.Parse(mutate(t, tt.file, func(m map[string]any) { tt.f(t, m) }))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if tt.check != nil {
				tt.check(t, ev)
			}
		})
	}
}

// TestParseQuestionRejects: every rule of docs/protocol.md#questions
// refuses with 422 at the field's path.
func TestParseQuestionRejects(t *testing.T) {
	t.Parallel()
	type mut = func(t testing.TB, m map[string]any)
	data := func(t testing.TB, m map[string]any) map[string]any { return obj(t, m, "data") }
	question := func(t testing.TB, m map[string]any) map[string]any { return obj(t, m, "data", "question") }
	setQ := func(key string, v any) mut { return func(t testing.TB, m map[string]any) { question(t, m)[key] = v } }
	setD := func(key string, v any) mut { return func(t testing.TB, m map[string]any) { data(t, m)[key] = v } }
	delD := func(key string) mut { return func(t testing.TB, m map[string]any) { delete(data(t, m), key) } }
	answer := func(v map[string]any) mut { return setD("answer", v) }
	const msgChoiceRange = "want an integer from 0 to 24"
	tests := []struct {
		name     string
		file     string
		f        mut
		problems []*approval.FieldError
	}{
		// question.asked
		{"question missing", "question.json", delD("question"), []*approval.FieldError{fe("data.question", "required")}},
		{"question null", "question.json", setD("question", nil), []*approval.FieldError{fe("data.question", "required")}},
		{"text missing", "question.json", func(t testing.TB, m map[string]any) { delete(question(t, m), "text") },
			[]*approval.FieldError{fe("data.question.text", "required")}},
		{"text blank", "question.json", setQ("text", " \n\t"), []*approval.FieldError{fe("data.question.text", "required")}},
		{"text of 4001 characters", "question.json", setQ("text", strings.Repeat("é", approval.MaxQuestionText+1)),
			[]*approval.FieldError{fe("data.question.text", "longer than 4000 characters")}},
		{"26 choices", "question.json", setQ("choices", choicesOf(approval.MaxChoices+1, 5)),
			[]*approval.FieldError{fe("data.question.choices", "more than 25 choices")}},
		{"a choice of 76 characters", "question.json", setQ("choices", []any{"yes", strings.Repeat("é", approval.MaxChoiceLen+1)}),
			[]*approval.FieldError{fe("data.question.choices[1]", "longer than 75 characters")}},
		{"a choice on two lines", "question.json", setQ("choices", []any{"yes\nor no", "no"}),
			[]*approval.FieldError{fe("data.question.choices[0]", "want one line")}},
		{"a choice with a carriage return", "question.json", setQ("choices", []any{"yes", "no\r"}),
			[]*approval.FieldError{fe("data.question.choices[1]", "want one line")}},
		{"a choice twice", "question.json", setQ("choices", []any{"acct-1", "acct-2", "acct-1"}),
			[]*approval.FieldError{fe("data.question.choices[2]", "a choice twice")}},
		// Choices a person could not tell apart on their buttons.
		{"two choices alike once their secrets are redacted", "question.json",
			setQ("choices", []any{"use token ghp_" + strings.Repeat("a", 36), "use token ghp_" + strings.Repeat("b", 36)}),
			[]*approval.FieldError{fe("data.question.choices[1]", "reads as choices[0] once shown (secret shapes redacted, spaces folded, cut at 75 characters): a person could not tell which they answer")}},
		{"two choices alike once their spaces are folded", "question.json", setQ("choices", []any{"acct 1", "acct-2", "acct\t 1 "}),
			[]*approval.FieldError{fe("data.question.choices[2]", "reads as choices[0] once shown (secret shapes redacted, spaces folded, cut at 75 characters): a person could not tell which they answer")}},
		{"a blank choice", "question.json", setQ("choices", []any{"yes", "  "}),
			[]*approval.FieldError{fe("data.question.choices[1]", "required")}},
		{"a choice a number", "question.json", setQ("choices", []any{"yes", 2}),
			[]*approval.FieldError{fe("data.question.choices[1]", "want a string")}},
		{"choices a string", "question.json", setQ("choices", "yes"),
			[]*approval.FieldError{fe("data.question.choices", "want a list")}},
		{"no choices without free_text", "question.json", func(t testing.TB, m map[string]any) {
			delete(question(t, m), "choices")
			question(t, m)["free_text"] = false
		}, []*approval.FieldError{fe("data.question.free_text", "a question without choices must take free text")}},
		{"empty choices without free_text", "question.json", func(t testing.TB, m map[string]any) {
			question(t, m)["choices"] = []any{}
			delete(question(t, m), "free_text")
		}, []*approval.FieldError{fe("data.question.free_text", "a question without choices must take free text")}},
		{"free_text a string", "question.json", setQ("free_text", "yes"),
			[]*approval.FieldError{fe("data.question.free_text", "want true or false")}},
		{"content missing", "question.json", delD("content"),
			[]*approval.FieldError{fe("data.content.restricted", "required (true or false)")}},
		{"question id with a space", "question.json", setD("id", "q 1"), []*approval.FieldError{fe("data.id", msgID)}},
		{"revision 0", "question.json", setD("revision", 0), []*approval.FieldError{fe("data.revision", "want an integer ≥ 1")}},
		{"job id missing", "question.json", func(t testing.TB, m map[string]any) { delete(obj(t, m, "data", "job"), "id") },
			[]*approval.FieldError{fe("data.job.id", "required")}},
		{"tenant not the envelope's", "question.json", setD("tenant", "beta"),
			[]*approval.FieldError{fe("data.tenant", `"beta" is not the envelope's tenant "acme"`)}},
		{"deadline before requested_at", "question.json", setD("deadline", "2026-11-29T17:00:00Z"),
			[]*approval.FieldError{fe("data.deadline", "want a time after requested_at")}},
		{"console_url javascript:", "question.json", setD("console_url", "javascript:alert(1)"),
			[]*approval.FieldError{fe("data.console_url", msgURL)}},
		{"ladder with a space", "question.json", setD("ladder", "a b"), []*approval.FieldError{fe("data.ladder", msgID)}},
		// A question is no call: an approval's fields are unknown on it.
		{"a call on a question", "question.json", setD("call", map[string]any{"function": "x"}),
			[]*approval.FieldError{fe("data.call", "unknown field")}},
		{"a kind on a question", "question.json", setD("kind", "question"),
			[]*approval.FieldError{fe("data.kind", "unknown field")}},
		{"a question's answer on its request", "question.json", setD("answer", map[string]any{"choice": 0}),
			[]*approval.FieldError{fe("data.answer", "unknown field")}},
		{"an unknown key in the question", "question.json", setQ("hint", "pick acct-2"),
			[]*approval.FieldError{fe("data.question.hint", "unknown field")}},
		// The digest of a question is the bot's own, kept in the stored
		// form: a backend that sends one is refused.
		{"question_sha256 on a question", "question.json", setD("question_sha256", "sha256:"+strings.Repeat("ab", 32)),
			[]*approval.FieldError{fe("data.question_sha256", "unknown field")}},
		{"question_sha256 on an approval", "merge.json", setD("question_sha256", "sha256:"+strings.Repeat("ab", 32)),
			[]*approval.FieldError{fe("data.question_sha256", "unknown field")}},
		// An approval carries no question: only question.asked does.
		{"data.question on approval.requested", "merge.json", setD("question", map[string]any{"text": "Which?", "free_text": true}),
			[]*approval.FieldError{fe("data.question", "unknown field")}},
		{"data.question on approval.reasked", "merge-reasked.json", setD("question", map[string]any{"text": "Which?", "free_text": true}),
			[]*approval.FieldError{fe("data.question", "unknown field")}},

		// question.answered
		{"answer missing", "question-answered.json", delD("answer"), []*approval.FieldError{fe("data.answer", "required")}},
		{"answer null", "question-answered.json", setD("answer", nil), []*approval.FieldError{fe("data.answer", "required")}},
		{"answer empty", "question-answered.json", answer(map[string]any{}), []*approval.FieldError{fe("data.answer.text", "required")}},
		{"answer a choice and words", "question-answered.json", answer(map[string]any{"choice": 1, "text": "acct-2"}),
			[]*approval.FieldError{fe("data.answer", "want a choice or text, not both")}},
		{"answer choice -1", "question-answered.json", answer(map[string]any{"choice": -1}),
			[]*approval.FieldError{fe("data.answer.choice", msgChoiceRange)}},
		{"answer choice 25", "question-answered.json", answer(map[string]any{"choice": approval.MaxChoices}),
			[]*approval.FieldError{fe("data.answer.choice", msgChoiceRange)}},
		{"answer choice a string", "question-answered.json", answer(map[string]any{"choice": "1"}),
			[]*approval.FieldError{fe("data.answer.choice", "want an integer")}},
		{"answer choice 1.5", "question-answered.json", answer(map[string]any{"choice": 1.5}),
			[]*approval.FieldError{fe("data.answer.choice", "want an integer")}},
		{"answer text a number", "question-answered.json", answer(map[string]any{"text": 5}),
			[]*approval.FieldError{fe("data.answer.text", "want a string")}},
		{"answer with an unknown key", "question-answered.json", answer(map[string]any{"text": "acct-2", "choice_text": "acct-2"}),
			[]*approval.FieldError{fe("data.answer.choice_text", "unknown field")}},
		{"answered without actor", "question-answered.json", delD("actor"), []*approval.FieldError{fe("data.actor", "required")}},
		{"answered revision 0", "question-answered.json", setD("revision", 0),
			[]*approval.FieldError{fe("data.revision", "want an integer ≥ 1")}},
		{"answered with a bad question_id", "question-answered.json", setD("question_id", "q/1"),
			[]*approval.FieldError{fe("data.question_id", msgID)}},
		// question_id, not approval_id; and no status: it is answered.
		{"answered with approval_id", "question-answered.json", setD("approval_id", "q-refund1"),
			[]*approval.FieldError{fe("data.approval_id", "unknown field")}},
		{"answered with a status", "question-answered.json", setD("status", "approved"),
			[]*approval.FieldError{fe("data.status", "unknown field")}},

		// question.cancelled
		{"cancelled without question_id", "question-cancelled.json", delD("question_id"),
			[]*approval.FieldError{fe("data.question_id", msgID)}},
		{"cancelled with approval_id", "question-cancelled.json", setD("approval_id", "q-priv1"),
			[]*approval.FieldError{fe("data.approval_id", "unknown field")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ev, err := approval.Parse(mutate(t, tt.file, func(m map[string]any) { tt.f(t, m) }))
			var ve *approval.ValidationError
			if !errors.As(err, &ve) || ev != nil {
				t.Fatalf("Parse = %+v, %v; want a *ValidationError (422)", ev, err)
			}
			if diff := cmp.Diff(tt.problems, ve.Problems); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAnswerCheck: what the bot takes as an answer before it sends it.
func TestAnswerCheck(t *testing.T) {
	t.Parallel()
	choice := func(i int) approval.Answer { return approval.Answer{Choice: &i} }
	words := &approval.Question{Text: "Which?", Choices: []string{"a", "b"}, FreeText: true}
	only := &approval.Question{Text: "Which?", Choices: []string{"a", "b"}}
	tests := []struct {
		name string
		ans  approval.Answer
		q    *approval.Question
		ok   bool
	}{
		{"first choice", choice(0), only, true},
		{"last choice", choice(1), only, true},
		{"a choice past the last", choice(2), only, false},
		{"a negative choice", choice(-1), only, false},
		{"words where taken", approval.Answer{Text: "neither"}, words, true},
		{"words where not taken", approval.Answer{Text: "neither"}, only, false},
		{"blank words", approval.Answer{Text: " \n"}, words, false},
		{"words of 2000", approval.Answer{Text: strings.Repeat("é", approval.MaxAnswerText)}, words, true},
		{"words of 2001", approval.Answer{Text: strings.Repeat("é", approval.MaxAnswerText+1)}, words, false},
		{"both", approval.Answer{Choice: choice(0).Choice, Text: "a"}, words, false},
		{"nothing", approval.Answer{}, words, false},
		// A restricted question is not at hand: the form alone is checked.
		{"choice 24 of a question not at hand", choice(24), nil, true},
		{"choice 25 of a question not at hand", choice(25), nil, false},
		{"words to a question not at hand", approval.Answer{Text: "x"}, nil, true},
	}
	for _, tt := range tests {
		if got := tt.ans.Check(tt.q); (got == "") != tt.ok {
			t.Errorf("%s: Check = %q, want ok %v", tt.name, got, tt.ok)
		}
	}
	if got := choice(1).Words(only); got != "b" {
		t.Errorf("Words of choice 1 = %q, want b", got)
	}
	if got := choice(4).Words(nil); got != "choice 5" {
		t.Errorf("Words of choice 4 not at hand = %q, want choice 5", got)
	}
	if got := (approval.Answer{Text: "as typed"}).Words(only); got != "as typed" {
		t.Errorf("Words of words = %q", got)
	}
}
