package click_test

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"approvalsbot/adapters/click"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// refusedBefore says a click was refused before anything was recorded:
// the card was not decided, the person is told so, and the card keeps its
// buttons (Card gives no card to put in place of the one clicked).
func refusedBefore(t *testing.T, b *bot, f *click.Flow, act templates.Action, out click.Outcome) {
	t.Helper()
	if out.Sent || !strings.Contains(strings.ToLower(out.Text), "nothing was sent") {
		t.Errorf("outcome %+v: want nothing sent, and the person told so", out)
	}
	if b.committed(t, act.ApprovalID) {
		t.Errorf("a decision on %s was recorded", act.ApprovalID)
	}
	if _, ok := f.Card(context.Background(), act, out); ok {
		t.Error("Card gave a card to replace the clicked one with: the clicked card would lose its buttons")
	}
}

func TestApproveIsRecordedBeforeRecordReturns(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	act := action(templates.ActionApprove, "a-merge1")

	out := b.flow.Record(context.Background(), act, person("U0KEVIN"), true, "", time.Time{})
	if !out.Sent || out.Retry || out.Tenant != "acme" || out.Text == "" {
		t.Fatalf("outcome %+v: want sent, for tenant acme, with threads' sentence", out)
	}
	if !b.committed(t, "a-merge1") {
		t.Fatal("Record returned before the decision was committed")
	}
	card, ok := b.flow.Card(context.Background(), act, out)
	if !ok || card.Approval == nil || card.Approval.ID != "a-merge1" {
		t.Fatalf("the clicked card: %+v, %v", card, ok)
	}
	for _, btn := range templates.Build(card.Input()).Buttons {
		if k, err := templates.ParseAction(btn.Payload); err == nil && (k.Kind == templates.ActionApprove || k.Kind == templates.ActionDeny) {
			t.Fatalf("the card that replaces the clicked one still has %s", k.Kind)
		}
	}

	// A second person's click while the first decision is in flight is
	// refused by threads; the card keeps what it shows.
	second := b.flow.Record(context.Background(), act, person("U0NOC"), false, "", time.Time{})
	if second.Sent || second.Retry || !strings.Contains(second.Text, "user:kevin") {
		t.Fatalf("second click: %+v, want threads' refusal naming who is deciding", second)
	}
	if _, ok := b.flow.Card(context.Background(), act, second); ok {
		t.Fatal("a refused click got a card to replace the clicked one with")
	}
}

// brokenStore fails every read, as a store that is down does.
type brokenStore struct{ click.Store }

func (brokenStore) ApprovalGet(context.Context, string) (*store.Approval, error) {
	return nil, errors.New("database is locked")
}

func (brokenStore) RevisionGet(context.Context, string, int) (*store.Revision, error) {
	return nil, errors.New("database is locked")
}

// countingStore counts the reads of approvals.
type countingStore struct {
	click.Store
	reads *int
}

func (c countingStore) ApprovalGet(ctx context.Context, id string) (*store.Approval, error) {
	*c.reads++
	return c.Store.ApprovalGet(ctx, id)
}

// failingService is threads whose Decide fails, recording nothing.
type failingService struct{ *threads.Service }

func (failingService) Decide(context.Context, threads.DecideRequest) (threads.DecideResult, error) {
	return threads.DecideResult{}, errors.New("record the decision: database is locked")
}

func TestRecordRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		edit    func(b *bot, o *click.Options)
		user    string
		id      string
		comment string
		want    string // the sentence, or a part of threads' own
		retry   bool
	}{
		{name: "store down", edit: func(_ *bot, o *click.Options) { o.Store = brokenStore{o.Store} },
			want: click.SayStoreDown, retry: true},
		{name: "Decide fails", edit: func(b *bot, o *click.Options) {
			o.Service = failingService{b.svc}
		}, want: click.SayNotRecorded, retry: true},
		{name: "reason too long", comment: strings.Repeat("é", click.ReasonMax+1), want: click.SayReasonTooLong, retry: true},
		{name: "unknown card", id: "a-none", want: click.SayUnknownCard},
		{name: "a viewer", user: "U0VIC", want: "cannot decide approvals"},
		{name: "a stranger, on this flow's surface", user: "U0STRANGER", want: "An admin can add your slack id U0STRANGER"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := newBot(t)
			b.ingest(t, "merge.json")
			f := b.flow
			if c.edit != nil {
				f = b.with(t, func(o *click.Options) { c.edit(b, o) })
			}
			act := action(templates.ActionDeny, cmp.Or(c.id, "a-merge1"))
			out := f.Record(context.Background(), act, person(cmp.Or(c.user, "U0KEVIN")), false, c.comment, time.Time{})
			if !strings.Contains(out.Text, c.want) || out.Retry != c.retry {
				t.Fatalf("outcome %+v, want %q with retry %v", out, c.want, c.retry)
			}
			refusedBefore(t, b, f, action(templates.ActionDeny, "a-merge1"), out)
		})
	}
}

func TestTooLongReasonIsRefusedBeforeAnythingIsRead(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	reads := 0
	f := b.with(t, func(o *click.Options) { o.Store = countingStore{o.Store, &reads} })
	act := action(templates.ActionDeny, "a-merge1")
	if out := f.Record(context.Background(), act, person("U0KEVIN"), false, strings.Repeat("x", click.ReasonMax), time.Time{}); !out.Sent {
		t.Fatalf("a reason of exactly %d characters: %+v, want it sent", click.ReasonMax, out)
	}
	reads = 0
	if out := f.Record(context.Background(), act, person("U0NOC"), false, strings.Repeat("x", click.ReasonMax+1), time.Time{}); out.Text != click.SayReasonTooLong || reads != 0 {
		t.Fatalf("outcome %+v after %d reads, want %q before any read", out, reads, click.SayReasonTooLong)
	}
	if !strings.Contains(click.SayReasonTooLong, "1,000") || click.ReasonMax != 1000 {
		t.Fatalf("%q does not name ReasonMax %d", click.SayReasonTooLong, click.ReasonMax)
	}
}

// snapshotStore serves one approval as read beforehand: a flow inside a
// testing/synctest bubble reads it rather than SQLite, whose connection
// pool lives outside the bubble.
type snapshotStore struct {
	click.Store
	approval *store.Approval
}

func (s snapshotStore) ApprovalGet(_ context.Context, id string) (*store.Approval, error) {
	if id != s.approval.ID {
		return nil, store.ErrNotFound
	}
	a := *s.approval
	return &a, nil
}

// stuckService is threads whose Decide returns only when its context
// ends, recording nothing: a store that cannot take the transaction.
type stuckService struct{ *threads.Service }

func (stuckService) Decide(ctx context.Context, _ threads.DecideRequest) (threads.DecideResult, error) {
	<-ctx.Done()
	return threads.DecideResult{}, ctx.Err()
}

func TestRecordReturnsWithinRecordBound(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	snap := b.approval(t, "a-merge1")
	synctest.Test(t, func(t *testing.T) {
		f := b.with(t, func(o *click.Options) {
			o.Store = snapshotStore{o.Store, snap}
			o.Service = stuckService{b.svc}
		})
		start := time.Now()
		out := f.Record(context.Background(), action(templates.ActionApprove, "a-merge1"), person("U0KEVIN"), true, "", start)
		if took := time.Since(start); took != threads.RecordBound || out.Text != click.SayNotInTime || !out.Retry || out.Sent {
			t.Fatalf("after %v: %+v, want %q after exactly %v", took, out, click.SayNotInTime, threads.RecordBound)
		}
	})
}

func TestDenyAsksTheReasonOnlyOfWhoMayDecide(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	act := action(templates.ActionDeny, "a-merge1")

	d, out := b.flow.Deny(context.Background(), act, person("U0KEVIN"), time.Time{})
	if d == nil || d.Tenant != "acme" || d.Function != "acme_github.merge" || d.Restricted || out != (click.Outcome{Tenant: "acme"}) {
		t.Fatalf("an operator's Deny: %+v, %+v; want the dialog, to ask the reason", d, out)
	}
	if b.committed(t, "a-merge1") {
		t.Fatal("Deny recorded a decision before the reason")
	}
	// A restricted call's reason stays off its card: the dialog says so.
	b.ingest(t, "private.json")
	if d, _ := b.flow.Deny(context.Background(), action(templates.ActionDeny, "a-priv1"), person("U0KEVIN"), time.Time{}); d == nil ||
		!d.Restricted || !strings.Contains(click.DenyQuestion(d.Function, "a-priv1", 1, d.Restricted), click.SayReasonWithheld) {
		t.Fatalf("Deny of a restricted call: %+v; want a dialog that says the reason stays off the card", d)
	}
	for _, c := range []struct{ user, want string }{
		{"U0VIC", "cannot decide approvals"},
		{"U0STRANGER", "not a member of tenant acme"},
	} {
		row, out := b.flow.Deny(context.Background(), act, person(c.user), time.Time{})
		if row != nil || !strings.Contains(out.Text, c.want) {
			t.Fatalf("%s's Deny: %+v, %+v; want no dialog and threads' %q", c.user, row, out, c.want)
		}
		refusedBefore(t, b, b.flow, act, out)
	}
	if row, out := b.flow.Deny(context.Background(), action(templates.ActionDeny, "a-none"), person("U0KEVIN"), time.Time{}); row != nil ||
		out.Text != click.SayUnknownCard {
		t.Fatalf("Deny on an unknown card: %+v, %+v", row, out)
	}
}

func TestNewNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	_, err := click.New(click.Options{})
	if err == nil {
		t.Fatal("New took empty options")
	}
	for _, want := range []string{"Surface", "Store", "Service", "Tenants"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	// A surface the registry does not know would make every clicker a
	// stranger: refused at once, not found out click by click.
	b := newBot(t)
	o := b.opts
	o.Surface = "Slack"
	if _, err := click.New(o); err == nil || !strings.Contains(err.Error(), `"Slack" is not a chat surface`) {
		t.Fatalf("New with surface Slack: %v", err)
	}
}

// The flow lets threads word a refusal when it read that the clicker may
// not decide; if the configuration changed between that read and
// threads' own (a reload), threads still records nothing: the decision
// comes only from the dialog, which was not opened (Deny's reason,
// Approve with comment…, a destructive call's confirmation).
func TestARefusalWordedByThreadsNeverRecords(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	// A flow whose configuration, read before the reload, knows no tenant.
	before := b.with(t, func(o *click.Options) {
		o.Tenants = func() map[string]*tenant.Tenant { return map[string]*tenant.Tenant{} }
	})
	for _, c := range []struct {
		name string
		try  func() (bool, click.Outcome)
	}{
		{"deny", func() (bool, click.Outcome) {
			row, out := before.Deny(context.Background(), action(templates.ActionDeny, "a-merge1"), person("U0KEVIN"), time.Time{})
			return row != nil, out
		}},
		{"approve with comment", func() (bool, click.Outcome) {
			d, out := before.Ask(context.Background(), action(templates.ActionApproveNote, "a-merge1"), person("U0KEVIN"), true, time.Time{})
			return d != nil, out
		}},
	} {
		dialog, out := c.try()
		if dialog {
			t.Fatalf("%s: a dialog opened for a clicker the flow read as no member", c.name)
		}
		if !strings.Contains(out.Text, "Click the button again") {
			t.Errorf("%s: told %q, want to click again", c.name, out.Text)
		}
		refusedBefore(t, b, before, action(templates.ActionApprove, "a-merge1"), out)
	}
}
