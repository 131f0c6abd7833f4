package threads_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/say"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

const clickCallsSecret = "calls-secret-0123456789abcdef0123"

// clickEnv is the bot's environment in the click tests: the
// configuration names each secret, as a real one must.
func clickEnv(name string) (string, bool) {
	v, ok := map[string]string{
		"BOT_EVENTS_SECRET": "events-secret-0123456789abcdef012",
		"BOT_CALLS_SECRET":  clickCallsSecret,
	}[name]
	return v, ok
}

const clickConfig = `
backend:
  url: "%s"
  events_secrets: ["${BOT_EVENTS_SECRET}"]
  calls_secrets: ["${BOT_CALLS_SECRET}"]
tenants:
  acme:
    post: [slack:C0APPROVALS]
    forbid_self_approval: true
    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
      - {user: "user:ada", role: owner, content: true, governance: true, slack: U0ADA}
      - {user: "user:nocontent", role: admin, content: false, slack: U0NOC}
      - {user: "user:vic", role: viewer, slack: U0VIC}
`

// clickBot is the click path for real: threads on SQLite in a temporary
// directory, the real backend client calling the fake job backend.
type clickBot struct {
	backend *backendtest.Fake
	svc     *threads.Service
	store   store.Store
	cfg     *config.Config
}

func newClickBot(t *testing.T) *clickBot {
	t.Helper()
	back := backendtest.New(t, standin.Options{Secrets: [][]byte{[]byte(clickCallsSecret)}})
	cfg, err := config.Parse("bot.yaml", fmt.Appendf(nil, clickConfig, back.URL()), clickEnv)
	if err != nil {
		t.Fatal(err)
	}
	st := threadstest.OpenSQLite(t)
	b := &clickBot{backend: back, store: st, cfg: cfg}
	b.svc = b.on(t, st)
	return b
}

// on is threads as the bot builds it, on st (the bot's store, or one
// that fails as a test needs).
func (b *clickBot) on(t *testing.T, st store.Store) *threads.Service {
	t.Helper()
	return threadstest.Service(t, threadstest.ServiceOptions{Store: st, Tenants: b.cfg, Backend: b.backend, CallsSecret: clickCallsSecret})
}

// ingest feeds a fixture event to threads, as the backend's event handler
// does once it has verified it, with the arguments behind it known to the
// fake job backend.
func (b *clickBot) ingest(t *testing.T, name string) *approval.Approval {
	t.Helper()
	ev := threadstest.Ingest(t, b.svc, name, nil)
	threadstest.Backed(t, b.backend, ev)
	return ev.Approval
}

// approval reads an approval as the store holds it.
func (b *clickBot) approval(t *testing.T, id string) *store.Approval {
	t.Helper()
	a, err := b.store.ApprovalGet(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// committed reports whether a decision on the approval is recorded and in
// flight (threads keeps it on the approval until the backend answers).
func (b *clickBot) committed(t *testing.T, id string) bool {
	t.Helper()
	return len(b.approval(t, id).Deciding) > 0
}

// click is a click of kind on an approval's first revision by a Slack
// user in the approvals channel.
func click(do threads.ClickDo, kind templates.ActionKind, approvalID, user string) threads.ClickRequest {
	return threads.ClickRequest{Do: do, Action: templates.Action{Kind: kind, ApprovalID: approvalID, Revision: 1},
		Person: threads.Person{Surface: "slack", User: user, Channel: "C0APPROVALS", Reply: "https://hooks.slack.com/actions/T0/1/" + user}}
}

// refusedBefore says a click was refused before anything was recorded:
// the card was not decided, the person is told so, and the card keeps its
// buttons (no card comes to put in place of the one clicked).
func refusedBefore(t *testing.T, b *clickBot, approvalID string, out threads.Clicked) {
	t.Helper()
	if out.Sent || !strings.Contains(strings.ToLower(out.Reason.String()), "nothing was sent") {
		t.Errorf("outcome %+v: want nothing sent, and the person told so", out)
	}
	if b.committed(t, approvalID) {
		t.Errorf("a decision on %s was recorded", approvalID)
	}
	if out.Card != nil {
		t.Error("a card came to replace the clicked one with: the clicked card would lose its buttons")
	}
}

func TestApproveIsRecordedBeforeClickReturns(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")

	out := b.svc.Click(context.Background(), click(threads.ClickRecord, templates.ActionApprove, "a-merge1", "U0KEVIN"))
	if !out.Sent || out.Retry || out.Tenant != "acme" || out.Reason.String() == "" {
		t.Fatalf("outcome %+v: want sent, for tenant acme, with threads' sentence", out)
	}
	if !b.committed(t, "a-merge1") {
		t.Fatal("Click returned before the decision was committed")
	}
	card := out.Card
	if card == nil || card.Approval == nil || card.Approval.ID != "a-merge1" {
		t.Fatalf("the clicked card: %+v", card)
	}
	for _, btn := range templates.Build(card.Input()).Buttons {
		if k, err := templates.ParseAction(btn.Payload); err == nil && (k.Kind == templates.ActionApprove || k.Kind == templates.ActionDeny) {
			t.Fatalf("the card that replaces the clicked one still has %s", k.Kind)
		}
	}
	// The card is the one the store holds now: built from the row the
	// decision's transaction wrote, it reads the same.
	now, err := b.svc.Card(context.Background(), "a-merge1", 1)
	if err != nil || !card.SameState(now) {
		t.Fatalf("the clicked card %+v differs from the card read afresh %+v (%v)", card, now, err)
	}

	// A second person's click while the first decision is in flight is
	// refused by threads; the card keeps what it shows.
	second := b.svc.Click(context.Background(), click(threads.ClickRecord, templates.ActionDeny, "a-merge1", "U0NOC"))
	if second.Sent || second.Retry || !strings.Contains(second.Reason.String(), "user:kevin") {
		t.Fatalf("second click: %+v, want threads' refusal naming who is deciding", second)
	}
	if second.Card != nil {
		t.Fatal("a refused click got a card to replace the clicked one with")
	}
}

// brokenStore fails every read, as a store that is down does.
type brokenStore struct{ store.Store }

func (brokenStore) ApprovalGet(context.Context, string) (*store.Approval, error) {
	return nil, errors.New("database is locked")
}

func (brokenStore) RevisionGet(context.Context, string, int) (*store.Revision, error) {
	return nil, errors.New("database is locked")
}

// revisionsDown is a store whose revisions cannot be read.
type revisionsDown struct{ store.Store }

func (revisionsDown) RevisionGet(context.Context, string, int) (*store.Revision, error) {
	return nil, errors.New("database is locked")
}

// failingTx is a store that refuses every transaction, recording nothing.
type failingTx struct{ store.Store }

func (failingTx) InTx(context.Context, func(context.Context, store.Tx) error) error {
	return errors.New("database is locked")
}

// stuckTx is a store whose transactions return only when their context
// ends, recording nothing: a store that cannot take the transaction.
type stuckTx struct{ store.Store }

func (stuckTx) InTx(ctx context.Context, _ func(context.Context, store.Tx) error) error {
	<-ctx.Done()
	return ctx.Err()
}

// countingStore counts the reads of approvals.
type countingStore struct {
	store.Store
	reads *int
}

func (c countingStore) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	*c.reads++
	return c.Store.ApprovalGet(ctx, id)
}

func TestRecordRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		store   func(store.Store) store.Store
		user    string
		id      string
		comment string
		want    string // the sentence, or a part of threads' own
		retry   bool
	}{
		{name: "store down", store: func(s store.Store) store.Store { return brokenStore{s} },
			want: say.Reason{Kind: say.StoreDown}.String(), retry: true},
		{name: "the record fails", store: func(s store.Store) store.Store { return failingTx{s} },
			want: say.Reason{Kind: say.NotRecorded}.String(), retry: true},
		{name: "reason too long", comment: strings.Repeat("é", threads.MaxComment+1), want: say.Reason{Kind: say.TooLong}.String(), retry: true},
		{name: "unknown card", id: "a-none", want: say.Reason{Kind: say.UnknownCard}.String()},
		{name: "a viewer", user: "U0VIC", want: "cannot decide approvals"},
		{name: "a stranger, on this click's surface", user: "U0STRANGER", want: "An admin can add your slack id U0STRANGER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newClickBot(t)
			b.ingest(t, "merge.json")
			svc := b.svc
			if c.store != nil {
				svc = b.on(t, c.store(b.store))
			}
			req := click(threads.ClickRecord, templates.ActionDeny, cmp.Or(c.id, "a-merge1"), cmp.Or(c.user, "U0KEVIN"))
			req.Comment = c.comment
			out := svc.Click(context.Background(), req)
			if !strings.Contains(out.Reason.String(), c.want) || out.Retry != c.retry {
				t.Fatalf("outcome %+v, want %q with retry %v", out, c.want, c.retry)
			}
			refusedBefore(t, b, "a-merge1", out)
		})
	}
}

func TestTooLongReasonIsRefusedBeforeAnythingIsRead(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	reads := 0
	svc := b.on(t, countingStore{b.store, &reads})
	req := click(threads.ClickRecord, templates.ActionDeny, "a-merge1", "U0KEVIN")
	req.Comment = strings.Repeat("x", threads.MaxComment)
	if out := svc.Click(context.Background(), req); !out.Sent {
		t.Fatalf("a reason of exactly %d characters: %+v, want it sent", threads.MaxComment, out)
	}
	reads = 0
	req = click(threads.ClickRecord, templates.ActionDeny, "a-merge1", "U0NOC")
	req.Comment = strings.Repeat("x", threads.MaxComment+1)
	tooLong := say.Reason{Kind: say.TooLong}.String()
	if out := svc.Click(context.Background(), req); out.Reason.String() != tooLong || reads != 0 {
		t.Fatalf("outcome %+v after %d reads, want %q before any read", out, reads, tooLong)
	}
	if !strings.Contains(tooLong, "1,000") || threads.MaxComment != 1000 {
		t.Fatalf("%q does not name MaxComment %d", tooLong, threads.MaxComment)
	}
}

// A decision reads its approval once, and locks it once: the clicked
// card comes from the row its transaction wrote, not from a read after.
func TestADecisionReadsItsApprovalOnce(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	reads := 0
	svc := b.on(t, countingStore{b.store, &reads})
	out := svc.Click(context.Background(), click(threads.ClickRecord, templates.ActionApprove, "a-merge1", "U0KEVIN"))
	if !out.Sent || out.Card == nil || reads != 1 {
		t.Fatalf("outcome %+v after %d reads of the approval, want it sent with its card after one", out, reads)
	}
}

// snapshotStore serves one approval and its first revision as read
// beforehand: a service inside a testing/synctest bubble reads them
// rather than SQLite, whose connection pool lives outside the bubble.
// Its transactions never begin (stuckTx).
type snapshotStore struct {
	stuckTx
	approval *store.Approval
	revision *store.Revision
}

func (s snapshotStore) ApprovalGet(_ context.Context, id string) (*store.Approval, error) {
	if id != s.approval.ID {
		return nil, store.ErrNotFound
	}
	a := *s.approval
	return &a, nil
}

func (s snapshotStore) RevisionGet(_ context.Context, id string, rev int) (*store.Revision, error) {
	if id != s.revision.ApprovalID || rev != s.revision.Revision {
		return nil, store.ErrNotFound
	}
	r := *s.revision
	return &r, nil
}

func TestRecordReturnsWithinRecordBound(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	snap := b.approval(t, "a-merge1")
	rev, err := b.store.RevisionGet(context.Background(), "a-merge1", 1)
	if err != nil {
		t.Fatal(err)
	}
	synctest.Test(t, func(t *testing.T) {
		svc := b.on(t, snapshotStore{stuckTx{b.store}, snap, rev})
		start := time.Now()
		req := click(threads.ClickRecord, templates.ActionApprove, "a-merge1", "U0KEVIN")
		req.ReceivedAt = start
		out := svc.Click(context.Background(), req)
		notInTime := say.Reason{Kind: say.NotInTime}.String()
		if took := time.Since(start); took != threads.RecordBound || out.Reason.String() != notInTime || !out.Retry || out.Sent {
			t.Fatalf("after %v: %+v, want %q after exactly %v", took, out, notInTime, threads.RecordBound)
		}
	})
}

func TestDenyAsksTheReasonOnlyOfWhoMayDecide(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	deny := func(id, user string) threads.Clicked {
		return b.svc.Click(context.Background(), click(threads.ClickAsk, templates.ActionDeny, id, user))
	}

	out := deny("a-merge1", "U0KEVIN")
	if d := out.Dialog; d == nil || out.Tenant != "acme" || d.Function != "acme_github.merge" || d.Restricted ||
		out.Sent || out.Retry || out.Reveal || !out.Reason.IsZero() {
		t.Fatalf("an operator's Deny: %+v, %+v; want the dialog, to ask the reason", d, out)
	}
	if b.committed(t, "a-merge1") {
		t.Fatal("Deny recorded a decision before the reason")
	}
	// A restricted call's reason stays off its card: the dialog says so.
	b.ingest(t, "private.json")
	if d := deny("a-priv1", "U0KEVIN").Dialog; d == nil ||
		!d.Restricted || !strings.Contains(say.DenyQuestion(d.Function, "a-priv1", 1, d.Restricted), say.ReasonWithheld) {
		t.Fatalf("Deny of a restricted call: %+v; want a dialog that says the reason stays off the card", d)
	}
	for _, c := range []struct{ user, want string }{
		{"U0VIC", "cannot decide approvals"},
		{"U0STRANGER", "not a member of tenant acme"},
	} {
		out := deny("a-merge1", c.user)
		if out.Dialog != nil || !strings.Contains(out.Reason.String(), c.want) {
			t.Fatalf("%s's Deny: %+v; want no dialog and threads' %q", c.user, out, c.want)
		}
		refusedBefore(t, b, "a-merge1", out)
	}
	if out := deny("a-none", "U0KEVIN"); out.Dialog != nil || out.Reason != (say.Reason{Kind: say.UnknownCard}) {
		t.Fatalf("Deny on an unknown card: %+v", out)
	}
}

// A dialog's click records nothing, whoever clicks: the decision comes
// only from the dialog (Deny's reason, Approve with comment…, a
// destructive call's confirmation). Who may not decide gets no dialog,
// and the refusal a decision would get, in the same pass.
func TestADialogsClickNeverRecords(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	for _, c := range []struct {
		name string
		kind templates.ActionKind
	}{
		{"deny", templates.ActionDeny},
		{"approve with comment", templates.ActionApproveNote},
	} {
		out := b.svc.Click(context.Background(), click(threads.ClickAsk, c.kind, "a-merge1", "U0STRANGER"))
		if out.Dialog != nil {
			t.Fatalf("%s: a dialog opened for a clicker who is no member", c.name)
		}
		if !strings.Contains(out.Reason.String(), "not a member of tenant acme") {
			t.Errorf("%s: told %q, want the refusal", c.name, out.Reason)
		}
		refusedBefore(t, b, "a-merge1", out)
		if out := b.svc.Click(context.Background(), click(threads.ClickAsk, c.kind, "a-merge1", "U0KEVIN")); out.Dialog == nil ||
			b.committed(t, "a-merge1") {
			t.Fatalf("%s: %+v; want a dialog, and nothing recorded", c.name, out)
		}
	}
}

func TestShowAllArgumentsShowsThemToWhoMaySee(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	out := b.svc.Click(context.Background(), click(threads.ClickShow, templates.ActionShowArgs, "a-merge1", "U0KEVIN"))
	shown := out.Shown
	if shown == nil || !out.Reason.IsZero() || out.Tenant != "acme" || shown.Details != nil {
		t.Fatalf("shown %+v: want the arguments alone", out)
	}
	if shown.Arguments.Digest != b.backend.Digest("a-merge1") || shown.Arguments.Function != "acme_github.merge" ||
		len(shown.Arguments.Arguments) == 0 {
		t.Fatalf("arguments %+v: want the backend's, with their digest", shown.Arguments)
	}
}

// A restricted call's content is never stored (approval.StoredForm), so
// Show details answers with the arguments looked up at the backend,
// checked against the digest, and no card of the stored revision.
func TestShowDetailsOnARestrictedCardShowsTheLookedUpArguments(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "private.json")
	out := b.svc.Click(context.Background(), click(threads.ClickShow, templates.ActionShowDetails, "a-priv1", "U0KEVIN"))
	shown := out.Shown
	if shown == nil || !out.Reason.IsZero() || shown.Arguments.Digest != b.backend.Digest("a-priv1") || len(shown.Arguments.Arguments) == 0 {
		t.Fatalf("shown %+v: want the backend's arguments", out)
	}
	if shown.Details != nil {
		t.Fatalf("details %+v: a restricted revision keeps no content to reveal", shown.Details)
	}
}

// Show details on a card whose content is stored shows that card with
// its restricted parts, from the revision the look-up read.
func TestShowDetailsShowsTheCardWithItsHiddenParts(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	out := b.svc.Click(context.Background(), click(threads.ClickShow, templates.ActionShowDetails, "a-merge1", "U0KEVIN"))
	if out.Shown == nil || out.Shown.Details == nil || !out.Shown.Details.RevealContent || out.Shown.Details.Approval.ID != "a-merge1" {
		t.Fatalf("shown %+v: want the card with its hidden parts", out)
	}
}

func TestShowRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		store func(store.Store) store.Store
		user  string
		id    string
		want  string
	}{
		{name: "no content permission", user: "U0NOC", want: "content permission"},
		{name: "not a member", user: "U0STRANGER", want: "not a member of tenant acme"},
		{name: "unknown card", id: "a-none", want: say.Reason{Kind: say.UnknownCard}.String()},
		{name: "store down", store: func(s store.Store) store.Store { return brokenStore{s} }, want: say.Reason{Kind: say.StoreDown}.String()},
		{name: "look-up fails", store: func(s store.Store) store.Store { return revisionsDown{s} },
			want: say.Reason{Kind: say.LookupFailed}.String()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newClickBot(t)
			b.ingest(t, "private.json")
			svc := b.svc
			if c.store != nil {
				svc = b.on(t, c.store(b.store))
			}
			out := svc.Click(context.Background(), click(threads.ClickShow, templates.ActionShowDetails, cmp.Or(c.id, "a-priv1"), cmp.Or(c.user, "U0KEVIN")))
			if !strings.Contains(out.Reason.String(), c.want) || out.Shown != nil {
				t.Fatalf("shown %+v: want only %q", out, c.want)
			}
		})
	}
}

// I'm looking and Escalate now are recorded through threads within
// RecordBound, the clicked card coming with the outcome; what cannot be
// recorded says why, and offers to try again where trying can help.
func TestLadderClicks(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json")
	look := click(threads.ClickLadder, templates.ActionLook, "a-merge1", "U0KEVIN")
	out := b.svc.Click(context.Background(), look)
	if !out.Sent || out.Tenant != "acme" {
		t.Fatalf("I'm looking: %+v", out)
	}
	if out.Card == nil || templates.Build(out.Card.Input()).Looking == "" {
		t.Fatalf("the clicked card does not say who is looking: %+v", out.Card)
	}
	if a := b.approval(t, "a-merge1"); a.LadderState == nil {
		t.Fatal("nothing recorded")
	}

	escalate := click(threads.ClickLadder, templates.ActionEscalate, "a-merge1", "U0KEVIN")
	viewer := look
	viewer.Person.User = "U0VIC"
	cases := []struct {
		name  string
		svc   *threads.Service
		req   threads.ClickRequest
		want  string
		retry bool
	}{
		{"a viewer", b.svc, viewer, "cannot decide approvals", false},
		{"unknown card", b.svc, click(threads.ClickLadder, templates.ActionLook, "a-none", "U0KEVIN"), say.Reason{Kind: say.UnknownCard}.String(), false},
		{"threads fails", b.on(t, failingTx{b.store}), look, say.Reason{Kind: say.NotRecorded, Act: say.Ladder}.String(), true},
		{"threads takes too long", b.on(t, stuckTx{b.store}), escalate, say.Reason{Kind: say.NotInTime, Act: say.Ladder}.String(), true},
	}
	for _, c := range cases {
		out := c.svc.Click(context.Background(), c.req)
		if out.Sent || out.Retry != c.retry || !strings.Contains(out.Reason.String(), c.want) {
			t.Errorf("%s: %+v, want %q (retry %v)", c.name, out, c.want, c.retry)
		}
		if out.Card != nil {
			t.Errorf("%s: a card to show for a click that recorded nothing", c.name)
		}
	}
}

// The job's starter, where self-approval is forbidden, is not asked a
// reason for a Deny the record would refuse: the refusal comes at once.
func TestDenyOfOwnJobAsksNoReason(t *testing.T) {
	t.Parallel()
	b := newClickBot(t)
	b.ingest(t, "merge.json") // started by user:ada (U0ADA)

	out := b.svc.Click(context.Background(), click(threads.ClickAsk, templates.ActionDeny, "a-merge1", "U0ADA"))
	if out.Dialog != nil {
		t.Fatalf("the job's starter was asked a reason: %+v", out.Dialog)
	}
	if out.Reason.Kind != say.OwnJob {
		t.Fatalf("reason %+v: want the job's own starter refused", out.Reason)
	}
	refusedBefore(t, b, "a-merge1", out)
}
