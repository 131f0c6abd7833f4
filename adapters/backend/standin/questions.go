package standin

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
)

// An agent's questions (docs/protocol.md#questions): the stand-in keeps
// each question's truth, takes one answer per question at its current
// revision, records the deadline's "nobody answered" as such, and serves
// a restricted question's text to content holders.

// Question states the stand-in answers with.
const (
	QuestionPending    = "pending"
	QuestionAnswered   = "answered"
	QuestionUnanswered = "unanswered"
	QuestionCancelled  = "cancelled"
)

// QuestionsPath is the stand-in's own endpoint, no part of the protocol,
// where `bot question` tells the stand-in the question it is about to
// send the bot (a real backend knows its questions): POST a question's
// data as question.asked carries it; 200 {"question_id", "revision"}.
const QuestionsPath = "/standin/questions"

// questionTruth is the backend's truth about one question.
type questionTruth struct {
	revision   int
	question   approval.Question
	restricted bool
	status     string // QuestionPending, …
	actor      string
	answer     *approval.Answer // the answer recorded; nil unless answered
	learned    bool             // from a call (Options.Learn): its text is not known
}

// AnswerRequest is an answer body as the backend read it
// (POST /v1/questions/{id}/answer).
type AnswerRequest struct {
	QuestionID string           `json:"question_id"`
	Revision   int              `json:"revision"`
	Answer     *approval.Answer `json:"answer,omitempty"`
	// Unanswered: the deadline closed the question, nobody answered.
	Unanswered bool   `json:"unanswered,omitempty"`
	Actor      string `json:"actor"`
	Via        Via    `json:"via"`
	Comment    string `json:"comment,omitempty"`
	// QuestionSHA256 is the digest of the question the person read; only
	// from a member with the content permission.
	QuestionSHA256 string `json:"question_sha256,omitempty"`
}

// QuestionLookupRequest is a question look-up body as the backend read it
// (POST /v1/questions/{id}/question).
type QuestionLookupRequest struct {
	QuestionID string `json:"question_id"`
	Revision   int    `json:"revision"`
	Actor      string `json:"actor"`
}

// QuestionAnswer is the look-up's 200 body.
type QuestionAnswer struct {
	QuestionID string            `json:"question_id"`
	Revision   int               `json:"revision"`
	Question   approval.Question `json:"question"`
}

// ReceivedAnswer is one answer request and the backend's answer to it.
type ReceivedAnswer struct {
	QuestionID     string // from the path
	IdempotencyKey string
	SignatureOK    bool
	Body           []byte        // as received
	Request        AnswerRequest // zero when the body was not read
	Status         int           // HTTP status answered
	Code           string        // the error code answered; "" for 200
	Replay         bool          // answered from an earlier 200 with the same key
}

// ReceivedQuestionLookup is one question look-up and the answer to it.
type ReceivedQuestionLookup struct {
	QuestionID     string
	IdempotencyKey string
	SignatureOK    bool
	Body           []byte
	Request        QuestionLookupRequest
	Status         int
	Code           string
}

var (
	answerSchema         = strictjson.For[answerWire]()
	questionLookupSchema = strictjson.For[QuestionLookupRequest]()
	askedSchema          = strictjson.For[approval.QuestionAskedData]()
)

// answerWire tells "unanswered": false from an absent one.
type answerWire struct {
	AnswerRequest
	Unanswered *bool `json:"unanswered"`
}

// AddQuestion makes id a pending question at revision. Adding it again at
// a higher revision asks it again: lower ones go stale.
func (b *Backend) AddQuestion(id string, revision int, q approval.Question, restricted bool) {
	if revision < 1 {
		panic(fmt.Sprintf("standin: AddQuestion %s: revision %d, want ≥ 1", id, revision))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.addQuestion(id, revision, q, restricted); err != nil {
		panic("standin: AddQuestion " + id + ": " + err.Error())
	}
}

// addQuestion is AddQuestion's work. b.mu is held.
func (b *Backend) addQuestion(id string, revision int, q approval.Question, restricted bool) error {
	t := b.questions[id]
	switch {
	case t == nil:
		t = &questionTruth{status: QuestionPending}
		b.questions[id] = t
	case revision < t.revision:
		return fmt.Errorf("revision %d is below the current %d", revision, t.revision)
	}
	q.Choices = slices.Clone(q.Choices)
	t.revision, t.question, t.restricted, t.learned = revision, q, restricted, false
	return nil
}

// QuestionStatus is id's state, who closed it and the answer recorded.
func (b *Backend) QuestionStatus(id string) (status, actor string, ans *approval.Answer) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.question(id)
	return t.status, t.actor, t.answer
}

// AnswerElsewhere records id as answered by actor outside the bot (the
// console) and returns the question.answered event that says so, to sign
// and send to the bot. Later answers get 409 already_answered.
func (b *Backend) AnswerElsewhere(tenant, id, actor string, ans approval.Answer, at time.Time) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.question(id)
	if t.status != QuestionPending {
		return nil, fmt.Errorf("question %s is already %s", id, t.status)
	}
	if why := ans.Check(&t.question); why != "" && !t.learned {
		return nil, errors.New(why)
	}
	t.status, t.actor, t.answer = QuestionAnswered, actor, &ans
	return QuestionAnsweredEvent(tenant, approval.QuestionAnsweredData{QuestionID: id, Revision: t.revision, Answer: &ans,
		Actor: actor, Via: "console", Message: "The job received the answer of " + actor + "."}, at)
}

// CancelQuestion cancels id (later calls get 410 cancelled) and returns
// the question.cancelled event that says so.
func (b *Backend) CancelQuestion(tenant, id, reason string, at time.Time) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.question(id).status = QuestionCancelled
	return QuestionCancelledEvent(tenant, approval.QuestionCancelledData{QuestionID: id, Reason: reason}, at)
}

// Answers lists every answer request received, in order.
func (b *Backend) Answers() []ReceivedAnswer {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.answers)
}

// QuestionLookups lists every question look-up received, in order.
func (b *Backend) QuestionLookups() []ReceivedQuestionLookup {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.questionLookups)
}

// question must be called with b.mu held.
func (b *Backend) question(id string) *questionTruth {
	t := b.questions[id]
	if t == nil {
		panic("standin: no question " + id + "; AddQuestion it first")
	}
	return t
}

// learnQuestion takes a call for a question not added as pending at the
// revision it names, with Learn: its choices are not known, so any the
// protocol allows is taken, and its look-up is not_found. b.mu is held.
func (b *Backend) learnQuestion(id string, revision int) {
	t := b.questions[id]
	if !b.learn || (t != nil && (!t.learned || revision <= t.revision)) {
		return
	}
	if t == nil {
		t = &questionTruth{status: QuestionPending, learned: true}
		b.questions[id] = t
	}
	t.revision = revision
}

// QuestionAskedEvent is a question.asked event of tenant at, with data d,
// to sign and send to the bot; its event id is FreshID("evt-q", at).
func QuestionAskedEvent(tenant string, d approval.QuestionAskedData, at time.Time) ([]byte, error) {
	return event(approval.EventQuestionAsked, tenant, d, at)
}

// QuestionAnsweredEvent is a question.answered event.
func QuestionAnsweredEvent(tenant string, d approval.QuestionAnsweredData, at time.Time) ([]byte, error) {
	return event(approval.EventQuestionAnswered, tenant, d, at)
}

// QuestionCancelledEvent is a question.cancelled event.
func QuestionCancelledEvent(tenant string, d approval.QuestionCancelledData, at time.Time) ([]byte, error) {
	return event(approval.EventQuestionCancelled, tenant, d, at)
}

// event writes an event and checks it as the bot will.
func event(typ approval.EventType, tenant string, data any, at time.Time) ([]byte, error) {
	body, err := json.Marshal(map[string]any{"id": FreshID("evt-q", at), "type": typ,
		"time": at.UTC().Format(time.RFC3339Nano), "tenant": tenant, "data": data})
	if err != nil {
		return nil, fmt.Errorf("standin: encode %s: %w", typ, err)
	}
	if _, err := approval.Parse(body); err != nil {
		return nil, fmt.Errorf("standin: %s: %w", typ, err)
	}
	return body, nil
}

func (b *Backend) serveAnswer(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	writeAnswer(w, b.onAnswer(r, c, err))
}

func (b *Backend) onAnswer(r *http.Request, c call, err error) *answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	ans := b.receive(r, &c, err)
	rec := ReceivedAnswer{QuestionID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigErr == nil, Body: c.body}
	if ans == nil {
		ans = b.answerQuestion(c, &rec.Request)
	}
	rec.Status, rec.Code, rec.Replay = ans.status, ans.code, ans.replay
	b.answers = append(b.answers, rec)
	b.record()
	return ans
}

// answerQuestion answers an answer that passed receive. b.mu is held.
func (b *Backend) answerQuestion(c call, req *AnswerRequest) *answer {
	var wire answerWire
	bad := decode(c.body, &wire, answerSchema)
	*req = wire.AnswerRequest
	req.Unanswered = wire.Unanswered != nil && *wire.Unanswered
	replayKey := "question\x00" + c.id + "\x00" + c.key
	if ans := b.replay(replayKey, c.body, "answer"); ans != nil {
		return ans
	}
	if bad != nil {
		return bad
	}
	automatic := strings.HasPrefix(req.Actor, "system:") || req.Via.Surface == "deadline"
	switch {
	case req.QuestionID != c.id:
		return invalid("question_id: %q differs from the path's %q", req.QuestionID, c.id)
	case req.Revision < 1:
		return invalid("revision: want ≥ 1")
	case req.Actor == "":
		return invalid("actor: required")
	case req.Via.Surface == "":
		return invalid("via.surface: required")
	case wire.Unanswered != nil && !*wire.Unanswered:
		return invalid("unanswered: only true, or leave it out")
	case req.Unanswered && req.Answer != nil:
		return invalid("an answer, or unanswered: not both")
	case !req.Unanswered && req.Answer == nil:
		return invalid("answer: required (or unanswered: true from the deadline)")
	case req.Answer != nil && req.Answer.Choice != nil && req.Answer.Text != "":
		return invalid("answer: a choice or text, not both")
	case req.Answer != nil && req.Answer.Choice == nil && strings.TrimSpace(req.Answer.Text) == "":
		return invalid("answer.text: required")
	case req.Answer != nil && utf8.RuneCountInString(req.Answer.Text) > approval.MaxAnswerText:
		return invalid("answer.text: longer than %d characters", approval.MaxAnswerText)
	}

	b.learnQuestion(c.id, req.Revision)
	t := b.questions[c.id]
	switch {
	case t == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "question " + c.id + " is not known here"}
	case t.status == QuestionCancelled:
		return &answer{status: http.StatusGone, code: "cancelled", message: "question " + c.id + " was cancelled: the job no longer waits for it"}
	case b.forbidden[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " may not answer question " + c.id,
			extra: map[string]string{"actor": req.Actor}}
	case req.Unanswered && !automatic:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: "only the deadline closes a question unanswered"}
	case req.Answer != nil && automatic:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: "an automatic answer may only say nobody answered"}
	case req.QuestionSHA256 != "" && b.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden",
			message: req.Actor + " does not hold the content permission: an answer from them carries no question_sha256",
			extra:   map[string]string{"actor": req.Actor}}
	case req.Answer != nil && t.restricted && b.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden",
			message: req.Actor + " does not hold the content permission, so they may not answer a restricted question",
			extra:   map[string]string{"actor": req.Actor}}
	case req.Revision < t.revision:
		return &answer{status: http.StatusConflict, code: "stale_revision",
			message: fmt.Sprintf("question %s changed (revision %d is now %d): look at the new card", c.id, req.Revision, t.revision)}
	case req.Revision > t.revision:
		return invalid("revision: question %s has no revision %d", c.id, req.Revision)
	case t.status != QuestionPending:
		fmt.Fprintf(b.out, "answer to %s revision %d by %s: refused, already %s by %s\n", c.id, req.Revision, req.Actor, t.status, t.actor)
		return &answer{status: http.StatusConflict, code: "already_answered",
			message: fmt.Sprintf("question %s was already %s by %s", c.id, t.status, t.actor),
			extra:   map[string]string{"status": t.status, "actor": t.actor}}
	}
	if req.QuestionSHA256 != "" && !t.learned && req.QuestionSHA256 != approval.QuestionDigest(&t.question) {
		fmt.Fprintf(b.out, "answer to %s revision %d by %s: refused, not the question asked\n", c.id, req.Revision, req.Actor)
		return &answer{status: http.StatusUnprocessableEntity, code: "digest_mismatch",
			message: fmt.Sprintf("question %s is not the question %s you answered: look at it again", c.id, req.QuestionSHA256)}
	}
	if req.Answer != nil && !t.learned {
		if why := req.Answer.Check(&t.question); why != "" {
			fmt.Fprintf(b.out, "answer to %s revision %d by %s: refused, %s\n", c.id, req.Revision, req.Actor, why)
			return invalid("answer: %s", why)
		}
	} else if req.Answer != nil && req.Answer.Choice != nil && (*req.Answer.Choice < 0 || *req.Answer.Choice >= approval.MaxChoices) {
		return invalid("answer.choice: want an integer from 0 to %d", approval.MaxChoices-1)
	}

	msg := "The job received the answer of " + req.Actor + "."
	if req.Unanswered {
		t.status, t.actor = QuestionUnanswered, req.Actor
		msg = "Nobody answered: the job was told so."
	} else {
		a := *req.Answer
		t.status, t.actor, t.answer = QuestionAnswered, req.Actor, &a
	}
	fmt.Fprintln(b.out, printedAnswer(t, req))
	body, _ := json.Marshal(map[string]string{"status": t.status, "message": msg}) // strings always encode
	b.replies[replayKey] = reply{request: bytes.Clone(c.body), answer: body}
	return &answer{status: http.StatusOK, body: body}
}

// shownMax bounds the answer's words on the stand-in's log line.
const shownMax = 200

// printedAnswer is the line Out gets for a recorded answer: the words
// redacted of secret shapes, bounded and quoted (control and invisible
// characters escaped), as a terminal must get a stranger's words.
func printedAnswer(t *questionTruth, req *AnswerRequest) string {
	status := QuestionAnswered
	if req.Unanswered {
		status = QuestionUnanswered
	}
	line := fmt.Sprintf("%s %s revision %d by %s via %s", status, req.QuestionID, req.Revision, req.Actor, req.Via.Surface)
	if req.Via.User != "" {
		line += " (" + req.Via.User + ")"
	}
	switch a := req.Answer; {
	case a == nil:
		if req.Comment != "" {
			line += ": " + shown(req.Comment)
		}
	case a.Choice != nil && !t.learned:
		line += fmt.Sprintf(": choice %d %s", *a.Choice+1, shown(t.question.Choices[*a.Choice]))
	case a.Choice != nil:
		line += fmt.Sprintf(": choice %d", *a.Choice+1)
	default:
		line += ": " + shown(a.Text)
	}
	return line
}

// shown is s as a log line shows a stranger's words: RedactText, at most
// shownMax characters, quoted.
func shown(s string) string {
	s = approval.RedactText(s)
	if utf8.RuneCountInString(s) > shownMax {
		s = string([]rune(s)[:shownMax]) + "…"
	}
	return fmt.Sprintf("%q", s)
}

func (b *Backend) serveQuestionLookup(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	writeAnswer(w, b.onQuestionLookup(r, c, err))
}

func (b *Backend) onQuestionLookup(r *http.Request, c call, err error) *answer {
	b.mu.Lock()
	defer b.mu.Unlock()
	ans := b.receive(r, &c, err)
	rec := ReceivedQuestionLookup{QuestionID: c.id, IdempotencyKey: c.key, SignatureOK: c.sigErr == nil, Body: c.body}
	if ans == nil {
		ans = b.lookUpQuestion(c, &rec.Request)
	}
	rec.Status, rec.Code = ans.status, ans.code
	b.questionLookups = append(b.questionLookups, rec)
	b.record()
	return ans
}

// lookUpQuestion answers a question look-up that passed receive: the
// content permission decides as for an argument look-up. A look-up for
// a lower revision is stale: the question was asked again. b.mu is held.
func (b *Backend) lookUpQuestion(c call, req *QuestionLookupRequest) *answer {
	if a := decode(c.body, req, questionLookupSchema); a != nil {
		return a
	}
	switch {
	case req.QuestionID != c.id:
		return invalid("question_id: %q differs from the path's %q", req.QuestionID, c.id)
	case req.Revision < 1:
		return invalid("revision: want ≥ 1")
	case req.Actor == "":
		return invalid("actor: required")
	}
	b.learnQuestion(c.id, req.Revision)
	t := b.questions[c.id]
	switch {
	case t == nil:
		return &answer{status: http.StatusNotFound, code: "not_found", message: "question " + c.id + " is not known here"}
	case t.status == QuestionCancelled:
		return &answer{status: http.StatusGone, code: "cancelled", message: "question " + c.id + " was cancelled: the job no longer waits for it"}
	case b.forbidden[req.Actor] || b.noContent[req.Actor]:
		return &answer{status: http.StatusForbidden, code: "forbidden", message: req.Actor + " does not hold the content permission"}
	case req.Revision > t.revision:
		return invalid("revision: question %s has no revision %d", c.id, req.Revision)
	case req.Revision < t.revision:
		return &answer{status: http.StatusConflict, code: "stale_revision",
			message: fmt.Sprintf("question %s was asked again (revision %d is now %d): look at the new card", c.id, req.Revision, t.revision)}
	case t.learned:
		fmt.Fprintf(b.out, "question %s revision %d for %s: not known here (bot question tells the stand-in)\n", c.id, req.Revision, req.Actor)
		return &answer{status: http.StatusNotFound, code: "not_found", message: "the stand-in backend does not know the text of question " + c.id}
	}
	body, err := json.Marshal(QuestionAnswer{QuestionID: c.id, Revision: t.revision, Question: t.question})
	if err != nil { // strings and a bool
		return &answer{status: http.StatusInternalServerError, code: "internal", message: err.Error()}
	}
	fmt.Fprintf(b.out, "question %s revision %d shown to %s\n", c.id, req.Revision, req.Actor)
	return &answer{status: http.StatusOK, body: body}
}

// serveQuestions takes a question `bot question` is about to ask: its
// data as question.asked carries it, checked as the bot will.
func (b *Backend) serveQuestions(w http.ResponseWriter, r *http.Request) {
	c, err := read(w, r)
	if err != nil || r.Method != http.MethodPost {
		writeAnswer(w, invalid("POST a JSON body"))
		return
	}
	var d approval.QuestionAskedData
	if bad := decode(c.body, &d, askedSchema); bad != nil {
		writeAnswer(w, bad)
		return
	}
	if _, err := QuestionAskedEvent(d.Tenant, d, time.Now()); err != nil || d.Question == nil {
		writeAnswer(w, invalid("not a question the bot takes: %v", err))
		return
	}
	b.mu.Lock()
	err = b.addQuestion(d.ID, d.Revision, *d.Question, d.Content.Restricted)
	b.mu.Unlock()
	if err != nil {
		writeAnswer(w, invalid("question %s: %v", d.ID, err))
		return
	}
	fmt.Fprintf(b.out, "question %s revision %d asked (%d choices, free text %v, restricted %v)\n",
		d.ID, d.Revision, len(d.Question.Choices), d.Question.FreeText, d.Content.Restricted)
	body, _ := json.Marshal(map[string]any{"question_id": d.ID, "revision": d.Revision}) // cannot fail
	writeAnswer(w, &answer{status: http.StatusOK, body: body})
}
