package templates_test

import (
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestIdentifiersRedacted: a secret shape placed in any name the card
// quotes from the request (who started the job, the agent, a role's
// argument, a flag's argument, the confirmation's argument, the origin
// check's argument, the function name) never shows, on any surface, on a
// card with details or a restricted shared one.
func TestIdentifiersRedacted(t *testing.T) {
	r := newRenderer(t)
	secrets := map[string]string{
		"started_by":   "https://u:S3cr3tStart3r@h.example",
		"agent":        "Bearer S3cr3tAg3nt",
		"role":         "ghp_S3cr3tR0l3aaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
		"not_traced":   "Bearer S3cr3tN0tTr4c3d",
		"new_to_job":   "ghp_S3cr3tN3wT0J0baaaaaaaaaaaaaaaaaaaaaaaaa",
		"confirm":      "https://u:S3cr3tC0nf1rm@h.example",
		"asked_by":     "Bearer S3cr3tAsk3dBy",
		"function":     "ghp_S3cr3tFunct10naaaaaaaaaaaaaaaaaaaaaaaaa",
		"governance":   "https://u:S3cr3tG0v@h.example",
		"role_restrct": "Bearer S3cr3tR0l3R",
		"job_id":       "j-42?token=S3cr3tJ0b1d",
		"class":        "host.ghp_S3cr3tCl4ssaaaaaaaaaaaaaaaaaaaaaaaa",
		"file":         "config/ghp_S3cr3tF1l3aaaaaaaaaaaaaaaaaaaaaaaaaaa/x.env",
		"actor":        "user:ada token=S3cr3tAct0r",
		"via":          "cli Bearer S3cr3tV14x",
		"ladder":       "ghp_S3cr3tL4dd3raaaaaaaaaaaaaaaaaaaaaaaaa",
	}
	mk := func(restricted bool) *approval.Approval {
		a := templatestest.Synthetic()
		a.Content.Restricted = restricted
		a.Job.StartedBy = secrets["started_by"]
		a.Job.Agent = secrets["agent"]
		a.Call.Function = secrets["function"]
		a.Roles = []approval.Role{
			{Argument: secrets["role"], Role: approval.RoleRecipient, Values: []approval.RoleValue{{Value: "x@evil.example", Origin: approval.OriginJobRead}}, LeftOut: 3},
			{Argument: secrets["role_restrct"], Role: approval.RoleHost, Values: []approval.RoleValue{{Value: "h.example", Origin: approval.OriginNowhere}}},
		}
		a.Flags.NotTraced = []approval.NotTraced{{Argument: secrets["not_traced"], Role: approval.RoleHost, Origin: approval.OriginJobRead, Floor: approval.OriginRequest}}
		a.Flags.NewToJob = []approval.NewToJob{{Argument: secrets["new_to_job"], Role: approval.RoleRecipient}}
		a.Confirm = &approval.Confirm{Argument: secrets["confirm"]}
		a.AskedBy = approval.AskedBy{Reason: approval.ReasonOrigin, Argument: secrets["asked_by"], Role: approval.RoleRecipient, Floor: approval.OriginRequest, Origin: approval.OriginJobRead}
		a.Job.ID = secrets["job_id"]
		a.Flags.ClassAbove = &approval.ClassAbove{Class: secrets["class"], Previous: "read"}
		a.Kind = approval.KindChanges
		a.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: secrets["file"]}}, Patch: "+x"}
		return a
	}
	gov := templatestest.Synthetic()
	gov.Kind = approval.KindProtectedPaths
	gov.Job.StartedBy = secrets["governance"]
	gov.Changes = &approval.Changes{Files: []approval.ChangedFile{{Path: "tests/a_test.go", Protected: true}}}
	decided := &approval.Decision{Actor: secrets["actor"], Via: secrets["via"], At: templatestest.Synthetic().RequestedAt}
	for name, in := range map[string]templates.Input{
		"details":    {Approval: mk(false)},
		"restricted": {Approval: mk(true)},
		"governance": {Approval: gov},
		"resolved":   {Approval: mk(false), State: approval.StateDenied, Decision: decided},
		"ladder":     {Approval: mk(false), Ladder: templates.LadderPlan{Name: "default", Unknown: secrets["ladder"]}},
	} {
		x := renderAll(t, r, templates.Build(in))
		x.each(func(surface, text string) {
			for what, s := range secrets {
				_, tail, _ := strings.Cut(s, "S3cr3t")
				if strings.Contains(text, "S3cr3t"+tail[:4]) {
					t.Errorf("%s, %s: the secret in %s shows", name, surface, what)
				}
			}
		})
	}
}

// TestLinksShowNoHiddenCharacter: a link the card carries (the job's, the
// console's, the thread's) with a bidi control or a zero-width character
// is percent-encoded, as is any other character a URL may not hold raw,
// so every surface shows the escape and the link still leads there.
func TestLinksShowNoHiddenCharacter(t *testing.T) {
	r := newRenderer(t)
	a := templatestest.Synthetic()
	a.Job.URL = "https://console.example/jobs/\u202egpj.24-j"
	a.ConsoleURL = "https://console.example/approvals/\u200ba-merge1 x\"<é"
	a.Confirm = &approval.Confirm{Argument: "repo"} // Slack and Discord link the console then
	c := templates.Build(templates.Input{Approval: a, ThreadURL: "https://chat.example/t/\u2060\U000E0041"})
	if want := "https://console.example/jobs/%E2%80%AEgpj.24-j"; c.Job.URL != want {
		t.Errorf("job url %q, want %q", c.Job.URL, want)
	}
	const console = "https://console.example/approvals/%E2%80%8Ba-merge1%20x%22%3C%C3%A9"
	if c.ConsoleURL != console {
		t.Errorf("console url %q, want %q", c.ConsoleURL, console)
	}
	if want := "https://chat.example/t/%E2%81%A0%F3%A0%81%81"; c.ThreadURL != want {
		t.Errorf("thread url %q, want %q", c.ThreadURL, want)
	}
	x := renderAll(t, r, c)
	x.each(func(surface, text string) {
		for _, h := range []string{"\u202e", "\u200b", "\u2060", "\U000E0041", `\u202e`, `\u200b`, `\u2060`} {
			if strings.Contains(text, h) {
				t.Errorf("%s holds %q raw", surface, h)
			}
		}
		if surface != "email subject" && !strings.Contains(text, "%E2%80%8Ba-merge1") {
			t.Errorf("%s lacks the console link, escaped", surface)
		}
	})
	for surface, text := range map[string]string{"email text": x.emailText, "email html": x.emailHTML, "slack": x.slack, "discord": x.discord} {
		if !strings.Contains(text, "%E2%80%AEgpj.24-j") {
			t.Errorf("%s lacks the job link, escaped", surface)
		}
	}
	// A link an adapter lays out (Linkable) is escaped as the card's are.
	if got := templates.Linkable("https://chat.example/t/\u200bx"); got != "https://chat.example/t/%E2%80%8Bx" {
		t.Errorf("Linkable kept %q", got)
	}
	// A link escaped already is kept as it is, its escapes not escaped again.
	if got := templates.Linkable("https://h.example/a%20b?q=%E2%80%8B&r=%zz"); got != "https://h.example/a%20b?q=%E2%80%8B&r=%25zz" {
		t.Errorf("linkable kept %q", got)
	}
}
