package approval_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jonboulle/clockwork"

	"approvalsbot/adapters/discord"
	"approvalsbot/adapters/logsurface"
	slackad "approvalsbot/adapters/slack"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/ladder"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// fixtureApprovals parses every requested, reasked or asked fixture of
// the fixture folders: the shared one, the repository's own copy and its
// own events.
func fixtureApprovals(t *testing.T) map[string]*approval.Approval {
	t.Helper()
	root, err := fixtures.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	// testdata holds the repository's own events (questions among them).
	dirs := []string{filepath.Join(root, "testdata", "fixtures"), filepath.Join(root, "testdata")}
	if d, err := fixtures.Dir(); err == nil && d != dirs[0] {
		dirs = append(dirs, d)
	}
	out := map[string]*approval.Approval{}
	for _, d := range dirs {
		files, err := filepath.Glob(filepath.Join(d, "events", "*.json"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no fixture events in %s: %v", d, err)
		}
		for _, f := range files {
			body, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := approval.Parse(body)
			if err != nil {
				t.Fatalf("parse %s: %v", f, err)
			}
			if ev.Approval != nil {
				out[filepath.Base(filepath.Dir(filepath.Dir(f)))+"/"+filepath.Base(f)] = ev.Approval
			}
		}
	}
	return out
}

// kept is a's stored form as a reader of the store gets it back: encoded
// as the revision body and decoded as an Approval.
func kept(t testing.TB, a *approval.Approval) *approval.Approval {
	t.Helper()
	s, err := approval.StoredForm(a, callsSecrets...)
	if err != nil {
		t.Fatalf("StoredForm(%s): %v", a.ID, err)
	}
	body, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back approval.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	return &back
}

// restrictedCopy is a with its content restricted (a deep copy).
func restrictedCopy(t *testing.T, a *approval.Approval) *approval.Approval {
	t.Helper()
	body, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var c approval.Approval
	if err := json.Unmarshal(body, &c); err != nil {
		t.Fatal(err)
	}
	c.Content.Restricted = true
	return &c
}

var testLadder = ladder.Ladder{Name: "stored", Steps: []ladder.Step{
	{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}}},
	{Anchor: ladder.AnchorDeadline, BeforeDeadline: time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
}}

// renderings renders a's card in state on every surface, one entry each.
func renderings(t *testing.T, r *templates.Renderer, a *approval.Approval, state string, reveal bool) map[string]string {
	t.Helper()
	p := testLadder.Plan(a.RequestedAt, ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0))
	plan := templates.LadderPlan{Deadline: p.Deadline}
	for _, s := range p.Steps {
		plan.Steps = append(plan.Steps, templates.PlanStep{At: s.At, Who: s.Step.Targets(), Skipped: s.Skipped})
	}
	in, err := templates.PreviewInput(a, state, a.RequestedAt.Add(3*time.Minute), plan)
	if err != nil {
		t.Fatal(err)
	}
	in.RevealContent = reveal
	c := templates.Build(in)
	sj, err := templates.MarshalPreview(slackad.CardMessage(c))
	if err != nil {
		t.Fatal(err)
	}
	dj, err := templates.MarshalPreview(discord.RenderCard(c))
	if err != nil {
		t.Fatal(err)
	}
	e := r.Email(c)
	return map[string]string{"slack": string(sj), "discord": string(dj), "email subject": e.Subject,
		"email text": e.Text, "email html": e.HTML, "text": r.Text(c)}
}

// TestStoredFormRendersAsReceived renders every fixture in every preview
// state from the approval as received and from its stored form, on every
// surface, and wants the same bytes; also each fixture made content
// restricted, as the shared channel shows it. Show details of a
// restricted approval (RevealContent) is left out: its content is what
// the stored form does not keep.
func TestStoredFormRendersAsReceived(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	all := fixtureApprovals(t)
	if len(all) < 10 {
		t.Fatalf("only %d fixture approvals", len(all))
	}
	for name, a := range all {
		for _, variant := range []string{"as sent", "restricted"} {
			raw := a
			if variant == "restricted" {
				raw = restrictedCopy(t, a)
			}
			stored := kept(t, raw)
			for _, state := range templates.PreviewStatesOf(raw) {
				for _, reveal := range []bool{false, true} {
					if reveal && raw.Content.Restricted {
						continue
					}
					want := renderings(t, r, raw, state, reveal)
					got := renderings(t, r, stored, state, reveal)
					for surface := range want {
						if diff := cmp.Diff(want[surface], got[surface]); diff != "" {
							t.Errorf("%s (%s), %s, reveal %v, %s: stored form renders otherwise (-received +stored):\n%s",
								name, variant, state, reveal, surface, diff)
						}
					}
				}
			}
		}
	}
}

// TestStoredFormDecidesAsReceived: everything a card or a decision derives
// from an approval is the same from its stored form, restricted or not.
func TestStoredFormDecidesAsReceived(t *testing.T) {
	type derived struct {
		Effect                                         string
		Flags, AskedBy                                 []string
		Destructive, OutOfScope, DenyFirst, MayApprove bool
		ID, Tenant, Function, Digest, Snapshot, Level  string
		Revision                                       int
		Kind                                           approval.Kind
		Confirm                                        *approval.Confirm
		Restricted, Mismatch                           bool
		Requested                                      time.Time
		Deadline                                       *time.Time
		Ladder                                         string
		Job                                            approval.Job
	}
	of := func(a *approval.Approval) derived {
		return derived{approval.EffectLine(a.Call.Annotations), a.FlagLines(), a.AskedByLines(),
			a.Destructive(), a.OutOfScope(), a.DenyFirst(), a.ChatMayApprove(),
			a.ID, a.Tenant, a.Call.Function, a.Call.ArgsSHA256, a.Call.Snapshot, a.Level, a.Revision, a.Kind,
			a.Confirm, a.Content.Restricted, a.EffectsMismatch, a.RequestedAt, a.Deadline, a.Ladder, a.Job}
	}
	denyFirst := 0
	for name, a := range fixtureApprovals(t) {
		for _, raw := range []*approval.Approval{a, restrictedCopy(t, a)} {
			want := of(raw)
			if want.DenyFirst {
				denyFirst++
			}
			if diff := cmp.Diff(want, of(kept(t, raw))); diff != "" {
				t.Errorf("%s (restricted %v): (-received +stored)\n%s", name, raw.Content.Restricted, diff)
			}
		}
	}
	if denyFirst == 0 {
		t.Fatal("no fixture puts Deny first: the button order is not tested")
	}
}

// TestStoredFormKeepsNoSecret: none of the secrets the backend failed to
// redact is in the stored form, and its marks say what was redacted.
func TestStoredFormKeepsNoSecret(t *testing.T) {
	secrets, err := fixtures.Secrets()
	if err != nil || len(secrets) < 5 {
		t.Fatalf("secrets of the fixture: %v %v", secrets, err)
	}
	a := fixtureApprovals(t)["fixtures/secrets.json"]
	if a == nil {
		t.Fatal("no secrets.json fixture")
	}
	s, err := approval.StoredForm(a, callsSecrets...)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range secrets {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("the stored form keeps %q:\n%s", secret, body)
		}
	}
	if !s.Call.Redaction.Redacted || !strings.Contains(string(s.Call.Arguments), "[redacted]") {
		t.Errorf("stored arguments %s, redaction %+v: want the bot's redaction, marked", s.Call.Arguments, s.Call.Redaction)
	}
	if s.Form.Version != approval.StoredVersion || s.Form.ContentWithheld {
		t.Errorf("form %+v", s.Form)
	}
	if s.Call.ArgsSHA256 != a.Call.ArgsSHA256 {
		t.Errorf("digest %q, want the backend's %q", s.Call.ArgsSHA256, a.Call.ArgsSHA256)
	}
	// Secrets in free text: the agent's text, the patch, a role's value.
	b := *a
	b.AgentSays = "Using Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig as told"
	b.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "ci.env"}}, Patch: "+GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123"}
	b.Roles = []approval.Role{{Argument: "url", Role: approval.RoleHost, Values: []approval.RoleValue{
		{Value: "https://deploy:hunter2@ci.acme.example", Origin: approval.OriginRequest}}}}
	body, err = json.Marshal(kept(t, &b))
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"eyJhbGciOiJIUzI1NiJ9", "ghp_abcdefghijklmnop", "hunter2"} {
		if bytes.Contains(body, []byte(secret)) {
			t.Errorf("the stored form keeps %q:\n%s", secret, body)
		}
	}
	if !bytes.Contains(body, []byte("ci.env")) || !bytes.Contains(body, []byte("ci.acme.example")) {
		t.Errorf("the stored form lost what is not secret:\n%s", body)
	}
}

// TestStoredFormKeepsNoSecretByName: a role whose argument is secret by
// its name keeps none of its values, a role value of a secret's shape
// keeps none of it, and the turn's waiting calls and the rule, hook and
// previous call that asked are redacted as text, restricted or not.
func TestStoredFormKeepsNoSecretByName(t *testing.T) {
	const token = "ghp_abcdefghijklmnopqrstuvwxyz0123"
	base := approval.Approval{ID: "a-1", Revision: 1, Kind: approval.KindCall,
		Call: approval.Call{Function: "mail.send", Arguments: json.RawMessage(`{"smtp_password":"hunter2","api_key":"k-7731","to":"ada@acme.example"}`)},
		Roles: []approval.Role{
			{Argument: "smtp_password", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "hunter2", Origin: approval.OriginRequest}}},
			{Argument: "api_key", Role: approval.RoleRecipient, Values: []approval.RoleValue{{Value: "k-7731", Origin: approval.OriginJobRead, OutOfScope: true}}},
			{Argument: "to", Role: approval.RoleRecipient, Values: []approval.RoleValue{
				{Value: "ada@acme.example", Origin: approval.OriginRequest},
				{Value: "https://deploy:s3cr3t-pw@ci.acme.example", Origin: approval.OriginRequest}}},
		},
		AskedBy: approval.AskedBy{Reason: approval.ReasonSequence, Rule: "after GITHUB_TOKEN=" + token,
			Hook: "hooks/check?access_token=tok-9917", PreviousCall: "fetch Bearer eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.sig"},
		Turn: approval.Turn{Waiting: []string{"mail.send", "deploy " + token}},
	}
	secrets := []string{"hunter2", "k-7731", "s3cr3t-pw", token[4:], "tok-9917", "eyJhbGciOiJIUzI1NiJ9"}
	for _, restricted := range []bool{false, true} {
		a := base
		a.Content.Restricted = restricted
		got := kept(t, &a)
		body, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range secrets {
			if bytes.Contains(body, []byte(secret)) {
				t.Errorf("restricted %v: the stored form keeps %q:\n%s", restricted, secret, body)
			}
		}
		if restricted {
			continue
		}
		for i, want := range []string{"[redacted]", "[redacted]", "ada@acme.example"} {
			if v := got.Roles[i].Values[0].Value; v != want {
				t.Errorf("role %s keeps %q, want %q", got.Roles[i].Argument, v, want)
			}
		}
		if v := got.Roles[1].Values[0]; v.Origin != approval.OriginJobRead || !v.OutOfScope {
			t.Errorf("a redacted role value lost its origin or scope: %+v", v)
		}
		if got.Turn.Waiting[0] != "mail.send" || !strings.Contains(got.AskedBy.Hook, "hooks/check") {
			t.Errorf("the stored form lost what is not secret: %+v %+v", got.Turn, got.AskedBy)
		}
	}
	if base.Roles[0].Values[0].Value != "hunter2" || base.Turn.Waiting[1] != "deploy "+token {
		t.Error("StoredForm changed its input")
	}
}

// TestStoredFormOfRestrictedKeepsNoContent: of a content-restricted
// approval only what a restricted card shows or decides from is kept.
func TestStoredFormOfRestrictedKeepsNoContent(t *testing.T) {
	a := fixtureApprovals(t)["fixtures/private.json"]
	if a == nil || !a.Content.Restricted {
		t.Fatal("no restricted private.json fixture")
	}
	c := restrictedCopy(t, a)
	c.Roles = []approval.Role{{Argument: "where.email", Role: approval.RoleRecipient, LeftOut: 3,
		Values: []approval.RoleValue{{Value: "bea.private@example.com", Origin: approval.OriginJobRead, OutOfScope: true}}}}
	c.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "private/notes.md", Protected: true}, {Path: "b.txt"}},
		Patch: "+bea's diary", PatchCut: true, PatchSHA256: "sha256:" + strings.Repeat("a", 64)}
	c.Turn.Waiting = []string{"mail.send_to_bea"}
	c.Call.ArgumentsCut, c.Call.Redaction = true, approval.Redaction{Redacted: true}

	s, err := approval.StoredForm(c)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Form.ContentWithheld {
		t.Error("ContentWithheld is false")
	}
	body, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, content := range []string{"bea.private@example.com", "customers", "Deleting my old customer record", "private/notes.md",
		"b.txt", "bea's diary", "mail.send_to_bea"} {
		if bytes.Contains(body, []byte(content)) {
			t.Errorf("the stored form of a restricted approval keeps %q:\n%s", content, body)
		}
	}
	k := s.Approval
	if k.Call.Arguments != nil || k.Call.ArgumentsCut || k.Call.Redaction != (approval.Redaction{}) || k.AgentSays != "" || k.Turn.Waiting != nil {
		t.Errorf("content kept: %+v", k)
	}
	wantRoles := []approval.Role{{Argument: "where.email", Role: approval.RoleRecipient, LeftOut: 3,
		Values: []approval.RoleValue{{Origin: approval.OriginJobRead, OutOfScope: true}}}}
	if diff := cmp.Diff(wantRoles, k.Roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	// The patch's digest is kept, as args_sha256 is: a look-up's patch is
	// checked against it before a byte of it is shown.
	wantChanges := &approval.Changes{Files: []approval.ChangedFile{{Protected: true}, {}}, PatchSHA256: c.Changes.PatchSHA256}
	if diff := cmp.Diff(wantChanges, k.Changes); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if k.Call.ArgsSHA256 != a.Call.ArgsSHA256 || k.Call.Snapshot != a.Call.Snapshot || k.Call.Function != a.Call.Function {
		t.Errorf("call %+v: want the digests and the function kept", k.Call)
	}
	// The input is not changed.
	if c.Roles[0].Values[0].Value == "" || c.Changes.Files[0].Path == "" || c.Changes.Patch == "" || c.AgentSays == "" {
		t.Errorf("StoredForm changed its input: %+v", c)
	}
}

// TestStoredFormLeavesItsInputAlone: StoredForm changes nothing of the
// approval it is given, restricted or not.
func TestStoredFormLeavesItsInputAlone(t *testing.T) {
	for name, a := range fixtureApprovals(t) {
		for _, restricted := range []bool{false, true} {
			b, before := restrictedCopy(t, a), restrictedCopy(t, a)
			b.Content.Restricted, before.Content.Restricted = restricted, restricted
			if _, err := approval.StoredForm(b); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(before, b) {
				t.Errorf("%s (restricted %v): StoredForm changed its input", name, restricted)
			}
		}
	}
}

// TestStoredArgumentsStayBounded: arguments whose projection projects to
// itself are kept as that projection (at most ProjectionMaxBytes, members
// left out); arguments whose projection the card would cut again (a cut
// string) are kept uncut but redacted, so the card says how much it cut.
func TestStoredArgumentsStayBounded(t *testing.T) {
	note := strings.Repeat("word ", 200)
	for _, c := range []struct{ name, raw string }{
		{"many members", `{"items":[` + strings.Repeat(`{"name":"x","n":1},`, 500) + `{"name":"y"}],"password":"p4ss"}`},
		{"a long string", `{"note":"` + note + `","api_key":"k3y","GITHUB_TOKEN=ghp_k3yk3yk3yk3yk3yk3yk3yk3y":1}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := &approval.Approval{ID: "a-1", Call: approval.Call{Function: "f", Arguments: json.RawMessage(c.raw)}}
			s, err := approval.StoredForm(a)
			if err != nil {
				t.Fatal(err)
			}
			args := s.Call.Arguments
			if bytes.Contains(args, []byte("p4ss")) || bytes.Contains(args, []byte("k3y")) || !bytes.Contains(args, []byte("[redacted]")) {
				t.Errorf("a secret is kept: %s", args)
			}
			p, err := approval.Project([]byte(c.raw))
			if err != nil {
				t.Fatal(err)
			}
			again, err := approval.Project(p.JSON)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case bytes.Equal(again.JSON, p.JSON):
				if !bytes.Equal(args, p.JSON) || len(args) > approval.ProjectionMaxBytes {
					t.Errorf("kept %s, want the projection %s", args, p.JSON)
				}
			case !bytes.Contains(args, []byte(note)):
				t.Errorf("kept %s: want the long string uncut", args)
			}
			if !s.Call.Redaction.Redacted || !s.Call.Redaction.Truncated {
				t.Errorf("redaction %+v: want redacted and truncated", s.Call.Redaction)
			}
		})
	}
}

// TestStoredFormRefusesUnreadableArguments: arguments that are not JSON
// are never kept, and the error quotes none of them.
func TestStoredFormRefusesUnreadableArguments(t *testing.T) {
	a := &approval.Approval{ID: "a-1", Call: approval.Call{Arguments: json.RawMessage(`{"password":"hunter2"`)}}
	s, err := approval.StoredForm(a)
	if err == nil || s != nil {
		t.Fatalf("StoredForm = %v, %v: want an error", s, err)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "password") {
		t.Errorf("error %q quotes the arguments", err)
	}
}

// cardOf is the card of a pending approval carrying args and text.
func cardOf(a *approval.Approval) templates.Card {
	return templates.Build(templates.Input{Approval: a})
}

// FuzzStoredArguments: the card shows any arguments from the stored form
// exactly as from the arguments received, and the stored form holds no
// string the card redacts.
func FuzzStoredArguments(f *testing.F) {
	for _, s := range []string{`{"repo":"acme/api","pr":1234}`, `{"password":"x","h":{"Authorization":"Bearer abc"}}`,
		`{"u":"https://deploy:hunter2@ci.example/x"}`, `{"s":"` + strings.Repeat("ab", 200) + `"}`,
		`[1,2,3]`, `"Bearer abc def"`, `{"a":{"b":{"c":{"d":{"e":{"f":{"g":1}}}}}}}`, `{"x":1e400}`, `{"k":"\u00e9\ud83d\ude00"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !json.Valid([]byte(raw)) || len(bytes.TrimSpace([]byte(raw))) == 0 {
			return
		}
		a := &approval.Approval{ID: "a-1", Revision: 1, Call: approval.Call{Function: "f", Arguments: json.RawMessage(raw)}}
		s, err := approval.StoredForm(a)
		if err != nil {
			return // nesting encoding/json refuses; Parse lets none through
		}
		want, got := cardOf(a), cardOf(&s.Approval)
		if diff := cmp.Diff(want.Arguments, got.Arguments); diff != "" {
			t.Fatalf("arguments %s: card (-received +stored):\n%s", raw, diff)
		}
		if diff := cmp.Diff(want.Buttons, got.Buttons); diff != "" {
			t.Fatalf("arguments %s: buttons (-received +stored):\n%s", raw, diff)
		}
	})
}

// needsCleaning reports whether the card's own cleaning changes s (the
// characters approval.Invisible names, line separators and invalid UTF-8
// are shown as [U+XXXX] or line breaks): there the card may cut a
// redacted span where the stored form, redacted on the text as received,
// did not.
func needsCleaning(s string) bool {
	for _, r := range s {
		if r == '\uFFFD' || r == 0x2028 || r == 0x2029 || (r != '\n' && r != '\t' && approval.Invisible(r)) {
			return true
		}
	}
	return false
}

// FuzzStoredText: the agent's text, a role's value and the patch show the
// same from the stored form as from the text received.
func FuzzStoredText(f *testing.F) {
	for _, s := range []string{"Sending the summary to the address in the ticket.", "Authorization: Bearer abc.def",
		"GITHUB_TOKEN=ghp_abcdefghijklmnopqrstuvwxyz0123 and https://u:p@h/x", "-----BEGIN RSA PRIVATE KEY-----\nMIIE\n-----END RSA PRIVATE KEY-----",
		"password: \"a b\" then `token` = 'x'", strings.Repeat("Basic dXNlcjpwYXNz ", 80)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if needsCleaning(text) {
			return
		}
		a := &approval.Approval{ID: "a-1", Revision: 1, Kind: approval.KindChanges, AgentSays: text,
			Call:    approval.Call{Function: "f"},
			Roles:   []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: []approval.RoleValue{{Value: text, Origin: approval.OriginRequest}}}},
			Changes: &approval.Changes{Files: []approval.ChangedFile{{Path: "a"}}, Patch: text}}
		want, got := cardOf(a), cardOf(kept(t, a))
		if want.AgentSays != got.AgentSays {
			t.Fatalf("agent says %q: %q from the stored form, %q as received", text, got.AgentSays, want.AgentSays)
		}
		if diff := cmp.Diff(want.Roles, got.Roles); diff != "" {
			t.Fatalf("role value %q (-received +stored):\n%s", text, diff)
		}
		if diff := cmp.Diff(want.Changes, got.Changes); diff != "" {
			t.Fatalf("patch %q (-received +stored):\n%s", text, diff)
		}
	})
}

// TestStoredFormFingerprints: the stored form keeps a keyed fingerprint
// of each value its projection hides and nothing of the value; each
// revision has a salt of its own, so one secret fingerprints otherwise in
// two revisions; the arguments as received stay beside the stored form in
// memory, never encoded or printed; without a secret no fingerprint is
// kept.
func TestStoredFormFingerprints(t *testing.T) {
	t.Parallel()
	const secret = "hunter2-Zq8mWv"
	long := strings.Repeat("y", 300)
	a := &approval.Approval{ID: "a-1", Revision: 1, Tenant: "acme", Kind: approval.KindCall,
		Call: approval.Call{Function: "f.x", ArgsSHA256: "sha256:" + strings.Repeat("1", 64),
			Arguments: json.RawMessage(`{"password":"` + secret + `","note":"plain","body":"` + long + `"}`)}}
	s1, err := approval.StoredForm(a, callsSecrets...)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := approval.StoredForm(a, callsSecrets...)
	if err != nil {
		t.Fatal(err)
	}
	fp := s1.Call.Fingerprints
	if fp == nil || len(fp.Salt) != 32 || len(fp.KeyID) != 8 {
		t.Fatalf("fingerprints %+v: want a 32-byte salt and an 8-byte key id", fp)
	}
	var paths []string
	for _, f := range fp.Values {
		paths = append(paths, f.Path)
		if len(f.MAC) != 16 {
			t.Errorf("fingerprint at %s has %d bytes, want 16", f.Path, len(f.MAC))
		}
	}
	if diff := cmp.Diff([]string{"password", "body"}, paths); diff != "" {
		t.Errorf("fingerprinted paths (-want +got):\n%s", diff)
	}
	if bytes.Equal(fp.Salt, s2.Call.Fingerprints.Salt) || bytes.Equal(fp.Values[0].MAC, s2.Call.Fingerprints.Values[0].MAC) {
		t.Error("two stored forms share a salt or a fingerprint")
	}
	if !bytes.Equal(fp.KeyID, s2.Call.Fingerprints.KeyID) {
		t.Error("two stored forms under one secret name it otherwise")
	}
	body, err := json.Marshal(s1)
	if err != nil {
		t.Fatal(err)
	}
	printed := fmt.Sprintf("%v %+v %#v %s %x %q", s1, s1.Call, s1.Approval, s1.Call.Received, s1.Call.Received, s1.Call.Received)
	for what, text := range map[string]string{"encoded": string(body), "printed": printed} {
		for _, part := range []string{secret, "hunter2", "Zq8mWv"} {
			if strings.Contains(text, part) {
				t.Errorf("the stored form %s holds %.20q:\n%.400s", what, part, text)
			}
		}
	}
	if string(s1.Call.Received) != string(a.Call.Arguments) {
		t.Errorf("received arguments %q, want the arguments as sent", []byte(s1.Call.Received))
	}
	var back approval.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	if back.Call.Received != nil || back.Call.Fingerprints == nil || !bytes.Equal(back.Call.Fingerprints.Salt, fp.Salt) ||
		!bytes.Equal(back.Call.Fingerprints.KeyID, fp.KeyID) {
		t.Errorf("read back: received %d bytes, fingerprints %+v: want none received, the fingerprints kept", len(back.Call.Received), back.Call.Fingerprints)
	}

	// Arguments shown whole have nothing to fingerprint; restricted ones
	// keep nothing; without a secret (or with an empty one) nothing can
	// key a fingerprint.
	plain := *a
	plain.Call.Arguments = json.RawMessage(`{"note":"plain"}`)
	restricted := *a
	restricted.Content.Restricted = true
	for _, tt := range []struct {
		name    string
		a       *approval.Approval
		secrets [][]byte
	}{
		{"shown whole", &plain, callsSecrets},
		{"restricted", &restricted, callsSecrets},
		{"no secret", a, nil},
		{"an empty secret", a, [][]byte{{}}},
	} {
		s, err := approval.StoredForm(tt.a, tt.secrets...)
		if err != nil {
			t.Fatal(err)
		}
		if s.Call.Fingerprints != nil || (tt.a.Content.Restricted && s.Call.Received != nil) {
			t.Errorf("%s: fingerprints %+v, %d bytes received kept", tt.name, s.Call.Fingerprints, len(s.Call.Received))
		}
	}
}

// TestStoredFingerprintsNeedTheSecret: a reader of the store (a leaked
// backup, a database administrator) cannot test a guess of a hidden value
// against its fingerprint with what the row holds: the row keeps no key,
// and neither its salt nor its key id keys the fingerprints. Only the key
// derived from the calls secret does, which the check makes sure of, so
// that the guesses below are tested the way the bot makes fingerprints.
func TestStoredFingerprintsNeedTheSecret(t *testing.T) {
	t.Parallel()
	const password = "hunter2"
	a := &approval.Approval{ID: "a-1", Revision: 1, Tenant: "acme", Kind: approval.KindCall,
		Call: approval.Call{Function: "f.x", ArgsSHA256: "sha256:" + strings.Repeat("1", 64),
			Arguments: json.RawMessage(`{"password":"` + password + `"}`)}}
	s, err := approval.StoredForm(a, callsSecrets...)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	// The row, as a reader of the store sees it.
	var row struct {
		Call struct {
			Fingerprints map[string]json.RawMessage `json:"fingerprints"`
		} `json:"call"`
	}
	if err := json.Unmarshal(body, &row); err != nil {
		t.Fatal(err)
	}
	var fields []string
	for k := range row.Call.Fingerprints {
		fields = append(fields, k)
	}
	sort.Strings(fields)
	if diff := cmp.Diff([]string{"key_id", "salt", "values"}, fields); diff != "" {
		t.Errorf("the row's fingerprints hold (-want +got):\n%s", diff)
	}
	var back approval.Approval
	if err := json.Unmarshal(body, &back); err != nil {
		t.Fatal(err)
	}
	fp := back.Call.Fingerprints
	if fp == nil || len(fp.Values) != 1 || fp.Values[0].Path != "password" {
		t.Fatalf("fingerprints %+v: want one, of the password", fp)
	}
	mac := fp.Values[0].MAC

	key := hmac.New(sha256.New, callsSecrets[0])
	key.Write([]byte("approvalsbot fingerprint v1"))
	key.Write(fp.Salt)
	derived := key.Sum(nil)
	if !bytes.Equal(testFingerprint(derived, "password", `"`+password+`"`), mac) {
		t.Fatal("the key derived from the calls secret does not verify the fingerprint: the guesses below test nothing")
	}
	if bytes.Contains(body, derived) || strings.Contains(string(body), base64.StdEncoding.EncodeToString(derived)) {
		t.Error("the row holds the fingerprints' key")
	}
	for name, k := range map[string][]byte{"the salt": fp.Salt, "the key id": fp.KeyID, "no key": nil} {
		if bytes.Equal(testFingerprint(k, "password", `"`+password+`"`), mac) {
			t.Errorf("%s verifies a guess of the password: the row is an oracle", name)
		}
	}
}

// hostileIdentifiers is an approval whose every identifier the calling
// side shapes holds a secret's shape: each secret beside a word that
// shows the identifier was kept at all.
func hostileIdentifiers() (a approval.Approval, secrets, seen []string) {
	const (
		fnToken   = "ghp_Function0name0secret000000000000"
		argURL    = "https://deploy:role-pw-4417@hooks.acme.example"
		confirmJW = "eyJhbGciOiJIUzI1NiJ9.Y29uZmlybQ.c2lnbmVk"
		taintJW   = "eyJhbGciOiJIUzI1NiJ9.dGFpbnQ.c2lnbmVk"
	)
	a = approval.Approval{ID: "a-ident", Revision: 1, Tenant: "acme", Kind: approval.KindCall,
		Job: approval.Job{ID: "job-1", StartedBy: "https://ada:started-pw-1188@sso.acme.example",
			Agent: "deployer Bearer agent-secret-5521"},
		Call: approval.Call{Function: "acme_github.merge_" + fnToken,
			Arguments: json.RawMessage(`{"` + argURL + `":"ops@acme.example","to":"ada@acme.example"}`)},
		Roles: []approval.Role{
			{Argument: argURL, Role: approval.RoleRecipient, Values: []approval.RoleValue{
				{Value: "ops@acme.example", Origin: approval.OriginJobRead, OutOfScope: true}}},
			{Argument: "to", Role: approval.RoleRecipient, Values: []approval.RoleValue{
				{Value: "ada@acme.example", Origin: approval.OriginRequest}}},
		},
		Flags: approval.Flags{
			NotTraced: []approval.NotTraced{{Argument: argURL, Role: approval.RoleRecipient,
				Origin: approval.OriginJobRead, Floor: approval.OriginRequest}},
			NewToJob: []approval.NewToJob{{Argument: argURL, Role: approval.RoleRecipient}},
		},
		AskedBy: approval.AskedBy{Reason: approval.ReasonOrigin, Argument: "recipient Bearer asked-secret-9034",
			Role: approval.RoleRecipient, Floor: approval.OriginRequest, Origin: approval.OriginJobRead,
			Taint: []approval.Taint{{Source: "web?access_token=taint-secret-3310", Function: "fetch " + taintJW}}},
		Level:   "L2 token=level-secret-77",
		Confirm: &approval.Confirm{Argument: "amount " + confirmJW},
		Changes: &approval.Changes{Files: []approval.ChangedFile{{Path: "deploy/https://ci:path-pw-6650@git.acme.example/x"}}},
	}
	secrets = []string{fnToken[4:], "role-pw-4417", confirmJW[:20], "Y29uZmlybQ", "dGFpbnQ", "started-pw-1188",
		"agent-secret-5521", "asked-secret-9034", "taint-secret-3310", "level-secret-77", "path-pw-6650"}
	seen = []string{"acme_github.merge_", "hooks.acme.example", "sso.acme.example", "deployer", "recipient",
		"amount", "fetch", "web?access_token=", "L2", "git.acme.example"}
	return a, secrets, seen
}

// TestStoredFormRedactsIdentifiers: every identifier the calling side
// shapes (the function, the job's starter and agent, the argument names
// of roles, flags, the confirmation and the reason, the taint, the level,
// file paths) keeps no secret's shape in the stored form, restricted or
// not, and an argument is still named alike by its role, its flags and
// the stored arguments' key, so the card pairs them.
func TestStoredFormRedactsIdentifiers(t *testing.T) {
	base, secrets, seen := hostileIdentifiers()
	for _, restricted := range []bool{false, true} {
		a := base
		a.Content.Restricted = restricted
		s, err := approval.StoredForm(&a, callsSecrets...)
		if err != nil {
			t.Fatal(err)
		}
		body, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range secrets {
			if bytes.Contains(body, []byte(secret)) {
				t.Errorf("restricted %v: the stored form keeps %q:\n%s", restricted, secret, body)
			}
		}
		for _, word := range seen {
			if restricted && word == "git.acme.example" {
				continue // a restricted revision keeps no file path
			}
			if !bytes.Contains(body, []byte(word)) {
				t.Errorf("restricted %v: the stored form lost %q, which is no secret:\n%s", restricted, word, body)
			}
		}
		got := kept(t, &a)
		name := got.Roles[0].Argument
		if name == base.Roles[0].Argument || got.Flags.NotTraced[0].Argument != name || got.Flags.NewToJob[0].Argument != name {
			t.Errorf("restricted %v: role argument %q, flags name %q and %q: want one redacted name",
				restricted, name, got.Flags.NotTraced[0].Argument, got.Flags.NewToJob[0].Argument)
		}
		if got.Roles[1].Argument != "to" || got.Job.ID != "job-1" {
			t.Errorf("restricted %v: an identifier without a secret changed: %q, %q", restricted, got.Roles[1].Argument, got.Job.ID)
		}
		if restricted {
			continue
		}
		var args map[string]string
		if err := json.Unmarshal(got.Call.Arguments, &args); err != nil {
			t.Fatal(err)
		}
		if _, ok := args[name]; !ok {
			t.Errorf("the stored arguments %s have no key %q: the card cannot pair the role with its argument", got.Call.Arguments, name)
		}
	}
	if base.Call.Function != "acme_github.merge_ghp_Function0name0secret000000000000" ||
		base.Flags.NewToJob[0].Argument != base.Roles[0].Argument || !strings.Contains(base.Confirm.Argument, "eyJ") ||
		!strings.Contains(base.AskedBy.Taint[0].Function, "eyJ") || !strings.Contains(base.Changes.Files[0].Path, "path-pw") {
		t.Error("StoredForm changed its input")
	}
}

// TestStoredFormRedactsIdentifiersOfRestrictedFound: a restricted
// revision's stored warning about a role's values names the argument as
// it is kept.
func TestStoredFormRedactsIdentifiersOfRestrictedFound(t *testing.T) {
	a, _, _ := hostileIdentifiers()
	a.Content.Restricted = true
	a.Roles[0].Values[0].Value = "ops@acme\u200b.example"
	got := kept(t, &a)
	if f := got.Roles[0].Found; f == "" || strings.Contains(f, "role-pw-4417") || !strings.Contains(f, "hooks.acme.example") {
		t.Errorf("stored Found %q: want the warning, naming the argument redacted", f)
	}
}

// TestIdentifierSecretsNeverReachTheDatabaseFile: mail.json's request,
// its identifiers those of hostileIdentifiers, ingested into SQLite on
// disk as the bot ingests it, leaves none of their secrets in the file.
// The function name is a plain one here: the approval's own row keeps it
// for the ladder and tool look-ups (package threads); the stored form's
// redaction of it is TestStoredFormRedactsIdentifiers'.
func TestIdentifierSecretsNeverReachTheDatabaseFile(t *testing.T) {
	env := func(n string) (string, bool) { return n + "-of-the-tests-0123456789abcdef0123456789", true }
	cfg, err := config.Parse("bot.yaml", []byte(`
backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${EVENTS}"]
  calls_secrets: ["${CALLS}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
`), env)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Options{Path: filepath.Join(dir, "bot.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: clockwork.NewFakeClockAt(threadstest.FixtureNow),
		Fallback: logsurface.New(logsurface.Options{Out: io.Discard, Renderer: threadstest.Renderer(t)})})
	if err != nil {
		t.Fatal(err)
	}
	h, secrets, _ := hostileIdentifiers()
	hostile, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(hostile, &fields); err != nil {
		t.Fatal(err)
	}
	body, _ := threadstest.Event(t, "mail.json")
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	data := m["data"].(map[string]any)
	for _, k := range []string{"job", "roles", "flags", "asked_by", "level", "confirm"} {
		data[k] = fields[k]
	}
	if body, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse the hostile event: %v", err)
	}
	sum := sha256.Sum256(body)
	if _, err := svc.Ingest(ctx, threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	var disk []byte
	files, err := filepath.Glob(filepath.Join(dir, "bot.db*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		disk = append(disk, b...)
	}
	for _, word := range []string{"sso.acme.example", "deployer", "hooks.acme.example"} {
		if !bytes.Contains(disk, []byte(word)) {
			t.Errorf("%s is not in the database file: the test reads nothing of that identifier", word)
		}
	}
	for _, secret := range secrets {
		if bytes.Contains(disk, []byte(secret)) {
			t.Errorf("the database file keeps %q", secret)
		}
	}
}
