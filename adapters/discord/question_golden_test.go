package discord

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/adapters/discord/discordtest"
	"approvalsbot/approval"
	"approvalsbot/internal/golden"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
	"approvalsbot/threads"
)

// questionWith is the refund question of testdata/events/question.json
// with other choices and free text.
func questionWith(t testing.TB, choices []string, freeText bool) *approval.Approval {
	t.Helper()
	a := templatestest.Approval(t, "question.json")
	q := *a.Question
	q.Choices, q.FreeText = choices, freeText
	a.Question = &q
	return a
}

// numbered is n distinct choices.
func numbered(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("Account %d", i+1)
	}
	return out
}

// hostileQuestion is a question whoever steers the agent wrote: a
// secret, mentions, markdown, invisible characters, a link, 4,000
// characters.
func hostileQuestion(t testing.TB) *approval.Approval {
	t.Helper()
	text := "@everyone <@123> <@&456> @here **urgent** ||spoiler|| # Heading\n> quote\n" +
		"token ghp_abcdefghijklmnopqrstuvwxyz0123456789 and AKIAIOSFODNN7EXAMPLE\n" +
		"[click](https://evil.example/x) https://evil.example/y zero\u200bwidth \u202eright-to-left\u202c `code` ~~x~~ _i_\n"
	text += strings.Repeat("ab* ", (approval.MaxQuestionText-len([]rune(text)))/4)
	a := questionWith(t, []string{"@everyone pay **now**", "<@123> ghp_abcdefghijklmnopqrstuvwxyz0123456789", "zero\u200bwidth"}, true)
	a.Question.Text = text
	a.Job.Agent = "**agent** @everyone"
	return a
}

// questionCases are the question card's states as Discord shows them.
func questionCases(t testing.TB) map[string]templates.Input {
	t.Helper()
	pending := func(a *approval.Approval) templates.Input {
		_, plan := templatestest.Pinned(a)
		return templates.Input{Approval: a, State: approval.StatePending, Ladder: plan, Now: a.RequestedAt}
	}
	closed := func(a *approval.Approval, st approval.State, d *approval.Decision) templates.Input {
		at, _ := templatestest.Pinned(a)
		d.At = at
		return templates.Input{Approval: a, State: st, Decision: d, Now: at}
	}
	two := templatestest.Approval(t, "question.json")
	private := templatestest.Approval(t, "question-private.json")
	hostile := hostileQuestion(t)
	return map[string]templates.Input{
		"pending-2-choices":  pending(two),
		"pending-8-choices":  pending(questionWith(t, numbered(8), true)),
		"pending-22-choices": pending(questionWith(t, numbered(22), true)),
		"pending-25-choices": pending(questionWith(t, numbered(25), false)),
		"free-text-only":     pending(questionWith(t, nil, true)),
		"answered-choice": closed(two, approval.StateAnswered,
			&approval.Decision{Actor: "user:kevin", Via: "discord", Choice: 2, Answer: two.Question.Choices[1]}),
		"answered-words": closed(two, approval.StateAnswered,
			&approval.Decision{Actor: "user:kevin", Via: "discord", Answer: "Neither: refund to the card on file.\nAnd tell Ana."}),
		"restricted":          pending(private),
		"restricted-answered": closed(private, approval.StateAnswered, &approval.Decision{Actor: "user:kevin", Via: "discord", Choice: 1}),
		"expired": closed(two, approval.StateExpired,
			&approval.Decision{Actor: "system:deadline", Via: "deadline", Comment: "nobody answered"}),
		"hostile": pending(hostile),
		"hostile-answered": closed(hostile, approval.StateAnswered, &approval.Decision{Actor: "user:<@123>", Via: "discord",
			Answer: approval.RedactText("@everyone **done** <@&456> ghp_abcdefghijklmnopqrstuvwxyz0123456789\n> quoted\u200b")}),
	}
}

// TestQuestionGolden renders the question card in each state as Discord
// takes it (go test ./adapters/discord -run Golden -update rewrites
// testdata/question): each body is one Discord accepts.
func TestQuestionGolden(t *testing.T) {
	t.Parallel()
	for name, in := range questionCases(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			card := templates.Build(in)
			msg := RenderCard(card)
			checkLimits(t, card, msg)
			got, err := json.MarshalIndent(msg, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if p := discordtest.CheckMessageCreate(got); p != "" {
				t.Errorf("Discord would refuse the card: %s", p)
			}
			if p := discordtest.CheckMessageEdit(encoded(t, msg.Edit())); p != "" {
				t.Errorf("Discord would refuse the card's edit: %s", p)
			}
			golden.Check(t, filepath.Join("testdata", "question", name+".discord.json"), string(got)+"\n", *update)
		})
	}
}

// encoded is v as JSON.
func encoded(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAnswerModalGolden: Answer…'s modal as Discord takes it, over a
// question, over a hostile one cut to what a modal shows, and over a
// restricted one, which it does not show (go test ./adapters/discord
// -run Golden -update rewrites testdata/question).
func TestAnswerModalGolden(t *testing.T) {
	t.Parallel()
	act := templates.Action{Kind: templates.ActionAnswerText, ApprovalID: "q-refund1", Revision: 1}
	two := templatestest.Approval(t, "question.json")
	for name, d := range map[string]threads.Dialog{
		"modal": {Question: &threads.QuestionDialog{Text: two.Question.Text, Max: approval.MaxAnswerText,
			Title: say.AnswerTitle, Label: say.AnswerLabel, Goes: say.AnswerGoes}},
		"modal-hostile": {Question: &threads.QuestionDialog{Text: approval.RedactText(hostileQuestion(t).Question.Text),
			Max: approval.MaxAnswerText, Title: say.AnswerTitle, Label: say.AnswerLabel, Goes: say.AnswerGoes}},
		"modal-restricted": {Question: &threads.QuestionDialog{Restricted: true, Max: approval.MaxAnswerText,
			Title: say.AnswerTitle, Label: say.AnswerLabel, Goes: say.AnswerWithheld}},
		"modal-words-left-to-the-adapter": {Question: &threads.QuestionDialog{Text: two.Question.Text}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ans := answerTextModal(d, act)
			got, err := json.MarshalIndent(ans, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if p := discordtest.CheckResponse(got); p != "" {
				t.Errorf("Discord would refuse the modal: %s", p)
			}
			m := ans.Data.(modal)
			if utf16text.Len(m.Title) > modalTitleMax || m.CustomID != templates.EncodeAction(act) {
				t.Errorf("modal %q %q", m.Title, m.CustomID)
			}
			in := m.Components[len(m.Components)-1].(Label)
			if ti := in.Component.(TextInput); ti.MaxLength != approval.MaxAnswerText || !ti.Required || ti.Style != textInputParagraph ||
				utf16text.Len(in.Label) > textInputLabelMax || utf16text.Len(in.Description) > labelDescriptionMax {
				t.Errorf("answer input %+v in %+v", ti, in)
			}
			golden.Check(t, filepath.Join("testdata", "question", name+".discord.json"), string(got)+"\n", *update)
		})
	}
}

// TestShownQuestionGolden: Show question's private answer, with the
// restricted question's text, its choices (buttons and the menu) and
// Answer…, as Discord takes a follow-up.
func TestShownQuestionGolden(t *testing.T) {
	t.Parallel()
	for name, a := range map[string]*approval.Approval{
		"shown":         templatestest.Approval(t, "question-private.json"),
		"shown-25":      questionWith(t, numbered(25), true),
		"shown-hostile": hostileQuestion(t),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var choices []templates.Button
			for i, c := range a.Question.Choices {
				act := templates.Action{Kind: templates.ActionAnswer, ApprovalID: a.ID, Revision: a.Revision, Choice: i}
				choices = append(choices, templates.Button{Label: c, Action: act, Payload: templates.EncodeAction(act)})
			}
			sq := threads.ShownQuestion{Text: approval.RedactText(a.Question.Text), Choices: choices}
			if a.Question.FreeText {
				sq.AnswerText = &templates.Action{Kind: templates.ActionAnswerText, ApprovalID: a.ID, Revision: a.Revision}
			}
			msg := shownQuestion(sq)
			got, err := json.MarshalIndent(msg, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if p := discordtest.CheckFollowup(got); p != "" {
				t.Errorf("Discord would refuse the answer: %s", p)
			}
			if msg.Flags&flagEphemeral == 0 {
				t.Error("Show question's answer is not ephemeral")
			}
			golden.Check(t, filepath.Join("testdata", "question", name+".discord.json"), string(got)+"\n", *update)
		})
	}
}

// TestMenuChoiceIsReadStrictly: a menu's choice answers only with one
// value, a choice of the question and revision its custom_id names.
func TestMenuChoiceIsReadStrictly(t *testing.T) {
	t.Parallel()
	menu := "ab1|answer|q-refund1|1|5"
	got, err := menuChoice(componentData{CustomID: menu, ComponentType: componentStringSelect, Values: []string{"ab1|answer|q-refund1|1|7"}})
	if err != nil || got.Kind != templates.ActionAnswer || got.ApprovalID != "q-refund1" || got.Revision != 1 || got.Choice != 7 {
		t.Fatalf("%+v %v", got, err)
	}
	for name, d := range map[string]componentData{
		"no value":        {CustomID: menu},
		"two values":      {CustomID: menu, Values: []string{"ab1|answer|q-refund1|1|6", "ab1|answer|q-refund1|1|7"}},
		"other question":  {CustomID: menu, Values: []string{"ab1|answer|q-other|1|6"}},
		"other revision":  {CustomID: menu, Values: []string{"ab1|answer|q-refund1|2|6"}},
		"an approve":      {CustomID: menu, Values: []string{"ab1|approve|q-refund1|1"}},
		"not a menu's":    {CustomID: "ab1|approve|q-refund1|1", Values: []string{"ab1|answer|q-refund1|1|6"}},
		"a forged value":  {CustomID: menu, Values: []string{"ab1|answer|q-refund1|1|25"}},
		"a forged menu":   {CustomID: "x", Values: []string{"ab1|answer|q-refund1|1|6"}},
		"an empty choice": {CustomID: menu, Values: []string{""}},
	} {
		if got, err := menuChoice(d); err == nil {
			t.Errorf("%s: accepted as %+v", name, got)
		}
	}
}
