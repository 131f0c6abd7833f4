package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/internal/fixtures"
	"approvalsbot/notify/smtptest"
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
	if code != 0 || !strings.Contains(out, "ladder: 19:15 CET mention rotation primary (user:ada on call)") || !strings.Contains(out, "CET (no answer counts as a no)") {
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

// TestPreviewSupersededByTheNextRevision: --next shows the card of the
// event given as the bot edits it once the event in that file replaced
// it, saying why it was replaced; a --next that is not a later revision
// of the same approval, or a state other than superseded beside it, is a
// usage error that says what is wrong.
func TestPreviewSupersededByTheNextRevision(t *testing.T) {
	ctx := context.Background()
	path := func(name string) string {
		p, err := fixtures.Path("events", name)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	preview := func(args ...string) (string, string, int) {
		var out, errOut bytes.Buffer
		code := run(ctx, append([]string{"preview"}, args...), &out, &errOut, lookup(nil))
		return out.String(), errOut.String(), code
	}
	merge, reasked := path("merge.json"), path("merge-reasked.json")
	// No mail is sent of a superseded card: --as email says so rather
	// than show a mail nobody gets.
	for _, args := range [][]string{{"--next", reasked}, {"--state", "superseded"}} {
		if out, errOut, code := preview(append(append([]string{"--as", "email"}, args...), merge)...); code != 2 ||
			!strings.Contains(errOut, "it sends none of a card") || out != "" {
			t.Errorf("preview --as email %v: %d %q\n%s", args, code, errOut, out)
		}
	}
	for _, as := range []string{"text", "slack", "discord"} {
		out, errOut, code := preview("--as", as, "--next", reasked, merge)
		if code != 0 || !strings.Contains(out, "Superseded: the arguments changed; see the new card") {
			t.Errorf("preview --as %s --next: %d %s\n%s", as, code, errOut, out)
		}
		if as == "text" && (!strings.Contains(out, `"method": "squash"`) || strings.Contains(out, "rebase")) {
			t.Errorf("the superseded card does not show revision 1's own call:\n%s", out)
		}
	}
	// Without --next the bot does not know why, and says so.
	if out, _, code := preview("--as", "text", "--state", "superseded", merge); code != 0 || !strings.Contains(out, "Superseded: the call changed; see the new card") {
		t.Errorf("preview --state superseded: %d\n%s", code, out)
	}
	if out, errOut, code := preview("--as", "text", "--state", "superseded", "--next", reasked, merge); code != 0 || !strings.Contains(out, "Superseded: the arguments changed") {
		t.Errorf("preview --state superseded --next: %d %s\n%s", code, errOut, out)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"another approval", []string{"--next", path("search.json"), merge},
			"that is approval a-search1; want a revision of approval a-merge1 after 1"},
		{"an older revision", []string{"--next", merge, reasked},
			"that is revision 1; want a revision of approval a-merge1 after 2"},
		{"the same revision", []string{"--next", merge, merge},
			"that is revision 1; want a revision of approval a-merge1 after 1"},
		{"another state", []string{"--state", "approved", "--next", reasked, merge},
			"--next shows the card superseded; it cannot be shown approved too"},
		{"a later --previous", []string{"--previous", reasked, merge},
			"that is revision 2; want a revision of approval a-merge1 before 1"},
	} {
		out, errOut, code := preview(append([]string{"--as", "text"}, tc.args...)...)
		if code != 2 || out != "" || !strings.Contains(errOut, "bot preview: ") || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, stderr %q, want 2 and %q; stdout:\n%s", tc.name, code, errOut, tc.want, out)
		}
	}
}

// TestPreviewEmailIsAStepsMail: --as email with a tenant writes the mail
// the first step that mails someone sends, as the bot sends it: to that
// step's first address, its email recipients counted in the ladder line,
// never named (no recipient reads the others' addresses), and the line
// that says why this person gets it.
func TestPreviewEmailIsAStepsMail(t *testing.T) {
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
	var out, errOut bytes.Buffer
	if code := run(ctx, []string{"preview", "--as", "email", "--config", cfg, event}, &out, &errOut, lookup(nil)); code != 0 {
		t.Fatalf("preview --as email --config: %d %s", code, errOut.String())
	}
	m, err := smtptest.Parse(out.Bytes())
	if err != nil {
		t.Fatalf("the preview is no mail: %v\n%s", err, out.String())
	}
	to, err := m.Header.AddressList("To")
	if err != nil || len(to) != 1 || to[0].Address != "leads@acme.example" {
		t.Errorf("To %v (%v), want the step's first address, leads@acme.example", to, err)
	}
	text := strings.ReplaceAll(m.Parts["text/plain"], "\r\n", "\n")
	// examples/bot.yaml's second step mails at 1h, held by its working
	// hours (mon-fri 09:00-18:00 Berlin) from Sunday 19:00 CET to Monday
	// 09:00 CET: 14 hours after the request.
	const why = "Nobody has decided for 14 hours; you are on step 2 of the default ladder."
	if !strings.HasPrefix(text, why+"\n") {
		t.Errorf("the mail does not open with why its reader gets it (%q):\n%s", why, text)
	}
	// The mail is rendered as the step fires, Monday 09:00: that day's
	// times carry no date, the day before's do.
	if !strings.Contains(text, " · 09:00 CET email 2 people") || !strings.Contains(text, "ladder: 2026-11-29 19:15 CET mention") {
		t.Errorf("the ladder line does not count the step's recipients:\n%s", text)
	}
	for part, body := range m.Parts {
		for _, addr := range []string{"leads@acme.example", "kevin@acme.example"} {
			if strings.Contains(body, addr) {
				t.Errorf("the %s part names %s:\n%s", part, addr, body)
			}
		}
	}
	if html := m.Parts["text/html"]; !strings.Contains(html, "email 2 people") || !strings.Contains(html, "you are on step 2 of the default ladder") {
		t.Errorf("the HTML part does not carry the same step line and why:\n%s", html)
	}
}

// TestPreviewShowsAChangedSecret: bot preview --previous compares a value
// the card redacts as the bot does, so a reask that changes only an API
// key says which, redacted, without any secret configured.
func TestPreviewShowsAChangedSecret(t *testing.T) {
	ctx := context.Background()
	first, err := fixtures.Path("events", "secrets.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(body, &ev); err != nil {
		t.Fatal(err)
	}
	ev["id"], ev["type"] = "evt-sec1-2", "approval.reasked"
	data := ev["data"].(map[string]any)
	data["revision"], data["why"] = 2, "arguments_changed"
	call := data["call"].(map[string]any)
	call["arguments"].(map[string]any)["headers"].(map[string]any)["X-Api-Key"] = "ak_live_77Q2"
	call["args_sha256"] = "sha256:" + strings.Repeat("ef", 32)
	again, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	reasked := filepath.Join(t.TempDir(), "secrets-reasked.json")
	if err := os.WriteFile(reasked, again, 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := run(ctx, []string{"preview", "--as", "text", "--previous", first, reasked}, &out, &errOut, lookup(nil))
	text := out.String() + errOut.String()
	if code != 0 || !strings.Contains(text, "Asked again: the arguments changed since revision 1") ||
		!strings.Contains(text, "headers.X-Api-Key:") || strings.Contains(text, "does not show") {
		t.Fatalf("preview --previous of a changed API key: %d\n%s", code, text)
	}
	if strings.Contains(text, "ak_live") {
		t.Errorf("the preview shows the API key:\n%s", text)
	}
}

// TestPreviewShowsTheDigestOnlyToAContentHolder: by default a preview is
// the card a shared place gets, without the digest; --content-holder
// renders it for a reader known to hold the content permission.
func TestPreviewShowsTheDigestOnlyToAContentHolder(t *testing.T) {
	p, err := fixtures.Path("events", "merge.json")
	if err != nil {
		t.Fatal(err)
	}
	const digest = "digest sha256:"
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--as", "text", p}, false},
		{[]string{"--as", "text", "--content-holder", p}, true},
	} {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append([]string{"preview"}, c.args...), &out, &errOut, lookup(nil))
		if code != 0 || strings.Contains(out.String(), digest) != c.want {
			t.Errorf("preview %v: %d, digest shown %v, want %v\n%s%s", c.args, code, !c.want, c.want, out.String(), errOut.String())
		}
	}
}

// TestPreviewShowsWhatTheBotPosts: a preview is the card the bot posts,
// built from the revision as it keeps it, and the notice it posts: a
// secret in the level or a changed file's path is redacted as the store
// keeps it, and an auto-granted call its policy does not cover is the
// warning the audit channel gets.
func TestPreviewShowsWhatTheBotPosts(t *testing.T) {
	edit := func(name string, change func(data map[string]any)) string {
		t.Helper()
		p, err := fixtures.Path("events", name)
		if err != nil {
			t.Fatal(err)
		}
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			t.Fatal(err)
		}
		change(ev["data"].(map[string]any))
		b, err := json.Marshal(ev)
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(out, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return out
	}
	const secret = "ghp_Pr3v13wS3cr3taaaaaaaaaaaaaaaaaaaa"
	changes := edit("changes.json", func(d map[string]any) {
		d["level"] = "L2 " + secret
		d["changes"].(map[string]any)["files"].([]any)[0].(map[string]any)["path"] = "config/" + secret + "/x.env"
	})
	auto := edit("auto.json", func(d map[string]any) { d["call"].(map[string]any)["function"] = "acme.deploy" })
	for _, as := range []string{"text", "slack", "discord"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{"preview", "--as", as, changes}, &out, &errOut, lookup(nil)); code != 0 ||
			strings.Contains(out.String(), "Pr3v13w") || !strings.Contains(out.String(), "ghp_[redacted]") {
			t.Errorf("preview --as %s of a secret in the level and a path: %d\n%s%s", as, code, out.String(), errOut.String())
		}
		out.Reset()
		if code := run(context.Background(), []string{"preview", "--as", as, auto}, &out, &errOut, lookup(nil)); code != 0 ||
			!strings.Contains(out.String(), "Warning: acme.deploy ran unattended under policy sandbox.workspace.v1, which does not cover it") {
			t.Errorf("preview --as %s of an auto-grant its policy does not cover: %d\n%s%s", as, code, out.String(), errOut.String())
		}
	}
}
