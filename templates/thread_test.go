package templates_test

import (
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

func TestEscalation(t *testing.T) {
	r := newRenderer(t)
	m := templatestest.Escalation()
	if got, want := r.TextThread(m), "@kevin @oncall @kevin @oncall @<!channel> @@everyone: waiting 15m\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

// TestThreadFromEvent: every event that is not a request has a reply,
// carrying the backend's own words.
func TestThreadFromEvent(t *testing.T) {
	for name, want := range map[string]func(*approval.Event) (templates.ThreadKind, string){
		"merge-resolved.json": func(ev *approval.Event) (templates.ThreadKind, string) {
			return templates.ThreadBackendMessage, ev.Resolved.Message
		},
		"refund-recheck.json": func(ev *approval.Event) (templates.ThreadKind, string) {
			return templates.ThreadRecheckRefused, ev.RecheckFailed.Message
		},
		"mail-cancelled.json": func(ev *approval.Event) (templates.ThreadKind, string) {
			return templates.ThreadCancelled, ev.Cancelled.Reason
		},
		"search-finished.json": func(ev *approval.Event) (templates.ThreadKind, string) {
			return templates.ThreadOutcome, approval.FinishedText(ev.Finished)
		},
		"auto.json": func(ev *approval.Event) (templates.ThreadKind, string) {
			return templates.ThreadAutoGranted, ev.AutoGranted.PolicyID
		},
	} {
		ev := templatestest.Event(t, name)
		m, ok := templates.ThreadFromEvent(ev)
		kind, text := want(ev)
		if !ok || m.Kind != kind || !strings.Contains(m.Text, text) {
			t.Errorf("%s: %+v, want kind %s with %q", name, m, kind, text)
		}
	}
	if _, ok := templates.ThreadFromEvent(templatestest.Event(t, "merge.json")); ok {
		t.Error("a request has a thread reply")
	}
}

// TestResolvedReplyOneStop: the reply a resolution without the backend's
// message gets ends with one stop, whatever the comment ends with.
func TestResolvedReplyOneStop(t *testing.T) {
	for comment, want := range map[string]string{
		"":                     "The call was denied by user:kevin.",
		"merge after 10:00":    "The call was denied by user:kevin: merge after 10:00.",
		"merge after 10:00.":   "The call was denied by user:kevin: merge after 10:00.",
		"is CI green?":         "The call was denied by user:kevin: is CI green?",
		"wait for the freeze…": "The call was denied by user:kevin: wait for the freeze…",
	} {
		ev := &approval.Event{Resolved: &approval.Resolved{ApprovalID: "a-1", Revision: 1, Status: approval.StateDenied, Actor: "user:kevin", Comment: comment}}
		if m, ok := templates.ThreadFromEvent(ev); !ok || m.Text != want {
			t.Errorf("comment %q: %q, want %q", comment, m.Text, want)
		}
	}
}
