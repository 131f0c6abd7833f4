package approval

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/internal/utf16text"
)

// The events of a question an agent asks (docs/protocol.md#questions).
// A question waits like an approval and is kept as one: an Approval of
// KindQuestion whose Question is set and whose Call is empty, so the
// durable path, the ladder, the deadline and the cards serve both.
const (
	EventQuestionAsked     EventType = "question.asked"
	EventQuestionAnswered  EventType = "question.answered"
	EventQuestionCancelled EventType = "question.cancelled"
)

// KindQuestion is an agent's question: a person answers it, with one of
// its choices or in their own words.
const KindQuestion Kind = "question"

// StateAnswered: a person answered the question (here or elsewhere).
const StateAnswered State = "answered"

// Question limits (docs/protocol.md#questions): the text is the agent's,
// which a card shows up to the bound of the agent's words (cut beyond it,
// and marked so; the console has the rest); each choice is a button or
// a menu option on every surface (Slack's 75 characters of a button's
// text are the smallest bound), and an answer in the person's own words
// fits every surface's text input.
const (
	MaxQuestionText   = 4000
	MaxChoices        = 25
	MaxChoiceLen      = 75
	MaxAnswerText     = 2000
	questionTextField = "question.text"
)

// Question is what an agent asks.
type Question struct {
	Text string `json:"text"`
	// Choices are the answers the agent offers, in its order; none for a
	// question answered in words only.
	Choices []string `json:"choices,omitempty"`
	// FreeText: a person may answer in their own words (Answer…); a
	// question without choices must allow it.
	FreeText bool `json:"free_text,omitempty"`
}

// Answer is a person's answer to a question: one of its choices (by its
// index, from 0), or their own words. Exactly one is set.
type Answer struct {
	Choice *int   `json:"choice,omitempty"`
	Text   string `json:"text,omitempty"`
}

// IsQuestion reports whether a is an agent's question, not a call.
func (a *Approval) IsQuestion() bool { return a.Kind == KindQuestion }

// Words is the answer as people read it: the choice's text when the
// question is at hand and the choice within it, else "choice N"; the
// words as given. Never redacted here: callers show it through
// RedactText.
func (ans Answer) Words(q *Question) string {
	if ans.Choice != nil {
		i := *ans.Choice
		if q != nil && i >= 0 && i < len(q.Choices) {
			return q.Choices[i]
		}
		return fmt.Sprintf("choice %d", i+1)
	}
	return ans.Text
}

// Check says why ans is no answer to q, "" when it is one: a choice
// within the choices, or words (not blank, at most MaxAnswerText
// characters) where the question takes them. q nil (a restricted
// question, whose content the bot does not keep) checks the form only.
func (ans Answer) Check(q *Question) string {
	switch {
	case ans.Choice != nil && ans.Text != "":
		return "an answer is a choice or words, not both"
	case ans.Choice != nil:
		if *ans.Choice < 0 || *ans.Choice >= MaxChoices || (q != nil && *ans.Choice >= len(q.Choices)) {
			return "that choice is not one of the question's"
		}
	case strings.TrimSpace(ans.Text) == "":
		return "the answer is empty"
	case utf8.RuneCountInString(ans.Text) > MaxAnswerText:
		return fmt.Sprintf("the answer is longer than %d characters", MaxAnswerText)
	case q != nil && !q.FreeText:
		return "this question takes one of its choices only"
	}
	return ""
}

// questionWire is question.asked's data as it is decoded.
type questionWire struct {
	ID         string    `json:"id"`
	Revision   int       `json:"revision"`
	Tenant     string    `json:"tenant"`
	ConsoleURL string    `json:"console_url,omitempty"`
	Job        Job       `json:"job"`
	Question   *Question `json:"question"`
	Content    *struct {
		Restricted *bool `json:"restricted"`
	} `json:"content"`
	RequestedAt string  `json:"requested_at"`
	Deadline    *string `json:"deadline"`
	Ladder      string  `json:"ladder,omitempty"`
}

// questionAnswered is question.answered's data: answered elsewhere.
type questionAnswered struct {
	QuestionID string  `json:"question_id"`
	Revision   int     `json:"revision"`
	Answer     *Answer `json:"answer"`
	Actor      string  `json:"actor"`
	Via        string  `json:"via,omitempty"`
	Message    string  `json:"message,omitempty"`
}

// questionCancelled is question.cancelled's data.
type questionCancelled struct {
	QuestionID string `json:"question_id"`
	Reason     string `json:"reason,omitempty"`
}

// parseQuestion reads question.asked's data into an Approval of
// KindQuestion.
func parseQuestion(v *validator, data []byte, env envelope) (*Approval, error) {
	var w questionWire
	if err := decodeData(data, &w); err != nil {
		return nil, err
	}
	p := "data."
	a := &Approval{ID: w.ID, Revision: w.Revision, Tenant: w.Tenant, Kind: KindQuestion, ConsoleURL: w.ConsoleURL,
		Job: w.Job, Ladder: w.Ladder, AskedBy: AskedBy{Reason: ReasonRequiresApproval}}
	v.check(idPattern.MatchString(a.ID), p+"id", "want 1–64 of [A-Za-z0-9._:-]")
	v.check(a.Revision >= 1, p+"revision", "want an integer ≥ 1")
	switch {
	case a.Tenant == "":
		v.add(p+"tenant", "required")
	case a.Tenant != env.Tenant:
		v.add(p+"tenant", fmt.Sprintf("%q is not the envelope's tenant %q", truncate(a.Tenant, 64), truncate(env.Tenant, 64)))
	}
	v.url(p+"console_url", a.ConsoleURL)
	v.text(p+"job.id", a.Job.ID, true)
	v.url(p+"job.url", a.Job.URL)
	v.text(p+"job.started_by", a.Job.StartedBy, false)
	v.text(p+"job.agent", a.Job.Agent, false)
	if q := w.Question; q == nil {
		v.add(p+"question", "required")
	} else {
		validateQuestion(v, p+"question.", q)
		a.Question = q
	}
	if w.Content == nil || w.Content.Restricted == nil {
		v.add(p+"content.restricted", "required (true or false)")
	} else {
		a.Content.Restricted = *w.Content.Restricted
	}
	v.waiting(p, a, w.RequestedAt, w.Deadline)
	return a, nil
}

// CheckQuestion says what is wrong with a question a look-up returned
// ("text: required", "choices[2]: a choice twice"), "" when nothing: the
// rules of question.asked.
func CheckQuestion(q *Question) string {
	v := &validator{}
	validateQuestion(v, "", q)
	if len(v.problems) == 0 {
		return ""
	}
	return v.problems[0].Error()
}

// validateQuestion checks a question's text and choices: each choice
// one line, distinct, within its bound; a question without choices
// takes words.
func validateQuestion(v *validator, p string, q *Question) {
	switch n := utf8.RuneCountInString(q.Text); {
	case strings.TrimSpace(q.Text) == "":
		v.add(p+"text", "required")
	case n > MaxQuestionText:
		v.add(p+"text", fmt.Sprintf("longer than %d characters", MaxQuestionText))
	}
	if len(q.Choices) > MaxChoices {
		v.add(p+"choices", fmt.Sprintf("more than %d choices", MaxChoices))
		return
	}
	seen := make(map[string]bool, len(q.Choices))
	shown := make(map[string]int, len(q.Choices))
	for i, c := range q.Choices {
		cp := fmt.Sprintf("%schoices[%d]", p, i)
		key := choiceShown(c)
		first, alike := shown[key]
		switch {
		case strings.TrimSpace(c) == "":
			v.add(cp, "required")
		case utf8.RuneCountInString(c) > MaxChoiceLen:
			v.add(cp, fmt.Sprintf("longer than %d characters", MaxChoiceLen))
		case strings.ContainsAny(c, "\r\n"):
			v.add(cp, "want one line")
		case seen[c]:
			v.add(cp, "a choice twice")
		case alike:
			v.add(cp, fmt.Sprintf("reads as choices[%d] once shown (secret shapes redacted, spaces folded, cut at %d characters): a person could not tell which they answer", first, MaxChoiceLen))
		}
		seen[c] = true
		if !alike {
			shown[key] = i
		}
	}
	if len(q.Choices) == 0 && !q.FreeText {
		v.add(p+"free_text", "a question without choices must take free text")
	}
}

// parseQuestionAnswered reads question.answered into a Resolved whose
// status is answered.
func parseQuestionAnswered(v *validator, data []byte) (*Resolved, error) {
	var w questionAnswered
	if err := decodeData(data, &w); err != nil {
		return nil, err
	}
	v.check(idPattern.MatchString(w.QuestionID), "data.question_id", "want 1–64 of [A-Za-z0-9._:-]")
	v.check(w.Revision >= 1, "data.revision", "want an integer ≥ 1")
	v.text("data.actor", w.Actor, true)
	v.text("data.via", w.Via, false)
	v.text("data.message", w.Message, false)
	switch a := w.Answer; {
	case a == nil:
		v.add("data.answer", "required")
	case a.Choice != nil && a.Text != "":
		v.add("data.answer", "want a choice or text, not both")
	case a.Choice != nil:
		v.check(*a.Choice >= 0 && *a.Choice < MaxChoices, "data.answer.choice", fmt.Sprintf("want an integer from 0 to %d", MaxChoices-1))
	default:
		// Words answered elsewhere are taken as given (the console may
		// allow more than chat): bounded as every free text is.
		v.text("data.answer.text", a.Text, true)
	}
	return &Resolved{ApprovalID: w.QuestionID, Revision: w.Revision, Status: StateAnswered, Actor: w.Actor,
		Via: w.Via, Message: w.Message, Answer: w.Answer}, nil
}

// parseQuestionCancelled reads question.cancelled into a Cancelled.
func parseQuestionCancelled(v *validator, data []byte) (*Cancelled, error) {
	var w questionCancelled
	if err := decodeData(data, &w); err != nil {
		return nil, err
	}
	v.check(idPattern.MatchString(w.QuestionID), "data.question_id", "want 1–64 of [A-Za-z0-9._:-]")
	v.text("data.reason", w.Reason, false)
	return &Cancelled{ApprovalID: w.QuestionID, Reason: w.Reason}, nil
}

// QuestionAskedData is question.asked's data as the protocol writes it
// (docs/protocol.md#questions): what Wire gives for it.
type QuestionAskedData struct {
	ID          string     `json:"id"`
	Revision    int        `json:"revision"`
	Tenant      string     `json:"tenant"`
	ConsoleURL  string     `json:"console_url,omitempty"`
	Job         Job        `json:"job"`
	Question    *Question  `json:"question"`
	Content     Content    `json:"content"`
	RequestedAt time.Time  `json:"requested_at"`
	Deadline    *time.Time `json:"deadline,omitempty"`
	Ladder      string     `json:"ladder,omitempty"`
}

// QuestionAnsweredData is question.answered's data as the protocol
// writes it.
type QuestionAnsweredData struct {
	QuestionID string  `json:"question_id"`
	Revision   int     `json:"revision"`
	Answer     *Answer `json:"answer"`
	Actor      string  `json:"actor"`
	Via        string  `json:"via,omitempty"`
	Message    string  `json:"message,omitempty"`
}

// QuestionCancelledData is question.cancelled's data as the protocol
// writes it.
type QuestionCancelledData struct {
	QuestionID string `json:"question_id"`
	Reason     string `json:"reason,omitempty"`
}

// Wire is the event's data in the protocol's form, to encode again: a
// question's events are kept as an approval's (Approval, Resolved,
// Cancelled) but written as docs/protocol.md#questions says.
func (e *Event) Wire() any {
	switch e.Type {
	case EventQuestionAsked:
		if a := e.Approval; a != nil {
			return QuestionAskedData{ID: a.ID, Revision: a.Revision, Tenant: a.Tenant, ConsoleURL: a.ConsoleURL, Job: a.Job,
				Question: a.Question, Content: a.Content, RequestedAt: a.RequestedAt, Deadline: a.Deadline, Ladder: a.Ladder}
		}
	case EventQuestionAnswered:
		if r := e.Resolved; r != nil {
			return QuestionAnsweredData{QuestionID: r.ApprovalID, Revision: r.Revision, Answer: r.Answer, Actor: r.Actor, Via: r.Via, Message: r.Message}
		}
	case EventQuestionCancelled:
		if c := e.Cancelled; c != nil {
			return QuestionCancelledData{QuestionID: c.ApprovalID, Reason: c.Reason}
		}
	}
	switch {
	case e.Approval != nil:
		return e.Approval
	case e.Resolved != nil:
		return e.Resolved
	case e.RecheckFailed != nil:
		return e.RecheckFailed
	case e.Cancelled != nil:
		return e.Cancelled
	case e.Finished != nil:
		return e.Finished
	case e.AutoGranted != nil:
		return e.AutoGranted
	}
	return nil
}

// QuestionDigest is the RFC 8785 SHA-256 of a question's JSON, as the
// protocol writes it: "sha256:" and 64 hex. An answer carries it to bind
// itself to the question its person read.
func QuestionDigest(q *Question) string {
	raw, err := json.Marshal(q)
	if err != nil {
		return "" // plain strings and a bool: cannot fail
	}
	d, err := Digest(raw)
	if err != nil {
		return ""
	}
	return d
}

// choiceShown is a choice as near as the parser can tell to how a button
// shows it: its secret shapes redacted, its runs of spaces folded (a page
// collapses them) and cut where a label is. Two choices alike so are one
// button twice to the person who answers.
func choiceShown(c string) string {
	return utf16text.Cut(strings.Join(strings.Fields(RedactText(c)), " "), MaxChoiceLen)
}

// storedQuestion is the question as a revision keeps it: redacted of
// secret shapes, or, restricted, none of its text or choices (only the
// backend's look-up has them).
func storedQuestion(q *Question, restricted bool) *Question {
	if restricted {
		return &Question{FreeText: q.FreeText}
	}
	k := &Question{Text: RedactText(q.Text), FreeText: q.FreeText}
	if q.Choices != nil {
		k.Choices = make([]string, len(q.Choices))
		for i, c := range q.Choices {
			k.Choices[i] = RedactText(c)
		}
	}
	return k
}
