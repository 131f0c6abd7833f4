package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
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

// TestPreviewWithATenant: with --config the card shows the tenant's
// ladder, deadline and zone as the bot would freeze them (and says so
// when the request names a ladder the tenant lacks); --at shows a
// decision made on another day with its date. No secret is needed.
func TestPreviewWithATenant(t *testing.T) {
	ctx := context.Background()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(root, "examples", "bot.yaml")
	event, err := fixtures.Path("events", "merge.json")
	if err != nil {
		t.Fatal(err)
	}
	preview := func(args ...string) (string, int) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"preview"}, args...), &out, &errOut, lookup(nil))
		return out.String() + errOut.String(), code
	}
	out, code := preview("--as", "text", "--config", cfg, event)
	if code != 0 || !strings.Contains(out, "ladder: 19:15 CET mention rotation:primary") || !strings.Contains(out, "CET (no answer counts as a no)") {
		t.Fatalf("preview --config: %d\n%s", code, out)
	}
	body, err := os.ReadFile(event)
	if err != nil {
		t.Fatal(err)
	}
	named := filepath.Join(t.TempDir(), "named.json")
	if err := os.WriteFile(named, bytes.Replace(body, []byte(`"requested_at"`), []byte(`"ladder": "nosuch", "requested_at"`), 1), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := preview("--as", "text", "--config", cfg, named); code != 0 || !strings.Contains(out, `The request named ladder "nosuch", which tenant acme does not have`) {
		t.Fatalf("preview of an unknown ladder: %d\n%s", code, out)
	}
	out, code = preview("--as", "text", "--state", "approved", "--at", "2026-12-02T09:00:00Z", event)
	if code != 0 || !strings.Contains(out, "Approved by user:reviewer at 2026-11-29 18:03 UTC") {
		t.Fatalf("preview --at: %d\n%s", code, out)
	}
	if out, code := preview("--at", "tomorrow", event); code == 0 {
		t.Fatalf("--at tomorrow was taken:\n%s", out)
	}
}
