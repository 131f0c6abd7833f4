package decidepage_test

import (
	"html"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/threads/threadstest"
)

// TestPageShowsHiddenCharacters: the page prints the function name in its
// title and its card; a zero width space in it shows as [U+200B] in both,
// and nowhere as itself.
func TestPageShowsHiddenCharacters(t *testing.T) {
	p := newPage(t)
	threadstest.Backed(t, p.fake, threadstest.Ingest(t, p.svc, "merge.json", func(ev map[string]any) {
		ev["data"].(map[string]any)["call"].(map[string]any)["function"] = "acme_github.\u200bmerge"
	}))
	body := html.UnescapeString(p.get(p.link("acme", "a-merge1", 1, "user:kevin", "deny")).body)
	if !strings.Contains(body, "<title>acme_github.[U+200B]merge · approval</title>") {
		t.Errorf("the title does not show the hidden character:\n%s", body)
	}
	for _, r := range body {
		if r != '\n' && r != '\t' && approval.Invisible(r) {
			t.Errorf("the page holds U+%04X as is", r)
		}
	}
}
