package templates

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/ladder"
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

// pinnedLadder is the golden files' ladder: a mention a quarter of an hour
// after the request, an email after an hour, a DM an hour before the
// deadline (the next day under the default deadline) and a mention after
// the default deadline (skipped).
var pinnedLadder = ladder.Ladder{Name: "golden", Steps: []ladder.Step{
	{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}}},
	{Anchor: ladder.AnchorRequest, After: time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
	{Anchor: ladder.AnchorDeadline, BeforeDeadline: time.Hour, DM: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0LEAD"}}},
	{Anchor: ladder.AnchorRequest, After: 25 * time.Hour, Mention: []ladder.Target{{Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}}},
}}

// pinned is the golden files' clock and ladder: a decision three minutes
// after the request, and pinnedLadder frozen under the approval's own
// deadline or the default 24 hours.
func pinned(a *approval.Approval) (time.Time, LadderPlan) {
	return a.RequestedAt.Add(3 * time.Minute), frozen(pinnedPlan(a))
}

func pinnedPlan(a *approval.Approval) ladder.Plan {
	return pinnedLadder.Plan(a.RequestedAt, ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0))
}

// frozen is what threads.Card.Input gives the card of a frozen plan (the
// mapping lives in threads, which this package cannot import): each step
// at its time, whom it tells, whether it is skipped and why, and the
// deadline.
func frozen(p ladder.Plan) LadderPlan {
	out := LadderPlan{Deadline: p.Deadline}
	why := map[string]SkipReason{ladder.SkipAfterDeadline: SkipAfterDeadline, ladder.SkipBeforeRequest: SkipBeforeRequest,
		ladder.SkipWindowShut: SkipWindowShut}
	for _, s := range p.Steps {
		out.Steps = append(out.Steps, PlanStep{At: s.At, Who: s.Step.Targets(), Skipped: s.Skipped,
			Skip: why[p.SkipReason(s)], HeldFrom: s.HeldFrom})
	}
	return out
}

// cardIn builds the card of a in the named preview state, on the pinned clock.
func cardIn(t testing.TB, a *approval.Approval, state string) Card {
	t.Helper()
	_, plan := pinned(a)
	return cardWith(t, a, state, plan)
}

// cardWith builds the card of a in the named preview state under plan.
func cardWith(t testing.TB, a *approval.Approval, state string, plan LadderPlan) Card {
	t.Helper()
	at, _ := pinned(a)
	in, err := PreviewInput(a, state, at, plan)
	if err != nil {
		t.Fatal(err)
	}
	return Build(in)
}

// rendering is one card on all four surfaces, as text to search.
type rendering struct {
	slack, discord, emailText, emailHTML, emailSubject, text string
}

func renderAll(t testing.TB, r *Renderer, c Card) rendering {
	t.Helper()
	sj, _ := chats.SlackCard(c)
	dj, err := MarshalPreview(discordCard(c))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Email(c)
	return rendering{slack: sj, discord: string(dj), emailText: e.Text, emailHTML: e.HTML, emailSubject: e.Subject, text: r.Text(c)}
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
