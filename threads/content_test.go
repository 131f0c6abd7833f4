package threads_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/say"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// ingestEdited ingests a fixture event changed by edit, its arguments
// known to the fake backend.
func (h *decideHarness) ingestEdited(t *testing.T, name string, edit func(data map[string]any)) {
	t.Helper()
	ev := threadstest.Ingest(t, h.svc, name, func(ev map[string]any) { edit(ev["data"].(map[string]any)) })
	threadstest.Backed(t, h.fake, ev)
}

// TestDecisionCarriesTheDigestExactlyForContentHolders: whatever the
// card showed, a decision is bound to the digest when the member who
// decides holds the content permission, and carries none otherwise; a
// walled job's call may be decided by a member without it.
func TestDecisionCarriesTheDigestExactlyForContentHolders(t *testing.T) {
	for _, c := range []struct {
		name, fixture, user string
		walled, digest      bool
	}{
		{"shared card, content holder", "merge.json", "U0KEVIN", false, true},
		{"shared card, no content", "merge.json", "U0NOC", false, false},
		{"walled job, content holder", "private.json", "U0KEVIN", true, true},
		{"walled job, no content", "private.json", "U0NOC", true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newDecideHarness(t, time.Minute)
			h.ingestEdited(t, c.fixture, func(data map[string]any) {
				if c.walled {
					data["job"].(map[string]any)["private_chat"] = false
				}
			})
			h.drain(t)
			id := map[string]string{"merge.json": "a-merge1", "private.json": "a-priv1"}[c.fixture]
			res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: id, Revision: 1,
				Approve: true, Person: slackPerson(c.user), Shown: true})
			if err != nil || !res.Sent {
				t.Fatalf("decide: %+v %v", res, err)
			}
			h.drain(t)
			got := h.fake.Decisions()
			want := ""
			if c.digest {
				want = h.fake.Digest(id)
			}
			if len(got) != 1 || got[0].Request.ArgsSHA256 != want || got[0].Status != 200 {
				t.Fatalf("decisions %+v: want one recorded with digest %q", got, want)
			}
		})
	}
}

// TestPrivateChatDecidedOnlyByContentHolders: a private chat's call is
// restricted whatever content.restricted says; a member without the
// content permission is refused either way, and a content holder's
// Approve first shows them the call (Reveal) unless it was shown.
func TestPrivateChatDecidedOnlyByContentHolders(t *testing.T) {
	h := newDecideHarness(t, time.Minute)
	h.ingestEdited(t, "private.json", func(data map[string]any) {
		data["content"] = map[string]any{"restricted": false}
	})
	h.drain(t)
	for _, approve := range []bool{true, false} {
		if res := h.decide(t, "a-priv1", 1, approve, "U0NOC"); res.Sent || !strings.Contains(res.Reason.String(), "private chat") {
			t.Fatalf("no content, approve %v: %+v", approve, res)
		}
	}
	if res := h.decide(t, "a-priv1", 1, true, "U0KEVIN"); res.Sent || !res.Reveal {
		t.Fatalf("content holder's blind approve: %+v", res)
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 0 {
		t.Fatalf("decisions %+v", got)
	}
	res, err := h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-priv1", Revision: 1,
		Approve: true, Person: slackPerson("U0KEVIN"), ShownDigest: "sha256:" + strings.Repeat("0", 64)})
	if err != nil || res.Sent || res.Reveal {
		t.Fatalf("approve with another digest shown: %+v %v", res, err)
	}
	res, err = h.svc.Decide(context.Background(), threads.DecideRequest{Tenant: "acme", ApprovalID: "a-priv1", Revision: 1,
		Approve: true, Person: slackPerson("U0KEVIN"), ShownDigest: h.fake.Digest("a-priv1")})
	if err != nil || !res.Sent {
		t.Fatalf("approve with the digest shown: %+v %v", res, err)
	}
	h.drain(t)
	if got := h.fake.Decisions(); len(got) != 1 || got[0].Request.ArgsSHA256 != h.fake.Digest("a-priv1") {
		t.Fatalf("decisions %+v", got)
	}
	// Stored and shown as restricted: the card of every copy hides it.
	for _, p := range h.surf.posts {
		if !p.Card.Approval.ContentRestricted() || p.Card.Approval.Call.Arguments != nil || p.Card.Approval.AgentSays != "" {
			t.Fatalf("a post of the private chat's call keeps its content: %+v", p.Card.Approval)
		}
	}
}

// TestShowArgumentsChecksThePatch: a changeset's look-up shows its files
// and patch only when the patch's digest is the approval's; otherwise
// nothing at all.
func TestShowArgumentsChecksThePatch(t *testing.T) {
	const patch = "--- a/x\n+++ b/x\n+token = ghp_0123456789abcdef\n+ok\n"
	h := newDecideHarness(t, time.Minute)
	h.ingestEdited(t, "changes.json", func(data map[string]any) {
		data["content"] = map[string]any{"restricted": true}
		data["changes"].(map[string]any)["patch_sha256"] = threads.PatchDigest(patch)
		data["changes"].(map[string]any)["files"] = []any{map[string]any{"path": "src/retry.go"},
			map[string]any{"path": "rules/policy.yaml", "protected": true}}
	})
	files := []backend.ChangedFileAnswer{{Path: "src/retry.go"}, {Path: "rules/policy.yaml", Protected: true}}
	h.fake.SetChanges("a-chg1", files, patch)
	show := func() threads.ShowResult {
		t.Helper()
		res, err := showArguments(h.svc, "a-chg1", "U0KEVIN")
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := show()
	if !res.Refusal.IsZero() || res.Changes == nil || res.Changes.PatchSHA256 != threads.PatchDigest(patch) ||
		res.Changes.Files[0].Path != "rules/policy.yaml" || !strings.Contains(res.Changes.Patch, "+ok") {
		t.Fatalf("show: %+v", res)
	}
	if text := res.Text(); !strings.Contains(text, "rules/policy.yaml (protected)") || !strings.Contains(text, "agent/fix-retry") {
		t.Fatalf("text %q", text)
	}
	h.fake.TamperPatch("a-chg1", patch+"+rm -rf /\n")
	if res := show(); res.Refusal.IsZero() || res.Arguments != nil || res.Changes != nil || strings.Contains(res.Refusal.String(), "rm -rf") {
		t.Fatalf("tampered patch: %+v", res)
	}
}

// TestShowArgumentsChecksTheFiles: the patch digest binds the patch, not
// the list of files beside it, so a look-up's files are held to the
// stored revision's: as many, in its order, each with the same protected
// flag (kept even of a restricted call) and, where the revision keeps
// paths (it was not restricted), the same path. On any difference nothing
// is shown, neither the changeset nor the arguments, as for a patch whose
// digest differs.
func TestShowArgumentsChecksTheFiles(t *testing.T) {
	const patch = "--- a/src/retry.go\n+++ b/src/retry.go\n+ok\n"
	// The approval's files: the second path holds a credential, which the
	// stored revision keeps redacted and the look-up sends whole.
	card := []backend.ChangedFileAnswer{{Path: "src/retry.go"}, {Path: "deploy/password=hunter2/rules.yaml", Protected: true}}
	type file = backend.ChangedFileAnswer
	for _, c := range []struct {
		name       string
		restricted bool
		lookup     []file
		shown      bool
	}{
		{"the same files", false, card, true},
		{"the same files, restricted", true, card, true},
		{"a path swapped", false, []file{card[0], {Path: "src/evil.go", Protected: true}}, false},
		{"a flag swapped", false, []file{{Path: card[0].Path, Protected: true}, {Path: card[1].Path}}, false},
		{"a flag dropped, restricted", true, []file{card[0], {Path: card[1].Path}}, false},
		{"the order swapped", false, []file{card[1], card[0]}, false},
		{"a file more", false, []file{card[0], card[1], {Path: "src/more.go"}}, false},
		// A restricted revision keeps no path, so only the flags bind them.
		{"other paths, restricted", true, []file{{Path: "src/other.go"}, {Path: "rules/other.yaml", Protected: true}}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := newDecideHarness(t, time.Minute)
			h.ingestEdited(t, "changes.json", func(data map[string]any) {
				data["content"] = map[string]any{"restricted": c.restricted}
				ch := data["changes"].(map[string]any)
				ch["patch"], ch["patch_sha256"] = patch, threads.PatchDigest(patch)
				var files []any
				for _, f := range card {
					files = append(files, map[string]any{"path": f.Path, "protected": f.Protected})
				}
				ch["files"] = files
			})
			h.fake.SetChanges("a-chg1", c.lookup, patch)
			res, err := showArguments(h.svc, "a-chg1", "U0KEVIN")
			if err != nil {
				t.Fatal(err)
			}
			if !c.shown {
				if res.Refusal.Kind != say.ChangesMismatch || res.Arguments != nil || res.Changes != nil {
					t.Fatalf("look-up files %+v against the card's %+v: shown %+v, want nothing and the changeset refused", c.lookup, card, res)
				}
				return
			}
			if !res.Refusal.IsZero() || res.Changes == nil || len(res.Changes.Files) != len(c.lookup) {
				t.Fatalf("look-up files %+v against the card's %+v: %+v, want them shown", c.lookup, card, res)
			}
			if text := res.Text(); strings.Contains(text, "hunter2") || !strings.Contains(text, "+ok") {
				t.Errorf("shown %q: want the patch, and no credential of a path", text)
			}
		})
	}
}
