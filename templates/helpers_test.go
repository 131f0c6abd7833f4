package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
)

// newRenderer builds the renderer from the embedded templates.
func newRenderer(t testing.TB) *Renderer {
	t.Helper()
	r, err := New(Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// loadEvent parses one fixture event, e.g. "merge.json".
func loadEvent(t testing.TB, name string) *approval.Event {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	return parseEventFile(t, p)
}

func parseEventFile(t testing.TB, path string) *approval.Event {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse %s: %v", filepath.Base(path), err)
	}
	return ev
}

// loadApproval is the approval of a requested or reasked fixture.
func loadApproval(t testing.TB, name string) *approval.Approval {
	t.Helper()
	ev := loadEvent(t, name)
	if ev.Approval == nil {
		t.Fatalf("%s carries no approval", name)
	}
	return ev.Approval
}

// pinned is the golden files' clock and ladder: a decision three minutes
// after the request, step 1 of 4 with the next step fifteen minutes after
// the request, and the approval's own deadline or the default 24 hours.
func pinned(a *approval.Approval) (time.Time, LadderPosition) {
	at := a.RequestedAt.Add(3 * time.Minute)
	dl := a.RequestedAt.Add(24 * time.Hour)
	if a.Deadline != nil {
		dl = *a.Deadline
	}
	return at, LadderPosition{Step: 1, Steps: 4, NextAt: a.RequestedAt.Add(15 * time.Minute), Next: "email leads@acme.example", Deadline: dl}
}

// cardIn builds the card of a in the named preview state, on the pinned clock.
func cardIn(t testing.TB, a *approval.Approval, state string) Card {
	t.Helper()
	at, ladder := pinned(a)
	in, err := PreviewInput(a, state, at, ladder)
	if err != nil {
		t.Fatal(err)
	}
	return Build(in)
}

// rendering is one card on all four surfaces, as text to search.
type rendering struct {
	slack, discord, emailText, emailHTML, emailSubject, text string
	slackMsg                                                 SlackMessage
}

func renderAll(t testing.TB, r *Renderer, c Card) rendering {
	t.Helper()
	sm := r.Slack(c)
	sj, err := MarshalPreview(sm)
	if err != nil {
		t.Fatal(err)
	}
	dj, err := MarshalPreview(r.Discord(c))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Email(c)
	return rendering{slack: string(sj), discord: string(dj), emailText: e.Text, emailHTML: e.HTML, emailSubject: e.Subject, text: r.Text(c), slackMsg: sm}
}

// each calls f with every surface's name and text.
func (x rendering) each(f func(surface, text string)) {
	f("slack", x.slack)
	f("discord", x.discord)
	f("email subject", x.emailSubject)
	f("email text", x.emailText)
	f("email html", x.emailHTML)
	f("text", x.text)
}

func fixtureName(path string) string {
	return strings.TrimSuffix(filepath.Base(path), ".json")
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
