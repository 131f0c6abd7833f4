package backend_test

import (
	"testing"
)

// A bot whose backend is not configured with questions refuses every
// question's event with 422, naming the switch, and stores nothing: the
// same event is taken once the switch is on (a new bot, a new store).
func TestEventsQuestionsOff(t *testing.T) {
	t.Parallel()
	off := newEventsBotQuestions(t, false)
	for _, name := range []string{"question.json", "question-answered.json", "question-cancelled.json"} {
		t.Run(name, func(t *testing.T) {
			invalid("type: questions are not enabled").check(t, off.post(t, readFixture(t, name), nil))
			// Refused, not recorded: the same id sent again is refused again.
			invalid("type: questions are not enabled").check(t, off.post(t, readFixture(t, name), nil))
		})
	}
	// Approvals still go through.
	accepted.check(t, off.post(t, readFixture(t, "merge.json"), nil))

	on := newEventsBot(t)
	accepted.check(t, on.post(t, readFixture(t, "question.json"), nil))
}

// An id names one kind of waiting thing: a question's event for a call's
// id, or a call's for a question's, is refused naming the id's path, and
// the held approval is unchanged (its own events still apply).
func TestEventsQuestionKindsDoNotMix(t *testing.T) {
	t.Parallel()
	b := newEventsBot(t)
	accepted.check(t, b.post(t, readFixture(t, "merge.json"), nil))
	accepted.check(t, b.post(t, readFixture(t, "question.json"), nil))

	invalid("data.question_id: names a call").check(t, b.post(t,
		editEvent(t, "question-answered.json", map[string]any{"id": "evt-mix-1", "data.question_id": "a-merge1"}), nil))
	invalid("data.question_id: names a call").check(t, b.post(t,
		editEvent(t, "question-cancelled.json", map[string]any{"id": "evt-mix-2", "data.question_id": "a-merge1"}), nil))
	invalid("data.id: names a call").check(t, b.post(t,
		editEvent(t, "question.json", map[string]any{"id": "evt-mix-3", "data.id": "a-merge1", "data.revision": 2}), nil))
	invalid("data.approval_id: names a question").check(t, b.post(t,
		editEvent(t, "merge-resolved.json", map[string]any{"id": "evt-mix-4", "data.approval_id": "q-refund1", "data.revision": 1}), nil))
	invalid("data.approval_id: names a question").check(t, b.post(t,
		editEvent(t, "mail-cancelled.json", map[string]any{"id": "evt-mix-5", "data.approval_id": "q-refund1"}), nil))

	// A question runs no call: nothing of one finished.
	invalid("data.approval_id: names a question").check(t, b.post(t,
		editEvent(t, "search-finished.json", map[string]any{"id": "evt-mix-6", "data.approval_id": "q-refund1"}), nil))
	invalid("data.approval_id: names a question").check(t, b.post(t,
		editEvent(t, "refund-recheck.json", map[string]any{"id": "evt-mix-7", "data.approval_id": "q-refund1"}), nil))

	// Each kind's own events still apply.
	accepted.check(t, b.post(t, readFixture(t, "question-answered.json"), nil))
	accepted.check(t, b.post(t, readFixture(t, "merge-resolved.json"), nil))
}
