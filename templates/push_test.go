package templates_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// pushCard is the waiting card of fixture event name, edited by edit
// (the event as a map) when it is set.
func pushCard(t *testing.T, name string, edit func(ev map[string]any)) templates.Card {
	t.Helper()
	body := readFixture(t, name)
	if edit != nil {
		var m map[string]any
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatal(err)
		}
		edit(m)
		var err error
		if body, err = json.Marshal(m); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	return templates.Build(templatestest.Input(t, ev.Approval, string(approval.StatePending)))
}

// TestPushNotice: a notice says the function, the effect line, the first
// flag, the deadline in the tenant's zone and where to decide; with a
// link, that it opens the decision page as the member.
func TestPushNotice(t *testing.T) {
	t.Parallel()
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC)
	const link = "https://approvals.example/decide/tok.en"
	tests := []struct {
		name  string
		event string
		in    templates.PushInput
		want  templates.PushNotice
	}{
		{"a destructive merge, with a link", "merge.json",
			templates.PushInput{Deadline: deadline, Zone: berlin, Link: link, ActAs: "user:kevin", Thread: true},
			templates.PushNotice{Title: "Approval needed: acme_github.merge", Function: "acme_github.merge", Link: link, Destructive: true, Deadline: deadline,
				Lines: []string{
					"DESTRUCTIVE · reaches outside the tenant",
					"Deadline 2026-11-30 18:00 CET: denied unless someone decides first.",
					"Open the decision page to see the call and decide as user:kevin.",
				}}},
		{"a flagged mail, no page, a thread", "mail.json",
			templates.PushInput{Deadline: deadline, Thread: true},
			templates.PushNotice{Title: "Approval needed: mail.send", Function: "mail.send", Deadline: deadline,
				Lines: []string{
					"reaches outside the tenant",
					"! Not traced to the request: to (recipient) came from something the job read; a rule needs a tenant record",
					"Deadline 2026-11-30 17:00 UTC: denied unless someone decides first.",
					"Decide in the console or in the chat thread.",
				}}},
		{"no page, no thread", "refund.json", templates.PushInput{Deadline: deadline},
			templates.PushNotice{Title: "Approval needed: payments.refund", Function: "payments.refund", Deadline: deadline,
				Lines: []string{
					"reaches outside the tenant",
					"! A class above the job's so far: write (so far: read)",
					"Deadline 2026-11-30 17:00 UTC: denied unless someone decides first.",
					"Decide in the console.",
				}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := templates.Push(pushCard(t, tt.event, nil), tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("notice (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPushNoticeQuestion: a question's notice says what its mail says:
// an answer is needed to the agent's question, the job is told nobody
// answered at the deadline, and the page shows the question to answer.
// Not the question or its choices, restricted or not: a notice is read
// on a lock screen.
func TestPushNoticeQuestion(t *testing.T) {
	t.Parallel()
	deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	const link = "https://approvals.example/decide/tok.en"
	tests := []struct {
		name  string
		event string
		in    templates.PushInput
		want  templates.PushNotice
		not   []string
	}{
		{"with a link", "question.json",
			templates.PushInput{Deadline: deadline, Link: link, ActAs: "user:kevin", Thread: true},
			templates.PushNotice{Title: "Answer needed: refund-bot's question", Link: link, Deadline: deadline,
				Lines: []string{
					"Deadline 2026-11-30 18:00 UTC: the job is told nobody answered unless someone answers first.",
					"Open the decision page to see the question and answer as user:kevin.",
				}},
			[]string{"Order 7781", "acct-1", "acct-2", "Ana Ruiz"}},
		{"restricted, no page, a thread", "question-private.json",
			templates.PushInput{Deadline: deadline, Thread: true},
			templates.PushNotice{Title: "Answer needed: assistant's question", Deadline: deadline,
				Lines: []string{
					"Deadline 2026-11-30 18:00 UTC: the job is told nobody answered unless someone answers first.",
					"Answer in the console or in the chat thread.",
				}},
			[]string{"Dr. Lee", "diagnosis", "Tell Dr. Lee now", "Keep it for the meeting"}},
		{"no page, no thread, no deadline", "question.json", templates.PushInput{},
			templates.PushNotice{Title: "Answer needed: refund-bot's question", Lines: []string{"Answer in the console."}},
			nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := templates.Push(pushCard(t, tt.event, nil), tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("notice (-want +got):\n%s", diff)
			}
			text := got.Title + "\n" + got.Message() + "\n" + got.Function
			for _, v := range append(tt.not, "Approval", "denied", "decide", "call") {
				if strings.Contains(text, v) {
					t.Errorf("the notice carries %q:\n%s", v, text)
				}
			}
		})
	}
	// An answer on its way: the notice says so, not a decision.
	c := pushCard(t, "question.json", nil)
	c.Deciding = true
	n := templates.Push(c, templates.PushInput{Link: link, ActAs: "user:kevin"})
	if want := []string{"An answer is on its way to the job."}; !cmp.Equal(n.Lines, want) {
		t.Errorf("lines %q, want %q", n.Lines, want)
	}
}

// TestPushNoticeHoldsNoValue: nothing of the call's arguments reaches a
// notice, not the values a role names, not the agent's words, not the
// digest, whoever reads it.
func TestPushNoticeHoldsNoValue(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		event  string
		values []string
	}{
		{"merge.json", []string{"acme/api", "1234", "squash", "CI is green", "sha256:", "79374e", "22000fa"}},
		{"mail.json", []string{"ops@acme.example", "x@evil.example", "Weekly summary", "See attached", "Sending the summary"}},
		{"refund.json", []string{"DE89370400440532013000", "250", "EUR", "Refund for order"}},
	} {
		c := pushCard(t, tt.event, nil)
		n := templates.Push(c, templates.PushInput{Deadline: time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC),
			Link: "https://approvals.example/decide/x", ActAs: "user:kevin", Thread: true})
		text := n.Title + "\n" + n.Message() + "\n" + n.Function
		for _, v := range tt.values {
			if strings.Contains(text, v) {
				t.Errorf("%s: the notice carries %q:\n%s", tt.event, v, text)
			}
		}
	}
}

// TestPushNoticeHostileFunction: a function name from the agent shows
// its invisible characters as the card does, stays on one line, and a
// huge one is cut: the notice stays small.
func TestPushNoticeHostileFunction(t *testing.T) {
	t.Parallel()
	fn := "acme\u202egpj.exe\u200b\nrm -rf /" + strings.Repeat("x", 60<<10)
	c := pushCard(t, "mail.json", func(ev map[string]any) {
		call := ev["data"].(map[string]any)["call"].(map[string]any)
		call["function"] = fn
		flags := ev["data"].(map[string]any)["flags"].(map[string]any)
		nt := flags["not_traced"].([]any)[0].(map[string]any)
		nt["argument"] = "t\u2066o" + strings.Repeat("y", 10<<10)
	})
	n := templates.Push(c, templates.PushInput{Deadline: time.Date(2026, 11, 30, 17, 0, 0, 0, time.UTC), Thread: true})
	if !strings.HasPrefix(n.Title, "Approval needed: acme[U+202E]gpj.exe[U+200B] rm -rf /xxx") || strings.ContainsAny(n.Title, "\n\u202e\u200b") {
		t.Errorf("title %q", n.Title)
	}
	if !strings.Contains(n.Lines[1], "t[U+2066]o") || strings.Contains(n.Message(), "\u2066") {
		t.Errorf("the first flag %q", n.Lines[1])
	}
	for _, l := range n.Lines {
		if strings.Contains(l, "\n") {
			t.Errorf("a line holds a line break: %q", l)
		}
	}
	if size := len(n.Title) + len(n.Message()); size > 1024 {
		t.Errorf("the notice is %d bytes: %q", size, n.Title+"\n"+n.Message())
	}
}
