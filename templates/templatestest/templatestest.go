// Package templatestest holds the cards and thread replies that tests of
// a surface render from package templates: fixture approvals on the
// golden files' pinned clock and ladder, approvals built in code for
// rules no fixture exercises (one of them about 1 MiB), and every golden
// case, so that a surface built outside package templates (Slack's Block
// Kit, in its adapter) proves itself on the same cards.
package templatestest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/ladder"
	"approvalsbot/templates"
)

// Event parses one fixture event, e.g. "merge.json".
func Event(t testing.TB, name string) *approval.Event {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	return parseEventFile(t, p)
}

func parseEventFile(t testing.TB, path string) *approval.Event {
	t.Helper()
	body, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatalf("parse %s: %v", filepath.Base(path), err)
	}
	return ev
}

// Approval is the approval of a requested or reasked fixture.
func Approval(t testing.TB, name string) *approval.Approval {
	t.Helper()
	ev := Event(t, name)
	if ev.Approval == nil {
		t.Fatalf("%s carries no approval", name)
	}
	return ev.Approval
}

// pinnedLadder is the golden files' ladder: a mention a quarter of an hour
// after the request, an email after an hour, a DM an hour before the
// deadline (the next day under the default deadline) and a mention after
// the default deadline (skipped).
var pinnedLadder = ladder.Ladder{Name: "golden", Steps: []ladder.Step{
	{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}}},
	{Anchor: ladder.AnchorRequest, After: time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
	{Anchor: ladder.AnchorDeadline, BeforeDeadline: time.Hour, DM: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0LEAD"}}},
	{Anchor: ladder.AnchorRequest, After: 25 * time.Hour, Mention: []ladder.Target{{Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}}},
}}

// Pinned is the golden files' clock and ladder: a decision three minutes
// after the request, and pinnedLadder frozen under the approval's own
// deadline or the default 24 hours.
func Pinned(a *approval.Approval) (time.Time, templates.LadderPlan) {
	return a.RequestedAt.Add(3 * time.Minute),
		Frozen(pinnedLadder.Plan(a.RequestedAt, ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0)))
}

// Frozen is what threads.Card.Input gives the card of a frozen plan: each
// step at its time, whom it tells, whether it is skipped and why, and the
// deadline.
func Frozen(p ladder.Plan) templates.LadderPlan {
	out := templates.LadderPlan{Deadline: p.Deadline}
	why := map[string]templates.SkipReason{ladder.SkipAfterDeadline: templates.SkipAfterDeadline,
		ladder.SkipBeforeRequest: templates.SkipBeforeRequest, ladder.SkipWindowShut: templates.SkipWindowShut}
	for _, s := range p.Steps {
		out.Steps = append(out.Steps, templates.PlanStep{At: s.At, Who: s.Step.Targets(), Skipped: s.Skipped,
			Skip: why[p.SkipReason(s)], HeldFrom: s.HeldFrom})
	}
	return out
}

// Input is the Input of a in the named preview state on the pinned clock
// and ladder.
func Input(t testing.TB, a *approval.Approval, state string) templates.Input {
	t.Helper()
	at, plan := Pinned(a)
	return inputWith(t, a, state, at, plan)
}

func inputWith(t testing.TB, a *approval.Approval, state string, at time.Time, plan templates.LadderPlan) templates.Input {
	t.Helper()
	in, err := templates.PreviewInput(a, state, at, plan)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// Card builds the card of a in the named preview state, on the pinned
// clock and ladder.
func Card(t testing.TB, a *approval.Approval, state string) templates.Card {
	t.Helper()
	return templates.Build(Input(t, a, state))
}

// CardWith builds the card of a in the named preview state under plan,
// on the pinned clock.
func CardWith(t testing.TB, a *approval.Approval, state string, plan templates.LadderPlan) templates.Card {
	t.Helper()
	at, _ := Pinned(a)
	return templates.Build(inputWith(t, a, state, at, plan))
}

// Synthetic is an approval built in code, for rules no fixture exercises.
func Synthetic() *approval.Approval {
	no := false
	at := time.Date(2030, 1, 2, 9, 0, 0, 0, time.UTC)
	return &approval.Approval{
		ID: "a-syn1", Revision: 3, Tenant: "t1", Kind: approval.KindCall,
		ConsoleURL: "https://console.invalid/approvals/a-syn1",
		Job:        approval.Job{ID: "j-1", StartedBy: "user:x", Agent: "bot"},
		Call: approval.Call{
			Function:    "tool.write",
			Annotations: approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &no, OpenWorldHint: &no},
			Arguments:   []byte(`{"a":1}`),
			ArgsSHA256:  "sha256:" + strings.Repeat("a", 64),
		},
		AskedBy:     approval.AskedBy{Reason: approval.ReasonRequiresApproval},
		RequestedAt: at,
	}
}

// Huge is an approval whose arguments, agent text, patch, roles, flags,
// reasons, files and waiting calls total about 1 MiB; with confirm it
// needs a typed confirmation too.
func Huge(t testing.TB, confirm bool) *approval.Approval {
	t.Helper()
	yes := true
	args := map[string]any{}
	for i := range 2000 {
		args[fmt.Sprintf("field%04d", i)] = strings.Repeat("<&>*_`|", 40)
	}
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var roles []approval.Role
	for i := range 200 {
		var vals []approval.RoleValue
		for j := range 10 {
			vals = append(vals, approval.RoleValue{Value: strings.Repeat(fmt.Sprintf("v%d.%d ", i, j), 40), Origin: approval.OriginJobRead, OutOfScope: j%2 == 0})
		}
		roles = append(roles, approval.Role{Argument: fmt.Sprintf("arg%d", i), Role: approval.RoleRecipient, Values: vals, LeftOut: 300, NotCompared: true})
	}
	var notTraced []approval.NotTraced
	var newToJob []approval.NewToJob
	var taint []approval.Taint
	var waiting []string
	var files []approval.ChangedFile
	for i := range 300 {
		notTraced = append(notTraced, approval.NotTraced{Argument: fmt.Sprintf("arg%d", i), Role: approval.RoleRecipient, Origin: approval.OriginJobRead, Floor: approval.OriginTenantRecord})
		newToJob = append(newToJob, approval.NewToJob{Argument: fmt.Sprintf("arg%d", i), Role: approval.RoleHost})
		taint = append(taint, approval.Taint{Source: "open_world", Function: "web.fetch", Call: i})
		waiting = append(waiting, fmt.Sprintf("svc.call%d", i))
		files = append(files, approval.ChangedFile{Path: strings.Repeat("dir/", 60) + fmt.Sprintf("f%d.go", i), Protected: i%7 == 0})
	}
	a := Synthetic()
	a.Kind = approval.KindProtectedPaths
	a.Call.Function = "svc." + strings.Repeat("very_long_function_name.", 20)
	a.Call.Arguments = raw
	a.Call.Annotations = approval.Annotations{DestructiveHint: &yes}
	a.AgentSays = strings.Repeat("The agent says <@U1> **bold** ``` and more.\n", 5000)
	a.Roles = roles
	a.Flags = approval.Flags{NotTraced: notTraced, NewToJob: newToJob, ClassAbove: &approval.ClassAbove{Class: "destructive", Previous: "read"}}
	a.AskedBy = approval.AskedBy{Reason: approval.ReasonTaint, Taint: taint}
	a.EffectsMismatch = true
	a.Turn.Waiting = waiting
	a.Changes = &approval.Changes{Files: files, Patch: strings.Repeat("+ line with `code` and <tags> & more\n", 6000), PatchSHA256: "sha256:" + strings.Repeat("b", 64)}
	if confirm {
		a.Confirm = &approval.Confirm{Argument: "field0001"}
	}
	return a
}

// GoldenCase is one golden rendering: a card or a thread reply, whose
// file for a surface is Dir/Name.<surface>.
type GoldenCase struct {
	Dir, Name string
	Card      *templates.Card
	Thread    *templates.ThreadMessage
}

// goldenStates are the states rendered beyond pending, per fixture: every
// state for merge, the ones a fixture's later event leads to, and a
// decision being sent on a content-restricted card.
var goldenStates = map[string][]string{
	"merge":   templates.PreviewStates(),
	"refund":  {"pending", "refused"},
	"mail":    {"pending", "cancelled"},
	"private": {"pending", templates.PreviewDeciding},
}

// Golden is every golden case, as package templates' TestGolden renders
// it: a card per approval fixture and state, a thread reply per other
// event, and the cases no fixture carries.
func Golden(t testing.TB) []GoldenCase {
	t.Helper()
	var out []GoldenCase
	card := func(dir, name string, c templates.Card) {
		out = append(out, GoldenCase{Dir: dir, Name: name, Card: &c})
	}
	thread := func(dir string, m templates.ThreadMessage) {
		out = append(out, GoldenCase{Dir: dir, Name: "thread", Thread: &m})
	}
	files, err := fixtures.EventFiles()
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixture events: %v", err)
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".json")
		ev := parseEventFile(t, f)
		if ev.Approval == nil {
			m, ok := templates.ThreadFromEvent(ev)
			if !ok {
				t.Fatalf("%s: no thread message for %s", name, ev.Type)
			}
			thread(name, m)
			continue
		}
		states := goldenStates[name]
		if len(states) == 0 {
			states = []string{"pending"}
		}
		for _, s := range states {
			card(name, s, Card(t, ev.Approval, s))
		}
	}

	// A content-restricted approval as the ephemeral answer to Show
	// details shows what the channel's card hides.
	revealed := Input(t, Approval(t, "private.json"), "pending")
	revealed.RevealContent = true
	card("private", "revealed", templates.Build(revealed))

	// A reask: the new card says why and what changed since revision 1,
	// the old one why it was superseded; a restricted call asked again
	// says only that its arguments changed.
	prev, next := Approval(t, "merge.json"), Approval(t, "merge-reasked.json")
	change := approval.CompareRevisions(stored(t, prev), stored(t, next))
	in := Input(t, next, "pending")
	in.Reask = &change
	card("merge-reasked", "asked-again", templates.Build(in))
	old := Input(t, prev, templates.PreviewSuperseded)
	old.SupersededBy = &change
	card("merge", "superseded-why", templates.Build(old))
	priv := Approval(t, "private.json")
	again := *priv
	again.Revision, again.Why = 2, approval.WhyArgumentsChanged
	again.Call.Arguments = []byte(`{"entry":"changed"}`)
	again.Call.ArgsSHA256 = "sha256:" + strings.Repeat("ab", 32)
	restricted := approval.CompareRevisions(stored(t, priv), stored(t, &again))
	pin := Input(t, &again, "pending")
	pin.Reask = &restricted
	card("private", "asked-again", templates.Build(pin))

	// A request that named a ladder the tenant does not have.
	unknown := Input(t, Approval(t, "merge.json"), "pending")
	unknown.Ladder.Name, unknown.Ladder.Unknown = "default", "payments2"
	unknown.Tenant = "acme"
	card("merge", "unknown-ladder", templates.Build(unknown))

	// An approval with a comment, given through Approve with comment…:
	// on the card, except on a content-restricted one; and a decision
	// being sent with the person's comment.
	for _, f := range []string{"merge", "private"} {
		in := Input(t, Approval(t, f+".json"), "approved")
		in.Decision.Comment = "fine once CI is green"
		card(f, "approved-comment", templates.Build(in))
		in = Input(t, Approval(t, f+".json"), templates.PreviewDeciding)
		in.Deciding.Comment = "fine once CI is green"
		card(f, "deciding-comment", templates.Build(in))
	}

	// A card shown the day after its decision carries the decision's date.
	merge := Approval(t, "merge.json")
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
		a := Approval(t, f+".json")
		in := Input(t, a, "pending")
		at := a.RequestedAt
		in.Looking = &templates.Looking{Actor: "user:ada", Since: at.Add(10 * time.Minute), Until: at.Add(40 * time.Minute), From: "user:kevin"}
		in.Escalations = []templates.EscalatedStep{{Actor: "user:kevin", At: at.Add(5 * time.Minute), Who: "mention slack:U0KEVIN slack:S0ONCALL",
			Planned: at.Add(15 * time.Minute)}}
		card(f, "looking", templates.Build(in))
	}

	out = append(out, reaskLines(t)...)

	// The effects warning, worded for what the tool declared: it says it
	// reaches outside (merge), it says it stays inside.
	no := false
	for name, open := range map[string]*bool{"effects-outside": nil, "effects-inside": &no} {
		a := *Approval(t, "merge.json")
		a.EffectsMismatch = true
		if open != nil {
			a.Call.Annotations.OpenWorldHint = open
		}
		card("merge", name, Card(t, &a, "pending"))
	}

	out = append(out, cardTruth(t)...)

	// A repeating step that fills the plan line's first steps, and a step
	// its window keeps shut until after the deadline.
	skipping := Input(t, merge, "pending")
	skipping.Ladder = Frozen(skippingLadder(merge.RequestedAt).Plan(merge.RequestedAt, ladder.Deadline(merge.Deadline, merge.RequestedAt, 0, 0)))
	card("merge", "skipped-steps", templates.Build(skipping))
	return out
}

// reaskLines are what a reask says beyond the arguments changed: more
// changes than a card lists, a change only in values the card does not
// show, and each other reason, on the new card and on the one it
// supersedes. The reasks are written out, so these cards do not depend
// on how package approval compares two revisions.
func reaskLines(t testing.TB) []GoldenCase {
	var out []GoldenCase
	prev, next := Approval(t, "merge.json"), Approval(t, "merge-reasked.json")
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
		out = append(out, GoldenCase{Dir: "merge-reasked", Name: name, Card: &c})
		if name == "more-changes" || name == "unshown-change" || name == "hidden-change" {
			continue // superseded by the arguments changing: superseded-why
		}
		old := Input(t, prev, templates.PreviewSuperseded)
		old.SupersededBy = &r
		oc := templates.Build(old)
		out = append(out, GoldenCase{Dir: "merge", Name: "superseded-" + name, Card: &oc})
	}
	return out
}

// cardTruth are the warnings the effect line alone would leave unsaid,
// the role rows of a hostile call, and what a request left out said as
// not given.
func cardTruth(t testing.TB) []GoldenCase {
	var out []GoldenCase
	card := func(dir, name string, a *approval.Approval) {
		c := Card(t, a, "pending")
		out = append(out, GoldenCase{Dir: dir, Name: name, Card: &c})
	}
	yes, no := true, false
	contra := *Approval(t, "search.json")
	contra.Call.Annotations.DestructiveHint = &yes
	card("search", "contradiction", &contra)

	egress := *Approval(t, "mail.json")
	egress.Call.Annotations.OpenWorldHint = &no
	card("mail", "egress-inside", &egress)

	tainted := *Approval(t, "refund.json")
	tainted.Call.Annotations.OpenWorldHint = &no
	card("refund", "taint-inside", &tainted)

	attacked := *Approval(t, "mail.json")
	vals := make([]approval.RoleValue, 100)
	for i := range vals {
		vals[i] = approval.RoleValue{Value: fmt.Sprintf("team%d@acme.example", i), Origin: approval.OriginTenantRecord}
	}
	vals[25] = approval.RoleValue{Value: "x@evil.example", Origin: approval.OriginJobRead}
	attacked.Roles = []approval.Role{{Argument: "to", Role: approval.RoleRecipient, Values: vals}}
	card("mail", "attacker-26-of-100", &attacked)

	secret := *Approval(t, "mail.json")
	secret.Roles = append(slices.Clone(secret.Roles),
		approval.Role{Argument: "smtp_password", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "hunter2", Origin: approval.OriginRequest}}},
		approval.Role{Argument: "relay", Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "smtp://mailer:hunter2@relay.acme.example", Origin: approval.OriginRequest}}})
	card("mail", "secret-role", &secret)

	for _, f := range []string{"merge", "private"} {
		bare := *Approval(t, f+".json")
		bare.Level, bare.Call.Snapshot = "", ""
		card(f, "not-given", &bare)
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
