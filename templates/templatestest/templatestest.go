// Package templatestest is test support for package templates' card on
// every surface (package templates' own tests, which are in package
// templates_test, and the chat adapters'): the fixtures' approvals, cards
// built on the golden files' pinned clock and ladder, approvals built in
// code for rules no fixture exercises, the cases every surface shows, and
// every case the golden files render (Golden, RunGolden).
package templatestest

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
	return EventFile(t, p)
}

// EventFile parses the fixture event at path.
func EventFile(t testing.TB, path string) *approval.Event {
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
// the default deadline (skipped). Kevin is a member, named by his user id
// as config names him; the lead and the group have no label.
var pinnedLadder = ladder.Ladder{Name: "golden", Steps: []ladder.Step{
	{Anchor: ladder.AnchorRequest, After: 15 * time.Minute, Mention: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}}},
	{Anchor: ladder.AnchorRequest, After: time.Hour, Email: []ladder.Target{{Kind: ladder.KindEmail, ID: "leads@acme.example"}}},
	{Anchor: ladder.AnchorDeadline, BeforeDeadline: time.Hour, DM: []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0LEAD"}}},
	{Anchor: ladder.AnchorRequest, After: 25 * time.Hour, Mention: []ladder.Target{{Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}}},
}, Labels: ladder.Labels{"slack:U0KEVIN": "user:kevin"}}

// Pinned is the golden files' clock and ladder: a decision three minutes
// after the request, and pinnedLadder frozen under the approval's own
// deadline or the default 24 hours.
func Pinned(a *approval.Approval) (time.Time, templates.LadderPlan) {
	return a.RequestedAt.Add(3 * time.Minute), Frozen(PinnedPlan(a))
}

// PinnedPlan is pinnedLadder's plan for a, before it is frozen.
func PinnedPlan(a *approval.Approval) ladder.Plan {
	return pinnedLadder.Plan(a.RequestedAt, ladder.Deadline(a.Deadline, a.RequestedAt, 0, 0))
}

// Frozen is what threads.Card.Input gives the card of a frozen plan: each
// step at its time, whom it tells, whether it is skipped and why, and the
// deadline.
func Frozen(p ladder.Plan) templates.LadderPlan {
	out := templates.LadderPlan{Deadline: p.Deadline}
	why := map[string]templates.SkipReason{ladder.SkipAfterDeadline: templates.SkipAfterDeadline,
		ladder.SkipBeforeRequest: templates.SkipBeforeRequest, ladder.SkipWindowShut: templates.SkipWindowShut}
	for _, s := range p.Steps {
		out.Steps = append(out.Steps, templates.PlanStep{At: s.At, Who: p.Say(s, false), Skipped: s.Skipped,
			Skip: why[p.SkipReason(s)], HeldFrom: s.HeldFrom, Index: s.Index, Repeat: s.Repeat, Every: s.Step.Every()})
	}
	return out
}

// Input is the Input of a in the named preview state on the pinned clock
// and ladder.
func Input(t testing.TB, a *approval.Approval, state string) templates.Input {
	t.Helper()
	at, plan := Pinned(a)
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

// CardWith builds the card of a in the named preview state under plan.
func CardWith(t testing.TB, a *approval.Approval, state string, plan templates.LadderPlan) templates.Card {
	t.Helper()
	at, _ := Pinned(a)
	in, err := templates.PreviewInput(a, state, at, plan)
	if err != nil {
		t.Fatal(err)
	}
	return templates.Build(in)
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

// Recipients are n tenant-record addresses of argument to.
func Recipients(n int) []approval.RoleValue {
	out := make([]approval.RoleValue, n)
	for i := range out {
		out[i] = approval.RoleValue{Value: fmt.Sprintf("u%d@acme.example", i), Origin: approval.OriginTenantRecord}
	}
	return out
}

// Huge is an approval whose arguments, agent text, patch, roles, flags,
// reasons, files and waiting calls total about 1 MiB; confirm adds a
// typed confirmation.
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

// LongLadder has 30 steps, each mentioning 40 people and emailing 10.
func LongLadder() ladder.Ladder {
	var l ladder.Ladder
	for i := range 30 {
		s := ladder.AfterStep(time.Duration(i+1) * 20 * time.Minute)
		for j := range 40 {
			s.Mention = append(s.Mention, ladder.Target{Kind: ladder.KindSlackUser, ID: "U0PERSON" + string(rune('A'+j%26)) + string(rune('A'+i%26))})
		}
		for j := range 10 {
			s.Email = append(s.Email, ladder.Target{Kind: ladder.KindEmail, ID: "lead" + string(rune('a'+j)) + "@acme.example"})
		}
		l.Steps = append(l.Steps, s)
	}
	return l
}
