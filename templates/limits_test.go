package templates

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"approvalsbot/approval"
)

// huge is an approval whose arguments, agent text, patch, roles, flags,
// reasons, files and waiting calls total about 1 MiB.
func huge(t testing.TB, confirm bool) *approval.Approval {
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
	a := synthetic()
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

func TestHugeIsHuge(t *testing.T) {
	a := huge(t, false)
	n := len(a.Call.Arguments) + len(a.AgentSays) + len(a.Changes.Patch)
	for _, r := range a.Roles {
		for _, v := range r.Values {
			n += len(v.Value)
		}
	}
	if n < 900<<10 {
		t.Fatalf("the synthetic approval is only %d bytes", n)
	}
}

// TestLimits: every platform limit holds on every surface, for the
// fixtures and a ~1 MiB approval, in every state, and the status line, the
// effect line, the flags and the buttons are all there (the chats':
// their adapters' TestLimits).
func TestLimits(t *testing.T) {
	r := newRenderer(t)
	cases := map[string]*approval.Approval{
		"big.json":        loadApproval(t, "big.json"),
		"merge.json":      loadApproval(t, "merge.json"),
		"huge":            huge(t, false),
		"huge confirm":    huge(t, true),
		"protected.json":  loadApproval(t, "protected.json"),
		"secrets.json":    loadApproval(t, "secrets.json"),
		"refund.json":     loadApproval(t, "refund.json"),
		"private.json":    loadApproval(t, "private.json"),
		"synthetic small": synthetic(),
	}
	for name, a := range cases {
		for _, state := range PreviewStates() {
			t.Run(name+"/"+state, func(t *testing.T) {
				c := cardIn(t, a, state)
				if len(c.Flags) > 3*listMax || len(c.Reasons) > listMax+1 {
					t.Errorf("%d flags, %d reasons: lists are not bounded", len(c.Flags), len(c.Reasons))
				}
				e := r.Email(c)
				txt := r.Text(c)
				for surface, s := range map[string]string{"email text": e.Text, "text": txt, "email html": e.HTML} {
					if len(s) > 64<<10 {
						t.Errorf("%s is %d bytes: the card's own bounds failed", surface, len(s))
					}
					for _, want := range essentials(c) {
						if surface == "email html" {
							want = htmlEscape(want)
						}
						if !strings.Contains(s, want) {
							t.Errorf("%s lacks %q", surface, want)
						}
					}
				}
				if strings.ContainsAny(e.Subject, "\r\n") || charLen(e.Subject) > emailSubjectMax {
					t.Errorf("subject %q", e.Subject)
				}
			})
		}
	}
}

// essentials are what must survive every cut: the status line, the effect
// line and the flags.
func essentials(c Card) []string {
	out := []string{c.Status}
	if c.Effect != "" {
		out = append(out, c.Effect)
	}
	return append(out, c.Flags...)
}

// TestHugeCutsVisibly: what a surface leaves out, it says it left out
// (the chats': their adapters' TestHugeCutsVisibly).
func TestHugeCutsVisibly(t *testing.T) {
	r := newRenderer(t)
	c := cardIn(t, huge(t, false), "pending")
	for _, want := range []string{"[cut; Show all arguments shows all]", " …[cut]", "[cut; the console shows the whole patch]", "and 290 more: Not traced to the request", "New to this job: arg0 (host), arg1 (host)", "A class above the job's so far: destructive (so far: read)", "and 290 more reasons", "and 290 more"} {
		if !strings.Contains(r.Text(c), want) {
			t.Errorf("text lacks %q", want)
		}
	}
}
