// Package surfacetest is the conformance suite every chat surface
// (threads.Surface) runs over a fake of its platform: a card posted and
// edited in place, edits in a row of which the last wins, a card posted
// again under the first one's thread, replies in that thread, a notice,
// each failure classified as the outbox expects (threads.DeliveryError),
// and text longer than the platform takes cut or split as the surface
// promises. A Harness tells the suite what the fake received in neutral
// terms, and says which subtests do not apply to its surface and why.
//
// Coalescing edits of one card into one call is the outbox's work, in the
// store (storetest's OutboxCoalescing): what a surface owes it is that an
// edit replaces the whole card, so the last edit performed wins, and that
// an edit performed again changes nothing.
package surfacetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"approvalsbot/approval"
	"approvalsbot/templates"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// Op is one call of threads.Surface.
type Op string

// The calls a failure is injected into.
const (
	OpPost   Op = "Post"
	OpEdit   Op = "Edit"
	OpReply  Op = "Reply"
	OpNotice Op = "Notice"
)

// Failure is a way a platform refuses a call, and says what the outbox
// does with it.
type Failure string

const (
	// RateLimited is a 429 naming its wait: retried after that wait.
	RateLimited Failure = "RateLimited"
	// Unavailable is a 5xx: a plain error, retried with backoff.
	Unavailable Failure = "Unavailable"
	// Refused is a 4xx no retry fixes (a revoked token): permanent.
	Refused Failure = "Refused"
	// ChannelGone is the target's channel deleted: permanent.
	ChannelGone Failure = "ChannelGone"
	// MessageGone is the card deleted: its edit is permanent.
	MessageGone Failure = "MessageGone"
)

// Fit is how a surface fits a notice longer than one message.
type Fit int

const (
	// Cut posts one message, cut to the limit.
	Cut Fit = iota + 1
	// Split posts several messages, split at line ends, nothing lost.
	Split
)

// Traits are what a surface promises beyond what every surface does.
type Traits struct {
	// Buttons: a pending card offers Approve and Deny.
	Buttons bool
	// MessageMax bounds Message.Size; 0 is no limit.
	MessageMax int
	// Notice is how a notice longer than MessageMax fits.
	Notice Fit
}

// Message is one message as a person sees it on the platform.
type Message struct {
	Text string // everything a person reads of it
	// Size is its length as the platform counts it against
	// Traits.MessageMax: its longest text the platform limits.
	Size int
	// Approval is the approval a card names (its buttons, its heading);
	// "" for none.
	Approval string
	// Decidable: it offers Approve or Deny.
	Decidable bool
}

// Harness is a surface over a fake of its platform.
type Harness interface {
	// New makes a surface over a fresh fake for one subtest; subtests
	// run in parallel.
	New(t *testing.T) (threads.Surface, Fake)
	Traits() Traits
	// Skip says why a subtest (its name below Run's test, as
	// "Fail/Post/RateLimited") does not apply to the surface; "" runs it.
	Skip(subtest string) string
}

// Fake is a platform's fake as the suite reads and breaks it.
type Fake interface {
	// Target is the channel cards and notices go to, as threads names it.
	Target() string
	// Card is the card of post as it stands now; false when there is none.
	Card(post threads.PostRef) (Message, bool)
	// Thread lists the thread of root's card, oldest first: the cards
	// posted under it and the replies.
	Thread(root threads.PostRef) []Message
	// Channel lists the messages at target outside any thread, oldest
	// first: the cards as posted, and the notices.
	Channel(target string) []Message
	// Fail makes the next call of op fail as f, card being a card posted
	// at Target, and returns the wait a RateLimited answer names.
	Fail(op Op, f Failure, card threads.PostRef) time.Duration
	// Secrets are the credentials the surface holds: no error says one.
	Secrets() []string
}

// Run runs the suite against h.
func Run(t *testing.T, h Harness) {
	t.Helper()
	cases := []struct {
		name string
		run  func(e *env)
	}{
		{"PostThenEdit", testPostThenEdit},
		{"LastEditWins", testLastEditWins},
		{"PostUnderThread", testPostUnderThread},
		{"ReplyInThread", testReplyInThread},
		{"Notice", testNotice},
		{"LongReplyFits", testLongReplyFits},
		{"LongNoticeFits", testLongNoticeFits},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(newEnv(t, h, c.name))
		})
	}
	var fails []string
	for _, op := range []Op{OpPost, OpEdit, OpReply, OpNotice} {
		for _, f := range []Failure{RateLimited, Unavailable, Refused, ChannelGone} {
			fails = append(fails, string(op)+"/"+string(f))
		}
	}
	fails = append(fails, string(OpEdit)+"/"+string(MessageGone))
	for _, name := range fails {
		op, f, _ := strings.Cut(name, "/")
		t.Run("Fail/"+name, func(t *testing.T) {
			t.Parallel()
			testFailure(newEnv(t, h, "Fail/"+name), Op(op), Failure(f))
		})
	}
}

// env is one subtest's surface, fake and card.
type env struct {
	t      *testing.T
	s      threads.Surface
	f      Fake
	traits Traits
	card   threads.Card // merge.json, waiting
}

func newEnv(t *testing.T, h Harness, name string) *env {
	t.Helper()
	if why := h.Skip(name); why != "" {
		t.Skip(why)
	}
	s, f := h.New(t)
	return &env{t: t, s: s, f: f, traits: h.Traits(), card: threadstest.Card(t, "merge.json")}
}

// post posts card at the target, under thread when set, and returns the
// post as the outbox records it.
func (e *env) post(card threads.Card, thread *threads.PostRef) threads.PostRef {
	e.t.Helper()
	res, err := e.s.Post(e.t.Context(), threads.PostRequest{Target: e.f.Target(), Card: card, Thread: thread})
	if err != nil {
		e.t.Fatalf("post: %v", err)
	}
	if res.Channel == "" || res.Ref == "" {
		e.t.Fatalf("post landed at %+v: want a channel and a ref", res)
	}
	threadRef := res.ThreadRef
	if thread != nil && threadRef == "" {
		threadRef = thread.Ref
	}
	return threads.PostRef{ApprovalID: card.Approval.ID, Target: e.f.Target(), Revision: card.Approval.Revision,
		Channel: res.Channel, Ref: res.Ref, ThreadRef: threadRef}
}

func (e *env) edit(post threads.PostRef, card threads.Card) {
	e.t.Helper()
	if err := e.s.Edit(e.t.Context(), threads.EditRequest{Post: post, Card: card}); err != nil {
		e.t.Fatalf("edit: %v", err)
	}
}

func (e *env) reply(root threads.PostRef, text string) error {
	return e.s.Reply(e.t.Context(), threads.ReplyRequest{Root: root, Tenant: e.card.Tenant,
		Kind: templates.ThreadBackendMessage, Text: text})
}

func (e *env) notice(text string) error {
	return e.s.Notice(e.t.Context(), threads.NoticeRequest{Target: e.f.Target(), Tenant: e.card.Tenant, Text: text})
}

// shown is the card of post as it stands.
func (e *env) shown(post threads.PostRef) Message {
	e.t.Helper()
	m, ok := e.f.Card(post)
	if !ok {
		e.t.Fatalf("no card at %+v", post)
	}
	return m
}

// channelHolds checks the target holds n messages outside any thread.
func (e *env) channelHolds(n int, after string) {
	e.t.Helper()
	if got := e.f.Channel(e.f.Target()); len(got) != n {
		e.t.Fatalf("after %s the channel holds %d messages, want %d: %+v", after, len(got), n, got)
	}
}

// decided is the card decided by actor with comment.
func (e *env) decided(state approval.State, actor, comment string) threads.Card {
	c := e.card
	c.State = state
	c.Decision = &approval.Decision{Actor: actor, Comment: comment, At: threadstest.FixtureNow}
	return c
}

// testPostThenEdit: a card lands at its target naming its approval and
// offering a decision; an edit replaces it in place, without a new
// message, and a decided card offers no decision.
func testPostThenEdit(e *env) {
	post := e.post(e.card, nil)
	m := e.shown(post)
	if m.Approval != e.card.Approval.ID || !strings.Contains(m.Text, e.card.Approval.Call.Function) {
		e.t.Fatalf("posted card names approval %q, reads %.300q: want %s and its function", m.Approval, m.Text, e.card.Approval.ID)
	}
	if e.traits.Buttons && !m.Decidable {
		e.t.Fatalf("a waiting card offers no Approve or Deny: %.300q", m.Text)
	}
	e.channelHolds(1, "a post")
	e.edit(post, e.decided(approval.StateApproved, "user:ada", "ship it after the freeze"))
	m = e.shown(post)
	if !strings.Contains(m.Text, "user:ada") || !strings.Contains(m.Text, "ship it after the freeze") || m.Decidable {
		e.t.Fatalf("edited card reads %.300q (decidable %v): want user:ada's approval and comment, no decision offered", m.Text, m.Decidable)
	}
	e.channelHolds(1, "an edit")
}

// testLastEditWins: edits in a row each replace the whole card, so the
// last performed is what people see, and one performed again (a repeat
// after a crash) changes nothing.
func testLastEditWins(e *env) {
	post := e.post(e.card, nil)
	first := e.card
	first.Deciding = &templates.Deciding{Actor: "user:lee", Approve: true, Comment: "first words", At: threadstest.FixtureNow}
	e.edit(post, first)
	if m := e.shown(post); !strings.Contains(m.Text, "first words") {
		e.t.Fatalf("the first edit reads %.300q: want its comment", m.Text)
	}
	last := e.decided(approval.StateDenied, "user:kevin", "second words")
	e.edit(post, last)
	m := e.shown(post)
	e.edit(post, last)
	if again := e.shown(post); again != m {
		e.t.Fatalf("an edit performed again changed the card: %+v, then %+v", m, again)
	}
	if !strings.Contains(m.Text, "second words") || strings.Contains(m.Text, "first words") || m.Decidable {
		e.t.Fatalf("after two edits the card reads %.300q (decidable %v): want the last alone", m.Text, m.Decidable)
	}
	e.channelHolds(1, "three edits")
}

// testPostUnderThread: a card posted with Thread set (a reasked request)
// goes into the first card's thread, not the channel, and replies to the
// first card join it there.
func testPostUnderThread(e *env) {
	root := e.post(e.card, nil)
	rev := *e.card.Approval
	rev.Revision = 2
	again := e.card
	again.Approval, again.HeldRevision = &rev, 2
	post := e.post(again, &root)
	if m := e.shown(post); m.Approval != rev.ID {
		e.t.Fatalf("the card posted under the thread names %q", m.Approval)
	}
	thread := e.f.Thread(root)
	if len(thread) != 1 || thread[0].Approval != rev.ID {
		e.t.Fatalf("the thread holds %+v: want the second card", thread)
	}
	e.channelHolds(1, "a card posted under the thread")
	if err := e.reply(root, "Revision 2 supersedes the first request."); err != nil {
		e.t.Fatal(err)
	}
	if thread := e.f.Thread(root); len(thread) != 2 || !strings.Contains(thread[1].Text, "Revision 2 supersedes") {
		e.t.Fatalf("the thread holds %+v: want the card, then the reply", thread)
	}
}

// testReplyInThread: replies go into the card's thread, in order, and
// not into the channel.
func testReplyInThread(e *env) {
	root := e.post(e.card, nil)
	for _, text := range []string{"The call ran: 3 rows changed.", "The job finished."} {
		if err := e.reply(root, text); err != nil {
			e.t.Fatalf("reply %q: %v", text, err)
		}
	}
	thread := e.f.Thread(root)
	if len(thread) != 2 || !strings.Contains(thread[0].Text, "3 rows changed") || !strings.Contains(thread[1].Text, "The job finished") {
		e.t.Fatalf("the thread holds %+v: want both replies, in order", thread)
	}
	e.channelHolds(1, "two replies")
}

// testNotice: a notice is one message in the target's channel.
func testNotice(e *env) {
	if err := e.notice("Ran unattended: acme_github.label on acme/api (a-auto1)"); err != nil {
		e.t.Fatal(err)
	}
	got := e.f.Channel(e.f.Target())
	if len(got) != 1 || !strings.Contains(got[0].Text, "Ran unattended: acme_github.label on acme/api (a-auto1)") {
		e.t.Fatalf("the channel holds %+v: want the notice", got)
	}
}

// longLines are n numbered lines of plain words, about 60 characters each.
func longLines(what string, n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("%s line %03d of %d: payments refund waiting for two hours", what, i+1, n)
	}
	return lines
}

// limit is the surface's message limit; a surface without one skips the
// limit subtests.
func (e *env) limit() int {
	e.t.Helper()
	if e.traits.MessageMax <= 0 {
		e.t.Fatal("the harness names no message limit (Traits.MessageMax) and does not skip this subtest")
	}
	return e.traits.MessageMax
}

// fits checks m is within the platform's limit.
func (e *env) fits(what string, m Message) {
	e.t.Helper()
	if m.Size <= 0 || m.Size > e.limit() {
		e.t.Fatalf("%s is %d long, the limit is %d: %.200q…", what, m.Size, e.limit(), m.Text)
	}
}

// testLongReplyFits: a reply longer than a message may be is one reply,
// cut to the limit, its start kept.
func testLongReplyFits(e *env) {
	root := e.post(e.card, nil)
	lines := longLines("reply", 3*e.limit()/50)
	if err := e.reply(root, strings.Join(lines, "\n")); err != nil {
		e.t.Fatal(err)
	}
	thread := e.f.Thread(root)
	if len(thread) != 1 || !strings.Contains(thread[0].Text, lines[0]) {
		e.t.Fatalf("the thread holds %d messages: want the one reply, its start kept", len(thread))
	}
	e.fits("the reply", thread[0])
}

// testLongNoticeFits: a notice longer than a message may be is cut to
// one message, or split at line ends into several that lose nothing, as
// the surface promises; each fits.
func testLongNoticeFits(e *env) {
	lines := longLines("notice", 3*e.limit()/50)
	if err := e.notice(strings.Join(lines, "\n")); err != nil {
		e.t.Fatal(err)
	}
	got := e.f.Channel(e.f.Target())
	for i, m := range got {
		e.fits(fmt.Sprintf("message %d of the notice", i+1), m)
	}
	switch e.traits.Notice {
	case Cut:
		if len(got) != 1 || !strings.Contains(got[0].Text, lines[0]) {
			e.t.Fatalf("the notice took %d messages: want one, its start kept", len(got))
		}
	case Split:
		if len(got) < 2 {
			e.t.Fatalf("the notice took %d messages: want it split", len(got))
		}
		var all strings.Builder
		for _, m := range got {
			all.WriteString(m.Text + "\n")
		}
		at := 0
		for _, l := range lines {
			i := strings.Index(all.String()[at:], l)
			if i < 0 {
				e.t.Fatalf("line %q lost or out of order", l)
			}
			at += i + len(l)
		}
	default:
		e.t.Fatalf("the harness says no Traits.Notice (Cut or Split)")
	}
}

// testFailure: a call the platform refuses returns an error the outbox
// classifies as the failure asks, carrying no secret; a failure retried
// succeeds the next time.
func testFailure(e *env, op Op, f Failure) {
	card := e.post(e.card, nil)
	after := e.f.Fail(op, f, card)
	call := func() error {
		ctx := e.t.Context()
		switch op {
		case OpPost:
			_, err := e.s.Post(ctx, threads.PostRequest{Target: e.f.Target(), Card: e.card})
			return err
		case OpEdit:
			return e.s.Edit(ctx, threads.EditRequest{Post: card, Card: e.decided(approval.StateApproved, "user:ada", "")})
		case OpReply:
			return e.reply(card, "The call ran.")
		case OpNotice:
			return e.notice("Ran unattended: acme_github.label (a-auto1)")
		}
		e.t.Fatalf("unknown op %q", op)
		return nil
	}
	err := call()
	if err == nil {
		e.t.Fatalf("%s succeeded through %s", op, f)
	}
	var de *threads.DeliveryError
	classified := errors.As(err, &de)
	switch f {
	case RateLimited:
		if after <= 0 {
			e.t.Fatal("the harness names no wait for its 429")
		}
		if !classified || de.Permanent || de.RetryAfter != after {
			e.t.Fatalf("%v: want RetryAfter %s, the platform's wait", err, after)
		}
	case Unavailable:
		if classified {
			e.t.Fatalf("%v: permanent %v, retry after %s: want a plain error, retried with backoff", err, de.Permanent, de.RetryAfter)
		}
	default:
		if !classified || !de.Permanent {
			e.t.Fatalf("%v: want permanent", err)
		}
	}
	for _, s := range e.f.Secrets() {
		if s != "" && strings.Contains(err.Error(), s) {
			e.t.Fatalf("the error carries a secret: %v", err)
		}
	}
	if f == RateLimited || f == Unavailable {
		if err := call(); err != nil {
			e.t.Fatalf("%s again after one %s: %v", op, f, err)
		}
	}
}
