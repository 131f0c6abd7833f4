package backend_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/config"
	"approvalsbot/threads"
)

// A request's times are bounded against the bot's clock when it arrives:
// a deadline at most the tenant's max_deadline away (30 days by default),
// requested_at at most the signature's skew in the future. Out of bounds,
// the event is refused 422 invalid naming the field, and nothing of it is
// kept: the same id with times in bounds is then accepted. Every time is
// computed from the clock the bot reads.
func TestEventsTimesBounded(t *testing.T) {
	t.Parallel()
	if threads.RequestAhead != backend.MaxSkew {
		t.Fatalf("threads.RequestAhead %v is not the signature's skew %v", threads.RequestAhead, backend.MaxSkew)
	}
	b := newEventsBot(t)
	at := func(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339) }
	maxDeadline := config.DefaultMaxDeadline
	for _, c := range []struct {
		name  string
		edits map[string]any
		want  want
	}{
		{"deadline in year 9999", map[string]any{"data.deadline": "9999-12-31T23:59:59Z"}, invalid("data.deadline: want a time at most ")},
		{"deadline an hour past max_deadline", map[string]any{"data.deadline": at(maxDeadline + time.Hour)}, invalid("data.deadline: ")},
		{"deadline an hour inside max_deadline", map[string]any{"data.deadline": at(maxDeadline - time.Hour)}, accepted},
		{"requested_at in year 9999", map[string]any{"data.requested_at": "9999-12-31T23:59:59Z"}, invalid("data.requested_at: want a time at most ")},
		{"requested_at ten minutes ahead", map[string]any{"data.requested_at": at(10 * time.Minute), "data.deadline": at(time.Hour)}, invalid("data.requested_at: ")},
		{"requested_at a minute ahead, inside the skew", map[string]any{"data.requested_at": at(time.Minute), "data.deadline": at(time.Hour)}, accepted},
		{"requested_at a day ago", map[string]any{"data.requested_at": at(-24 * time.Hour)}, accepted},
		{"reask with a deadline past max_deadline",
			map[string]any{"type": "approval.reasked", "data.revision": 2, "data.why": "arguments_changed", "data.deadline": at(2 * maxDeadline)}, invalid("data.deadline: ")},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := freshMerge(t, c.edits)
			a := b.post(t, body, nil)
			c.want.check(t, a)
			if c.want.status == http.StatusUnprocessableEntity && !strings.Contains(string(a.raw), "max_deadline") &&
				strings.HasPrefix(c.want.msg, "data.deadline") {
				t.Errorf("answer %s does not name max_deadline", a.raw)
			}
		})
	}
	t.Run("both out of bounds, both named", func(t *testing.T) {
		a := b.post(t, freshMerge(t, map[string]any{"data.requested_at": at(time.Hour), "data.deadline": at(40 * 24 * time.Hour)}), nil)
		invalid("data.requested_at: ").check(t, a)
		if !strings.Contains(string(a.raw), "; data.deadline: ") {
			t.Errorf("answer %s does not name data.deadline too", a.raw)
		}
	})
	t.Run("a refused event is not kept", func(t *testing.T) {
		ids := map[string]any{"id": "evt-times-kept", "data.id": "a-times-kept"}
		far, near := map[string]any{"data.deadline": at(maxDeadline + time.Hour)}, map[string]any{"data.deadline": at(time.Hour)}
		for k, v := range ids {
			far[k], near[k] = v, v
		}
		invalid("data.deadline: ").check(t, b.post(t, editEvent(t, "merge.json", far), nil))
		accepted.check(t, b.post(t, editEvent(t, "merge.json", near), nil))
	})
}
