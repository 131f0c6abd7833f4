package logsurface

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/ladder"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// questionTenants is acme taking approvals, and so answers, on the page:
// kevin answers, ada (who started the job) may not, vic is a viewer.
func questionTenants(t *testing.T) map[string]*tenant.Tenant {
	t.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(`backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${S}"]
  calls_secrets: ["${S}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    forbid_self_approval: true
    page_decisions: approve
    members:
      - {user: "user:kevin", role: operator, content: true, email: kevin@acme.example}
      - {user: "user:ada", role: owner, email: ada@acme.example}
      - {user: "user:vic", role: viewer, email: vic@acme.example}
      - {user: "user:noc", role: operator, email: noc@acme.example}
`), func(string) (string, bool) { return "secret-of-the-log-surface-tests-0123", true })
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Tenants
}

// TestLogSurfaceQuestion: the log names a question as one, shows who
// asks, the question and its choices, and, with a decision page, the
// answer links of the members who may answer it there; a restricted
// question's entry shows none of its words, and its link goes only to a
// content holder; a closed one names no link.
func TestLogSurfaceQuestion(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	links, err := decidepage.NewLinks("http://127.0.0.1:8080", []string{"link-secret-of-the-log-surface-tests"})
	if err != nil {
		t.Fatal(err)
	}
	tenants := questionTenants(t)
	var out bytes.Buffer
	s := New(Options{Out: &out, Renderer: r, Links: links, Tenants: func() map[string]*tenant.Tenant { return tenants }})
	plan := threads.Frozen{Plan: ladder.Plan{Deadline: time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)}}
	ctx := context.Background()

	q := load(t, "question.json")
	card := threads.Card{Tenant: "acme", Approval: q, State: approval.StatePending, Frozen: plan}
	if _, err := s.Post(ctx, threads.PostRequest{Target: "slack:C0APPROVALS", Card: card}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"card log-1 for slack:C0APPROVALS (question q-refund1, revision 1)", "refund-bot asks",
		"  > Order 7781 was paid from two accounts.", "  1. acct-1 (Ana Ruiz, personal)", "[Answer…]",
		"answer as user:kevin: http://127.0.0.1:8080/decide/", "answer as user:noc: http://127.0.0.1:8080/decide/"} {
		if !strings.Contains(got, want) {
			t.Errorf("the log lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "answer as user:ada") || strings.Contains(got, "answer as user:vic") || strings.Contains(got, "decide as") {
		t.Errorf("the log names links to who may not answer, or decision links:\n%s", got)
	}

	out.Reset()
	priv := load(t, "question-private.json")
	pc := threads.Card{Tenant: "acme", Approval: priv, State: approval.StatePending, Frozen: plan}
	if _, err := s.Post(ctx, threads.PostRequest{Target: "slack:C0APPROVALS", Card: pc}); err != nil {
		t.Fatal(err)
	}
	got = out.String()
	for _, secret := range []string{"Dr. Lee", "diagnosis", "Keep it for the meeting"} {
		if strings.Contains(got, secret) {
			t.Errorf("the log shows the restricted %q", secret)
		}
	}
	if n := strings.Count(got, "answer as "); n != 1 || !strings.Contains(got, "answer as user:kevin") {
		t.Errorf("a restricted question names %d answer links, want the content holder's only:\n%s", n, got)
	}

	out.Reset()
	card.State = approval.StateAnswered
	card.Decision = &approval.Decision{Actor: "user:kevin", Choice: 2, At: plan.Plan.Deadline.Add(-time.Hour)}
	if err := s.Edit(ctx, threads.EditRequest{Post: threads.PostRef{Ref: "log-1", Target: "slack:C0APPROVALS", ApprovalID: q.ID}, Card: card}); err != nil {
		t.Fatal(err)
	}
	got = out.String()
	if !strings.Contains(got, "edited (question q-refund1)") || !strings.Contains(got, "Answered by user:kevin") ||
		!strings.Contains(got, "  > acct-2 (Ruiz Trading Ltd)") || strings.Contains(got, "answer as") {
		t.Errorf("the answered question's entry:\n%s", got)
	}
}
