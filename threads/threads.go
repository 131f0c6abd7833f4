// Package threads is the core of the bot and the only writer of approval
// state. It ingests events (new state and the outbox rows it implies, in
// one transaction), runs the outbox worker that keeps every copy of a card
// in step through Surface, and answers clicks (Click) with a reason that
// package say words and the card to show. Adapters implement Surface and
// send clicks to Click; the backend adapter calls Ingest.
package threads

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/jonboulle/clockwork"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
	"approvalsbot/tenant"
)

// Clock is the time source; tests inject a fake one. A Clock that also
// makes timers (TimerClock) runs the outbox's idle poll too, so a fake
// clock moves it; any other runs it on the wall clock.
type Clock interface {
	Now() time.Time
}

// TimerClock is a Clock that makes timers.
type TimerClock interface {
	Clock
	NewTimer(d time.Duration) clockwork.Timer
}

func timerClock(c Clock) TimerClock {
	if tc, ok := c.(TimerClock); ok {
		return tc
	}
	return clockwork.NewRealClock()
}

// Tenants gives the configuration in force for a tenant. It is read per
// event, so a reload changes only what arrives after it.
type Tenants interface {
	Tenant(id string) (*tenant.Tenant, bool)
}

// Errors of Ingest that the backend adapter turns into answers.
var (
	// ErrUnknownTenant: no tenant of that id is configured (422 unknown_tenant).
	ErrUnknownTenant = errors.New("unknown tenant")
	// ErrIDReused: an accepted event id came again with another body (422).
	ErrIDReused = errors.New("event id reused with a different body")
	// ErrForeignApproval: the approval id belongs to another tenant.
	ErrForeignApproval = errors.New("approval belongs to another tenant")
)

// RequestAhead is how far past the bot's clock a request's requested_at
// may lie: the signature's own skew (300 s either way, docs/protocol.md).
const RequestAhead = 300 * time.Second

// checkTimes bounds a request's times against the bot's clock, which
// approval.Parse cannot: the envelope's time and requested_at at most
// RequestAhead ahead, a deadline at most the tenant's max_deadline away (a
// deadline in year 9999 would never fire the ladder, and keep the decision
// links valid as long). It answers like Parse: *approval.ValidationError.
func checkTimes(tenant *tenant.Tenant, ev *approval.Event, now time.Time) error {
	var problems []*approval.FieldError
	clock := now.UTC().Format(time.RFC3339)
	if ev.Time.After(now.Add(RequestAhead)) {
		problems = append(problems, &approval.FieldError{Path: "time",
			Msg: fmt.Sprintf("want a time at most %s after the bot's clock (%s): an event cannot happen later than it is sent",
				ladder.FormatDuration(RequestAhead), clock)})
	}
	a := ev.Approval
	if a != nil && a.RequestedAt.After(now.Add(RequestAhead)) {
		problems = append(problems, &approval.FieldError{Path: "data.requested_at",
			Msg: fmt.Sprintf("want a time at most %s after the bot's clock (%s): a request cannot be made later than it is sent",
				ladder.FormatDuration(RequestAhead), clock)})
	}
	if max := tenant.MaxDeadline; max > 0 && a != nil && a.Deadline != nil && a.Deadline.After(now.Add(max)) {
		problems = append(problems, &approval.FieldError{Path: "data.deadline",
			Msg: fmt.Sprintf("want a time at most %s after the bot's clock (%s), the tenant's max_deadline",
				ladder.FormatDuration(max), clock)})
	}
	if problems != nil {
		return &approval.ValidationError{Problems: problems}
	}
	return nil
}

// Options configure a Service.
type Options struct {
	Store   store.Store
	Tenants Tenants
	Clock   Clock
	Logger  *slog.Logger
	// Surfaces perform outbox rows by the surface a target names; Fallback
	// takes every other target: the log surface, so a bot without chat tokens
	// still shows its cards.
	Surfaces map[string]Surface
	Fallback Surface
	Metrics  *Metrics
	// Backend takes decisions and argument look-ups; nil: cards only.
	Backend Backend
	// Mailer sends escalation email; nil without SMTP.
	Mailer Mailer
	// Pusher sends push notices to members' push addresses; nil: none
	// goes (each is recorded as failed).
	Pusher Pusher
	// Links makes members' decision links for mail; nil: no decision page.
	Links DecisionLinks
	// TypedConfirm: the job backend takes a typed confirmation with a
	// decision (backend.features: typed_confirmation), so the decision
	// page may approve a call that needs one.
	TypedConfirm bool
	// Grants: the job backend takes grants with decisions (backend.features:
	// grants), so tenants that enable them are offered "Approve and allow…".
	Grants bool
	// Turns: the job backend takes a turn's calls in one batch decision
	// (docs/protocol.md#turns), so a turn of several calls is shown on one
	// card with Deny all and Approve all N.
	Turns bool
	// Questions: the job backend sends its agents' questions and takes
	// their answers (docs/protocol.md#questions); without it a question
	// is refused at ingest.
	Questions bool
	// Worker names this process in outbox claims; default a random id.
	Worker string
	// Lease is how long this replica's claim on a due approval holds
	// (default 1 minute); the outbox worker takes its own in WorkerOptions.
	Lease time.Duration
	// FingerprintSecrets key the fingerprints a stored revision keeps of the
	// values its card hides, so a reask can say such a value changed: the
	// first keys new revisions, the rest are still compared after a rotation;
	// the store never holds them (see docs/design.md#reask-fingerprints).
	FingerprintSecrets [][]byte
}

// Service ingests events and runs the outbox.
type Service struct {
	store    store.Store
	tenants  Tenants
	clock    Clock
	timers   TimerClock // the outbox's idle poll
	log      *slog.Logger
	surfaces map[string]Surface
	fallback Surface
	metrics  *Metrics
	backend  Backend
	mailer   Mailer
	pusher   Pusher
	links    DecisionLinks
	// typedConfirm is Options.TypedConfirm.
	typedConfirm bool
	// grants is Options.Grants.
	grants bool
	// questions is Options.Questions.
	questions bool
	// turnCards is Options.Turns.
	turnCards bool
	worker    string
	lease     time.Duration
	wake      map[string]chan struct{} // one per lane
	due       map[string]*dueTimes     // one per lane: when rows this process enqueued for later fall due
	seq       atomic.Uint64
	group     groupCommit // decisions' answers, committed together
	ingests   groupCommit // events, committed together (ingest.go)
	turns     turns       // an approval's events, one at a time (ingest.go)
	alone     bool        // the store is this process's alone (store.Alone)
	receipts  receipts    // the clicks received and not yet answered
	// fingerprints: Options.FingerprintSecrets.
	fingerprints [][]byte
	// contentWork, when set (by tests only), is told each time an event's
	// content is worked on, with the context that work runs in.
	contentWork func(context.Context)
}

// New checks the options and builds a Service.
func New(o Options) (*Service, error) {
	if o.Store == nil || o.Tenants == nil || o.Clock == nil {
		return nil, errors.New("threads: Store, Tenants and Clock are required")
	}
	if o.Fallback == nil {
		return nil, errors.New("threads: a Fallback surface is required")
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.Worker == "" {
		o.Worker = "w-" + randomHex(6)
	}
	if o.Lease <= 0 {
		o.Lease = tickLease
	}
	s := &Service{store: o.Store, tenants: o.Tenants, clock: o.Clock, timers: timerClock(o.Clock), log: o.Logger,
		surfaces: o.Surfaces, fallback: o.Fallback, metrics: o.Metrics, worker: o.Worker, backend: o.Backend, mailer: o.Mailer, pusher: o.Pusher, links: o.Links, typedConfirm: o.TypedConfirm, grants: o.Grants, turnCards: o.Turns, questions: o.Questions, lease: o.Lease,
		wake: wakes(), due: dues(), alone: alone(o.Store), fingerprints: copySecrets(o.FingerprintSecrets),
		ingests: groupCommit{savepoints: true, ordered: true, ownContext: true, sizes: o.Metrics.IngestGroup}}
	if !s.oneWriter() {
		// Writers run side by side: a few groups at once keep round trips
		// overlapping while each shares its commit.
		s.ingests.leaders = ingestLeaders
	}
	return s, nil
}

// copySecrets copies secrets out of the caller's reach.
func copySecrets(secrets [][]byte) [][]byte {
	if len(secrets) == 0 {
		return nil
	}
	out := make([][]byte, len(secrets))
	for i, s := range secrets {
		out[i] = bytes.Clone(s)
	}
	return out
}

// IngestRequest is one verified, parsed event.
type IngestRequest struct {
	Event      *approval.Event
	BodySHA256 string // of the raw body, to tell a redelivery from a reused id
}

// IngestResult says what became of an event.
type IngestResult struct {
	Duplicate bool   // accepted before; nothing done now
	Ignored   string // accepted, but it changed nothing (why)
}

// Frozen is what an approval is given when it arrives and keeps: its
// ladder, deadline and where its card goes. A config reload never changes it.
type Frozen struct {
	Plan ladder.Plan `json:"plan"` // the schedule, naming its ladder
	Post []string    `json:"post"`
	// Restricted: the request's content is walled off from shared places,
	// so thread replies there say only what the card may say.
	Restricted bool `json:"restricted,omitempty"`
	// Reasks are what each reask changed, oldest first (noteReask).
	Reasks []approval.Reask `json:"reasks,omitempty"`
	// Zone is the tenant's time zone at request, for card times; "" is UTC.
	Zone string `json:"zone,omitempty"`
	// TurnCards are the places (targets) where this call, one of a turn
	// shown on one card, posts the turn card: the call that claimed the
	// place first (turn_card.go).
	TurnCards []string `json:"turn_cards,omitempty"`
	// Quorum is how many people must approve, and who may; nil when one
	// approval decides the call. It is stored in the row's votes column,
	// not the plan (votes).
	Quorum *FrozenQuorum `json:"-"`
	// Effect is the call's effect label for the figures (EffectLabel);
	// "" in a plan frozen before they were kept.
	Effect string `json:"effect,omitempty"`
	// Question: the approval is an agent's question (question.go),
	// answered rather than decided.
	Question bool `json:"question,omitempty"`
}

// Outbox row kinds.
const (
	KindPostCard = "post_card"
	KindEditCard = "edit_card"
	KindReply    = "reply"
	KindNotice   = "notice"
)

// mootKey prefixes the coalesce key of a row that closing its approval
// makes moot (a ladder step's reply, DM, post or mail): the close drops
// those still waiting (store.Tx.OutboxDrop). The key is the row's own, so
// it coalesces with nothing; the rows keep their kinds, so a replica of the
// previous release performs them as it always did.
const mootKey = "moot:"

func mootRow(approvalID, rowID string) string { return mootKey + approvalID + ":" + rowID }

// rowPayload is the outbox payload of every kind.
type rowPayload struct {
	Revision int    `json:"revision,omitempty"`
	InThread bool   `json:"in_thread,omitempty"` // post the card under the target's first card
	Text     string `json:"text,omitempty"`
	// Thread is the kind of a thread reply (templates.ThreadKind).
	Thread   string        `json:"thread,omitempty"`
	Mentions []string      `json:"mentions,omitempty"` // an escalation's people (targets)
	Waited   time.Duration `json:"waited,omitempty"`   // how long the card has waited
	Step     int           `json:"step,omitempty"`     // the ladder step that made the row (1-based)
	// Mail is an email row's kind (MailReask, …); "" for a step's escalation.
	Mail string `json:"mail,omitempty"`
	// By is who pressed Escalate now; "" when the ladder's time fired it.
	By string `json:"by,omitempty"`
	// Lines: a notice's text is lines the bot composed (a digest), each
	// kept on its own line (NoticeRequest.Lines).
	Lines bool `json:"lines,omitempty"`
}

// Ingest applies one event: it records the event id, moves the approval
// (approval.Transition) and enqueues the effects in one transaction, shared
// with other events arriving at the same time (see
// docs/design.md#ingesting-in-two-parts), and returns after the commit. A
// request whose times are out of bounds (checkTimes) is refused first.
func (s *Service) Ingest(ctx context.Context, req IngestRequest) (IngestResult, error) {
	ev := req.Event
	tenant, ok := s.tenants.Tenant(ev.Tenant)
	if !ok {
		return IngestResult{}, fmt.Errorf("%w: %q", ErrUnknownTenant, ev.Tenant)
	}
	now := s.clock.Now()
	if err := checkTimes(tenant, ev, now); err != nil {
		return IngestResult{}, err
	}
	if err := s.checkQuestionEvent(ev, nil); err != nil {
		return IngestResult{}, err
	}
	// One event of an approval at a time in this process, so that the
	// work prepared before the transaction is the work it needs.
	if id := ev.ApprovalID(); id != "" {
		done, err := s.turns.take(ctx, id)
		if err != nil {
			return IngestResult{}, err
		}
		defer done()
	}
	p, err := s.prepare(ctx, tenant, ev, now)
	if err != nil {
		return IngestResult{}, err
	}
	var res IngestResult
	enqueued := 0
	err = s.runGrouped(ctx, &s.ingests, &commitCall{key: ev.ApprovalID(), weight: p.weight(), fn: func(ctx context.Context, tx store.Tx) error {
		res, enqueued = IngestResult{}, 0
		ins, err := tx.EventInsert(ctx, store.EventInsertParams{
			ID: ev.ID, Tenant: ev.Tenant, Type: string(ev.Type), BodySHA256: req.BodySHA256,
			ApprovalID: ev.ApprovalID(), ReceivedAt: now,
		})
		if err != nil {
			return fmt.Errorf("record event %s: %w", ev.ID, err)
		}
		if !ins.Inserted {
			if ins.BodySHA256 != req.BodySHA256 {
				return fmt.Errorf("%w: %s", ErrIDReused, ev.ID)
			}
			res.Duplicate = true
			return nil
		}
		n, ignored, err := s.apply(ctx, tx, p)
		res.Ignored, enqueued = ignored, n
		return err
	}})
	if err != nil {
		return IngestResult{}, err
	}
	if ev.Type == approval.EventAutoGranted && !res.Duplicate {
		s.metrics.AutoGranted.WithLabelValues(ev.Tenant).Inc() // counted once, after the commit
	}
	if p.closed != nil && !res.Duplicate {
		s.count(ctx, p.closed)
	}
	if enqueued > 0 {
		s.Wake()
	}
	return res, nil
}

// apply runs the transition in the ingest transaction, which only reads
// and writes rows (p holds the content work), and returns the rows enqueued.
func (s *Service) apply(ctx context.Context, tx store.Tx, p *prepared) (int, string, error) {
	tenant, ev, now := p.tenant, p.ev, p.now
	p.closed = nil
	if ev.Type == approval.EventAutoGranted {
		// A use of a grant a person made here is posted where they made
		// it; any other unattended call goes to the audit channel.
		if n, ok, err := s.grantUse(ctx, tx, ev, now); ok || err != nil {
			return n, "", err
		}
		return s.enqueueAudit(ctx, tx, tenant, ev, now)
	}
	id := ev.ApprovalID()
	row, err := tx.ApprovalGetForUpdate(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound):
		row = nil
	case err != nil:
		return 0, "", fmt.Errorf("read approval %s: %w", id, err)
	case row.Tenant != ev.Tenant:
		return 0, "", fmt.Errorf("%w: approval %s", ErrForeignApproval, id)
	case row.Pruned():
		// A tombstone keeps only that the approval closed: no event
		// changes it again (a late re-check would bring back a record
		// with no plan or revision), and none posts a card.
		return 0, "already " + row.State + ", and pruned: its content is gone", nil
	}
	if err := s.checkQuestionEvent(ev, row); err != nil {
		return 0, "", err
	}
	cur, err := recordOf(row)
	if err != nil {
		return 0, "", err
	}
	work := p.work
	if ev.Approval != nil && (work == nil || !work.base.same(baseOf(row))) {
		// Another replica changed the approval since prepare read it, or it
		// was not worked on then: the work is done here, from the row.
		s.metrics.IngestReworked.Inc()
		if work, err = s.workOn(ctx, row, ev); err != nil {
			return 0, "", err
		}
	}
	result := approval.Transition(cur, ev, now)
	var frozen *Frozen // set when this event froze the approval's plan
	if result.Changed {
		var next *store.Approval
		next, frozen = s.nextRow(row, result.Next, p.request, now)
		if err := tx.ApprovalUpsert(ctx, next); err != nil {
			return 0, "", fmt.Errorf("store approval %s: %w", id, err)
		}
		row = next
		if p.closed, err = s.closingOf(ctx, tx, cur, row, nil); err != nil {
			return 0, "", err
		}
		if p.closed != nil {
			if err := tx.OutcomeClose(ctx, p.closed.params); err != nil {
				return 0, "", err
			}
		}
	}
	if a := ev.Approval; a != nil && result.Changed {
		// The revision keeps what the bot shows, never the request as sent
		// (workOn); deduplication compares the digest of the body received.
		if err := tx.RevisionInsert(ctx, &store.Revision{ApprovalID: id, Revision: a.Revision, Body: work.body, CreatedAt: now}); err != nil {
			return 0, "", fmt.Errorf("store revision %d of %s: %w", a.Revision, id, err)
		}
		if row.Seen {
			ladderName := ""
			if frozen != nil {
				ladderName = frozen.Plan.Ladder
			}
			if err := tx.OutcomeRequest(ctx, outcomeRequest(&work.kept.Approval, ladderName)); err != nil {
				return 0, "", err
			}
		}
		if work.reask != nil {
			if frozen, err = s.noteReask(ctx, tx, row, *work.reask, &work.kept.Approval); err != nil {
				return 0, "", err
			}
		}
	}
	if len(result.Effects) == 0 || row == nil {
		return 0, result.Ignored, nil
	}
	if frozen == nil {
		fz, err := frozenOf(row)
		if err != nil {
			return 0, "", err
		}
		frozen = &fz
	}
	rows, err := s.rowsFor(ctx, tx, row, *frozen, ev.Type, result.Effects, now)
	if err != nil {
		return 0, "", err
	}
	var before approval.State // no record before: nothing was mailed
	if cur != nil {
		before = cur.State
	}
	ended, err := s.closingMail(ctx, tx, before, row, now)
	if err != nil {
		return 0, "", err
	}
	rows = append(rows, ended...)
	if len(rows) > 0 {
		if err := s.insert(ctx, tx, rows); err != nil {
			return 0, "", fmt.Errorf("enqueue effects of %s: %w", id, err)
		}
	}
	return len(rows), result.Ignored, nil
}

// stickyRestriction is a reask's request as the bot keeps and shows it:
// once any revision of an approval was content-restricted (its frozen
// Restricted), every later one is too, whatever the reask says, so that
// neither its card nor a reply in a shared thread shows what an earlier
// revision walled off. a itself is left as received.
func stickyRestriction(row *store.Approval, cur *approval.Record, a *approval.Approval) (*approval.Approval, error) {
	if a.ContentRestricted() || cur == nil || !cur.Seen || a.Revision <= cur.Revision || row == nil || row.Plan == nil {
		return a, nil
	}
	fz, err := frozenOf(row)
	if err != nil || !fz.Restricted {
		return a, err
	}
	walled := *a
	walled.Content.Restricted = true
	return &walled, nil
}

// nextRow builds the stored row for a record. The ladder, deadline and
// targets are frozen the first time the request itself is seen; that
// Frozen is returned too (nil when it was frozen before).
func (s *Service) nextRow(prev *store.Approval, rec approval.Record, req *request, now time.Time) (*store.Approval, *Frozen) {
	row := &store.Approval{ID: rec.ID, Tenant: rec.Tenant, CreatedAt: now}
	if prev != nil {
		cp := *prev
		row = &cp
	}
	// A ladder claim (ClaimedBy/Until) is the tick's to release: it is
	// kept, so a replica that died holding it is taken over after its lease.
	row.Revision, row.State, row.Seen, row.UpdatedAt = rec.Revision, string(rec.State), rec.Seen, now
	var frozen *Frozen
	if req != nil && row.Plan == nil {
		fz := req.frozen
		frozen = &fz
		s.frozeFor(rec, req.a, &fz)
		row.Plan, _ = json.Marshal(fz) // plain data: cannot fail
		row.Votes = votes{Rule: fz.Quorum}.marshal()
		row.Function = req.function
		row.RequestedAt = req.a.RequestedAt
		row.DeadlineAt = fz.Plan.Deadline
		row.StepsDone = 0
		row.NextStepAt = time.Time{}
		if st, ok := fz.Plan.Upcoming(0); ok {
			row.NextStepAt = st.At
		}
	}
	if rec.Decision != nil {
		d := *rec.Decision
		if d.Answer != "" {
			// An answer's words are kept only for a question whose
			// content is not restricted: a restricted question's answer
			// is its content holders' alone, and a tombstone's (answered
			// before it was asked) may be one. Who answered, and a
			// choice's number, are kept.
			if fz, ok := questionPlan(row); !ok || fz.Restricted {
				d.Answer = ""
			}
		}
		row.Decision, _ = json.Marshal(d) // a struct of strings and a time: cannot fail
	}
	if rec.State != approval.StatePending {
		// Nothing more runs for a closed approval: no step, no deadline.
		row.NextStepAt, row.DeadlineAt = time.Time{}, time.Time{}
	}
	return row, frozen
}

// Freeze gives a new approval its ladder, deadline, card targets and the
// zone its cards print times in, from the tenant's configuration as it is
// now (bot preview freezes a card's plan the same way).
func Freeze(tenant *tenant.Tenant, a *approval.Approval) Frozen {
	lad := tenant.LadderFor(a.Call.Function, a.Ladder)
	var override time.Duration
	if t, ok := tenant.Tool(a.Call.Function); ok {
		override = t.Deadline
	}
	deadline := ladder.Deadline(a.Deadline, a.RequestedAt, override, tenant.Deadline)
	fz := Frozen{Plan: lad.Plan(a.RequestedAt, deadline), Restricted: a.ContentRestricted()}
	for _, t := range tenant.PostFor(a.Call.Function) {
		fz.Post = append(fz.Post, t.String())
	}
	if tenant.Zone != nil && tenant.Zone != time.UTC {
		fz.Zone = tenant.Zone.String()
	}
	fz.Quorum = freezeQuorum(tenant, a)
	fz.Effect = EffectLabel(a)
	questionFrozen(&fz, a)
	return fz
}

// rowsFor turns a transition's effects into outbox rows, for the row's
// frozen plan and targets fz.
func (s *Service) rowsFor(ctx context.Context, tx store.Tx, row *store.Approval, fz Frozen, typ approval.EventType, effects []approval.Effect, now time.Time) ([]store.OutboxInsertParams, error) {
	if row != nil && approval.State(row.State).Final() {
		// A closed approval drops the escalations still waiting (mootKey)
		// rather than spend each channel's budget on them.
		if err := tx.OutboxDrop(ctx, store.OutboxDropParams{ApprovalID: row.ID, KeyPrefix: mootKey, Now: now}); err != nil {
			return nil, err
		}
	}
	if len(effects) == 0 || row == nil {
		return nil, nil
	}
	var err error
	var posts []*store.Post
	needPosts := false
	for _, e := range effects {
		needPosts = needPosts || e.Kind == approval.EffectEditCards || e.Kind == approval.EffectSupersede ||
			(e.Kind == approval.EffectThreadReply && typ == approval.EventRecheckFailed)
	}
	if needPosts {
		if posts, err = tx.PostList(ctx, row.ID); err != nil {
			return nil, fmt.Errorf("list posts of %s: %w", row.ID, err)
		}
	}
	var rows []store.OutboxInsertParams
	add := func(kind, target, coalesce string, p rowPayload) {
		body, _ := json.Marshal(p) // plain data: cannot fail
		rows = append(rows, store.OutboxInsertParams{
			ID: s.newID(now), Tenant: row.Tenant, ApprovalID: row.ID, Kind: kind, Target: target,
			CoalesceKey: coalesce, Payload: body, NotBefore: now, Now: now,
		})
	}
	for _, e := range effects {
		switch e.Kind {
		case approval.EffectPostCard:
			for _, t := range fz.Post {
				add(KindPostCard, t, "", rowPayload{Revision: row.Revision})
			}
		case approval.EffectSupersede:
			// Every copy is marked superseded; the new card goes in the same
			// threads, the ladder's DMs and step posts included.
			targets := slices.Clone(fz.Post)
			for _, p := range posts {
				if isMailPost(p) || shownSuperseded(posts, p) {
					continue // a card an earlier reask superseded says so already
				}
				add(KindEditCard, p.Target, editKey(p), rowPayload{Revision: p.Revision})
				if !slices.Contains(targets, p.Target) {
					targets = append(targets, p.Target)
				}
			}
			for _, t := range targets {
				add(KindPostCard, t, "", rowPayload{Revision: row.Revision, InThread: true})
			}
			// Whoever was mailed the old revision is mailed the new one; the
			// old mail's links die with its revision.
			rows = append(rows, s.mailRows(posts, row, MailReask, now)...)
		case approval.EffectEditCards:
			for _, p := range posts {
				if isMailPost(p) || shownSuperseded(posts, p) {
					continue // mail is sent, never edited; a superseded card shows no state
				}
				add(KindEditCard, p.Target, editKey(p), rowPayload{Revision: p.Revision})
			}
		case approval.EffectThreadReply:
			kind := threadKind(typ)
			text := e.Text
			if fz.Restricted {
				text = restrictedReply(kind)
				if fz.Question {
					text = restrictedAnswerReply
				}
			}
			var approver *approverOnChat
			if kind == templates.ThreadRecheckRefused {
				approver = s.approverOf(row, fz)
			}
			for _, t := range fz.Post {
				add(KindReply, t, "", rowPayload{Text: text, Thread: string(kind), Mentions: approver.on(t)})
			}
			for _, t := range approver.direct() {
				// Beneath their own copy (a step's DM), edited to the
				// refusal; with none, the card itself goes to them.
				if slices.ContainsFunc(posts, func(p *store.Post) bool { return p.Target == t }) {
					add(KindReply, t, "", rowPayload{Text: text, Thread: string(kind)})
				} else {
					add(KindPostCard, t, "", rowPayload{Revision: row.Revision})
				}
			}
		}
	}
	return rows, nil
}

// approverOnChat is the member who approved a call, by their user on each
// chat surface its cards are on, and the surface they decided on.
type approverOnChat struct {
	users   map[string]string // surface name: target (slack:U…, discord:user:…)
	decided string            // the chat surface of the decision; "" when not one
}

// approverOf finds who approved row, so a re-check's refusal reaches them
// as more than a card edit: the member the decision's actor names now; nil
// when nobody the bot knows, or a member on none of the cards' surfaces.
func (s *Service) approverOf(row *store.Approval, fz Frozen) *approverOnChat {
	var d approval.Decision
	if len(row.Decision) == 0 || json.Unmarshal(row.Decision, &d) != nil || d.Actor == "" {
		return nil
	}
	tenant, ok := s.tenants.Tenant(row.Tenant)
	if !ok {
		return nil
	}
	m, ok := tenant.MemberByUser(d.Actor)
	if !ok {
		return nil
	}
	a := &approverOnChat{users: map[string]string{}}
	for _, surface := range postSurfaces(fz) {
		c, chat := ladder.ChatSurfaceNamed(surface)
		if id := m.ChatID(surface); chat && id != "" {
			a.users[surface] = c.User(id).String()
		}
	}
	if len(a.users) == 0 {
		return nil
	}
	if _, ok := a.users[d.Via]; ok {
		a.decided = d.Via
	}
	return a
}

// on is whom a reply in the thread of the card at target mentions.
func (a *approverOnChat) on(target string) []string {
	if a == nil {
		return nil
	}
	t, err := ladder.ParseTarget(target)
	if err != nil {
		return nil
	}
	if u, ok := a.users[t.Surface()]; ok {
		return []string{u}
	}
	return nil
}

// direct is where the approver is told in their own messages: on the
// surface they decided on, or, when the decision came from elsewhere (the
// console, the decision page), on each surface the cards are on.
func (a *approverOnChat) direct() []string {
	if a == nil {
		return nil
	}
	if a.decided != "" {
		return []string{a.users[a.decided]}
	}
	out := make([]string, 0, len(a.users))
	for _, u := range a.users {
		out = append(out, u)
	}
	slices.Sort(out)
	return out
}

// editEveryCopy is the edits that show every copy as the approval stands.
func (s *Service) editEveryCopy(ctx context.Context, tx store.Tx, row *store.Approval, now time.Time) ([]store.OutboxInsertParams, error) {
	fz, err := frozenOf(row)
	if err != nil {
		return nil, err
	}
	return s.rowsFor(ctx, tx, row, fz, "", []approval.Effect{{Kind: approval.EffectEditCards}}, now)
}

// restrictedReply is what a shared thread is told of a content-restricted
// approval: the backend's message, a re-check's reason or a call's summary
// can carry the content the card keeps out of shared places.
func restrictedReply(kind templates.ThreadKind) string {
	switch kind {
	case templates.ThreadOutcome:
		return "The call finished; what it did is shown only in the console (this call's content is restricted)."
	case templates.ThreadRecheckRefused:
		return "the console shows why (this call's content is restricted)."
	}
	return "The job backend recorded the decision; its message is shown only in the console (this call's content is restricted)."
}

// restrictedAnswerReply is a restricted question's thread reply when it
// closes: who answered and what stay in the console.
const restrictedAnswerReply = "The question is closed; who answered and what is shown only in the console (this question is restricted)."

// threadKind names the kind of reply an event's message is.
func threadKind(typ approval.EventType) templates.ThreadKind {
	switch typ {
	case approval.EventRecheckFailed:
		return templates.ThreadRecheckRefused
	case approval.EventCallFinished:
		return templates.ThreadOutcome
	}
	return templates.ThreadBackendMessage
}

func editKey(p *store.Post) string {
	return "edit:" + p.ApprovalID + ":" + p.Target + ":" + strconv.Itoa(p.Revision)
}

// enqueueAudit posts a one-line notice of an unattended call (or a warning,
// Notice) to the tenant's audit channel; without one it is only counted.
func (s *Service) enqueueAudit(ctx context.Context, tx store.Tx, tenant *tenant.Tenant, ev *approval.Event, now time.Time) (int, string, error) {
	ag := ev.AutoGranted
	if tenant.Audit == nil {
		return 0, "no audit channel configured: counted only", nil
	}
	text := ag.Notice()
	body, _ := json.Marshal(rowPayload{Text: text}) // plain data: cannot fail
	err := s.insert(ctx, tx, []store.OutboxInsertParams{{
		ID: s.newID(now), Tenant: ev.Tenant, Kind: KindNotice, Target: tenant.Audit.String(),
		Payload: body, NotBefore: now, Now: now,
	}})
	if err != nil {
		return 0, "", fmt.Errorf("enqueue audit notice: %w", err)
	}
	return 1, "", nil
}

// recordOf reads the domain record back from a stored row.
func recordOf(row *store.Approval) (*approval.Record, error) {
	if row == nil {
		return nil, nil
	}
	rec := &approval.Record{ID: row.ID, Tenant: row.Tenant, Revision: row.Revision,
		State: approval.State(row.State), Seen: row.Seen}
	if len(row.Decision) > 0 {
		rec.Decision = &approval.Decision{}
		if err := json.Unmarshal(row.Decision, rec.Decision); err != nil {
			return nil, fmt.Errorf("decode decision of %s: %w", row.ID, err)
		}
	}
	return rec, nil
}

// frozenOf reads what row froze at request: the plan, and the quorum
// rule from the votes column. A votes column the bot cannot read is an
// error, never a call without a quorum.
func frozenOf(row *store.Approval) (Frozen, error) {
	var fz Frozen
	if len(row.Plan) > 0 {
		if err := json.Unmarshal(row.Plan, &fz); err != nil {
			return fz, fmt.Errorf("decode plan of %s: %w", row.ID, err)
		}
	}
	if len(row.Votes) > 0 {
		var v votes
		if err := json.Unmarshal(row.Votes, &v); err != nil {
			return fz, fmt.Errorf("decode the quorum of %s: %w", row.ID, err)
		}
		fz.Quorum = v.Rule
	}
	return fz, nil
}

// newID makes a TEXT id that sorts by creation time and is unique across
// replicas: milliseconds, a per-process sequence and random bits.
func (s *Service) newID(now time.Time) string {
	return fmt.Sprintf("%012x-%06x-%s", now.UnixMilli(), s.seq.Add(1)&0xffffff, randomHex(4))
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b)
}

func wakes() map[string]chan struct{} {
	w := map[string]chan struct{}{}
	for _, lane := range Lanes {
		w[lane] = make(chan struct{}, 1)
	}
	return w
}

// Wake tells the outbox worker's lanes that rows were committed.
func (s *Service) Wake() {
	for _, ch := range s.wake {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}
