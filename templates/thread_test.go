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
