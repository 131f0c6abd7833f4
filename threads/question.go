package threads

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"approvalsbot/approval"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// An agent's question (docs/protocol.md#questions) waits as an approval
// does, and is kept as one (approval.KindQuestion): the same record, the
// same ladder and deadline, the same cards. What differs is here: a
// person answers it (a choice, or their own words) instead of deciding
// it, and the deadline tells the job that nobody answered.

// QuestionBackend is the job backend's calls for questions; the client
// of a backend configured with the questions feature implements it.
type QuestionBackend interface {
	// Answer sends an answer, or (Answer nil, the deadline) that nobody
	// answered. Recorded answers come back with Status answered or
	// expired; a question answered first, as DecisionAlreadyDecided.
	Answer(ctx context.Context, c AnswerCall) (DecisionAnswer, error)
	// Question looks up a restricted question for a member.
	Question(ctx context.Context, c QuestionCall) (QuestionLookup, error)
}

// AnswerCall is one answer sent to the backend.
type AnswerCall struct {
	QuestionID string
	Revision   int
	// Answer is the person's answer, the words exactly as written; nil is
	// the deadline's word that nobody answered.
	Answer  *approval.Answer
	Actor   string
	Surface string // slack, discord, email, page, deadline
	User    string // the surface's user id; "" for the deadline
	// QuestionSHA256 is the question's digest when the person holds the
	// content permission; else "" (as a decision's args_sha256).
	QuestionSHA256 string
	IdempotencyKey string
}

// QuestionCall asks the backend for a restricted question's content.
type QuestionCall struct {
	QuestionID     string
	Revision       int
	Actor          string
	IdempotencyKey string
}

// QuestionLookup is the backend's answer to a question look-up.
type QuestionLookup struct {
	Question  *approval.Question
	Forbidden bool // the member lacks the content permission
	Gone      bool // not found, cancelled, or changed since
	Message   string
}

// QuestionDialog is what Answer…'s dialog shows: the question (redacted
// and bounded; "" for a restricted question, which the dialog of a
// shared card never shows) and the bound of the words.
type QuestionDialog struct {
	Text       string
	Restricted bool
	Max        int
	// Label, Goes and Title word the dialog (say.AnswerLabel…).
	Label, Goes, Title, Submit string
}

// ShownQuestion is a restricted question shown privately to a member
// with the content permission (Show question): its text, its choices as
// buttons bound to the revision shown, and Answer… when it takes words.
type ShownQuestion struct {
	// Text is the question redacted, whole: each surface fits it to its
	// own bounds (Slack splits it into quotes, the page shows it all).
	Text       string
	Choices    []templates.Button
	AnswerText *templates.Action
}

// isQuestionRow reports whether the approval row is an agent's question
// (its frozen plan says so). A question's row is listed under the
// function "question" (ingest), so a call's row by any other name is
// told apart without reading its plan: the check runs in the ingest's
// and the answer's transactions.
func isQuestionRow(row *store.Approval) bool {
	_, ok := questionPlan(row)
	return ok
}

// questionPlan is a question's row's frozen plan; false for a call's.
func questionPlan(row *store.Approval) (Frozen, bool) {
	if row.Function != string(approval.KindQuestion) {
		return Frozen{}, false
	}
	fz, err := frozenOf(row)
	return fz, err == nil && fz.Question
}

// questionEvent reports whether ev is one of a question's events.
func questionEvent(t approval.EventType) bool {
	switch t {
	case approval.EventQuestionAsked, approval.EventQuestionAnswered, approval.EventQuestionCancelled:
		return true
	}
	return false
}

// checkQuestionEvent refuses a question's event the bot cannot take: its
// backend is not configured with questions, or the id names a call (or a
// call's event names a question). It answers like Parse.
func (s *Service) checkQuestionEvent(ev *approval.Event, row *store.Approval) error {
	q := questionEvent(ev.Type)
	if q && !s.questions {
		return &approval.ValidationError{Problems: []*approval.FieldError{{Path: "type",
			Msg: "questions are not enabled: the bot's backend.features does not list questions"}}}
	}
	if row == nil || !row.Seen || ev.ApprovalID() == "" {
		return nil
	}
	if held := isQuestionRow(row); held != q {
		path, what := "data.approval_id", "a question"
		if ev.Approval != nil {
			path = "data.id"
		}
		if q {
			path, what = "data.question_id", "a call"
			if ev.Approval != nil {
				path = "data.id"
			}
		}
		return &approval.ValidationError{Problems: []*approval.FieldError{{Path: path,
			Msg: "names " + what + " the bot holds, not this kind of event's"}}}
	}
	return nil
}

// clickAnswer records a person's answer: a choice (ActionAnswer) or
// Answer…'s words (ActionAnswerText, in Comment). Like a decision, it is
// recorded before the click is answered, one answer is in flight at a
// time, and the first to reach the backend wins.
func (s *Service) clickAnswer(ctx context.Context, req ClickRequest) Clicked {
	if utf8.RuneCountInString(req.Comment) > approval.MaxAnswerText {
		return Clicked{Retry: true, Reason: say.Reason{Kind: say.AnswerTooLong, Act: say.Answering, Count: approval.MaxAnswerText}}
	}
	ctx, cancel := context.WithTimeout(ctx, RecordBound)
	defer cancel()
	row, out := s.clickedRow(ctx, req)
	if row == nil {
		return out
	}
	res, err := s.answer(ctx, req, row)
	if err != nil {
		s.log.Error("record an answer", append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
		return Clicked{Tenant: row.Tenant, Retry: true, Reason: failed(err, say.NotRecorded, say.Decision)}
	}
	if !res.Sent {
		s.refused(req, row.Tenant, res.Reason)
	}
	return Clicked{Tenant: row.Tenant, Sent: res.Sent, Reason: res.Reason, Card: res.Card, Retry: res.retry}
}

// answered is what became of an answer.
type answered struct {
	Sent   bool
	Reason say.Reason
	Card   *Card
	retry  bool // the words may be sent again (empty, too long)
}

// answerable checks that the person may answer this revision of a
// question now: a member who may decide, a question, and, restricted,
// a holder of the content permission (the backend's 403 decides who is
// walled). It returns the question's revision, or why not.
func (s *Service) answerable(ctx context.Context, tenantID string, act templates.Action, who Person) (tenant.Member, *approval.Approval, say.Reason, error) {
	t, m, why := s.member(tenantID, who, say.Answering)
	if !why.IsZero() {
		why.Act = say.Answering
		return m, nil, why, nil
	}
	a, why, err := s.revisionOf(ctx, tenantID, act.ApprovalID, act.Revision, say.Answering)
	if !why.IsZero() || err != nil {
		return m, nil, why, err
	}
	if !a.IsQuestion() {
		return m, nil, say.Reason{Kind: say.NotAQuestion, Act: say.Answering}, nil
	}
	if !s.questions {
		return m, nil, say.Reason{Kind: say.QuestionsOff, Act: say.Answering}, nil
	}
	if a.ContentRestricted() && !m.Content {
		return m, nil, say.Reason{Kind: say.QuestionHidden, Act: say.Answering, Tenant: tenantID}, nil
	}
	// An answer decides how the job goes on, as a decision does: what
	// refuses any decision (the job's own starter where the tenant
	// forbids it) refuses an answer too, as the decision page does.
	if why := refuse(t, m, a, false); !why.IsZero() {
		why.Act = say.Answering
		return m, nil, why, nil
	}
	return m, a, say.Reason{}, nil
}

// answerOf is the answer a click gives, checked against the question as
// stored (a restricted question's choices are not: the backend checks
// them), or why it is none.
func answerOf(req ClickRequest, a *approval.Approval) (*approval.Answer, say.Reason) {
	var ans approval.Answer
	switch req.Action.Kind {
	case templates.ActionAnswer:
		c := req.Action.Choice
		ans.Choice = &c
		if req.Comment != "" {
			return nil, say.Reason{Kind: say.UnknownButton, Act: say.Answering}
		}
	case templates.ActionAnswerText:
		ans.Text = req.Comment
	default:
		return nil, say.Reason{Kind: say.UnknownButton, Act: say.Answering}
	}
	q := a.Question
	if a.ContentRestricted() {
		q = nil // its choices are withheld: the form is checked, the backend checks the rest
	}
	switch why := ans.Check(q); {
	case why == "":
	case ans.Choice != nil:
		return nil, say.Reason{Kind: say.NotAChoice, Act: say.Answering}
	case strings.TrimSpace(ans.Text) == "":
		return nil, say.Reason{Kind: say.AnswerEmpty, Act: say.Answering}
	case utf8.RuneCountInString(ans.Text) > approval.MaxAnswerText:
		return nil, say.Reason{Kind: say.AnswerTooLong, Act: say.Answering, Count: approval.MaxAnswerText}
	default:
		return nil, say.Reason{Kind: say.AnswerWordsOff, Act: say.Answering}
	}
	if a.Question != nil && !a.Question.FreeText && ans.Choice == nil {
		return nil, say.Reason{Kind: say.AnswerWordsOff, Act: say.Answering}
	}
	return &ans, say.Reason{}
}

// answer checks the answer and records it with its outbox row in one
// transaction, as decide does a decision.
func (s *Service) answer(ctx context.Context, req ClickRequest, row *store.Approval) (answered, error) {
	ctx = ForPerson(ctx)
	act := req.Action
	m, a, why, err := s.answerable(ctx, row.Tenant, act, req.Person)
	if !why.IsZero() || err != nil {
		return answered{Reason: why}, err
	}
	ans, why := answerOf(req, a)
	if !why.IsZero() {
		return answered{Reason: why, retry: why.Kind == say.AnswerEmpty || why.Kind == say.AnswerTooLong}, nil
	}
	now := s.clock.Now()
	d := deciding{Actor: m.User, Surface: req.Person.Surface, User: req.Person.User, Channel: req.Person.Channel,
		Reply: req.Person.Reply, Revision: act.Revision, At: now, Answer: ans}
	if m.Content {
		d.Digest = a.QuestionSHA256
	}
	var res answered
	var written *store.Approval
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		row, err := tx.ApprovalGetForUpdate(ctx, act.ApprovalID)
		if errors.Is(err, store.ErrNotFound) {
			res = answered{Reason: say.Reason{Kind: say.UnknownCard, Act: say.Answering}}
			return nil
		}
		if err != nil {
			return err
		}
		if why := stale(row, act.Revision, say.Answering); !why.IsZero() {
			res = answered{Reason: why}
			return nil
		}
		received := req.ReceivedAt
		if received.IsZero() {
			received = now
		}
		deadlineAt := row.DeadlineAt
		staged, waiting := waitingDeadline(row, now)
		if waiting {
			deadlineAt = staged.Due
		}
		if !deadlineAt.IsZero() && !received.Before(deadlineAt) {
			res = answered{Reason: say.Reason{Kind: say.DeadlinePassed, Act: say.Answering}}
			return nil
		}
		if waiting {
			// An answer received before the deadline takes the place of
			// its "nobody answered", with the deadline armed again
			// should the answer not land.
			row.Deciding = nil
			row.DeadlineAt = staged.Due
		}
		if other, ok := decidingOf(row); ok {
			res = answered{Reason: say.Reason{Kind: say.Deciding, Act: say.Answering, Actor: other.Actor}}
			return nil
		}
		row.UpdatedAt = now
		dec := s.decisionRowFor(row, d, now, now)
		row.Deciding, _ = json.Marshal(d) // plain data: cannot fail
		if err := tx.ApprovalUpsert(ctx, row); err != nil {
			return err
		}
		res, written = answered{Sent: true, Reason: say.Reason{Kind: say.AnswerSending, Act: say.Answering}}, row
		return s.insert(ctx, tx, []store.OutboxInsertParams{dec})
	})
	if errors.Is(err, store.ErrCommit) && written != nil && s.recorded(ctx, act.ApprovalID, d, false) {
		err, res.Sent = nil, true
	}
	if err != nil {
		return answered{}, fmt.Errorf("record the answer to %s: %w", act.ApprovalID, err)
	}
	if res.Sent {
		s.Wake()
		res.Card = s.clickedCard(written, a, now)
	}
	return res, nil
}

// askAnswer is Answer…'s click: the dialog for words, or why not.
// Nothing is recorded.
func (s *Service) askAnswer(ctx context.Context, req ClickRequest) Clicked {
	ctx, cancel := context.WithTimeout(ctx, RecordBound)
	defer cancel()
	row, out := s.clickedRow(ctx, req)
	if row == nil {
		return out
	}
	out = Clicked{Tenant: row.Tenant}
	_, a, why, err := s.answerable(ctx, row.Tenant, req.Action, req.Person)
	if err != nil {
		s.log.Error("read the question a dialog names", append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
		return Clicked{Tenant: row.Tenant, Retry: true, Reason: failed(err, say.StoreDown, say.Decision)}
	}
	if why.IsZero() {
		why = stale(row, req.Action.Revision, say.Answering)
	}
	if why.IsZero() && a.Question != nil && !a.Question.FreeText {
		why = say.Reason{Kind: say.AnswerWordsOff, Act: say.Answering}
	}
	if !why.IsZero() {
		s.refused(req, row.Tenant, why)
		out.Reason = why
		return out
	}
	d := &QuestionDialog{Max: approval.MaxAnswerText, Restricted: a.ContentRestricted(),
		Label: say.AnswerLabel, Goes: say.AnswerGoes, Title: say.AnswerTitle, Submit: say.AnswerSubmit}
	if d.Restricted {
		d.Goes = say.AnswerWithheld
	} else if a.Question != nil {
		d.Text = templates.QuestionText(a.Question.Text)
	}
	out.Dialog = &Dialog{Question: d, Restricted: d.Restricted}
	return out
}

// showQuestion is Show question on a restricted question's card: the
// question is looked up at the backend as the member who clicked, and
// shown to them alone when they may see it and it is the question the
// card stands for (its digest).
func (s *Service) showQuestion(ctx context.Context, req ClickRequest, row *store.Approval) Clicked {
	out := Clicked{Tenant: row.Tenant}
	t, ok := s.tenants.Tenant(row.Tenant)
	if !ok {
		out.Reason = say.Reason{Kind: say.NotServed, Act: say.LookUp, Tenant: row.Tenant}
		return out
	}
	m, ok := t.MemberOn(req.Person.Surface, req.Person.User)
	if !ok {
		out.Reason = say.Reason{Kind: say.NotMember, Act: say.LookUp, Tenant: row.Tenant}
		return out
	}
	if !m.Content {
		out.Reason = say.Reason{Kind: say.QuestionHidden, Act: say.Answering, Tenant: row.Tenant}
		return out
	}
	qb, ok := s.backend.(QuestionBackend)
	if !ok || !s.questions {
		out.Reason = say.Reason{Kind: say.QuestionsOff, Act: say.Answering}
		return out
	}
	act := req.Action
	a, why, err := s.revisionOf(ctx, row.Tenant, act.ApprovalID, act.Revision, say.LookUp)
	if err != nil {
		s.log.Error("read the question to show", append(req.logArgs(), "tenant", row.Tenant, "err", err.Error())...)
		out.Retry, out.Reason = true, say.Reason{Kind: say.LookupFailed}
		return out
	}
	if !why.IsZero() {
		out.Reason = why
		return out
	}
	ctx, cancel := context.WithTimeout(ctx, showTimeout)
	defer cancel()
	ans, err := qb.Question(ctx, QuestionCall{QuestionID: a.ID, Revision: a.Revision, Actor: m.User, IdempotencyKey: s.newID(s.clock.Now())})
	switch {
	case errors.Is(err, ErrBackendUnavailable):
		out.Reason = say.Reason{Kind: say.BackendDown}
		return out
	case err != nil:
		s.log.Warn("question look-up failed", "tenant", a.Tenant, "approval_id", a.ID, "err", err)
		out.Reason = say.Reason{Kind: say.AnswerUnreadable}
		return out
	case ans.Forbidden:
		out.Reason = say.Reason{Kind: say.LookupForbidden}
		return out
	case ans.Gone:
		out.Reason = say.Reason{Kind: say.LookupGone}
		return out
	}
	if approval.QuestionDigest(ans.Question) != a.QuestionSHA256 {
		s.log.Error("looked-up question does not match the card's: not shown", "tenant", a.Tenant, "approval_id", a.ID)
		out.Reason = say.Reason{Kind: say.DigestMismatch, Digest: a.QuestionSHA256}
		return out
	}
	shown := &ShownQuestion{Text: templates.QuestionWhole(ans.Question.Text)}
	if stale(row, act.Revision, say.Answering).IsZero() {
		for i, c := range ans.Question.Choices {
			b := templates.Action{Kind: templates.ActionAnswer, ApprovalID: a.ID, Revision: a.Revision, Choice: i}
			shown.Choices = append(shown.Choices, templates.Button{Label: templates.ChoiceLabel(c), Action: b,
				Payload: templates.EncodeAction(b)})
		}
		if ans.Question.FreeText {
			shown.AnswerText = &templates.Action{Kind: templates.ActionAnswerText, ApprovalID: a.ID, Revision: a.Revision}
		}
	}
	out.Shown = &Shown{Question: shown}
	return out
}

// performAnswer sends the answer in flight (or the deadline's word that
// nobody answered) and applies the backend's answer, as performDecision
// does a decision's.
func (s *Service) performAnswer(ctx context.Context, row *store.OutboxRow, a *store.Approval, d deciding) error {
	qb, ok := s.backend.(QuestionBackend)
	if !ok || !s.questions {
		// This process's configuration takes no answers (the feature was
		// turned off, or a replica runs without it). A failed row would
		// hold the question for good: the words in flight, every later
		// answer refused, no deadline. The deadline's word waits for a
		// process that takes it; a person's answer is handed back, the
		// person told, the words gone.
		if d.Surface == DeadlineSurface {
			return errors.New("the backend client takes no answers to questions: the deadline's word waits for a bot whose backend.features lists questions")
		}
		s.log.Warn("answer not sent: this bot's backend.features does not list questions", "approval_id", a.ID, "tenant", a.Tenant)
		return s.settle(context.WithoutCancel(ctx), row, d, nil, say.Reason{Kind: say.QuestionsOff, Act: say.Answering})
	}
	if d.Revision < a.Revision || approval.State(a.State).Final() {
		return s.settle(context.WithoutCancel(ctx), row, d, nil, stale(a, d.Revision, say.Answering))
	}
	d.line = s.choiceWords(ctx, a, d)
	ans, err := qb.Answer(ctx, AnswerCall{QuestionID: a.ID, Revision: d.Revision, Answer: d.Answer, Actor: d.Actor,
		Surface: d.Surface, User: d.User, QuestionSHA256: d.Digest, IdempotencyKey: row.ID})
	if err != nil {
		if d.Surface == DeadlineSurface || stopping(ctx) {
			return err
		}
		s.log.Warn("answer not recorded", "approval_id", a.ID, "tenant", a.Tenant, "err", err)
		why := say.Reason{Kind: say.NotAnswered, Act: say.Answering,
			Refused: !errors.Is(err, ErrBackendUnavailable) && !errors.Is(err, context.DeadlineExceeded)}
		return s.settle(context.WithoutCancel(ctx), row, d, nil, why)
	}
	return s.settle(context.WithoutCancel(ctx), row, d, &ans, say.Reason{})
}

// answerOutcome is outcome for a question: the event the backend's
// answer implies, and what the person who answered is told. The thread
// hears who answered and, unless the question is restricted, what.
func answerOutcome(row *store.Approval, d deciding, ans DecisionAnswer, restricted bool) (*approval.Event, say.Reason) {
	answeredBy := func(status approval.State, actor string, answer *approval.Answer) *approval.Event {
		r := &approval.Resolved{ApprovalID: row.ID, Revision: d.Revision, Status: status, Actor: actor, Via: d.Surface,
			Answer: answer}
		switch {
		case status == approval.StateExpired:
			r.Comment, r.Message = DeadlineComment, "Nobody answered the question by the deadline; the job was told so."
		case answer == nil:
			r.Via = ""
			r.Message = actor + " answered the question first."
		case restricted:
			r.Message = actor + " answered the question."
		default:
			r.Message = actor + " answered: " + cmp.Or(d.line, answerLine(answer))
		}
		return &approval.Event{Type: approval.EventQuestionAnswered, Tenant: row.Tenant, Resolved: r}
	}
	switch ans.Outcome {
	case DecisionRecorded:
		if d.Surface == DeadlineSurface {
			return answeredBy(approval.StateExpired, d.Actor, nil), say.Reason{}
		}
		return answeredBy(approval.StateAnswered, d.Actor, d.Answer), say.Reason{Kind: say.Recorded, Act: say.Answering}
	case DecisionAlreadyDecided:
		actor := ans.Actor
		if actor == "" {
			actor = "someone else"
		}
		status := ans.Status
		if status != approval.StateExpired {
			status = approval.StateAnswered
		}
		return answeredBy(status, actor, nil), say.Reason{Kind: say.AlreadyAnswered, Act: say.Answering, Actor: actor}
	case DecisionStaleRevision:
		return nil, say.Reason{Kind: say.StaleRevision, Act: say.Answering}
	case DecisionDigestMismatch:
		return nil, say.Reason{Kind: say.BackendSays, Message: ans.Message}
	case DecisionForbidden:
		return nil, say.Reason{Kind: say.Forbidden, Act: say.Answering, Message: ans.Message}
	case DecisionNotFound, DecisionCancelled:
		return &approval.Event{Type: approval.EventQuestionCancelled, Tenant: row.Tenant, Cancelled: &approval.Cancelled{
			ApprovalID: row.ID, Reason: "the job backend no longer waits for this answer"}}, say.Reason{Kind: say.Gone, Act: say.Answering}
	}
	return nil, say.Reason{Kind: say.UnknownAnswer}
}

// answerLine is an answer as the thread is told it: the words (the
// transition redacts them), or the choice by number when the thread
// line cannot name it (the card names it).
func answerLine(ans *approval.Answer) string {
	if ans.Choice != nil {
		return fmt.Sprintf("choice %d", *ans.Choice+1)
	}
	return ans.Text
}

// questionFrozen marks a question's frozen plan: no quorum (a question
// is answered by one person), its effect label for the figures.
func questionFrozen(fz *Frozen, a *approval.Approval) {
	if !a.IsQuestion() {
		return
	}
	fz.Question, fz.Quorum, fz.Effect = true, nil, EffectLabelQuestion
}

// choiceWords is a choice's words as the thread is told them (redacted
// when the revision was stored), read before the answer's transaction;
// "" for words, a restricted question, or a revision that cannot be read.
func (s *Service) choiceWords(ctx context.Context, a *store.Approval, d deciding) string {
	if d.Answer == nil || d.Answer.Choice == nil {
		return ""
	}
	rev, err := s.store.RevisionGet(ctx, a.ID, d.Revision)
	if err != nil {
		return ""
	}
	var q approval.Approval
	if json.Unmarshal(rev.Body, &q) != nil || q.Question == nil || q.ContentRestricted() {
		return ""
	}
	if i := *d.Answer.Choice; i >= 0 && i < len(q.Question.Choices) {
		return q.Question.Choices[i]
	}
	return ""
}
