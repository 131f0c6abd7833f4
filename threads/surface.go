package threads

import (
	"context"
	"errors"
	"fmt"
	"time"

	"approvalsbot/approval"
	"approvalsbot/store"
	"approvalsbot/templates"
)

// Surface is a place cards go: Slack, Discord, email, the log. Each call
// is one outward effect made with no transaction open; the surface
// classifies its failures (Permanent, RetryAfter), the outbox decides.
type Surface interface {
	// Post puts a card at a target, under Thread when set, and says where.
	Post(ctx context.Context, req PostRequest) (PostResult, error)
	// Edit replaces a posted card with the current state.
	Edit(ctx context.Context, req EditRequest) error
	// Reply posts text in the thread of a card.
	Reply(ctx context.Context, req ReplyRequest) error
	// Notice posts one line to a channel (the audit channel).
	Notice(ctx context.Context, req NoticeRequest) error
}

// Card is one copy of a card to show: its revision, and where the
// approval stands now.
type Card struct {
	Tenant     string
	Approval   *approval.Approval // the request of the copy's revision
	State      approval.State
	Decision   *approval.Decision
	Superseded bool // a newer revision replaced this copy
	// Deciding is the decision in flight, if any.
	Deciding *templates.Deciding
	// Frozen is the ladder as frozen at request (fired steps are no part of
	// a card: docs/cards.md).
	Frozen Frozen
	// ladder is what people did to the ladder, shown on every copy.
	ladder ladderState
	// votes are the approvals given towards the call's quorum.
	votes votes
	// HeldRevision is the approval's newest revision when the card was made.
	HeldRevision int
	// ThreadURL is the web address of the card's chat thread (for mail).
	ThreadURL string
	Now       time.Time
	// TypedOnPage: the decision page takes this tenant's typed
	// confirmations (templates.Input.TypedOnPage).
	TypedOnPage bool
	// Grants: the card offers "Approve and allow…" (templates.Input.Grants).
	Grants bool
	// Turn: the approval is one call of a turn shown on one card
	// (turn_card.go); a chat surface then shows the turn card, every
	// member a row. nil for a card of one call.
	Turn *templates.TurnInput
	// turnTooMany: the turn has more calls than one card shows; each
	// call's own card says so (templates.Input.TurnTooMany).
	turnTooMany int
}

// SameState reports whether two reads of a copy show the approval alike
// (state, newest revision, decision in flight, ladder); when not, a copy
// shown from the first read is shown again.
func (c Card) SameState(o Card) bool {
	return c.State == o.State && c.HeldRevision == o.HeldRevision && sameDeciding(c.Deciding, o.Deciding) &&
		c.ladder.Last == o.ladder.Last && sameVotes(c.votes, o.votes)
}

// PostRef is one posted copy of a card, as the bot keeps it: what an
// adapter needs to edit it, reply under it or link to it.
type PostRef struct {
	ApprovalID string
	Target     string // where it went, as configured: slack:C…, dm:slack:U…, discord:channel:…
	Revision   int    // the revision the copy shows
	Channel    string // the surface's channel (a DM channel for DMs)
	Ref        string // the surface's message reference (Slack ts, Discord id)
	ThreadRef  string // the thread replies go to; empty means Ref
}

// RefOf is a stored post as surfaces take it.
func RefOf(p *store.Post) PostRef {
	return PostRef{ApprovalID: p.ApprovalID, Target: p.Target, Revision: p.Revision,
		Channel: p.Channel, Ref: p.Ref, ThreadRef: p.ThreadRef}
}

// RefsOf is stored posts as surfaces take them, in their order.
func RefsOf(posts []*store.Post) []PostRef {
	out := make([]PostRef, len(posts))
	for i, p := range posts {
		out[i] = RefOf(p)
	}
	return out
}

// PostRequest posts a card.
type PostRequest struct {
	Target string
	Card   Card
	Thread *PostRef // the target's first card, to post under; nil for a new thread
}

// PostResult is where a card landed.
type PostResult struct {
	Channel   string
	Ref       string
	ThreadRef string // empty: the card starts its own thread (Ref)
}

// EditRequest edits a posted card.
type EditRequest struct {
	Post PostRef
	Card Card
}

// ReplyRequest posts a thread reply.
type ReplyRequest struct {
	Root   PostRef // the card whose thread takes the reply
	Tenant string
	Kind   templates.ThreadKind
	Text   string
	// Mentions, Waited and By (who pressed Escalate now) make an escalation
	// reply (Kind ThreadEscalation).
	Mentions []templates.Mention
	Waited   time.Duration
	By       string
}

// Message is the thread reply as the templates take it.
func (r ReplyRequest) Message() templates.ThreadMessage {
	return templates.ThreadMessage{Kind: r.Kind, ApprovalID: r.Root.ApprovalID, Text: r.Text, Mentions: r.Mentions, Waited: r.Waited, By: r.By}
}

// NoticeRequest posts one line to a channel.
type NoticeRequest struct {
	Target string
	Tenant string
	Text   string
	// Lines: Text is lines the bot composed (a digest), whose every value
	// from a request is on one line already; a surface that puts a notice
	// on one line keeps these line breaks.
	Lines bool
}

// DeliveryError classifies a surface's failure for the outbox.
type DeliveryError struct {
	Err        error
	Permanent  bool          // will never succeed: recorded, not retried
	RetryAfter time.Duration // the surface's own wait (a 429's Retry-After)
}

func (e *DeliveryError) Error() string {
	switch {
	case e.Permanent:
		return fmt.Sprintf("permanent: %v", e.Err)
	case e.RetryAfter > 0:
		return fmt.Sprintf("retry after %s: %v", e.RetryAfter, e.Err)
	}
	return e.Err.Error()
}

func (e *DeliveryError) Unwrap() error { return e.Err }

// Permanent marks a failure that no retry can fix.
func Permanent(err error) error { return &DeliveryError{Err: err, Permanent: true} }

// RetryAfter marks a failure the surface asks to retry after d.
func RetryAfter(err error, d time.Duration) error { return &DeliveryError{Err: err, RetryAfter: d} }

func classify(err error) (permanent bool, after time.Duration) {
	var de *DeliveryError
	if errors.As(err, &de) {
		return de.Permanent, de.RetryAfter
	}
	return false, 0
}
