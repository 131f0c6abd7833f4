package logsurface

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"approvalsbot/approval"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/templates"
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
	post := &store.Post{ApprovalID: sec.ID, Target: "slack:C0APPROVALS", Revision: 1, Ref: res.Ref}
	if err := s.Edit(ctx, threads.EditRequest{Post: post, Card: threads.Card{Tenant: "acme", Approval: sec, State: approval.StateDenied,
		Decision: &approval.Decision{Actor: "user:kevin", Comment: "no"}}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Reply(ctx, threads.ReplyRequest{Root: post, Tenant: "acme", Kind: templates.ThreadBackendMessage,
		Text: "The call was not made: see https://deploy:hunter2@ci.acme.example"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Notice(ctx, threads.NoticeRequest{Target: "slack:C0AUDIT", Tenant: "acme", Text: "Ran unattended: run_command"}); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{"card log-1 for slack:C0APPROVALS (approval a-sec1, revision 1)", "edited", "Denied by user:kevin: no",
		"reply in the thread of log-1", "notice for slack:C0AUDIT", "Ran unattended: run_command", "token rotation",
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
	for _, want := range []string{"email to leads@acme.example (step 2, approval a-merge1)", "[acme] acme_github.merge", "DESTRUCTIVE"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, out.String())
		}
	}
}
