package slack

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	slackgo "github.com/slack-go/slack"

	"approvalsbot/approval"
	"approvalsbot/internal/golden"
	"approvalsbot/internal/utf16text"
	"approvalsbot/say"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
	"approvalsbot/threads"
)

// hostileQuestion is a question whoever steers the agent may craft:
// secrets, mentions, mrkdwn, invisible characters, and the longest text
// the protocol takes.
func hostileQuestion() string {
	head := "<!channel> <@U0ADA> *Approve now* _really_ ~not~ `rm -rf` <https://evil.example|the console> &amp; " +
		"password=hunter2 Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl " +
		"ghp_0123456789abcdefghijABCDEFGHIJ012345 pay\u200bment \u202eevil\u202c \u2066iso\u2069\n> quoted\n"
	return head + strings.Repeat("x", approval.MaxQuestionText-len([]rune(head)))
}

// hostileChoices are choices as hostile as the question.
var hostileChoices = []string{"<!here> refund all", "*all* of `it`", "acct\u200b-1", "token: abc123def456",
	"<https://evil.example|click>", "@everyone", "\u202eevil", "plain"}

// questionCases are the question cards a person sees on Slack.
func questionCases(t *testing.T) map[string]templates.Input {
	t.Helper()
	base := templatestest.Approval(t, "question.json")
	with := func(f func(q *approval.Approval)) *approval.Approval {
		a := *base
		q := *base.Question
		a.Question = &q
		f(&a)
		return &a
	}
	at, plan := templatestest.Pinned(base)
	pending := func(a *approval.Approval) templates.Input {
		return templates.Input{Approval: a, State: approval.StatePending, Ladder: plan, Now: at}
	}
	answered := func(a *approval.Approval, d approval.Decision) templates.Input {
		d.At = at
		return templates.Input{Approval: a, State: approval.StateAnswered, Decision: &d, Ladder: plan, Now: at}
	}
	eight := with(func(a *approval.Approval) {
		a.Question.Text = "Which of these accounts should I refund the 250 EUR to?"
		a.Question.Choices = nil
		for i := 1; i <= 8; i++ {
			a.Question.Choices = append(a.Question.Choices, fmt.Sprintf("acct-%d", i))
		}
	})
	freeText := with(func(a *approval.Approval) {
		a.Question.Text = "What should the refund's memo say?"
		a.Question.Choices = nil
	})
	hostile := with(func(a *approval.Approval) {
		a.Question.Text = hostileQuestion()
		a.Question.Choices = hostileChoices
		a.Job.Agent = "<!channel> bot\u200b"
	})
	private := templatestest.Approval(t, "question-private.json")
	privAt, privPlan := templatestest.Pinned(private)
	return map[string]templates.Input{
		"pending":       pending(base),
		"eight-choices": pending(eight),
		"free-text":     pending(freeText),
		"deciding": {Approval: base, State: approval.StatePending, Ladder: plan, Now: at,
			Deciding: &templates.Deciding{Actor: "user:kevin", At: at}},
		"answered-choice": answered(base, approval.Decision{Actor: "user:kevin", Via: "slack", Choice: 2,
			Answer: base.Question.Choices[1]}),
		"answered-words": answered(base, approval.Decision{Actor: "user:kevin", Via: "slack",
			Answer: "acct-2, and add a note to the order"}),
		"expired": {Approval: base, State: approval.StateExpired, Ladder: plan, Now: at,
			Decision: &approval.Decision{Actor: "system:deadline", Comment: "nobody answered", Via: "deadline", At: *base.Deadline}},
		"restricted": {Approval: private, State: approval.StatePending, Ladder: privPlan, Now: privAt},
		"restricted-answered": {Approval: private, State: approval.StateAnswered, Ladder: privPlan, Now: privAt,
			Decision: &approval.Decision{Actor: "user:lee", Via: "slack", Choice: 1, Answer: "Tell Dr. Lee now", At: privAt}},
		"hostile": pending(hostile),
		"hostile-answered": answered(hostile, approval.Decision{Actor: "user:kevin", Via: "slack",
			Answer: approval.RedactText("<!channel> *done* password=hunter2 \u200b" + strings.Repeat("y", 1990))}),
	}
}

// TestQuestionGolden renders each question card as Block Kit and compares
// with testdata/question (go test ./adapters/slack -update rewrites them).
func TestQuestionGolden(t *testing.T) {
	for name, in := range questionCases(t) {
		t.Run(name, func(t *testing.T) {
			m := CardMessage(templates.Build(in))
			got, err := templates.MarshalPreview(m)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "question", name+".slack.json"), string(got), *update)
		})
	}
}

// TestQuestionDialogsGolden renders Answer…'s dialog, with the question
// and for a restricted question, and Show question's private answer.
func TestQuestionDialogsGolden(t *testing.T) {
	act := templates.Action{Kind: templates.ActionAnswerText, ApprovalID: "q-refund1", Revision: 1}
	meta := `{"a":"` + templates.EncodeAction(act) + `"}`
	card := templates.Build(questionCases(t)["eight-choices"])
	hostile := templates.Build(questionCases(t)["hostile"])
	dialog := func(text string) threads.QuestionDialog {
		// As the core words Answer…'s dialog.
		return threads.QuestionDialog{Text: text, Max: approval.MaxAnswerText, Label: say.AnswerLabel, Goes: say.AnswerGoes,
			Title: say.AnswerTitle, Submit: say.AnswerSubmit}
	}
	restricted := dialog("")
	restricted.Restricted, restricted.Goes = true, say.AnswerWithheld
	for name, v := range map[string]any{
		"answer-dialog":            answerModal(dialog("Order 7781 was paid from two accounts. Which one should I refund the 250 EUR to?"), meta),
		"answer-dialog-restricted": answerModal(restricted, meta),
		"answer-dialog-hostile":    answerModal(dialog(hostileQuestion()), meta),
		"shown":                    shownQuestion("Should I tell Dr. Lee about the diagnosis in the draft, or keep it for the meeting?", card.Question.Choices, &act),
		"shown-hostile":            shownQuestion(hostileQuestion(), hostile.Question.Choices, &act),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := templates.MarshalPreview(v)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "question", name+".slack.json"), string(got), *update)
			// The question is literal text only, redacted, and whole.
			if strings.Contains(string(got), `"mrkdwn"`) {
				t.Errorf("a mrkdwn object in %s", got)
			}
			for _, secret := range []string{"hunter2", "eyJzdWIiOiIxIn0", "\u200b", "\u202e"} {
				if strings.Contains(string(got), secret) {
					t.Errorf("%q shown", secret)
				}
			}
		})
	}
	m := answerModal(dialog(hostileQuestion()), meta)
	var quoted strings.Builder
	for _, b := range m.Blocks.BlockSet {
		if rt, ok := b.(*slackgo.RichTextBlock); ok {
			for _, el := range rt.Elements {
				if q, ok := el.(*slackgo.RichTextQuote); ok {
					quoted.WriteString(q.Elements[0].(*slackgo.RichTextSectionTextElement).Text)
				}
			}
		}
	}
	if want := strings.Repeat("x", 2000); !strings.HasSuffix(strings.TrimSpace(quoted.String()), want) {
		t.Errorf("the dialog does not show the question whole: it ends %q", quoted.String()[max(0, quoted.Len()-60):])
	}
}

// TestQuestionCardShape: what each question card holds, as a person
// reads it: the title says who asks, the question is in the agent's box
// (a quote) and nowhere else, the first five choices are buttons and the
// rest one menu whose values are the choices' payloads, then Answer…,
// I'm looking and Escalate now; a restricted card holds no word of the
// question; every text is literal and the fallback is the escaped
// headline.
func TestQuestionCardShape(t *testing.T) {
	cases := questionCases(t)
	private := templatestest.Approval(t, "question-private.json")
	for _, tc := range []struct {
		name        string
		choices     []string // the choice buttons' labels
		menu        int      // the menu's options
		buttons     string   // the other buttons' labels
		quote, more string   // in the agent's box; elsewhere on the card
	}{
		{name: "pending", choices: []string{"acct-1 (Ana Ruiz, personal)", "acct-2 (Ruiz Trading Ltd)"},
			buttons: "Answer…|I'm looking|Escalate now", quote: "Which one should I refund"},
		{name: "eight-choices", choices: []string{"acct-1", "acct-2", "acct-3", "acct-4", "acct-5"}, menu: 3,
			buttons: "Answer…|I'm looking|Escalate now", quote: "Which of these accounts"},
		{name: "free-text", buttons: "Answer…|I'm looking|Escalate now", quote: "memo"},
		{name: "deciding", quote: "Which one should I refund", more: "Sending user:kevin's answer to the job"},
		{name: "answered-choice", quote: "acct-2 (Ruiz Trading Ltd)", more: "Answered by user:kevin"},
		{name: "answered-words", quote: "acct-2, and add a note to the order", more: "Answered by user:kevin"},
		{name: "expired", quote: "Which one should I refund", more: "Nobody answered by the deadline"},
		{name: "restricted", buttons: "I'm looking|Escalate now|Show question", more: "restricted"},
		{name: "restricted-answered", more: "The answer is not shown here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := templates.Build(cases[tc.name])
			m := CardMessage(c)
			h, ok := m.Blocks[1].(*slackgo.HeaderBlock)
			if !ok || h.Text.Text != c.Job.Agent+" asks" {
				t.Errorf("title %+v, want %q", m.Blocks[1], c.Job.Agent+" asks")
			}
			if want := mrkdwn(c.Headline); m.Text != want {
				t.Errorf("fallback %q, want the escaped headline %q", m.Text, want)
			}
			var quotes []string
			for _, b := range m.Blocks {
				if rt, ok := b.(*slackgo.RichTextBlock); ok {
					for _, el := range rt.Elements {
						if q, ok := el.(*slackgo.RichTextQuote); ok {
							for _, e := range q.Elements {
								quotes = append(quotes, e.(*slackgo.RichTextSectionTextElement).Text)
							}
						}
					}
				}
			}
			if tc.quote != "" && !strings.Contains(strings.Join(quotes, "\n"), tc.quote) {
				t.Errorf("the agent's box holds %q, want %q", quotes, tc.quote)
			}
			for _, l := range linesOf(m) {
				if strings.Contains(l, "refund the 250") {
					t.Errorf("the question is shown outside the agent's box: %q", l)
				}
			}
			if tc.more != "" && !strings.Contains(strings.Join(linesOf(m), "\n"), tc.more) {
				t.Errorf("the card reads %q, want %q", linesOf(m), tc.more)
			}
			choices, menu, others := actionsOf(t, m)
			if strings.Join(choices, "|") != strings.Join(tc.choices, "|") || len(menu) != tc.menu || strings.Join(others, "|") != tc.buttons {
				t.Errorf("choices %q, menu %q, buttons %q; want %q, %d options, %q", choices, menu, others, tc.choices, tc.menu, tc.buttons)
			}
			for i, v := range menu {
				act, err := templates.ParseAction(v)
				if err != nil || act.Kind != templates.ActionAnswer || act.Choice != choiceButtonsMax+i {
					t.Errorf("option %d's value %q: %+v %v", i, v, act, err)
				}
			}
			if strings.HasPrefix(tc.name, "restricted") {
				all, _ := json.Marshal(m)
				for _, w := range append([]string{"Dr. Lee", "diagnosis", "meeting"}, private.Question.Choices...) {
					if strings.Contains(string(all), w) {
						t.Errorf("the restricted card says %q: %s", w, all)
					}
				}
			}
		})
	}
}

// actionsOf is a card's choice buttons' labels, its menu's option values
// and its other buttons' labels.
func actionsOf(t *testing.T, m Message) (choices, menu, others []string) {
	t.Helper()
	for _, b := range m.Blocks {
		ab, ok := b.(*slackgo.ActionBlock)
		if !ok {
			continue
		}
		for _, e := range ab.Elements.ElementSet {
			switch e := e.(type) {
			case *slackgo.ButtonBlockElement:
				act, err := templates.ParseAction(e.ActionID)
				if err != nil {
					t.Errorf("button %q: %v", e.ActionID, err)
				}
				if act.Kind == templates.ActionAnswer {
					choices = append(choices, e.Text.Text)
				} else {
					others = append(others, e.Text.Text)
				}
			case *slackgo.SelectBlockElement:
				if e.Type != slackgo.OptTypeStatic || e.ActionID != choiceMenuID {
					t.Errorf("menu %+v", e)
				}
				for _, o := range e.Options {
					menu = append(menu, o.Value)
				}
			}
		}
	}
	return choices, menu, others
}

// TestHostileQuestionIsBounded: the hostile question, its choices and its
// answer are shown redacted, literal and within Slack's bounds: no secret,
// no mrkdwn object but the bot's own link, no mention, no invisible
// character unmarked, every button and option within 75 characters.
func TestHostileQuestionIsBounded(t *testing.T) {
	cases := questionCases(t)
	for _, name := range []string{"hostile", "hostile-answered"} {
		t.Run(name, func(t *testing.T) {
			m := CardMessage(templates.Build(cases[name]))
			raw, _ := json.Marshal(m)
			for _, secret := range []string{"hunter2", "abc123def456", "eyJzdWIiOiIxIn0", "0123456789abcdefghij", "\u200b", "\u202e", "\u2066"} {
				if strings.Contains(string(raw), secret) || strings.Contains(m.Text, secret) {
					t.Errorf("the card carries %q", secret)
				}
			}
			if strings.ContainsAny(m.Text, "<>") {
				t.Errorf("fallback %q is not escaped", m.Text)
			}
			total := 0
			for _, s := range shownTexts(t, m) {
				total += utf16text.Len(s.text)
				if s.holder == "mrkdwn" && (!s.verbatim || !ownLink.MatchString(s.text)) {
					t.Errorf("mrkdwn %q", s.text)
				}
				if s.holder == "user" || s.holder == "usergroup" || s.holder == "broadcast" {
					t.Errorf("a %s object: %q", s.holder, s.text)
				}
			}
			if total > blocksTextMax {
				t.Errorf("the card's text is %d characters, over %d", total, blocksTextMax)
			}
			for _, b := range m.Blocks {
				ab, ok := b.(*slackgo.ActionBlock)
				if !ok {
					continue
				}
				for _, e := range ab.Elements.ElementSet {
					switch e := e.(type) {
					case *slackgo.ButtonBlockElement:
						if utf16text.Len(e.Text.Text) > buttonTextMax {
							t.Errorf("button %q is over %d", e.Text.Text, buttonTextMax)
						}
					case *slackgo.SelectBlockElement:
						for _, o := range e.Options {
							if utf16text.Len(o.Text.Text) > optionTextMax || len(o.Value) > optionValueMax {
								t.Errorf("option %+v is over Slack's bounds", o)
							}
						}
					}
				}
			}
		})
	}
}

// TestClickedAction: a click's action is read strictly: a button's
// payload, or the choices' menu's option, which must be a choice.
func TestClickedAction(t *testing.T) {
	t.Parallel()
	choice := templates.EncodeAction(templates.Action{Kind: templates.ActionAnswer, ApprovalID: "q-1", Revision: 2, Choice: 6})
	look := templates.EncodeAction(templates.Action{Kind: templates.ActionLook, ApprovalID: "q-1", Revision: 2})
	for _, c := range []struct {
		name string
		ba   slackgo.BlockAction
		want string // the action's payload; "" for refused
	}{
		{"a choice's button", slackgo.BlockAction{Type: "button", ActionID: choice, Value: choice}, choice},
		{"the menu's option", slackgo.BlockAction{Type: "static_select", ActionID: choiceMenuID,
			SelectedOption: slackgo.OptionBlockObject{Value: choice}}, choice},
		{"the menu with no choice in it", slackgo.BlockAction{Type: "static_select", ActionID: choiceMenuID,
			SelectedOption: slackgo.OptionBlockObject{Value: look}}, ""},
		{"the menu's id on a button", slackgo.BlockAction{Type: "button", ActionID: choiceMenuID, Value: choice}, ""},
		{"the menu with a forged option", slackgo.BlockAction{Type: "static_select", ActionID: choiceMenuID,
			SelectedOption: slackgo.OptionBlockObject{Value: "ab1|answer|q-1|2|25"}}, ""},
		{"a button whose value differs", slackgo.BlockAction{Type: "button", ActionID: choice, Value: look}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			act, err := clickedAction(&c.ba)
			switch {
			case c.want == "" && err == nil:
				t.Errorf("took %+v", act)
			case c.want != "" && (err != nil || templates.EncodeAction(act) != c.want):
				t.Errorf("got %+v %v, want %s", act, err, c.want)
			}
		})
	}
}
