package templates

import (
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
)

func TestEscalation(t *testing.T) {
	r := newRenderer(t)
	m := Escalation("a-1", []Mention{
		{Target: "slack:U0KEVIN", Name: "kevin"},
		{Target: "slack:S0ONCALL", Name: "oncall"},
		{Target: "discord:user:112233", Name: "kevin"},
		{Target: "discord:role:445566", Name: "oncall"},
		{Target: "slack:<!channel>", Name: "<!channel>"},
		{Target: "discord:user:12ab", Name: "@everyone"},
	}, 15*time.Minute)
	if got, want := r.TextThread(m), "@kevin @oncall @kevin @oncall @<!channel> @@everyone: waiting 15m\n"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		26 * time.Hour: "1d2h", 48 * time.Hour: "2d",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestThreadFromEvent: every event that is not a request has a reply,
// carrying the backend's own words.
func TestThreadFromEvent(t *testing.T) {
	for name, want := range map[string]func(*approval.Event) (ThreadKind, string){
		"merge-resolved.json": func(ev *approval.Event) (ThreadKind, string) { return ThreadBackendMessage, ev.Resolved.Message },
		"refund-recheck.json": func(ev *approval.Event) (ThreadKind, string) { return ThreadRecheckRefused, ev.RecheckFailed.Message },
		"mail-cancelled.json": func(ev *approval.Event) (ThreadKind, string) { return ThreadCancelled, ev.Cancelled.Reason },
		"search-finished.json": func(ev *approval.Event) (ThreadKind, string) {
			return ThreadOutcome, approval.FinishedText(ev.Finished)
		},
		"auto.json": func(ev *approval.Event) (ThreadKind, string) { return ThreadAutoGranted, ev.AutoGranted.PolicyID },
	} {
		ev := loadEvent(t, name)
		m, ok := ThreadFromEvent(ev)
		kind, text := want(ev)
		if !ok || m.Kind != kind || !strings.Contains(m.Text, text) {
			t.Errorf("%s: %+v, want kind %s with %q", name, m, kind, text)
		}
	}
	if _, ok := ThreadFromEvent(loadEvent(t, "merge.json")); ok {
		t.Error("a request has a thread reply")
	}
}
