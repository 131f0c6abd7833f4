package logsurface

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/ladder"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

func load(t *testing.T, name string) *approval.Approval {
	t.Helper()
	p, err := fixtures.Path("events", name)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := approval.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	return ev.Approval
}

// The log is a shared place: a content-restricted card shows no details,
// and no secret leaves in any entry.
func TestLogSurfaceWritesCardsRepliesAndNotices(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := New(Options{Out: &out, Renderer: r})
	ctx := context.Background()
	sec := load(t, "secrets.json")
	res, err := s.Post(ctx, threads.PostRequest{Target: "slack:C0APPROVALS", Card: threads.Card{Tenant: "acme", Approval: sec, State: approval.StatePending}})
	if err != nil || res.Ref == "" {
		t.Fatalf("post: %+v %v", res, err)
	}
	priv := load(t, "private.json")
	if _, err := s.Post(ctx, threads.PostRequest{Target: "slack:C0APPROVALS", Card: threads.Card{Tenant: "acme", Approval: priv, State: approval.StatePending}}); err != nil {
		t.Fatal(err)
	}
	post := threads.PostRef{ApprovalID: sec.ID, Target: "slack:C0APPROVALS", Revision: 1, Ref: res.Ref}
	if err := s.Edit(ctx, threads.EditRequest{Post: post, Card: threads.Card{Tenant: "acme", Approval: sec, State: approval.StateDenied,
		Decision: &approval.Decision{Actor: "user:kevin", Comment: "no"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reply(ctx, threads.ReplyRequest{Root: post, Tenant: "acme", Kind: templates.ThreadBackendMessage,
		Text: "The call was not made: see https://deploy:hunter2@ci.acme.example"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Notice(ctx, threads.NoticeRequest{Target: "slack:C0AUDIT", Tenant: "acme", Text: "Ran unattended: run_\u200bcommand"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"card log-1 for slack:C0APPROVALS (approval a-sec1, revision 1)", "edited", "Denied by user:kevin: no",
		"reply in the thread of log-1", "notice for slack:C0AUDIT", "Ran unattended: run_[U+200B]command", "token rotation",
		"details are shown only to operators with the content permission"} {
		if !strings.Contains(got, want) {
			t.Errorf("log lacks %q", want)
		}
	}
	for _, secret := range []string{"hunter2", "ak_live_51H8", "cs_9f8e", "correct horse", "bea.private@example.com", "Deleting my old customer record"} {
		if strings.Contains(got, secret) {
			t.Errorf("%q leaked to the log surface", secret)
		}
	}
}

func TestLogSurfaceShowsMailWithoutSMTP(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := New(Options{Out: &out, Renderer: r})
	id, err := s.Mail(context.Background(), threads.MailRequest{To: "leads@acme.example", Step: 2,
		Card: threads.Card{Tenant: "acme", Approval: load(t, "merge.json"), State: approval.StatePending}})
	if err != nil || id == "" {
		t.Fatalf("mail: %q %v", id, err)
	}
	for _, want := range []string{"email to leads@acme.example (step 2, approval a-merge1)", "Approval needed: acme_github.merge · a-merge1", "DESTRUCTIVE"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
}

// With a decision page, a pending card names the decision links of the
// members who may decide it by mail; a closed card names none.
func TestLogSurfaceNamesDecisionLinks(t *testing.T) {
	r, err := templates.New(templates.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("bot.yaml", []byte(`backend:
  url: "http://127.0.0.1:9"
  events_secrets: ["${S}"]
  calls_secrets: ["${S}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    forbid_self_approval: true
    members:
      - {user: "user:kevin", role: operator, content: true, email: kevin@acme.example}
      - {user: "user:ada", role: owner, email: ada@acme.example}
      - {user: "user:vic", role: viewer, email: vic@acme.example}
`), func(string) (string, bool) { return "secret-of-the-log-surface-tests-0123", true })
	if err != nil {
		t.Fatal(err)
	}
	links, err := decidepage.NewLinks("http://127.0.0.1:8080", []string{"link-secret-of-the-log-surface-tests"})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s := New(Options{Out: &out, Renderer: r, Links: links, Tenants: func() map[string]*tenant.Tenant { return cfg.Tenants }})
	a := load(t, "merge.json") // started by user:ada: she may not decide it
	deadline := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	card := threads.Card{Tenant: "acme", Approval: a, State: approval.StatePending,
		Frozen: threads.Frozen{Plan: ladder.Plan{Deadline: deadline}}}
	if _, err := s.Post(context.Background(), threads.PostRequest{Target: "slack:C0APPROVALS", Card: card}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if n := strings.Count(got, "decide as "); n != 1 || !strings.Contains(got, "decide as user:kevin (deny): http://127.0.0.1:8080/decide/") {
		t.Errorf("the card names %d decision links, want kevin's Deny only:\n%s", n, got)
	}
	out.Reset()
	card.State = approval.StateDenied
	if err := s.Edit(context.Background(), threads.EditRequest{Post: threads.PostRef{Ref: "log-1", Target: "slack:C0APPROVALS", ApprovalID: a.ID}, Card: card}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "decide as") {
		t.Errorf("a closed card names decision links:\n%s", out.String())
	}
}
