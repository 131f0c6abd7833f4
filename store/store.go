// Package store is the bot's durable state: accepted events (for
// deduplication), approvals and their revisions, where each card was
// posted, and the outbox of every effect outside the process. Store is the
// contract; sqlite (the default) and postgres implement it and pass
// storetest.
//
// Times are stored as Unix milliseconds from the caller's clock (SQL never
// reads its own, so a fake clock orders as production does) and come back
// in UTC at millisecond precision; the zero time means unset. Ids are made
// by the caller.
package store

import (
	"context"
	"errors"
	"time"
)

// Sentinel errors; implementations translate their drivers' errors into
// these at one boundary.
var (
	// ErrNotFound: no row with that key.
	ErrNotFound = errors.New("store: not found")
	// ErrLeaseLost: the claim on an outbox row expired and another worker
	// holds it now; the caller's result is dropped.
	ErrLeaseLost = errors.New("store: lease lost")
	// ErrUnavailable: the database cannot be reached or cannot commit.
	ErrUnavailable = errors.New("store: unavailable")
	// ErrTxBroken: a savepoint could not be set or undone, so the
	// transaction must end with an error, never commit.
	ErrTxBroken = errors.New("store: transaction broken")
)

// Store is one database. Methods outside a transaction are single
// statements (or their own short transaction).
type Store interface {
	// InTx runs fn in one transaction that serialises with every other
	// writer of the same approval; fn's error rolls it back and is
	// returned as it is. A panic in fn rolls back and keeps panicking.
	InTx(ctx context.Context, fn func(ctx context.Context, tx Tx) error) error

	// ApprovalGet reads one approval (ErrNotFound when absent).
	ApprovalGet(ctx context.Context, id string) (*Approval, error)
	// ApprovalListPending lists a tenant's pending approvals, oldest
	// request first (ties by id).
	ApprovalListPending(ctx context.Context, p ApprovalListPendingParams) ([]*Approval, error)
	// ApprovalClaimDue leases to Worker until Now+Lease the pending
	// approvals whose next step or deadline is due and that nobody holds,
	// earliest due first (ties by id), through an index: a tick costs
	// O(due). The lease ends when ApprovalUpsert clears ClaimedBy, or lapses.
	ApprovalClaimDue(ctx context.Context, p ApprovalClaimDueParams) ([]*Approval, error)
	// RevisionGet reads one revision (ErrNotFound when absent).
	RevisionGet(ctx context.Context, approvalID string, revision int) (*Revision, error)
	// PostList lists an approval's posts by revision, then CreatedAt,
	// then Target; none is an empty list, not ErrNotFound.
	PostList(ctx context.Context, approvalID string) ([]*Post, error)

	// OutboxClaim leases up to Limit due rows of Lane (every lane when
	// empty) to Worker until Now+Lease, in claim order: highest Priority,
	// then oldest due, then id. A row is due when pending, NextAttemptAt ≤
	// Now, and unclaimed or its lease lapsed; ids in Exclude are never
	// returned. Worker names one claiming loop, the only one whose results
	// are accepted. Rows of a pace key not ready, or without room under
	// Pace, are passed over; a claim may run in rounds, and returns the
	// rows of earlier rounds without a later one's error
	// (docs/design.md#what-a-claim-promises).
	OutboxClaim(ctx context.Context, p OutboxClaimParams) ([]*OutboxRow, error)
	// OutboxComplete marks a claimed row done and, in the same
	// transaction, records Post when set (a zero CreatedAt takes Now; a post
	// for the same approval, target and revision is replaced).
	//
	// OutboxComplete, OutboxRetry and OutboxDead act only while the row is
	// pending and claimed by Worker (a lapsed lease nobody took over still
	// is); otherwise ErrLeaseLost, or ErrNotFound for an unknown id.
	OutboxComplete(ctx context.Context, p OutboxCompleteParams) error
	// OutboxRetry releases a claimed row to run again at NextAttemptAt,
	// counting the attempt and keeping the error. A Hold holds the row's
	// pace key until then, in the same transaction, for every claim
	// (docs/design.md#holding-a-pace-key).
	OutboxRetry(ctx context.Context, p OutboxRetryParams) error
	// OutboxDead ends a claimed row that can never succeed, keeping the
	// error and counting the attempt.
	OutboxDead(ctx context.Context, p OutboxDeadParams) error
	// OutboxStats counts what waits, in total and by lane, for /metrics.
	OutboxStats(ctx context.Context, now time.Time) (OutboxStats, error)

	// Retention: each call below is one short transaction over at most
	// Limit rows in age order, returning how many it changed; a caller
	// calls again until fewer than Limit come back. They are idempotent and
	// replicas may run them at once.

	// OutboxPrune deletes up to Limit finished rows (done or dead) whose
	// DoneAt is at or before Before. Pending rows are never deleted.
	OutboxPrune(ctx context.Context, p OutboxPruneParams) (int, error)
	// OutboxScrub passes to Scrub, oldest first, the payloads of up to
	// Limit rows of Kind in any state whose Target starts with
	// TargetPrefix, created in (CreatedAfter, CreatedBefore], that contain
	// Contains, and stores what it returns (nil: left, not counted): how an
	// expired chat handle leaves the rows that carried it.
	OutboxScrub(ctx context.Context, p OutboxScrubParams) (int, error)
	// ApprovalScrub rewrites, as OutboxScrub does, up to Limit Deciding
	// values containing Contains of approvals last changed at or before
	// UpdatedBefore; nothing else of the row changes, not UpdatedAt.
	ApprovalScrub(ctx context.Context, p ApprovalScrubParams) (int, error)
	// ApprovalPrune reduces to tombstones, oldest change first, up to Limit
	// closed approvals last changed at or before Before with no decision in
	// flight and no pending outbox row: revisions and posts go, and so do
	// Decision, Plan, LadderState, Votes and Function. A tombstone still reads as
	// a closed approval, so a re-sent request posts nothing
	// (docs/design.md#tombstones).
	ApprovalPrune(ctx context.Context, p ApprovalPruneParams) (int, error)
	// ApprovalForget deletes up to Limit tombstones last changed at or
	// before Before that no later event is about, oldest first; a request
	// for the id is then a new approval.
	ApprovalForget(ctx context.Context, p ApprovalForgetParams) (int, error)
	// EventPrune deletes up to Limit event ids received at or before
	// Before whose approval the store does not hold, oldest first; an
	// approval's events, a tombstone's included, stay as long as it does.
	EventPrune(ctx context.Context, p EventPruneParams) (int, error)

	// ReplaySeen records Key, a signed request a chat platform sent, as
	// seen until Until, and reports whether it was held already at Now (a
	// replay). Of calls with one key at once, in any replica, exactly one
	// reports it unseen.
	ReplaySeen(ctx context.Context, p ReplaySeenParams) (seenBefore bool, err error)

	// Passkeys (passkey.go).

	// PasskeyAdd enrols one credential; ErrExists when its id is held.
	PasskeyAdd(ctx context.Context, p PasskeyAddParams) error
	// PasskeyList lists a member's passkeys (every member's of the tenant
	// when Member is empty), oldest enrolment first, then by id; none is
	// an empty list.
	PasskeyList(ctx context.Context, p PasskeyListParams) ([]*Passkey, error)
	// PasskeyRemove deletes one member's passkey; ErrNotFound when the
	// member holds no passkey with that id.
	PasskeyRemove(ctx context.Context, p PasskeyRemoveParams) error
	// PasskeyUse records a verified assertion: the new signature count
	// and the time, only when the count moves forward (or stays 0, for an
	// authenticator that counts nothing). Otherwise nothing changes and
	// the error is ErrSignCount; ErrNotFound when the member holds no
	// passkey with that id. Of two uses with one count at once, in any
	// replica, one succeeds.
	PasskeyUse(ctx context.Context, p PasskeyUseParams) error
	// PasskeyChallengeAdd keeps a new challenge (CheckChallenge) until it
	// expires, and forgets a few that have expired at its CreatedAt.
	PasskeyChallengeAdd(ctx context.Context, c *PasskeyChallenge) error
	// PasskeyChallengeTake marks a challenge used at Now and returns it as
	// it was: UsedAt zero for the one call that took it, set for every
	// later one (a replay). Of calls with one id at once, in any replica,
	// exactly one finds it unused. ErrNotFound when absent or forgotten.
	// Expiry is the caller's to judge: a taken challenge past its time is
	// still used up.
	PasskeyChallengeTake(ctx context.Context, p PasskeyChallengeTakeParams) (*PasskeyChallenge, error)

	// Outcomes (outcome.go).

	// OutcomeList lists decided outcomes in a window, oldest decision
	// first, then by approval id, one page of at most Limit rows; none is
	// an empty list. It reads one index range: its cost is the rows it
	// returns.
	OutcomeList(ctx context.Context, p OutcomeListParams) ([]*Outcome, error)
	// OutcomeRepeated reports whether ApprovalID's approved call was
	// approved before within Window (OutcomeRepeatedParams); false for an
	// approval with no approved outcome.
	OutcomeRepeated(ctx context.Context, p OutcomeRepeatedParams) (bool, error)
	// OutcomePrune deletes up to Limit decided outcomes decided at or
	// before Before, oldest first, as the other retention calls do.
	OutcomePrune(ctx context.Context, p OutcomePruneParams) (int, error)

	// Grants (grant.go).

	// GrantGet reads one grant (ErrNotFound when absent).
	GrantGet(ctx context.Context, id string) (*Grant, error)
	// GrantList lists a tenant's grants in the states asked, soonest
	// expiry first, then by id; none is an empty list.
	GrantList(ctx context.Context, p GrantListParams) ([]*Grant, error)
	// GrantListExpired lists, across tenants, live grants whose time ran
	// out at Now, soonest first, through an index.
	GrantListExpired(ctx context.Context, p GrantListExpiredParams) ([]*Grant, error)

	// Ping checks that the database answers a query.
	Ping(ctx context.Context) error
	// WriteCheck commits one write to a one-row table, on the path every
	// writer takes, and fails when a writer would: a lock held elsewhere, a
	// full disk, a read-only standby, an unreachable store (ErrUnavailable).
	// /readyz calls it with a short deadline.
	WriteCheck(ctx context.Context, now time.Time) error
	Close() error
}

// Tx is the part of the store used inside a transaction. A write whose
// result is not read may be sent with the next read or at commit, so its
// error may come from that call or from InTx; either way it rolls back.
type Tx interface {
	// EventInsert records an event id once. When the id exists it
	// returns Inserted false and the stored body digest, so the caller can
	// tell a redelivery from a different event reusing the id.
	EventInsert(ctx context.Context, p EventInsertParams) (EventInsertResult, error)
	// ApprovalGetForUpdate reads an approval and locks it until the
	// transaction ends (ErrNotFound when absent).
	ApprovalGetForUpdate(ctx context.Context, id string) (*Approval, error)
	// ApprovalUpsert writes the whole row.
	ApprovalUpsert(ctx context.Context, a *Approval) error
	// RevisionInsert keeps one revision's request body; an existing
	// (approval, revision) is left as it was.
	RevisionInsert(ctx context.Context, r *Revision) error
	PostList(ctx context.Context, approvalID string) ([]*Post, error)
	// OutboxInsert enqueues rows. A row with a CoalesceKey is not added
	// while an unclaimed pending row with that key waits: that one performs
	// the latest state and takes the higher Priority. A claimed one may have
	// read an older state, so the new row is added to run after it.
	OutboxInsert(ctx context.Context, rows []OutboxInsertParams) error
	// OutboxComplete is Store.OutboxComplete in this transaction, so the
	// effect's result and the row's end commit together. Post must be nil.
	OutboxComplete(ctx context.Context, p OutboxCompleteParams) error
	// OutboxDrop ends as done ApprovalID's pending rows under KeyPrefix
	// that no worker holds: effects closing the approval made moot, dropped
	// before they spend a channel's budget.
	OutboxDrop(ctx context.Context, p OutboxDropParams) error
	// OutcomeRequest records what a revision's call is (a later revision
	// replaces an earlier one's; a closed row keeps its close).
	OutcomeRequest(ctx context.Context, p OutcomeRequestParams) error
	// OutcomeClose records how an approval closed; a row decided already
	// (an approval a re-check refused) takes the new State alone. No row
	// (an approval requested before outcomes were kept, or a tombstone)
	// changes nothing.
	OutcomeClose(ctx context.Context, p OutcomeCloseParams) error

	// GrantInsert keeps a new grant (CheckGrant); ErrExists when its id
	// is held, which leaves the stored one as it was.
	GrantInsert(ctx context.Context, g *Grant) error
	// GrantGetForUpdate reads a grant and locks it until the transaction
	// ends (ErrNotFound when absent).
	GrantGetForUpdate(ctx context.Context, id string) (*Grant, error)
	// GrantUpdate writes what may change of a grant: its state, uses,
	// last use, revocation and whether its end was posted.
	GrantUpdate(ctx context.Context, g *Grant) error
	// Savepoint runs fn inside a savepoint, so one caller's work in a
	// group commit fails alone: fn's writes (queued ones included) are
	// undone and its error returned as it is. When the savepoint cannot be
	// set, undone or released, the error wraps ErrTxBroken.
	Savepoint(ctx context.Context, fn func(ctx context.Context) error) error
}

// OutboxDropParams names the moot rows of one approval.
type OutboxDropParams struct {
	ApprovalID string
	KeyPrefix  string // required: the caller's mark of its moot rows
	Now        time.Time
}

// Approval is the stored state of one approval. The request itself lives
// in Revision rows.
type Approval struct {
	ID       string
	Tenant   string
	Revision int    // the highest revision held
	State    string // approval.State
	Seen     bool   // false for a tombstone (decided before requested)
	Function string
	// Decision is the JSON of approval.Decision, nil while pending.
	Decision []byte
	// Plan is the ladder and deadline frozen at request (JSON).
	Plan        []byte
	StepsDone   int       // ladder steps already fired or skipped
	NextStepAt  time.Time // zero: no step left, or not pending
	DeadlineAt  time.Time // zero: not pending
	RequestedAt time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Deciding is a decision in flight (JSON, owned by threads) until the
	// backend answers, so two clicks at once send one decision.
	Deciding []byte
	// ClaimedBy and ClaimedUntil lease the approval to one ladder worker.
	ClaimedBy    string
	ClaimedUntil time.Time
	// Votes are the approvals given towards the approval's quorum (JSON,
	// owned by threads), recorded under the approval's lock.
	Votes []byte
	// LadderState is what people did to the ladder while it waits (JSON,
	// owned by threads): who is looking, steps fired at once.
	LadderState []byte
}

// Pruned reports whether a is a tombstone left by ApprovalPrune: closed,
// with its decision, plan, revisions and posts gone.
func (a *Approval) Pruned() bool {
	return a.State != "" && a.State != statePending && a.Decision == nil
}

// statePending is approval.StatePending (pending_test.go pins it); the
// store knows no other state by name.
const statePending = "pending"

// Revision is one revision's request, as parsed (approval.Approval JSON).
type Revision struct {
	ApprovalID string
	Revision   int
	Body       []byte
	CreatedAt  time.Time
}

// Post is one copy of a card on a surface, so later edits and thread
// replies find it.
type Post struct {
	ApprovalID string
	Target     string // where it went, as configured: slack:C…, dm:slack:U…, log
	Revision   int    // the revision the card showed
	Channel    string // the surface's channel (a DM channel for DMs)
	Ref        string // the surface's message reference (Slack ts, Discord id)
	ThreadRef  string // the thread replies go to; empty means Ref
	CreatedAt  time.Time
}

// EventInsertParams records one accepted event.
type EventInsertParams struct {
	ID         string
	Tenant     string
	Type       string
	BodySHA256 string
	ApprovalID string
	ReceivedAt time.Time
}

// EventInsertResult says whether the id was new.
type EventInsertResult struct {
	Inserted   bool
	BodySHA256 string // the stored digest when not inserted
}

// OneWriter is a store whose writing transactions run one at a time
// (SQLite), where concurrent callers gain by sharing one transaction.
type OneWriter interface {
	OneWriter() bool
}

// ErrCommit wraps a failure of a transaction's COMMIT: whether it took
// effect is unknown, and a caller that must tell a person the truth reads
// again. Any other error of InTx means nothing was committed.
var ErrCommit = errors.New("the commit's outcome is unknown")

// ForPerson marks ctx as a person's own path (a click, a decision page's
// record), for which a pooling store keeps connections background work
// cannot take.
func ForPerson(ctx context.Context) context.Context {
	return context.WithValue(ctx, personKey{}, true)
}

// IsPerson reports whether ctx is a person's own path (ForPerson).
func IsPerson(ctx context.Context) bool {
	v, _ := ctx.Value(personKey{}).(bool)
	return v
}

type personKey struct{}

// Alone is a store no other process uses while it is open (SQLite as
// `bot serve` opens it, holding its lock file): every click that can
// still be recorded in it was received by this process.
type Alone interface {
	Alone() bool
}

// ApprovalListPendingParams selects pending approvals of a tenant.
type ApprovalListPendingParams struct {
	Tenant string
	Limit  int // ≤ 0: all
}

// ApprovalClaimDueParams leases due approvals to one ladder worker.
type ApprovalClaimDueParams struct {
	Worker string
	Now    time.Time
	Lease  time.Duration
	Limit  int
}

// Lanes of the outbox, each claimed by workers of its own so one kind of
// effect never waits behind another's backlog.
const (
	LaneChat    = "chat"    // posts, edits, replies and DMs; the default
	LaneBackend = "backend" // decisions sent to the job backend
	LaneMail    = "mail"    // email
	LanePush    = "push"    // push notices to members' phones
)

// OutboxInsertParams is one effect to perform.
type OutboxInsertParams struct {
	ID          string
	Tenant      string
	ApprovalID  string
	Kind        string
	Target      string
	CoalesceKey string // empty: never coalesced
	Payload     []byte
	NotBefore   time.Time // first attempt; usually now; zero means Now
	Now         time.Time
	// Lane is the workers that perform the row; empty means LaneChat.
	Lane string
	// Priority orders the rows of a lane: higher runs first, before rows
	// that have been due longer. 0 is the default.
	Priority int
	// PaceKey names the budget the row spends when performed (for
	// instance one per Slack or Discord channel); empty: not paced.
	PaceKey string
}

// OutboxRow is one effect as stored.
type OutboxRow struct {
	ID            string
	Tenant        string
	ApprovalID    string
	Kind          string
	Target        string
	CoalesceKey   string
	Payload       []byte
	Attempts      int
	NextAttemptAt time.Time
	ClaimedBy     string
	ClaimedUntil  time.Time
	LastError     string // the last retry's or the dead row's error
	CreatedAt     time.Time
	Lane          string // never empty
	Priority      int
	PaceKey       string // empty: not paced
}

// OutboxClaimParams leases due rows to one worker.
type OutboxClaimParams struct {
	Worker string
	Now    time.Time
	Lease  time.Duration
	Limit  int
	// Lane restricts the claim to one lane; empty claims from every lane.
	Lane string
	// Pace is a key's budget: one row per every (whole ms, rounded up),
	// bursts of up to burst; nil or every ≤ 0 leaves it unpaced. It runs
	// inside the claim: quick, and never using the store.
	Pace func(key string) (every time.Duration, burst int)
	// Exclude lists the caller's rows in flight, never returned, so a
	// clock jumping past their lease cannot claim them twice.
	Exclude []string
}

// OutboxCompleteParams finishes a claimed row.
type OutboxCompleteParams struct {
	ID     string
	Worker string
	Now    time.Time
	Post   *Post // the card this row posted, recorded with it; nil for none
}

// OutboxRetryParams schedules a claimed row again.
type OutboxRetryParams struct {
	ID            string
	Worker        string
	Now           time.Time
	NextAttemptAt time.Time
	Error         string
	// Attempt counts the try (false for a wait that is not a failure, such
	// as a reply whose card is not posted yet).
	Attempt bool
	// Hold holds the row's pace key until then (a 429's Retry-After for
	// the whole key); zero holds nothing.
	Hold time.Time
}

// OutboxDeadParams ends a claimed row for good.
type OutboxDeadParams struct {
	ID     string
	Worker string
	Now    time.Time
	Error  string
}

// OutboxStats is the outbox's depth for /metrics.
type OutboxStats struct {
	Pending   int           // not done, not dead (rows in flight included)
	OldestAge time.Duration // age of the oldest pending row's due time; 0 when none
	Dead      int
	// Lanes holds the same figures per lane with pending rows; the ones
	// above are their total and largest.
	Lanes map[string]LaneStats
}

// LaneStats is one lane's depth.
type LaneStats struct {
	Pending   int           // the lane's pending rows, in flight included
	OldestAge time.Duration // how long its oldest due row has been due; 0 when none is due
}

// The retention calls' parameters. A Limit ≤ 0, or a zero Before
// (CreatedBefore, UpdatedBefore), changes nothing.

// OutboxPruneParams selects finished outbox rows to delete.
type OutboxPruneParams struct {
	Before time.Time // finished (DoneAt) at or before
	Limit  int
}

// OutboxScrubParams selects outbox payloads to rewrite.
type OutboxScrubParams struct {
	Kind          string
	TargetPrefix  string // empty: every target
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// Contains must occur in the payload (no LIKE wildcards): the mark of
	// what Scrub removes, so scrubbed rows are not read again.
	Contains string
	Limit    int
	// Scrub returns the new payload, or nil to leave the row. It runs in
	// the store's transaction: quick, and never using the store.
	Scrub func(payload []byte) []byte
}

// ApprovalScrubParams selects decisions in flight to rewrite.
type ApprovalScrubParams struct {
	UpdatedBefore time.Time
	Contains      string // as for OutboxScrubParams
	Limit         int
	// Scrub returns the new Deciding, or nil to leave the row (so it can
	// rewrite a decision in flight, never end one), as for OutboxScrub.
	Scrub func(deciding []byte) []byte
}

// ApprovalPruneParams selects closed approvals to reduce to tombstones.
type ApprovalPruneParams struct {
	Before time.Time // last changed (UpdatedAt) at or before
	Limit  int
}

// ApprovalForgetParams selects tombstones to delete.
type ApprovalForgetParams struct {
	Before time.Time // last changed (UpdatedAt) at or before
	Limit  int
}

// EventPruneParams selects event ids to delete.
type EventPruneParams struct {
	Before time.Time // received at or before
	Limit  int
}
