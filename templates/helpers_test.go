package templates_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/internal/fixtures"
	"approvalsbot/templates"
)

// newRenderer builds the renderer from the embedded templates.
func newRenderer(t testing.TB) *templates.Renderer {
	t.Helper()
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return r
}

// rendering is one card on all four surfaces, as text to search.
type rendering struct {
	slack, discord, emailText, emailHTML, emailSubject, text string
}

func renderAll(t testing.TB, r *templates.Renderer, c templates.Card) rendering {
	t.Helper()
	sj, _ := chats.SlackCard(c)
	dj, err := templates.MarshalPreview(discordCard(c))
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
