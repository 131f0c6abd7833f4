package discord

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// bareDiscordURL finds a URL Discord would preview: one not inside <…>.
var bareDiscordURL = regexp.MustCompile(`(^|[^<])https?://`)

// TestDiscordCardLinksShowNoPreview: a URL in the agent's text or in the
// backend's message on a card is written inside <…>, which Discord links
// without a preview (a card cannot suppress embeds: it has its own); the
// URL is kept exactly, escaping works around it, and a cut never leaves
// one open.
func TestDiscordCardLinksShowNoPreview(t *testing.T) {
	const evil = "https://evil.example/track?card=1&who=_me_"
	a := templatestest.Synthetic()
	a.AgentSays = "see " + evil + ". *now*\n" + evil
	at := a.RequestedAt.Add(time.Minute)
	in := templates.Input{Approval: a, State: approval.StateRefused,
		Decision: &approval.Decision{Actor: "user:x", Message: "refused: read " + evil + ", then _retry_", At: at}}
	m := RenderCard(templates.Build(in))
	texts := map[string]string{"content": m.Content, "description": m.Embeds[0].Description}
	for where, text := range texts {
		if !strings.Contains(text, "<"+evil+">") {
			t.Errorf("%s: the URL is not kept whole in <…>: %q", where, text)
		}
		if bareDiscordURL.MatchString(text) {
			t.Errorf("%s: a bare URL Discord would preview: %q", where, text)
		}
	}
	if !strings.Contains(m.Embeds[0].Description, `\*now\*`) {
		t.Errorf("the text around the URL is not escaped: %q", m.Embeds[0].Description)
	}
	if !strings.Contains(m.Content, `\_retry\_`) {
		t.Errorf("the message around the URL is not escaped: %q", m.Content)
	}

	for _, s := range []string{
		"https://", "x https://a.example/b) y", "(https://a.example/b)", "`https://a.example`",
		"<https://a.example>", "a\nhttps://a.example/#x-y\n- z", "@here https://a.example/@everyone",
	} {
		got := escape(s)
		if bareDiscordURL.MatchString(got) && strings.Contains(got, "://a.example") {
			t.Errorf("escape(%q) = %q: a bare URL", s, got)
		}
		if strings.Contains(got, "@here") || strings.Contains(got, "@everyone") && !strings.Contains(got, "<https://a.example/@everyone>") {
			t.Errorf("escape(%q) = %q: a mention outside a URL", s, got)
		}
	}
	if got := trimCut("cut <https://evil.example/lo"); strings.Contains(got, "http") {
		t.Errorf("a <URL> cut open is kept: %q", got)
	}
}
