// Package store is the bot's durable state: the events it accepted (for
// deduplication), approvals and their revisions, where each card was posted,
// and the outbox of every effect outside the process. Store is the
// contract; sqlite (embedded, the default) and postgres implement it and
// both pass the conformance suite in storetest.
//
// Times cross this boundary as time.Time and are stored as Unix
// milliseconds taken from the caller's clock: SQL never reads its own
// clock, so tests with a fake clock see the same order as production.
// They come back in UTC, truncated to the millisecond; the zero time means
// "unset" and comes back zero. Ids are TEXT made by the caller.
//
// Migrate (migrate.go) applies the embedded schema, one DDL for both
// databases.
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
	// ErrTxBroken: a savepoint could not be set or undone (Tx.Savepoint),
	// so the transaction holds writes nobody can account for: the caller
	// must end it with an error, never commit it.
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
	// ApprovalClaimDue claims pending approvals whose next step or deadline
	// is due, through an index, with a lease (so a tick costs O(due)):
	// NextStepAt ≤ Now or DeadlineAt ≤ Now, and ClaimedBy empty or
	// ClaimedUntil ≤ Now. It sets ClaimedBy to Worker and ClaimedUntil to
	// Now+Lease and returns them earliest due first (ties by id). The lease
	// ends when the ladder writes the approval back (ApprovalUpsert) with
	// ClaimedBy cleared, or when it lapses.
	ApprovalClaimDue(ctx context.Context, p ApprovalClaimDueParams) ([]*Approval, error)
	// RevisionGet reads one revision (ErrNotFound when absent).
	RevisionGet(ctx context.Context, approvalID string, revision int) (*Revision, error)
	// PostList lists an approval's posts by revision, then CreatedAt,
	// then Target; none is an empty list, not ErrNotFound.
	PostList(ctx context.Context, approvalID string) ([]*Post, error)

	// OutboxClaim leases up to Limit due rows of Lane (every lane when
	// Lane is empty) to Worker until Now+Lease and returns them in claim
	// order: highest Priority first, then oldest due, then id. A row is due
	// when it is pending, NextAttemptAt ≤ Now, and it is unclaimed or its
	// lease has lapsed. Each row is held by one worker at a time. Worker
	// must name one claiming loop: the results below are accepted from the
	// worker the row is claimed by. A row whose id is in Exclude is never
	// returned, even when its lease has lapsed.
	//
	// Pacing happens here, not in the workers: no worker sleeps for a rate
	// limit. A row with a PaceKey whose key is not ready at Now (its
	// ready_at is later: held by OutboxRetry's Hold, or spent by an earlier
	// claim) is passed over, whatever Pace says. When Pace gives the key a
	// budget (every > 0), the row is claimed only if the key has room at
	// Now under GCRA, and takes one slot: a key gives burst rows at once,
	// then one per every (docs/design.md#pacing-outbox-claims). Rows of a
	// key without room are skipped (neither claimed nor changed) and rows
	// of other keys behind them in claim order are claimed instead. Claims
	// that run at once, in one process or in replicas sharing one database,
	// share each key's budget: together they never take more than it allows.
	//
	// A claim may take its rows in a few short transactions (rounds): a
	// round that skips rows for want of room leaves those keys not ready,
	// and the next reads past them. When a later round fails, the rows the
	// earlier ones claimed are returned without the error (they are leased
	// to Worker already); the next claim meets the failure again.
	OutboxClaim(ctx context.Context, p OutboxClaimParams) ([]*OutboxRow, error)
	// OutboxComplete marks a claimed row done and, in the same
	// transaction, records the post it made (when Post is set; a zero
	// CreatedAt takes Now; a post for the same approval, target and
	// revision is replaced, keeping its CreatedAt).
	//
	// OutboxComplete, OutboxRetry and OutboxDead act only while the row is
	// pending and still claimed by Worker; otherwise (taken over after the
	// lease lapsed, released by a retry, already finished) they change
	// nothing and return ErrLeaseLost, and ErrNotFound for an unknown id.
	// A lapsed lease nobody has taken over is still held.
	OutboxComplete(ctx context.Context, p OutboxCompleteParams) error
	// OutboxRetry releases a claimed row to run again at NextAttemptAt,
	// counting the attempt and keeping the error. With a Hold (the
	// platform refused the row's pace key for a while: a 429's
	// Retry-After), the row's pace key is held in the same transaction:
	// its ready_at becomes max(ready_at, Hold) and its tat moves by as
	// much, so no claim of any worker or replica takes that key's rows
	// before Hold. Afterwards a key that had been paced resumes at its
	// steady pace (one row at Hold, then one per every), its burst
	// refilling from there; a key never paced before starts afresh, with
	// its burst. A row without a PaceKey holds nothing. On ErrLeaseLost
	// the hold is not applied either.
	OutboxRetry(ctx context.Context, p OutboxRetryParams) error
	// OutboxDead ends a claimed row that can never succeed (a permanent
	// rejection), keeping the error and counting the attempt; it is not
	// retried.
	OutboxDead(ctx context.Context, p OutboxDeadParams) error
	// OutboxStats counts what waits, in total and by lane, for /metrics.
	OutboxStats(ctx context.Context, now time.Time) (OutboxStats, error)

	// Retention. Each call below is one short transaction over at most
	// Limit rows, found through an index in age order, and returns how
	// many rows it changed: a caller prunes a backlog by calling again
	// until fewer than Limit come back, and writers (ingest, clicks) wait
	// for one batch at most. They are idempotent, and replicas may run
	// them at once: on PostgreSQL each passes over the rows another
	// transaction holds.

	// OutboxPrune deletes up to Limit finished rows (done or dead) whose
	// DoneAt is at or before Before. Pending rows are never deleted.
	OutboxPrune(ctx context.Context, p OutboxPruneParams) (int, error)
	// OutboxScrub rewrites the payloads of up to Limit rows of Kind,
	// whatever their state, whose Target starts with TargetPrefix, whose
	// CreatedAt is after CreatedAfter (zero: any) and at or before
	// CreatedBefore, and whose payload contains Contains, oldest first:
	// each is given to Scrub, and what it returns is stored (nil leaves
	// the row as it is and does not count). It is how a chat handle that
	// has expired leaves the rows that carried it.
	OutboxScrub(ctx context.Context, p OutboxScrubParams) (int, error)
	// ApprovalScrub rewrites up to Limit decisions in flight (Deciding)
	// whose approval last changed at or before UpdatedBefore and that
	// contain Contains, oldest change first, with Scrub as for
	// OutboxScrub. It changes nothing else of the row (not UpdatedAt).
	ApprovalScrub(ctx context.Context, p ApprovalScrubParams) (int, error)
	// ApprovalPrune reduces up to Limit closed approvals that last
	// changed at or before Before, with no decision in flight and no
	// pending outbox row, to their tombstones, oldest change first: their
	// revisions and posts are deleted and Decision, Plan, LadderState and
	// Function are cleared; ID, Tenant, Revision, State, Seen, RequestedAt, CreatedAt
	// and UpdatedAt stay. A tombstone still answers ApprovalGet and
	// ApprovalGetForUpdate, as a closed approval (Pruned reports it), so
	// a redelivered or re-sent request for it posts nothing. Its events
	// stay too (EventPrune). A later write that gives it a decision again
	// (a re-check) makes it a closed approval to prune once more.
	ApprovalPrune(ctx context.Context, p ApprovalPruneParams) (int, error)
	// ApprovalForget deletes up to Limit tombstones that last changed at
	// or before Before and that no event received after Before is about
	// (a request sent again keeps its tombstone), oldest first. After
	// that the approval's id is unknown: a request for it would be a new
	// approval.
	ApprovalForget(ctx context.Context, p ApprovalForgetParams) (int, error)
	// EventPrune deletes up to Limit event ids received at or before
	// Before whose approval the store no longer holds (forgotten, or
	// never stored: an auto_granted notice, an event for an approval it
	// did not know), oldest first. The events of an approval it holds,
	// tombstones included, stay as long as the approval.
	EventPrune(ctx context.Context, p EventPruneParams) (int, error)

	// ReplaySeen records a signed request a chat platform sent (Key) as
	// seen until Until, and reports whether it was held already at Now: a
	// replay. A key held until Now or earlier counts as unseen (and is
	// taken over); each call also forgets a few such keys. Of calls with
	// one key at once, in one process or in replicas sharing the
	// database, exactly one reports it unseen.
	ReplaySeen(ctx context.Context, p ReplaySeenParams) (seenBefore bool, err error)

	// Ping checks that the database answers a query.
	Ping(ctx context.Context) error
	// WriteCheck checks that the store takes writes now: it commits one
	// write, on the path every writer takes (SQLite's one writer,
	// PostgreSQL's durable commit), to a table of one row that it updates
	// in place, so the database does not grow however often it runs, and
	// the row's lock is held for that one statement. It fails when a
	// writer would: a file another process holds locked (once ctx ends,
	// rather than after the busy timeout), a disk with no room, a
	// read-only database (a PostgreSQL standby), an unreachable or closed
	// store (those are ErrUnavailable). /readyz calls it with a short
	// deadline.
	WriteCheck(ctx context.Context, now time.Time) error
	Close() error
}

// Tx is the part of the store used inside a transaction. A write whose
// result the caller does not read (ApprovalUpsert, RevisionInsert,
// OutboxInsert) may be sent with the transaction's next read or at commit,
// so its error may come from that call or from InTx itself; either way the
// transaction rolls back.
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
	// when an unclaimed, unfinished row with the same key waits already:
	// that one performs the latest state when it runs, and takes the new
	// row's Priority when that is higher (a state change coalescing into a
	// cosmetic edit keeps its place). A claimed one (in flight, or its
	// lease lapsed but not taken over) may have read an older state, so
	// the new row is added and runs after it.
	OutboxInsert(ctx context.Context, rows []OutboxInsertParams) error
	// OutboxComplete marks a claimed row done in this transaction, with
	// the same rules as Store.OutboxComplete (ErrLeaseLost unless Worker
	// still holds it), so the effect's result and the row's end commit
	// together: one commit where there were two. It records no post (Post
	// must be nil).
	OutboxComplete(ctx context.Context, p OutboxCompleteParams) error
	// OutboxDrop ends ApprovalID's pending rows whose CoalesceKey starts
	// with KeyPrefix and that no worker holds, as done: effects that
	// closing the approval made moot (an escalation nobody need read),
	// dropped before they spend a channel's budget. A row a worker holds
	// is left to it.
	OutboxDrop(ctx context.Context, p OutboxDropParams) error
	// Savepoint runs fn inside a savepoint, so that one caller's work in a
	// transaction shared by several (a group commit) fails alone: when fn
	// fails, everything it wrote is undone, the transaction goes on as it
	// stood before, and fn's error is returned as it is. A write fn
	// queued is sent before the savepoint ends, so its error is fn's. When
	// the savepoint itself cannot be set, undone or released, the error
	// wraps ErrTxBroken and the transaction must not commit.
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
	// Plan is the ladder and deadline frozen at request (JSON), nil for a
	// tombstone.
	Plan        []byte
	StepsDone   int       // ladder steps already fired or skipped
	NextStepAt  time.Time // zero: no step left, or not pending
	DeadlineAt  time.Time // zero: not pending
	RequestedAt time.Time
	CreatedAt   time.Time
	UpdatedAt   time.Time
	// Deciding is a decision in flight (JSON, owned by threads): set from a
	// click or the deadline until the backend answers, so two clicks at
	// once send one decision. nil when none is in flight.
	Deciding []byte
	// ClaimedBy and ClaimedUntil lease the approval to one ladder worker.
	ClaimedBy    string
	ClaimedUntil time.Time
	// LadderState is what people did to the ladder while the approval
	// waits (JSON, owned by threads): who said they are looking, and the
	// steps fired at once. nil when nobody did either.
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

// OneWriter is a store whose transactions that write run one at a time
// (SQLite): there, concurrent callers gain by sharing one transaction and
// one commit. A store without it (PostgreSQL) runs writers side by side,
// each holding its rows' locks only for its own work, and flushes the
// commits of concurrent transactions together itself.
type OneWriter interface {
	OneWriter() bool
}

// ErrCommit wraps a failure of a transaction's COMMIT: whether it took
// effect is unknown, and a caller that must tell a person the truth reads
// again. Any other error of InTx means nothing was committed.
var ErrCommit = errors.New("the commit's outcome is unknown")

// ForPerson marks ctx as a person's own path: a click being checked,
// recorded and answered, a decision page's record. A store that pools
// connections keeps some for it that background work (the outbox's
// lanes, the ladder's ticks) cannot take, so a click does not wait for a
// connection behind them.
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

// Lanes of the outbox. Each lane is claimed by workers of its own
// (OutboxClaimParams.Lane), so one kind of effect never waits behind
// another's backlog. A lane is any name; these are the ones migration 0003
// files the rows it finds under.
const (
	LaneChat    = "chat"    // posts, edits, replies and DMs; the default
	LaneBackend = "backend" // decisions sent to the job backend
	LaneMail    = "mail"    // email
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
	// Lane restricts the claim to one lane's rows; empty claims from
	// every lane (draining, tests), ordered by priority, then due time,
	// across lanes.
	Lane string
	// Pace is the budget of a pace key: one row per every, with bursts of
	// up to burst (< 1 counts as 1); every is counted in whole
	// milliseconds, rounded up. nil, or every ≤ 0 for a key, leaves that
	// key unpaced (a held key is still passed over). It is called while
	// the claim runs, so it must be quick and must not use the store.
	Pace func(key string) (every time.Duration, burst int)
	// Exclude lists ids of rows the caller has in flight; they are never
	// returned, so a clock jumping past their lease cannot make the
	// caller claim its own rows a second time.
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
	// Hold, when set, holds the row's pace key until then (see
	// OutboxRetry): the platform answered 429 with a Retry-After for the
	// whole key, not just this row. Zero holds nothing.
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
	// Lanes holds the same figures for each lane with pending rows; nil
	// when no row is pending. Pending and OldestAge above are their total
	// and their largest.
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
	// Contains must occur in the payload (a plain substring, no LIKE
	// wildcards % or _): the mark of what Scrub removes, so rows already
	// scrubbed are not read again.
	Contains string
	Limit    int
	// Scrub returns the new payload, or nil to leave the row. It runs
	// inside the store's transaction: it must be quick and must not use
	// the store.
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
