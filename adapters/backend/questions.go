package backend

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/internal/strictjson"
	"approvalsbot/threads"
)

// The calls of docs/protocol.md#questions: an answer to an agent's
// question, and the look-up of a restricted question's text.

// AnswerRequest is POST /v1/questions/{id}/answer's body: a person's
// answer (Answer), or the deadline's word that nobody answered
// (Unanswered, with Comment "nobody answered").
type AnswerRequest struct {
	QuestionID string      `json:"question_id"`
	Revision   int         `json:"revision"`
	Answer     *AnswerBody `json:"answer,omitempty"`
	Unanswered bool        `json:"unanswered,omitempty"`
	Actor      string      `json:"actor"`
	Via        Via         `json:"via"`
	Comment    string      `json:"comment,omitempty"`
	// QuestionSHA256 is the digest of the question the person read
	// (approval.QuestionDigest), sent exactly when they hold the content
	// permission, as a decision's args_sha256 is.
	QuestionSHA256 string `json:"question_sha256,omitempty"`
}

// AnswerBody is an answer: the index of one of the question's choices,
// or words as the person wrote them. Exactly one is set.
type AnswerBody struct {
	Choice *int   `json:"choice,omitempty"`
	Text   string `json:"text,omitempty"`
}

// AnswerResult is the backend's answer to an answer.
type AnswerResult struct {
	Outcome Outcome
	// Status is "answered" or "unanswered": this answer's, or (already
	// answered) the earlier one's.
	Status  string
	Actor   string // who answered first (already answered)
	Message string
}

// QuestionRequest is POST /v1/questions/{id}/question's body: the
// look-up of a restricted question for a member.
type QuestionRequest struct {
	QuestionID string `json:"question_id"`
	Revision   int    `json:"revision"`
	Actor      string `json:"actor"`
}

// QuestionResult is the look-up's answer: the question when Outcome is
// OutcomeOK.
type QuestionResult struct {
	Outcome  Outcome
	Question *approval.Question
	Message  string
}

// answerAnswer is the body of a 200 to an answer.
type answerAnswer struct {
	Status  string `json:"status"`
	Message string `json:"message"`
}

// questionAnswer is the body of a 200 to a look-up.
type questionAnswer struct {
	QuestionID string             `json:"question_id"`
	Revision   int                `json:"revision"`
	Question   *approval.Question `json:"question"`
}

var (
	answerAnswerKeys   = strictjson.For[answerAnswer]()
	questionAnswerKeys = strictjson.For[questionAnswer]()
)

// OutcomeAlreadyAnswered: 409 already_answered; Status and Actor say
// what and who.
const OutcomeAlreadyAnswered Outcome = "already_answered"

// OutcomeInvalid: 422 invalid to an answer (a choice that is not one,
// words over the backend's bound); Message says why.
const OutcomeInvalid Outcome = "invalid"

var answerOutcomes = map[statusCode]Outcome{
	{http.StatusConflict, "already_answered"}:           OutcomeAlreadyAnswered,
	{http.StatusConflict, "stale_revision"}:             OutcomeStaleRevision,
	{http.StatusUnprocessableEntity, "invalid"}:         OutcomeInvalid,
	{http.StatusUnprocessableEntity, "digest_mismatch"}: OutcomeDigestMismatch,
	{http.StatusForbidden, "forbidden"}:                 OutcomeForbidden,
	{http.StatusNotFound, "not_found"}:                  OutcomeNotFound,
	{http.StatusGone, "cancelled"}:                      OutcomeCancelled,
}

var questionOutcomes = map[statusCode]Outcome{
	{http.StatusConflict, "stale_revision"}: OutcomeStaleRevision,
	{http.StatusForbidden, "forbidden"}:     OutcomeForbidden,
	{http.StatusNotFound, "not_found"}:      OutcomeNotFound,
	{http.StatusGone, "cancelled"}:          OutcomeCancelled,
}

func (r AnswerRequest) validate() error {
	var errs []error
	if validID(r.QuestionID) != nil {
		errs = append(errs, errors.New("question_id: want 1–64 of [A-Za-z0-9._:-]"))
	}
	if r.Revision < 1 {
		errs = append(errs, errors.New("revision: want ≥ 1"))
	}
	if r.Actor == "" || r.Via.Surface == "" {
		errs = append(errs, errors.New("actor and via.surface are required"))
	}
	if r.QuestionSHA256 != "" && !digestPattern.MatchString(r.QuestionSHA256) {
		errs = append(errs, errors.New("question_sha256: want sha256:<64 lowercase hex>"))
	}
	switch {
	case r.Unanswered && r.Answer != nil:
		errs = append(errs, errors.New("an unanswered question carries no answer"))
	case r.Unanswered:
		// Nothing the bot does by itself answers a question: the deadline
		// only says that nobody did.
		if r.Via.Surface != threads.DeadlineSurface {
			errs = append(errs, errors.New("only the deadline says nobody answered"))
		}
	case r.Answer == nil:
		errs = append(errs, errors.New("answer: required"))
	case r.Via.Surface == threads.DeadlineSurface:
		errs = append(errs, errors.New("the deadline never answers a question"))
	case r.Answer.Choice != nil && r.Answer.Text != "":
		errs = append(errs, errors.New("answer: a choice or text, not both"))
	case r.Answer.Choice != nil && (*r.Answer.Choice < 0 || *r.Answer.Choice >= approval.MaxChoices):
		errs = append(errs, fmt.Errorf("answer.choice: want 0 to %d", approval.MaxChoices-1))
	case r.Answer.Choice == nil && strings.TrimSpace(r.Answer.Text) == "":
		errs = append(errs, errors.New("answer.text: empty"))
	case utf8.RuneCountInString(r.Answer.Text) > approval.MaxAnswerText:
		errs = append(errs, fmt.Errorf("answer.text: over %d characters", approval.MaxAnswerText))
	}
	return errors.Join(errs...)
}

// Answer sends an answer to a question (or the deadline's word that
// nobody answered), retrying as Decide does under idempotencyKey.
func (c *Client) Answer(ctx context.Context, r AnswerRequest, idempotencyKey string) (AnswerResult, error) {
	op := fmt.Sprintf("answer %s revision %d", r.QuestionID, r.Revision)
	if !c.questions {
		return AnswerResult{}, fmt.Errorf("%s: the backend does not list the %s feature", op, FeatureQuestions)
	}
	if err := r.validate(); err != nil {
		return AnswerResult{}, fmt.Errorf("%s: %w", op, err)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return AnswerResult{}, fmt.Errorf("%s: encode: %w", op, err)
	}
	ans, err := c.postTo(ctx, op, r.QuestionID, "answer", c.base+"/v1/questions/"+url.PathEscape(r.QuestionID)+"/answer", body, idempotencyKey)
	if err != nil {
		return AnswerResult{}, err
	}
	if ans.status/100 == 2 {
		var ok answerAnswer
		if err := decodeAnswer(ans.body, answerAnswerKeys, &ok); err != nil {
			return AnswerResult{}, fmt.Errorf("%s: read answer %d: %w", op, ans.status, err)
		}
		want := "answered"
		if r.Unanswered {
			want = "unanswered"
		}
		if ok.Status != want {
			return AnswerResult{}, fmt.Errorf("%s: answer %d: status %q, want %q", op, ans.status, ok.Status, want)
		}
		return AnswerResult{Outcome: OutcomeRecorded, Status: ok.Status, Message: ok.Message}, nil
	}
	e := ans.errorBody()
	out, ok := answerOutcomes[statusCode{ans.status, e.Code}]
	if !ok {
		return AnswerResult{}, fmt.Errorf("%s: %w", op, e.protocolError(ans.status))
	}
	res := AnswerResult{Outcome: out, Message: e.Message}
	if out == OutcomeAlreadyAnswered {
		res.Status, res.Actor = e.Status, e.Actor
	}
	return res, nil
}

// Question looks up a restricted question for r.Actor.
func (c *Client) Question(ctx context.Context, r QuestionRequest, idempotencyKey string) (QuestionResult, error) {
	op := fmt.Sprintf("look up question %s revision %d", r.QuestionID, r.Revision)
	switch {
	case !c.questions:
		return QuestionResult{}, fmt.Errorf("%s: the backend does not list the %s feature", op, FeatureQuestions)
	case validID(r.QuestionID) != nil || r.Revision < 1 || r.Actor == "":
		return QuestionResult{}, fmt.Errorf("%s: question_id, revision ≥ 1 and actor are required", op)
	}
	body, err := json.Marshal(r)
	if err != nil {
		return QuestionResult{}, fmt.Errorf("%s: encode: %w", op, err)
	}
	ans, err := c.postTo(ctx, op, r.QuestionID, "question", c.base+"/v1/questions/"+url.PathEscape(r.QuestionID)+"/question", body, idempotencyKey)
	if err != nil {
		return QuestionResult{}, err
	}
	if ans.status/100 == 2 {
		var ok questionAnswer
		if err := decodeAnswer(ans.body, questionAnswerKeys, &ok); err != nil {
			return QuestionResult{}, fmt.Errorf("%s: read answer %d: %w", op, ans.status, err)
		}
		if ok.QuestionID != r.QuestionID || ok.Revision != r.Revision || ok.Question == nil {
			return QuestionResult{}, fmt.Errorf("%s: answer %d: not the question of this id and revision", op, ans.status)
		}
		if why := approval.CheckQuestion(ok.Question); why != "" {
			return QuestionResult{}, fmt.Errorf("%s: answer %d: question.%s", op, ans.status, why)
		}
		return QuestionResult{Outcome: OutcomeOK, Question: ok.Question}, nil
	}
	e := ans.errorBody()
	out, ok := questionOutcomes[statusCode{ans.status, e.Code}]
	if !ok {
		return QuestionResult{}, fmt.Errorf("%s: %w", op, e.protocolError(ans.status))
	}
	return QuestionResult{Outcome: out, Message: e.Message}, nil
}

// threads' side of the calls.

func (b threadsBackend) Answer(ctx context.Context, a threads.AnswerCall) (threads.DecisionAnswer, error) {
	r := AnswerRequest{QuestionID: a.QuestionID, Revision: a.Revision, Actor: a.Actor, Via: Via{Surface: a.Surface, User: a.User},
		QuestionSHA256: a.QuestionSHA256}
	if a.Answer == nil {
		r.Unanswered, r.Comment = true, threads.DeadlineComment
	} else {
		r.Answer = &AnswerBody{Choice: a.Answer.Choice, Text: a.Answer.Text}
	}
	res, err := b.c.Answer(ctx, r, a.IdempotencyKey)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return threads.DecisionAnswer{}, fmt.Errorf("%w: %w", threads.ErrBackendUnavailable, err)
		}
		return threads.DecisionAnswer{}, err
	}
	out := threads.DecisionAnswer{Status: approval.State(res.Status), Actor: res.Actor, Message: res.Message}
	switch res.Outcome {
	case OutcomeRecorded:
		out.Outcome = threads.DecisionRecorded
		out.Status = approval.StateAnswered
		if r.Unanswered {
			out.Status = approval.StateExpired
		}
	case OutcomeAlreadyAnswered:
		out.Outcome = threads.DecisionAlreadyDecided
		out.Status = approval.StateAnswered
		if res.Status == "unanswered" {
			out.Status = approval.StateExpired
		}
	case OutcomeInvalid, OutcomeDigestMismatch:
		out.Outcome = threads.DecisionDigestMismatch // the backend's own sentence, shown as it wrote it
	default:
		o, ok := threadsOutcome(res.Outcome)
		if !ok {
			return threads.DecisionAnswer{}, fmt.Errorf("answer to %s: unexpected outcome %q", a.QuestionID, res.Outcome)
		}
		out.Outcome = o
	}
	return out, nil
}

func (b threadsBackend) Question(ctx context.Context, q threads.QuestionCall) (threads.QuestionLookup, error) {
	res, err := b.c.Question(ctx, QuestionRequest{QuestionID: q.QuestionID, Revision: q.Revision, Actor: q.Actor}, q.IdempotencyKey)
	if err != nil {
		if errors.Is(err, ErrUnavailable) {
			return threads.QuestionLookup{}, fmt.Errorf("%w: %w", threads.ErrBackendUnavailable, err)
		}
		return threads.QuestionLookup{}, err
	}
	switch res.Outcome {
	case OutcomeOK:
		return threads.QuestionLookup{Question: res.Question}, nil
	case OutcomeForbidden:
		return threads.QuestionLookup{Forbidden: true, Message: res.Message}, nil
	case OutcomeNotFound, OutcomeCancelled, OutcomeStaleRevision:
		return threads.QuestionLookup{Gone: true, Message: res.Message}, nil
	}
	return threads.QuestionLookup{}, fmt.Errorf("question %s: unexpected outcome %q", q.QuestionID, res.Outcome)
}
