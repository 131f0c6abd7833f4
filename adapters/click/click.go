// Package click is the one way a chat surface takes a person's click on a
// card: it finds the approval the click names, decides whether a Deny
// asks for a reason (and what Approve with comment… and a destructive
// call's confirmation say), records the decision through threads within
// threads.RecordBound, decides what Show all arguments and Show details
// show, runs the work that follows the platform's answer, and words what
// the person is told, so Slack and Discord say the same sentences. A
// surface keeps only its wire format: how the first answer is shaped,
// how the clicked card is replaced, how a person is told in private.
//
// A surface answers a decision's click only after Record returns: a 2xx
// to the platform then means the decision is committed and will reach the
// job backend. A click that opens a dialog first (Deny's reason, Approve
// with comment…, a destructive call's confirmation) asks Ask what to open.
// The ladder's buttons, I'm looking and Escalate now, are recorded the
// same way, through Ladder (ladder.go), before they are answered.
//
// It also decides what /approvals reads and shows on every surface
// (commands.go): whose approvals a command is about, what waits, and the
// ladders as timelines.
package click

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
	"unicode/utf8"

	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
	"approvalsbot/threads"
)

// Store is what a click reads of the bot's state: the approval it names
// (for its tenant) and its revisions (Show details). store.Store
// satisfies it.
type Store interface {
	ApprovalGet(ctx context.Context, id string) (*store.Approval, error)
	RevisionGet(ctx context.Context, approvalID string, revision int) (*store.Revision, error)
}

// Service is what a click calls; *threads.Service satisfies it.
type Service interface {
	Decide(ctx context.Context, req threads.DecideRequest) (threads.DecideResult, error)
	Card(ctx context.Context, approvalID string, revision int) (threads.Card, error)
	ShowArguments(ctx context.Context, req threads.ShowRequest) (threads.ShowResult, error)
	// Acknowledge and EscalateNow take the ladder's buttons, I'm looking
	// and Escalate now (ladder.go).
	Acknowledge(ctx context.Context, req threads.LadderRequest) (threads.LadderResult, error)
	EscalateNow(ctx context.Context, req threads.LadderRequest) (threads.LadderResult, error)
	// Receive opens the receipt of a click just received, which the
	// surface ends once the click is answered (threads.Receipt).
	Receive() *threads.Receipt
}

var _ Service = (*threads.Service)(nil)

// Reads is all a surface's clicks and commands read of the bot's state,
// so a surface names the store in click's terms and never imports it.
// store.Store satisfies it.
type Reads interface {
	Store
	CommandStore
}

// Options configure New.
type Options struct {
	// Surface names the surface in threads.Person ("slack", "discord")
	// and in log lines. Required.
	Surface string
	// Store is read only. Required.
	Store Store
	// Service is where clicks go. Required.
	Service Service
	// Tenants gives the configuration in force: whether the clicker is a
	// member who may decide there says whether a Deny asks for a reason.
	// Required.
	Tenants func() map[string]*tenant.Tenant
	// Logger gets one line per click that fails; nil discards.
	Logger *slog.Logger
}

// Flow is the click flow of one surface.
type Flow struct {
	surface string
	store   Store
	service Service
	tenants func() map[string]*tenant.Tenant
	log     *slog.Logger
}

// New checks o and builds the flow.
func New(o Options) (*Flow, error) {
	var errs []error
	if _, ok := ladder.ChatSurfaceNamed(o.Surface); !ok {
		errs = append(errs, fmt.Errorf("click: Surface %q is not a chat surface the bot knows (ladder.ChatSurfaces)", o.Surface))
	}
	if o.Store == nil {
		errs = append(errs, errors.New("click: Store is required"))
	}
	if o.Service == nil {
		errs = append(errs, errors.New("click: Service is required"))
	}
	if o.Tenants == nil {
		errs = append(errs, errors.New("click: Tenants is required"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Flow{surface: o.Surface, store: o.Store, service: o.Service, tenants: o.Tenants, log: o.Logger}, nil
}

// Receive opens the receipt of a click the surface has just verified: the
// deadline judges the click by its At, and the surface ends it (Done)
// once the click is answered.
func (f *Flow) Receive() *threads.Receipt { return f.service.Receive() }

// ReasonMax bounds a denial's reason and an approval's comment, in
// characters: the dialogs take no more, and threads refuses longer.
const ReasonMax = threads.MaxComment

// Outcome is what became of a click on Approve or Deny, I'm looking or
// Escalate now.
type Outcome struct {
	Tenant string // the approval's tenant, from the store; "" when unknown
	// Sent: what the click asked is committed: a decision on its way to
	// the backend, an acknowledgement, a step fired at once. The clicked
	// card changed.
	Sent bool
	// Retry: nothing was recorded, and the same dialog submitted again
	// may be: the bot could not do its part (starting, the store, the
	// record, the time), or the reason is too long. A dialog that asked
	// the reason stays open for it, the reason still in it.
	Retry bool
	// Text is the sentence for the person (threads' own, or why not).
	Text string
	// Reveal: nothing was recorded; the person holds the content
	// permission and was not shown the restricted call they approve.
	// The surface answers with Reveal's private answer: the call's
	// content, then the Approve that decides.
	Reveal bool
}

// person is who clicked, on this flow's surface.
func (f *Flow) person(who threads.Person) threads.Person {
	who.Surface = f.surface
	return who
}

func (f *Flow) logArgs(act templates.Action, who threads.Person) []any {
	return []any{"surface", f.surface, "approval_id", act.ApprovalID, "user", who.User}
}

// Record finds the approval act names and records the decision, a
// reason longer than ReasonMax refused before anything is read. The
// tenant is never taken from the click: the store holds it from the
// backend's signed event, and threads checks it against the revision.
// received is when the surface got the click: the deadline judges the
// click by it. It returns within threads.RecordBound.
func (f *Flow) Record(ctx context.Context, act templates.Action, who threads.Person, approve bool, comment string,
	received time.Time) Outcome {
	if utf8.RuneCountInString(comment) > ReasonMax {
		if approve {
			return Outcome{Text: SayCommentTooLong, Retry: true}
		}
		return Outcome{Text: SayReasonTooLong, Retry: true}
	}
	who = f.person(who)
	ctx, cancel := context.WithTimeout(ctx, threads.RecordBound)
	defer cancel()
	row, out := f.find(ctx, act, who)
	if row == nil {
		return out
	}
	// Only the Approve of a private answer that showed the call's
	// content says the person was shown it.
	return f.record(ctx, row, threads.DecideRequest{Revision: act.Revision, Approve: approve, Comment: comment,
		Person: who, ReceivedAt: received, Shown: approve && act.Kind.Seen()}, act)
}

// record sends req, for the approval row act names, to threads.
func (f *Flow) record(ctx context.Context, row *store.Approval, req threads.DecideRequest, act templates.Action) Outcome {
	req.Tenant, req.ApprovalID = row.Tenant, act.ApprovalID
	who := req.Person
	res, err := f.service.Decide(ctx, req)
	if err != nil {
		f.log.Error("record a decision", append(f.logArgs(act, who), "tenant", row.Tenant, "err", err.Error())...)
		return Outcome{Tenant: row.Tenant, Retry: true, Text: sayFailed(err, SayNotRecorded)}
	}
	if !res.Sent {
		// Why, as the person is told: threads' sentence names the state,
		// the role or the revision, never a value of the call.
		f.log.Info("decision refused", append(f.logArgs(act, who), "tenant", row.Tenant, "why", res.Text)...)
	}
	return Outcome{Tenant: row.Tenant, Sent: res.Sent, Text: res.Text, Reveal: res.Reveal}
}

// find reads the approval a click names, and so its tenant; when it
// cannot, it returns nil and the outcome to tell.
func (f *Flow) find(ctx context.Context, act templates.Action, who threads.Person) (*store.Approval, Outcome) {
	row, err := f.store.ApprovalGet(ctx, act.ApprovalID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		f.log.Info("click for an approval the bot does not hold", f.logArgs(act, who)...)
		return nil, Outcome{Text: SayUnknownCard}
	case err != nil:
		f.log.Error("read the approval of a click", append(f.logArgs(act, who), "err", err.Error())...)
		return nil, Outcome{Retry: true, Text: sayFailed(err, SayStoreDown)}
	}
	return row, Outcome{}
}

func sayFailed(err error, otherwise string) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return SayNotInTime
	}
	return otherwise
}

// Deny decides what a click on Deny gets, as Ask does for a dialog: for
// a person who may decide in the approval's tenant as configured now, on
// a card that can still be decided, the Dialog the reason dialog names
// the call with (and whether its content is restricted, which keeps the
// reason off the card and its thread), and nothing recorded. Anyone else
// (or a click on a superseded or closed card) is not asked a reason that
// would be refused: the denial goes to threads at once, which words the
// refusal (and records nothing), and Deny returns that outcome, as it
// does when the card cannot be read. The reads are bounded by ctx alone
// (the caller's answer decides how long they may take); the refusal,
// like Record, by threads.RecordBound.
func (f *Flow) Deny(ctx context.Context, act templates.Action, who threads.Person, received time.Time) (*Dialog, Outcome) {
	return f.Ask(ctx, act, who, false, received)
}

// mayDecide reports whether the user maps to a member who may decide in
// the tenant as configured now. It only chooses between asking for a
// reason and letting threads word the refusal at once; threads decides.
func (f *Flow) mayDecide(tenant, user string) bool {
	t, ok := f.tenants()[tenant]
	if !ok || t == nil {
		return false
	}
	m, ok := t.MemberOn(f.surface, user)
	return ok && m.Role.CanDecide()
}

// holdsContent reports whether the user maps to a member who holds the
// content permission in the tenant as configured now.
func (f *Flow) holdsContent(tenant, user string) bool {
	t, ok := f.tenants()[tenant]
	if !ok || t == nil {
		return false
	}
	m, ok := t.MemberOn(f.surface, user)
	return ok && m.Content
}

// Card is the clicked card as the approval now stands, once out says the
// click was recorded: what the surface puts in place of the message
// clicked (its Approve and Deny gone and the decision on its way; or who
// is looking; or the step escalated now). It returns false when nothing
// was recorded (the card stays as it was) or the card cannot be read
// (logged); the person is then told out.Text.
func (f *Flow) Card(ctx context.Context, act templates.Action, out Outcome) (threads.Card, bool) {
	if !out.Sent {
		return threads.Card{}, false
	}
	card, err := f.service.Card(ctx, act.ApprovalID, act.Revision)
	if err != nil {
		f.log.Warn("read the clicked card", "surface", f.surface, "tenant", out.Tenant, "approval_id", act.ApprovalID,
			"err", err.Error())
		return threads.Card{}, false
	}
	return card, true
}
