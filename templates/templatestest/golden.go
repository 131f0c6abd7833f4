package templatestest

import (
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/internal/golden"
	"approvalsbot/ladder"
	"approvalsbot/templates"
)

// GoldenCase is what one golden file shows: a card, or a thread reply.
// Name is the file's path without the surface's suffix: "merge/pending"
// for a card ("merge/pending.discord.json"), "merge-resolved/thread" for
// a reply.
type GoldenCase struct {
	Name   string
	Card   *templates.Card
	Thread *templates.ThreadMessage
}

// goldenDir holds a package's golden files.
const goldenDir = "testdata/golden"

// RunGolden renders each Golden case on a surface and compares each file
// render gives (content by the suffix after the case's name, e.g.
// ".slack.json") with testdata/golden, or rewrites the files when update
// is set. A file no case writes fails the test.
func RunGolden(t *testing.T, update bool, render func(t *testing.T, g GoldenCase) map[string]string) {
	t.Helper()
	want := map[string]bool{}
	cases := Golden(t)
	for _, g := range cases {
		for suffix, got := range render(t, g) {
			rel := g.Name + suffix
			if want[rel] {
				t.Errorf("%s: two cases", rel)
			}
			want[rel] = true
			golden.Check(t, filepath.Join(goldenDir, filepath.FromSlash(rel)), got, update)
		}
	}
	if update || t.Failed() {
		return
	}
	err := filepath.WalkDir(goldenDir, func(path string, d fs.DirEntry, err error) error {
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
	if len(cases) < 60 {
		t.Fatalf("%d golden cases: the fixtures were not all rendered", len(cases))
	}
}

// RunChatGolden is RunGolden for a chat: the message card or thread
// makes of each case, as MarshalPreview writes it, in the file ending in
// suffix.
func RunChatGolden[M any](t *testing.T, update bool, suffix string, card func(templates.Card) M, thread func(templates.ThreadMessage) M) {
	t.Helper()
	RunGolden(t, update, func(t *testing.T, g GoldenCase) map[string]string {
		var msg M
		if g.Card != nil {
			msg = card(*g.Card)
		} else {
			msg = thread(*g.Thread)
		}
		b, err := templates.MarshalPreview(msg)
		if err != nil {
			t.Fatal(err)
		}
		return map[string]string{suffix: string(b)}
	})
}

// goldenStates are the states rendered beyond pending, per fixture: every
// state for merge and for the question, the ones a fixture's later event
// leads to, and a decision being sent on a content-restricted card (a
// call and a question).
var goldenStates = map[string][]string{
	"refund":           {"pending", "refused"},
	"mail":             {"pending", "cancelled"},
	"private":          {"pending", templates.PreviewDeciding},
	"question-private": {"pending", templates.PreviewDeciding, "answered"},
}

// everyState are the fixtures whose card is rendered in every state
// their kind reaches.
var everyState = map[string]bool{"merge": true, "question": true}

// Golden lists every case the golden files render, on every surface: a
// card per approval fixture and state, a thread reply per other event,
// and the cases below each.
func Golden(t testing.TB) []GoldenCase {
	t.Helper()
	files, err := fixtures.EventFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture events: %v", err)
	}
	var out []GoldenCase
	card := func(dir, state string, c templates.Card) {
		out = append(out, GoldenCase{Name: path.Join(dir, state), Card: &c})
	}
	thread := func(dir string, m templates.ThreadMessage) {
		out = append(out, GoldenCase{Name: path.Join(dir, "thread"), Thread: &m})
	}
	load := func(name string) *approval.Approval { return Approval(t, name) }

	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		ev := EventFile(t, f)
		if ev.Approval == nil {
			m, ok := templates.ThreadFromEvent(ev)
			if !ok {
				t.Fatalf("%s: no thread message for %s", name, ev.Type)
			}
			thread(name, m)
			continue
		}
		states := goldenStates[name]
		if everyState[name] {
			states = templates.PreviewStatesOf(ev.Approval)
		}
		if len(states) == 0 {
			states = []string{"pending"}
		}
		for _, s := range states {
			card(name, s, Card(t, ev.Approval, s))
		}
	}

	// A content-restricted approval as the ephemeral answer to Show
	// details shows what the channel's card hides.
	revealed := Input(t, load("private.json"), "pending")
	revealed.RevealContent = true
	card("private", "revealed", templates.Build(revealed))

	// A reask: the new card says why and what changed since revision 1,
	// the old one why it was superseded; a restricted call asked again
	// says only that its arguments changed.
	prev, next := load("merge.json"), load("merge-reasked.json")
	change := approval.CompareRevisions(stored(t, prev), stored(t, next))
	in := Input(t, next, "pending")
	in.Reask = &change
	card("merge-reasked", "asked-again", templates.Build(in))
	old := Input(t, prev, templates.PreviewSuperseded)
	old.SupersededBy = &change
	card("merge", "superseded-why", templates.Build(old))
	priv := load("private.json")
	again := *priv
	again.Revision, again.Why = 2, approval.WhyArgumentsChanged
	again.Call.Arguments = []byte(`{"entry":"changed"}`)
	again.Call.ArgsSHA256 = "sha256:" + strings.Repeat("ab", 32)
	restricted := approval.CompareRevisions(stored(t, priv), stored(t, &again))
	pin := Input(t, &again, "pending")
	pin.Reask = &restricted
	card("private", "asked-again", templates.Build(pin))

	// A question asked again: its card says the question changed, not
	// a call, since revision 1.
	q1 := load("question.json")
	q2 := *q1
	q2.Revision = 2
	q2.Question = &approval.Question{Text: "Order 7781 was paid from three accounts. Which one should I refund the 250 EUR to?",
		Choices: append(slices.Clone(q1.Question.Choices), "acct-3 (Ruiz family trust)"), FreeText: true}
	qchange := approval.CompareRevisions(stored(t, q1), stored(t, &q2))
	qin := Input(t, &q2, "pending")
	qin.Reask = &qchange
	card("question", "asked-again", templates.Build(qin))

	// A request that named a ladder the tenant does not have.
	unknown := Input(t, load("merge.json"), "pending")
	unknown.Ladder.Name, unknown.Ladder.Unknown = "default", "payments2"
	unknown.Tenant = "acme"
	card("merge", "unknown-ladder", templates.Build(unknown))

	// An approval with a comment, given through Approve with comment…:
	// on the card, except on a content-restricted one.
	for _, f := range []string{"merge", "private"} {
		in := Input(t, load(f+".json"), "approved")
		in.Decision.Comment = "fine once CI is green"
		card(f, "approved-comment", templates.Build(in))
	}

	// A card shown the day after its decision carries the decision's date.
	merge := load("merge.json")
	nextDay := Input(t, merge, "approved")
	nextDay.Now = merge.RequestedAt.Add(30 * time.Hour)
	card("merge", "approved-next-day", templates.Build(nextDay))

	// An escalation reply, which no fixture event carries, and Escalate
	// now's, which names who fired the step.
	thread("escalation", templates.Escalation(merge.ID, []templates.Mention{
		{Target: "slack:U0KEVIN", Name: "kevin"},
		{Target: "discord:role:445566778899", Name: "oncall"},
	}, 15*time.Minute))
	now := templates.Escalation(merge.ID, []templates.Mention{{Target: "slack:U0LEE", Name: "lee"}}, 20*time.Minute)
	now.By = "user:kevin"
	thread("escalated-now", now)

	// The ladder's state on a waiting card: who is looking (a second
	// member taking over from the first), until when the steps wait, and
	// a step fired at once; a content-restricted card shows the same.
	for _, f := range []string{"merge", "private"} {
		a := load(f + ".json")
		in := Input(t, a, "pending")
		at := a.RequestedAt
		in.Looking = &templates.Looking{Actor: "user:ada", Since: at.Add(10 * time.Minute), Until: at.Add(40 * time.Minute), From: "user:kevin"}
		in.Escalations = []templates.EscalatedStep{{Actor: "user:kevin", At: at.Add(5 * time.Minute), Who: "mention slack:U0KEVIN slack:S0ONCALL",
			Planned: at.Add(15 * time.Minute)}}
		card(f, "looking", templates.Build(in))
	}

	out = append(out, reaskLines(t, prev, next)...)

	// The effects warning, worded for what the tool declared: it says it
	// reaches outside (merge), it says it stays inside; a tool that says
	// nothing is unknown.json's pending card.
	no := false
	for name, open := range map[string]*bool{"effects-outside": nil, "effects-inside": &no} {
		a := *load("merge.json")
		a.EffectsMismatch = true
		if open != nil {
			a.Call.Annotations.OpenWorldHint = open
		}
		card("merge", name, Card(t, &a, "pending"))
	}

	// The warnings the effect line alone would leave unsaid, the role rows
	// of a hostile call, and what a request left out said as not given.
	yes := true
	contra := *load("search.json")
	contra.Call.Annotations.DestructiveHint = &yes
	card("search", "contradiction", Card(t, &contra, "pending"))
	egress := *load("mail.json")
	egress.Call.Annotations.OpenWorldHint = &no
	card("mail", "egress-inside", Card(t, &egress, "pending"))
	tainted := *load("refund.json")
	tainted.Call.Annotations.OpenWorldHint = &no
	card("refund", "taint-inside", Card(t, &tainted, "pending"))
	attacked := *load("mail.json")
	vals := make([]approval.RoleValue, 100)
	for i := range vals {
		vals[i] = approval.RoleValue{Value: fmt.Sprintf("team%d@acme.example", i), Origin: approval.OriginTenantRecord}
	}
	vals[25] = approval.RoleValue{Value: "x@evil.example", Origin: approval.OriginJobRead}
	attacked.Roles = []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: vals}}
	card("mail", "attacker-26-of-100", Card(t, &attacked, "pending"))
	secret := *load("mail.json")
	secret.Roles = append(slices.Clone(secret.Roles),
		approval.Role{Argument: "smtp_password", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "hunter2", Origin: approval.OriginRequest}}},
		approval.Role{Argument: "relay", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "smtp://mailer:hunter2@relay.acme.example", Origin: approval.OriginRequest}}})
	card("mail", "secret-role", Card(t, &secret, "pending"))
	for _, f := range []string{"merge", "private"} {
		bare := *load(f + ".json")
		bare.Level, bare.Call.Snapshot = "", ""
		card(f, "not-given", Card(t, &bare, "pending"))
	}

	// A decision being sent with the person's comment: on the card, except
	// on a content-restricted one, which says where to read it.
	for _, f := range []string{"merge", "private"} {
		in := Input(t, load(f+".json"), templates.PreviewDeciding)
		in.Deciding.Comment = "fine once CI is green"
		card(f, "deciding-comment", templates.Build(in))
	}

	// A repeating step that fills the plan line's first steps, and a step
	// its window keeps shut until after the deadline: the card shows the
	// skipped step at the time it was due, with the plan's reason.
	skipping := Input(t, merge, "pending")
	skipping.Ladder = Frozen(skippingLadder(merge.RequestedAt).Plan(merge.RequestedAt, ladder.Deadline(merge.Deadline, merge.RequestedAt, 0, 0)))
	card("merge", "skipped-steps", templates.Build(skipping))

	// A call that needs two approvals: the quorum line as it rises and
	// ends (QuorumCases).
	for _, q := range QuorumCases(t) {
		c := templates.Build(q.In)
		out = append(out, GoldenCase{Name: q.Name, Card: &c})
	}
	return out
}

// reaskLines are what a reask says beyond the arguments changed: more
// changes than a card lists, a change only in values the card does not
// show, and each other reason, on the new card and on the one it
// supersedes. The reasks are written out, so these cards do not depend
// on how package approval compares two revisions.
func reaskLines(t testing.TB, prev, next *approval.Approval) []GoldenCase {
	var out []GoldenCase
	var many []approval.ArgumentChange
	for i := range 12 { // two more than a card lists
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
		// The shown arguments are the same unless the reask lists what
		// changed in them; a change it does not show still changes the
		// digest.
		if len(r.Arguments) == 0 {
			again.Call.Arguments = prev.Call.Arguments
			if !r.Unshown {
				again.Call.ArgsSHA256 = prev.Call.ArgsSHA256
			}
		}
		if r.SnapshotTo != "" {
			again.Call.Snapshot = r.SnapshotTo
		}
		in := Input(t, &again, "pending")
		in.Reask = &r
		c := templates.Build(in)
		out = append(out, GoldenCase{Name: path.Join("merge-reasked", name), Card: &c})
		if name == "more-changes" || name == "unshown-change" || name == "hidden-change" {
			continue // superseded by the arguments changing: superseded-why
		}
		old := Input(t, prev, templates.PreviewSuperseded)
		old.SupersededBy = &r
		oc := templates.Build(old)
		out = append(out, GoldenCase{Name: path.Join("merge", "superseded-"+name), Card: &oc})
	}
	return out
}

// stored is a as the bot keeps its revision (approval.StoredForm).
func stored(t testing.TB, a *approval.Approval) *approval.Approval {
	t.Helper()
	s, err := approval.StoredForm(a)
	if err != nil {
		t.Fatal(err)
	}
	return &s.Approval
}

// skippingLadder repeats a mention of a rotation's member on call and of
// a labelled group every half hour from a quarter of an hour after the
// request, three times more, then mails the leads; a DM it holds to a
// window open only three days after requested, which the deadline comes
// before.
func skippingLadder(requested time.Time) ladder.Ladder {
	later := &ladder.Window{Days: ladder.Days(1) << uint(requested.Add(72*time.Hour).Weekday()), Hours: ladder.AllDay}
	primary := ladder.Rotation{Name: "primary", EveryDays: 7, Handoff: 9 * 60, Zone: ladder.ZoneOf(time.UTC),
		First:   ladder.DateOf(requested.Add(-24 * time.Hour)),
		Members: []ladder.RotationMember{{User: "user:kevin", Chat: ladder.ChatIDs{"slack": "U0KEVIN"}}, {User: "user:ada", Chat: ladder.ChatIDs{"slack": "U0ADA"}}}}
	return ladder.Ladder{Name: "skipping", Rotations: map[string]ladder.Rotation{"primary": primary},
		Labels: ladder.Labels{"slack:S0ONCALL": "on-call group"}, Steps: []ladder.Step{
			{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindRotation, ID: "primary"}, {Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}},
				Repeat: &ladder.Repeat{Every: 30 * time.Minute, Times: 3}},
			{Anchor: ladder.AnchorRequest, After: 20 * time.Minute, DM: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0LEAD"}}, During: later},
			{Anchor: ladder.AnchorRequest, After: 2 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
			{Anchor: ladder.AnchorRequest, After: 3 * time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "cto@acme.example"}}},
		}}
}
