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
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
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
			msg := RenderCard(templates.Build(in))
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
