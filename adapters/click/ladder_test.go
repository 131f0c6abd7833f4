package click_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"approvalsbot/adapters/click"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// ladderFails is threads whose Acknowledge and EscalateNow fail,
// recording nothing.
type ladderFails struct{ *threads.Service }

func (ladderFails) Acknowledge(context.Context, threads.LadderRequest) (threads.LadderResult, error) {
	return threads.LadderResult{}, errors.New("record: database is locked")
}

func (ladderFails) EscalateNow(ctx context.Context, _ threads.LadderRequest) (threads.LadderResult, error) {
	<-ctx.Done() // a store that cannot take the transaction
	return threads.LadderResult{}, ctx.Err()
}

// I'm looking and Escalate now are recorded through threads within
// RecordBound, the clicked card then read as it stands; what cannot be
// recorded says why, and offers to try again where trying can help.
func TestLadderClicks(t *testing.T) {
	t.Parallel()
	b := newBot(t)
	b.ingest(t, "merge.json")
	look := action(templates.ActionLook, "a-merge1")
	out := b.flow.Ladder(context.Background(), look, person("U0KEVIN"))
	if !out.Sent || out.Tenant != "acme" {
		t.Fatalf("I'm looking: %+v", out)
	}
	card, ok := b.flow.Card(context.Background(), look, out)
	if !ok || templates.Build(card.Input()).Looking == "" {
		t.Fatalf("the clicked card does not say who is looking: %v", ok)
	}
	if a := b.approval(t, "a-merge1"); a.LadderState == nil {
		t.Fatal("nothing recorded")
	}

	cases := []struct {
		name  string
		f     *click.Flow
		act   templates.Action
		user  string
		want  string
		retry bool
	}{
		{"a viewer", b.flow, look, "U0VIC", "cannot decide approvals", false},
		{"unknown card", b.flow, action(templates.ActionLook, "a-none"), "U0KEVIN", click.SayUnknownCard, false},
		{"threads fails", b.with(t, func(o *click.Options) { o.Service = ladderFails{b.svc} }), look, "U0KEVIN", click.SayLadderNotRecorded, true},
		{"threads takes too long", b.with(t, func(o *click.Options) { o.Service = ladderFails{b.svc} }),
			templates.Action{Kind: templates.ActionEscalate, ApprovalID: "a-merge1", Revision: 1}, "U0KEVIN", click.SayLadderNotInTime, true},
	}
	for _, c := range cases {
		out := c.f.Ladder(context.Background(), c.act, person(c.user))
		if out.Sent || out.Retry != c.retry || !strings.Contains(out.Text, c.want) {
			t.Errorf("%s: %+v, want %q (retry %v)", c.name, out, c.want, c.retry)
		}
		if _, ok := c.f.Card(context.Background(), c.act, out); ok {
			t.Errorf("%s: a card to show for a click that recorded nothing", c.name)
		}
	}
}
