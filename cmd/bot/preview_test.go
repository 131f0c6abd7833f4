package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"approvalsbot/internal/fixtures"
)

// TestPreviewShowsWhatAReaskChangedAndAComment: bot preview shows a
// reasked card's change since the earlier revision named by --previous,
// and a decision's comment (--comment), kept off a restricted card.
func TestPreviewShowsWhatAReaskChangedAndAComment(t *testing.T) {
	ctx := context.Background()
	path := func(name string) string {
		p, err := fixtures.Path("events", name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	preview := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"preview"}, args...), &out, &errOut, lookup(nil))
		return out.String() + errOut.String(), code
	}
	out, code := preview("--as", "text", "--previous", path("merge.json"), path("merge-reasked.json"))
	if code != 0 || !strings.Contains(out, "Asked again: the arguments changed since revision 1") ||
		!strings.Contains(out, `method: "squash" → "rebase"`) {
		t.Fatalf("preview --previous: %d\n%s", code, out)
	}
	if out, code := preview("--as", "text", "--previous", path("search.json"), path("merge-reasked.json")); code == 0 {
		t.Fatalf("a --previous of another approval was taken:\n%s", out)
	}
	out, code = preview("--as", "text", "--state", "approved", "--comment", "fine once CI is green", path("merge.json"))
	if code != 0 || !strings.Contains(out, "Approved by user:reviewer at 18:03 UTC: fine once CI is green") {
		t.Fatalf("preview --comment: %d\n%s", code, out)
	}
	out, code = preview("--as", "discord", "--state", "approved", "--comment", "fine once CI is green", path("private.json"))
	if code != 0 || strings.Contains(out, "fine once CI is green") || !strings.Contains(out, "the comment is shown only in the console") {
		t.Fatalf("preview --comment of a restricted call: %d\n%s", code, out)
	}
}
