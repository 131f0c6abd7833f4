package templates

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/ladder"
)

// goldenInput is the Input of a in the named preview state on the pinned
// clock and ladder.
func goldenInput(t *testing.T, a *approval.Approval, state string) Input {
	t.Helper()
	at, ladder := pinned(a)
	in, err := PreviewInput(a, state, at, ladder)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// stored is a as the bot keeps its revision (approval.StoredForm).
func stored(t *testing.T, a *approval.Approval) *approval.Approval {
	t.Helper()
	s, err := approval.StoredForm(a)
	if err != nil {
		t.Fatal(err)
	}
	return &s.Approval
}

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

const goldenDir = "testdata/golden"

// goldenStates are the states rendered beyond pending, per fixture: every
// state for merge, the ones a fixture's later event leads to, and a
// decision being sent on a content-restricted card.
var goldenStates = map[string][]string{
	"merge":   PreviewStates(),
	"refund":  {"pending", "refused"},
	"mail":    {"pending", "cancelled"},
	"private": {"pending", PreviewDeciding},
}

// TestGolden renders every fixture on every surface and compares with the
// files under testdata/golden (go test ./templates -update rewrites them):
// a card per approval fixture and state, a thread reply per other event.
// templatestest.Golden lists the same cases for the chat adapters' own
// (adapters/slack and adapters/discord TestGolden).
func TestGolden(t *testing.T) {
	r := newRenderer(t)
	files, err := fixtures.EventFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture events: %v", err)
	}
	want := map[string]bool{}
	check := func(t *testing.T, rel string, got []byte) {
		t.Helper()
		want[filepath.ToSlash(rel)] = true
		path := filepath.Join(goldenDir, rel)
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		old, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./templates -update)", err)
		}
		if diff := cmp.Diff(string(old), string(got)); diff != "" {
			t.Errorf("%s differs (-golden +got):\n%s", rel, diff)
		}
	}
	card := func(t *testing.T, dir, state string, c Card) {
		e := r.Email(c)
		check(t, filepath.Join(dir, state+".email.txt"), []byte("Subject: "+e.Subject+"\n\n"+e.Text))
		check(t, filepath.Join(dir, state+".email.html"), []byte(e.HTML))
		check(t, filepath.Join(dir, state+".text.txt"), []byte(r.Text(c)))
	}
	thread := func(t *testing.T, dir string, m ThreadMessage) {
		check(t, filepath.Join(dir, "thread.text.txt"), []byte(r.TextThread(m)))
	}

	for _, f := range files {
		name := fixtureName(f)
		ev := parseEventFile(t, f)
		t.Run(name, func(t *testing.T) {
			if ev.Approval == nil {
				m, ok := ThreadFromEvent(ev)
				if !ok {
					t.Fatalf("%s: no thread message for %s", name, ev.Type)
				}
				thread(t, name, m)
				return
			}
			states := goldenStates[name]
			if len(states) == 0 {
				states = []string{"pending"}
			}
			for _, s := range states {
				card(t, name, s, cardIn(t, ev.Approval, s))
			}
		})
	}

	// A content-restricted approval as the ephemeral answer to Show
	// details shows what the channel's card hides.
	t.Run("private-revealed", func(t *testing.T) {
		a := loadApproval(t, "private.json")
		at, ladder := pinned(a)
		in, err := PreviewInput(a, "pending", at, ladder)
		if err != nil {
			t.Fatal(err)
		}
		in.RevealContent = true
		card(t, "private", "revealed", Build(in))
	})
	// A reask: the new card says why and what changed since revision 1,
	// the old one why it was superseded; a restricted call asked again
	// says only that its arguments changed.
	t.Run("reask", func(t *testing.T) {
		prev, next := loadApproval(t, "merge.json"), loadApproval(t, "merge-reasked.json")
		change := approval.CompareRevisions(stored(t, prev), stored(t, next))
		in := goldenInput(t, next, "pending")
		in.Reask = &change
		card(t, "merge-reasked", "asked-again", Build(in))
		old := goldenInput(t, prev, PreviewSuperseded)
		old.SupersededBy = &change
		card(t, "merge", "superseded-why", Build(old))

		priv := loadApproval(t, "private.json")
		again := *priv
		again.Revision, again.Why = 2, approval.WhyArgumentsChanged
		again.Call.Arguments = []byte(`{"entry":"changed"}`)
		again.Call.ArgsSHA256 = "sha256:" + strings.Repeat("ab", 32)
		restricted := approval.CompareRevisions(stored(t, priv), stored(t, &again))
		pin := goldenInput(t, &again, "pending")
		pin.Reask = &restricted
		card(t, "private", "asked-again", Build(pin))
	})
	// A request that named a ladder the tenant does not have.
	t.Run("unknown-ladder", func(t *testing.T) {
		a := loadApproval(t, "merge.json")
		in := goldenInput(t, a, "pending")
		in.Ladder.Name, in.Ladder.Unknown = "default", "payments2"
		in.Tenant = "acme"
		card(t, "merge", "unknown-ladder", Build(in))
	})
	// An approval with a comment, given through Approve with comment…:
	// on the card, except on a content-restricted one.
	t.Run("approved-comment", func(t *testing.T) {
		for _, f := range []string{"merge", "private"} {
			a := loadApproval(t, f+".json")
			in := goldenInput(t, a, "approved")
			in.Decision.Comment = "fine once CI is green"
			card(t, f, "approved-comment", Build(in))
		}
	})
	// A card shown the day after its decision carries the decision's date.
	t.Run("next-day", func(t *testing.T) {
		a := loadApproval(t, "merge.json")
		in := goldenInput(t, a, "approved")
		in.Now = a.RequestedAt.Add(30 * time.Hour)
		card(t, "merge", "approved-next-day", Build(in))
	})
	// An escalation reply, which no fixture event carries.
	t.Run("escalation", func(t *testing.T) {
		a := loadApproval(t, "merge.json")
		thread(t, "escalation", Escalation(a.ID, []Mention{
			{Target: "slack:U0KEVIN", Name: "kevin"},
			{Target: "discord:role:445566778899", Name: "oncall"},
		}, 15*time.Minute))
	})
	// Escalate now's reply names who fired the step.
	t.Run("escalated-now", func(t *testing.T) {
		a := loadApproval(t, "merge.json")
		m := Escalation(a.ID, []Mention{{Target: "slack:U0LEE", Name: "lee"}}, 20*time.Minute)
		m.By = "user:kevin"
		thread(t, "escalated-now", m)
	})
	// The ladder's state on a waiting card: who is looking (a second
	// member taking over from the first), until when the steps wait, and
	// a step fired at once; a content-restricted card shows the same.
	t.Run("looking", func(t *testing.T) {
		for _, f := range []string{"merge", "private"} {
			a := loadApproval(t, f+".json")
			in := goldenInput(t, a, "pending")
			at := a.RequestedAt
			in.Looking = &Looking{Actor: "user:ada", Since: at.Add(10 * time.Minute), Until: at.Add(40 * time.Minute), From: "user:kevin"}
			in.Escalations = []EscalatedStep{{Actor: "user:kevin", At: at.Add(5 * time.Minute), Who: "mention slack:U0KEVIN slack:S0ONCALL",
				Planned: at.Add(15 * time.Minute)}}
			card(t, f, "looking", Build(in))
		}
	})

	// What a reask says beyond the arguments changed: more changes than
	// a card lists, a change only in values the card does not show, and
	// each other reason, on the new card and on the one it supersedes.
	// The reasks are written out, so these cards do not depend on how
	// package approval compares two revisions.
	t.Run("reask-lines", func(t *testing.T) {
		prev, next := loadApproval(t, "merge.json"), loadApproval(t, "merge-reasked.json")
		var many []approval.ArgumentChange
		for i := range listMax + 2 {
			many = append(many, approval.ArgumentChange{Path: fmt.Sprintf("labels[%d]", i), Kind: approval.ChangeAdded, New: fmt.Sprintf("%q", fmt.Sprintf("l%d", i))})
		}
		snapTo := "sha256:" + strings.Repeat("0a1b2c3d", 8)
		for name, r := range map[string]approval.Reask{
			"more-changes":   {Why: approval.WhyArgumentsChanged, Arguments: many, More: 3},
			"unshown-change": {Why: approval.WhyArgumentsChanged, Unshown: true},
			"hidden-change": {Why: approval.WhyArgumentsChanged, Arguments: []approval.ArgumentChange{
				{Path: "token", Kind: approval.ChangeChanged, Old: `"[redacted]"`, New: `"[redacted]"`, Hidden: true},
				{Path: "method", Kind: approval.ChangeChanged, Old: `"squash"`, New: `"rebase"`}}},
			"snapshot-changed": {Why: approval.WhySnapshotChanged, SnapshotFrom: prev.Call.Snapshot, SnapshotTo: snapTo},
			"policy-changed":   {Why: approval.WhyPolicyChanged},
			"hook-changed": {Why: approval.WhyHookChanged,
				Arguments: []approval.ArgumentChange{{Path: "method", Kind: approval.ChangeChanged, Old: `"squash"`, New: `"rebase"`}}},
		} {
			r.From, r.Revision = prev.Revision, next.Revision
			again := *next
			again.Why = r.Why
			// The shown arguments are the same unless the reask lists
			// what changed in them; a change it does not show still
			// changes the digest.
			if len(r.Arguments) == 0 {
				again.Call.Arguments = prev.Call.Arguments
				if !r.Unshown {
					again.Call.ArgsSHA256 = prev.Call.ArgsSHA256
				}
			}
			if r.SnapshotTo != "" {
				again.Call.Snapshot = r.SnapshotTo
			}
			in := goldenInput(t, &again, "pending")
			in.Reask = &r
			card(t, "merge-reasked", name, Build(in))
			if name == "more-changes" || name == "unshown-change" || name == "hidden-change" {
				continue // superseded by the arguments changing: superseded-why
			}
			old := goldenInput(t, prev, PreviewSuperseded)
			old.SupersededBy = &r
			card(t, "merge", "superseded-"+name, Build(old))
		}
	})
	// The effects warning, worded for what the tool declared: it says it
	// reaches outside (merge), it says it stays inside; a tool that says
	// nothing is unknown.json's pending card.
	t.Run("effects-warning", func(t *testing.T) {
		no := false
		for name, open := range map[string]*bool{"effects-outside": nil, "effects-inside": &no} {
			a := *loadApproval(t, "merge.json")
			a.EffectsMismatch = true
			if open != nil {
				a.Call.Annotations.OpenWorldHint = open
			}
			card(t, "merge", name, cardIn(t, &a, "pending"))
		}
	})
	// The warnings the effect line alone would leave unsaid, the role rows
	// of a hostile call, and what a request left out said as not given.
	t.Run("card-truth", func(t *testing.T) {
		yes, no := true, false
		contra := *loadApproval(t, "search.json")
		contra.Call.Annotations.DestructiveHint = &yes
		card(t, "search", "contradiction", cardIn(t, &contra, "pending"))

		egress := *loadApproval(t, "mail.json")
		egress.Call.Annotations.OpenWorldHint = &no
		card(t, "mail", "egress-inside", cardIn(t, &egress, "pending"))

		tainted := *loadApproval(t, "refund.json")
		tainted.Call.Annotations.OpenWorldHint = &no
		card(t, "refund", "taint-inside", cardIn(t, &tainted, "pending"))

		attacked := *loadApproval(t, "mail.json")
		vals := make([]approval.RoleValue, 100)
		for i := range vals {
			vals[i] = approval.RoleValue{Value: fmt.Sprintf("team%d@acme.example", i), Origin: approval.OriginTenantRecord}
		}
		vals[25] = approval.RoleValue{Value: "x@evil.example", Origin: approval.OriginJobRead}
		attacked.Roles = []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: vals}}
		card(t, "mail", "attacker-26-of-100", cardIn(t, &attacked, "pending"))

		secret := *loadApproval(t, "mail.json")
		secret.Roles = append(slices.Clone(secret.Roles),
			approval.Role{Argument: "smtp_password", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "hunter2", Origin: approval.OriginRequest}}},
			approval.Role{Argument: "relay", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "smtp://mailer:hunter2@relay.acme.example", Origin: approval.OriginRequest}}})
		card(t, "mail", "secret-role", cardIn(t, &secret, "pending"))

		for _, f := range []string{"merge", "private"} {
			bare := *loadApproval(t, f+".json")
			bare.Level, bare.Call.Snapshot = "", ""
			card(t, f, "not-given", cardIn(t, &bare, "pending"))
		}
	})
	// A decision being sent with the person's comment: on the card, except
	// on a content-restricted one, which says where to read it.
	t.Run("deciding-comment", func(t *testing.T) {
		for _, f := range []string{"merge", "private"} {
			a := loadApproval(t, f+".json")
			in := goldenInput(t, a, PreviewDeciding)
			in.Deciding.Comment = "fine once CI is green"
			card(t, f, "deciding-comment", Build(in))
		}
	})
	// A repeating step that fills the plan line's first steps, and a step
	// its window keeps shut until after the deadline: the card shows the
	// skipped step at the time it was due, with the plan's reason.
	t.Run("skipped-steps", func(t *testing.T) {
		a := loadApproval(t, "merge.json")
		in := goldenInput(t, a, "pending")
		in.Ladder = frozen(skippingLadder(a.RequestedAt).Plan(a.RequestedAt, ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0)))
		card(t, "merge", "skipped-steps", Build(in))
	})

	if *update || t.Failed() {
		return
	}
	// Every golden file is one a case wrote: none is left stale.
	err = filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(goldenDir, path)
		if !want[filepath.ToSlash(rel)] {
			t.Errorf("stale golden file %s: no case writes it", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// skippingLadder repeats a mention every half hour from a quarter of an
// hour after the request, three times more, then mails the leads; a DM
// it holds to a window open only three days after requested, which the
// deadline comes before.
func skippingLadder(requested time.Time) ladder.Ladder {
	later := &ladder.Window{Days: ladder.Days(1) << uint(requested.Add(72*time.Hour).Weekday()), Hours: ladder.AllDay}
	return ladder.Ladder{Name: "skipping", Steps: []ladder.Step{
		{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}},
			Repeat: &ladder.Repeat{Every: 30 * time.Minute, Times: 3}},
		{Anchor: ladder.AnchorRequest, After: 20 * time.Minute, DM: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0LEAD"}}, During: later},
		{Anchor: ladder.AnchorRequest, After: 2 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
		{Anchor: ladder.AnchorRequest, After: 3 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "cto@acme.example"}}},
	}}
}
