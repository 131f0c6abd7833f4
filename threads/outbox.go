package threads

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"approvalsbot/approval"
	"approvalsbot/ladder"
	"approvalsbot/store"
	"approvalsbot/templates"
)

// WorkerOptions tune the outbox worker; zero values take the defaults.
type WorkerOptions struct {
	Concurrency int // chat rows performed at once (default 8)
	// Backend: decisions performed at once (default 32); each waits on the
	// job backend, not the CPU.
	Backend int
	Mail    int           // emails sent at once (default 2)
	Push    int           // push notices sent at once (default 2)
	Batch   int           // rows claimed per round (default 32)
	Lease   time.Duration // how long a claim holds (default 2m)
	Poll    time.Duration // idle poll, the safety net behind Wake (default 1s)
	// PacedPoll is how often the chat lane looks again for paced rows whose
	// budget has room (default 100ms): how late such a row may go.
	PacedPoll time.Duration
	// PerformTimeout bounds one surface call (default 30s, within the lease).
	PerformTimeout time.Duration
	// StopGrace bounds how long the rows in flight when ctx ends may still
	// take (default PerformTimeout); then they are cancelled and go back to
	// the outbox, due at once, no attempt counted (see
	// docs/design.md#stopping-the-outbox).
	StopGrace time.Duration
}

// Retry policy of outbox rows.
const (
	retryBase   = 2 * time.Second
	retryMax    = 5 * time.Minute
	maxAttempts = 25 // about a day and a half at retryMax: then the row is dead
	// orphanAfter: how long a reply waits for its card to be posted.
	orphanAfter = time.Hour
	// notYet is the wait for a row whose card is still being posted.
	notYet = 2 * time.Second
	// recordTimeout bounds recording a row's result.
	recordTimeout = 10 * time.Second
	// decisionTimeout bounds one decision row: the backend client retries for
	// a minute within it (docs/protocol.md); a shorter lease shortens it.
	decisionTimeout = 90 * time.Second
)

func (o WorkerOptions) withDefaults() WorkerOptions {
	if o.Concurrency <= 0 {
		o.Concurrency = 8
	}
	if o.Backend <= 0 {
		o.Backend = 32
	}
	if o.Mail <= 0 {
		o.Mail = 2
	}
	if o.Push <= 0 {
		o.Push = 2
	}
	if o.Batch <= 0 {
		o.Batch = 32
	}
	if o.Lease <= 0 {
		o.Lease = 2 * time.Minute
	}
	if o.Poll <= 0 {
		o.Poll = time.Second
	}
	if o.PacedPoll <= 0 {
		o.PacedPoll = 100 * time.Millisecond
	}
	if o.PerformTimeout <= 0 {
		// Within the lease, so a slow surface call is not performed twice.
		o.PerformTimeout = min(30*time.Second, o.Lease/2)
	}
	if o.StopGrace <= 0 {
		o.StopGrace = o.PerformTimeout
	}
	return o
}

// errStopping cancels the rows still in flight once StopGrace is over:
// what it cuts short goes back to the outbox, not counted as a failure.
var errStopping = errors.New("the outbox is stopping")

// stopping reports whether ctx ended because the outbox is stopping.
func stopping(ctx context.Context) bool {
	return errors.Is(context.Cause(ctx), errStopping)
}

// RunOutbox performs due rows, each lane with workers of its own, until
// ctx ends. Then it claims no more and returns once the rows in flight are
// recorded, or once StopGrace is over and they are put back.
func (s *Service) RunOutbox(ctx context.Context, o WorkerOptions) error {
	o = o.withDefaults()
	// Rows are performed under work, which outlives ctx by StopGrace.
	work, abort := context.WithCancelCause(context.WithoutCancel(ctx))
	defer abort(nil)
	var wg sync.WaitGroup
	for _, lane := range Lanes {
		workers, poll := o.Concurrency, o.PacedPoll
		switch lane {
		case LaneBackend:
			workers, poll = o.Backend, o.Poll
		case LaneMail:
			workers, poll = o.Mail, o.Poll
		case LanePush:
			workers, poll = o.Push, o.Poll
		}
		wg.Go(func() { s.runLane(ctx, work, lane, workers, poll, o) })
	}
	lanesDone := make(chan struct{})
	go func() { wg.Wait(); close(lanesDone) }()
	<-ctx.Done()
	grace := time.NewTimer(o.StopGrace)
	defer grace.Stop()
	select {
	case <-lanesDone:
	case <-grace.C:
		s.log.Info("stopping: cancelling the outbox rows still in flight; they stay in the outbox for the next start",
			"grace", o.StopGrace.String())
		abort(errStopping)
		<-lanesDone
	}
	return nil
}

// runLane claims one lane's due rows and performs them under work, which
// outlives ctx by the grace. It claims only as many rows as it has free
// workers, so no claimed row waits out its lease (another replica would
// then perform it too), and never one it has in flight, so a clock that
// jumps past the lease does not make it claim its own rows again.
func (s *Service) runLane(ctx, work context.Context, lane string, workers int, poll time.Duration, o WorkerOptions) {
	finished := make(chan string, workers)
	inflight := map[string]bool{}
	var wg sync.WaitGroup
	defer wg.Wait()
	timer := s.timers.NewTimer(0)
	defer timer.Stop()
	reap := func() {
		for {
			select {
			case id := <-finished:
				delete(inflight, id)
			default:
				return
			}
		}
	}
	for {
		reap()
		free := min(workers-len(inflight), o.Batch)
		claimed := 0
		if ctx.Err() == nil && free > 0 {
			rows, err := s.store.OutboxClaim(ctx, store.OutboxClaimParams{
				Worker: s.worker, Now: s.clock.Now(), Lease: o.Lease, Limit: free,
				Lane: lane, Pace: s.pace, Exclude: slices.Collect(maps.Keys(inflight))})
			if err != nil && ctx.Err() == nil {
				s.log.Error("claim outbox rows", "lane", lane, "err", err)
			}
			claimed = len(rows)
			for _, row := range rows {
				inflight[row.ID] = true
				wg.Go(func() {
					defer func() { finished <- row.ID }()
					timeout := o.PerformTimeout
					if row.Kind == KindDecision {
						// Within the lease, so no other replica sends it too.
						timeout = min(decisionTimeout, o.Lease*3/4)
					}
					pctx, cancel := context.WithTimeout(work, timeout)
					defer cancel()
					s.perform(pctx, row, work.Done())
				})
			}
		}
		if free > 0 && claimed > 0 {
			// More may be due: claim again while claims find rows (a paced
			// claim may stop short of its free workers).
			continue
		}
		wait := poll
		if until, ok := s.due[lane].next(s.clock.Now()); ok {
			if until <= 0 {
				continue // rows enqueued for later are due: claim them
			}
			// Not sooner than dueGrain: a clock that stands still must not
			// make the lane claim in a tight loop.
			wait = min(wait, max(until, dueGrain))
		}
		if !timer.Stop() {
			// A tick that fired unheard (the first, of 0) stays buffered on
			// some clocks: drop it, or the lane wakes for nothing.
			select {
			case <-timer.Chan():
			default:
			}
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return
		case <-s.wake[lane]:
		case id := <-finished:
			delete(inflight, id)
		case <-timer.Chan():
		}
	}
}

// DrainOutbox performs every row due now until none is left: RunOutbox
// without the waiting, for tests.
func (s *Service) DrainOutbox(ctx context.Context) (int, error) {
	done := 0
	for {
		rows, err := s.store.OutboxClaim(ctx, store.OutboxClaimParams{
			Worker: s.worker, Now: s.clock.Now(), Lease: 2 * time.Minute, Limit: 64})
		if err != nil {
			return done, err
		}
		if len(rows) == 0 {
			return done, nil
		}
		for _, row := range rows {
			s.perform(ctx, row, nil)
			done++
		}
	}
}

// perform runs one row and records its result. stop closes when the
// outbox stops and cuts rows in flight short (nil: never).
func (s *Service) perform(ctx context.Context, row *store.OutboxRow, stop <-chan struct{}) {
	surfaceName, surface := s.surfaceFor(row.Target)
	log := s.log.With("outbox_id", row.ID, "kind", row.Kind, "tenant", row.Tenant,
		"approval_id", row.ApprovalID, "target", row.Target)
	post, shown, wait, err := s.do(ctx, surface, row)
	if errors.Is(err, errSettled) {
		// A decision row ended with its answer's transaction (settle).
		s.metrics.Deliveries.WithLabelValues(surfaceName, row.Kind, resultOK).Inc()
		return
	}
	now := s.clock.Now()
	pctx := ctx
	// The surface call may have used up ctx: the result is recorded all the
	// same, or the effect would be performed again after the lease.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
	defer cancel()
	result := resultOK
	switch {
	case wait:
		err = s.store.OutboxRetry(ctx, store.OutboxRetryParams{ID: row.ID, Worker: s.worker, Now: now,
			NextAttemptAt: now.Add(notYet), Error: "waiting for the card to be posted"})
		result = resultWait
	case err == nil:
		record := post // only a new card (or a mail) is recorded
		if row.Kind == KindEditCard {
			record = nil
		}
		// The effect happened: its record is retried here, not left to the
		// lease, or it would happen again (a card posted twice, both live).
		err = s.retryRecord(ctx, row, log, stop, func(ctx context.Context) error {
			return s.store.OutboxComplete(ctx, store.OutboxCompleteParams{ID: row.ID, Worker: s.worker, Now: now, Post: record})
		})
		if err == nil && post != nil && shown != nil {
			// A card shown from a state that moved on since is edited again.
			s.followUp(ctx, row, post, shown)
		}
		if err == nil && post != nil && row.Kind == KindEmail {
			// A mail recorded after its approval closed missed the close's
			// outcome mails: its recipient gets one.
			s.mailedAfterClose(ctx, row, log)
		}
	case stopping(pctx):
		// The stop cut the effect short: the row goes back, due now.
		log.Info("outbox row stopped in flight; it stays in the outbox for the next start", "err", err.Error())
		err = s.store.OutboxRetry(ctx, store.OutboxRetryParams{ID: row.ID, Worker: s.worker, Now: now,
			NextAttemptAt: now, Error: "stopped in flight: " + err.Error()})
		result = resultStopped
	default:
		result = s.fail(ctx, log, row, err, now)
		err = nil
	}
	if errors.Is(err, store.ErrLeaseLost) {
		result = resultLeaseLost
		log.Warn("outbox lease lost: another worker holds the row now")
	} else if err != nil {
		result = resultUnrecorded
		log.Error("record outbox result", "err", err)
	}
	s.metrics.Deliveries.WithLabelValues(surfaceName, row.Kind, result).Inc()
}

// Waits of retryRecord.
const (
	recordRetryFirst = 50 * time.Millisecond
	recordRetryMax   = 2 * time.Second
	recordAttempts   = 20 // about half a minute of waits
)

// retryRecord runs record until it succeeds, the lease is lost or about
// to lapse (a later record would be refused anyway), or stop closes (a
// restart may perform the effect again, as after a crash). It waits out a
// store that failed (a full disk, a lost connection), never a rate limit.
func (s *Service) retryRecord(ctx context.Context, row *store.OutboxRow, log *slog.Logger, stop <-chan struct{}, record func(context.Context) error) error {
	wait := recordRetryFirst
	err := record(ctx)
	for attempt := 1; err != nil && !errors.Is(err, store.ErrLeaseLost); attempt++ {
		if attempt >= recordAttempts || row.ClaimedUntil.IsZero() || row.ClaimedUntil.Sub(s.clock.Now()) <= wait {
			return err
		}
		log.Warn("record a performed effect; trying again", "err", err, "attempt", attempt, "retry_in", wait.String())
		select { // a store that failed, never a rate limit
		case <-time.After(wait):
		case <-stop:
			return err
		}
		wait = min(wait*2, recordRetryMax)
		// Each try has its own time: the first try's may be spent.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordTimeout)
		err = record(rctx)
		cancel()
	}
	return err
}

// fail records a failed attempt: dead when permanent or out of attempts,
// else retried after the surface's wait or a growing backoff.
func (s *Service) fail(ctx context.Context, log *slog.Logger, row *store.OutboxRow, cause error, now time.Time) string {
	permanent, after := classify(cause)
	msg := cause.Error()
	// A decision row here is the deadline's: it retries until answered.
	if permanent || (after <= 0 && row.Attempts+1 >= maxAttempts && row.Kind != KindDecision) {
		log.Error("outbox row failed for good", "err", msg, "attempts", row.Attempts+1)
		if err := s.store.OutboxDead(ctx, store.OutboxDeadParams{ID: row.ID, Worker: s.worker, Now: now, Error: msg}); err != nil {
			log.Error("record dead outbox row", "err", err)
		}
		return resultDead
	}
	// A surface's own wait (a 429's Retry-After) is not a failure: it counts
	// no attempt, and it holds the row's whole budget (its channel, for every
	// replica), not only this row.
	counted := after <= 0
	var hold time.Time
	if counted {
		after = backoff(row.Attempts)
	} else if row.PaceKey != "" {
		hold = now.Add(after)
	}
	log.Warn("outbox row failed; will retry", "err", msg, "attempts", row.Attempts+1, "retry_in", after.String())
	if err := s.store.OutboxRetry(ctx, store.OutboxRetryParams{ID: row.ID, Worker: s.worker, Now: now,
		NextAttemptAt: now.Add(after), Error: msg, Attempt: counted, Hold: hold}); err != nil {
		log.Error("record outbox retry", "err", err)
	}
	return resultRetry
}

// backoff grows from 2 s to 5 min, ±20% jitter so failures spread out.
func backoff(attempts int) time.Duration {
	d := retryBase << min(attempts, 16)
	if d > retryMax || d <= 0 {
		d = retryMax
	}
	jitter := time.Duration(rand.Int64N(int64(d)/5*2+1)) - d/5
	return d + jitter
}

// do performs the row: it returns the post made with the card it showed,
// or wait=true when the row waits for its card to be posted first.
func (s *Service) do(ctx context.Context, surface Surface, row *store.OutboxRow) (*store.Post, *Card, bool, error) {
	var p rowPayload
	if err := json.Unmarshal(row.Payload, &p); err != nil {
		return nil, nil, false, Permanent(fmt.Errorf("decode payload: %w", err))
	}
	if row.Kind == KindPostCard {
		if p.Step > 0 {
			if ok, err := s.stillWaiting(ctx, row.ApprovalID); err != nil || !ok {
				return nil, nil, false, err // decided since the step
			}
		}
		return s.postCard(ctx, surface, row, p)
	}
	if row.Kind == KindEmail {
		if p.Mail == MailEscalation || p.Mail == MailReask {
			if ok, err := s.stillWaiting(ctx, row.ApprovalID); err != nil || !ok {
				return nil, nil, false, err // decided since: the outcome mail says so
			}
		}
		post, err := s.sendMail(ctx, row, p)
		return post, nil, false, err
	}
	if row.Kind == KindPush {
		if ok, err := s.stillWaiting(ctx, row.ApprovalID); err != nil || !ok {
			return nil, nil, false, err // decided since the step: nobody need be told
		}
		return nil, nil, false, s.sendPush(ctx, row, p)
	}
	if row.Kind == KindEditCard {
		return s.editCard(ctx, surface, row, p)
	}
	wait, err := s.doOther(ctx, surface, row, p)
	return nil, nil, wait, err
}

// editCard edits one copy and returns it with the card it showed.
func (s *Service) editCard(ctx context.Context, surface Surface, row *store.OutboxRow, p rowPayload) (*store.Post, *Card, bool, error) {
	posts, err := s.store.PostList(ctx, row.ApprovalID)
	if err != nil {
		return nil, nil, false, fmt.Errorf("list posts: %w", err)
	}
	for _, post := range posts {
		if post.Target == row.Target && post.Revision == p.Revision {
			card, err := s.card(ctx, row.ApprovalID, p.Revision)
			if err != nil {
				return nil, nil, false, err
			}
			if err := surface.Edit(ctx, EditRequest{Post: RefOf(post), Card: card}); err != nil {
				return nil, nil, false, err
			}
			return post, &card, false, nil
		}
	}
	return nil, nil, false, Permanent(errors.New("no card to edit"))
}

func (s *Service) doOther(ctx context.Context, surface Surface, row *store.OutboxRow, p rowPayload) (bool, error) {
	switch row.Kind {
	case KindDecision:
		return false, s.performDecision(ctx, row)
	case KindRevoke:
		return false, s.performRevoke(ctx, row)
	case KindTell:
		var tp tellPayload
		if err := json.Unmarshal(row.Payload, &tp); err != nil {
			return false, Permanent(fmt.Errorf("decode payload: %w", err))
		}
		teller, ok := surface.(Teller)
		if !ok {
			s.log.Info("an answer to one person has no private channel on this surface", "tenant", row.Tenant,
				"approval_id", row.ApprovalID, "target", row.Target)
			return false, nil
		}
		req := TellRequest{Tenant: row.Tenant, User: tp.User, Channel: tp.Channel, Reply: tp.Reply, Text: tp.Text}
		if tp.Card {
			card, err := s.card(ctx, row.ApprovalID, tp.Revision)
			if err != nil {
				return false, err
			}
			req.Card = &card
		}
		return false, teller.Tell(ctx, req)
	case KindNotice:
		return false, surface.Notice(ctx, NoticeRequest{Target: row.Target, Tenant: row.Tenant, Text: p.Text, Lines: p.Lines})
	case KindReply:
		if p.Thread == string(templates.ThreadEscalation) {
			if ok, err := s.stillWaiting(ctx, row.ApprovalID); err != nil || !ok {
				return false, err // decided since the step: nobody need be told
			}
		}
		root, err := s.threadRoot(ctx, row.ApprovalID, row.Target)
		if err != nil {
			return false, err
		}
		if root == nil {
			if s.clock.Now().Sub(row.CreatedAt) > orphanAfter {
				return false, Permanent(errors.New("the card of this thread was never posted"))
			}
			return true, nil
		}
		return false, surface.Reply(ctx, ReplyRequest{Root: RefOf(root), Tenant: row.Tenant, Kind: templates.ThreadKind(p.Thread),
			Text: p.Text, Mentions: s.mentionsFor(row.Tenant, p.Mentions), Waited: p.Waited, By: p.By})
	}
	return false, Permanent(fmt.Errorf("unknown outbox kind %q", row.Kind))
}

func (s *Service) postCard(ctx context.Context, surface Surface, row *store.OutboxRow, p rowPayload) (*store.Post, *Card, bool, error) {
	posts, err := s.store.PostList(ctx, row.ApprovalID)
	if err != nil {
		return nil, nil, false, fmt.Errorf("list posts: %w", err)
	}
	var thread *store.Post
	for _, post := range posts {
		if post.Target != row.Target {
			continue
		}
		if post.Revision == p.Revision {
			return nil, nil, false, nil // posted already (a repeat after a crash): nothing to do
		}
		if thread == nil || post.Revision < thread.Revision {
			thread = post
		}
	}
	if !p.InThread {
		thread = nil
	} else if thread == nil && len(posts) == 0 && s.clock.Now().Sub(row.CreatedAt) < orphanAfter {
		// The first card is still on its way: post under it once it lands.
		return nil, nil, true, nil
	}
	card, err := s.card(ctx, row.ApprovalID, p.Revision)
	if err != nil {
		return nil, nil, false, err
	}
	if joined, wait, err := s.joinTurnCard(ctx, surface, row, p, card); joined != nil || wait || err != nil {
		return joined, &card, wait, err
	}
	req := PostRequest{Target: row.Target, Card: card}
	if thread != nil {
		ref := RefOf(thread)
		req.Thread = &ref
	}
	res, err := surface.Post(ctx, req)
	if err != nil {
		return nil, nil, false, err
	}
	threadRef := res.ThreadRef
	if thread != nil && threadRef == "" {
		threadRef = thread.Ref
	}
	return &store.Post{ApprovalID: row.ApprovalID, Target: row.Target, Revision: p.Revision,
		Channel: res.Channel, Ref: res.Ref, ThreadRef: threadRef, CreatedAt: s.clock.Now()}, &card, false, nil
}

// followUp re-edits a card shown from a state its approval has left.
func (s *Service) followUp(ctx context.Context, row *store.OutboxRow, post *store.Post, shown *Card) {
	a, err := s.store.ApprovalGet(ctx, row.ApprovalID)
	if err != nil {
		return
	}
	if a.State == string(shown.State) && a.Revision == shown.HeldRevision && sameDeciding(decidingCard(a), shown.Deciding) &&
		ladderStateOf(a).Last == shown.ladder.Last {
		return
	}
	now := s.clock.Now()
	body, _ := json.Marshal(rowPayload{Revision: post.Revision}) // plain data: cannot fail
	err = s.store.InTx(ctx, func(ctx context.Context, tx store.Tx) error {
		return s.insert(ctx, tx, []store.OutboxInsertParams{{ID: s.newID(now), Tenant: row.Tenant,
			ApprovalID: row.ApprovalID, Kind: KindEditCard, Target: post.Target, CoalesceKey: editKey(post),
			Payload: body, NotBefore: now, Now: now}})
	})
	if err != nil {
		s.log.Error("enqueue follow-up edit", "approval_id", row.ApprovalID, "err", err)
	}
}

// threadRoot is the first card posted at a target, whose thread holds
// the approval's story.
func (s *Service) threadRoot(ctx context.Context, approvalID, target string) (*store.Post, error) {
	posts, err := s.store.PostList(ctx, approvalID)
	if err != nil {
		return nil, fmt.Errorf("list posts: %w", err)
	}
	var root *store.Post
	for _, p := range posts {
		if p.Target == target && (root == nil || p.Revision < root.Revision) {
			root = p
		}
	}
	return root, nil
}

// card loads what one copy of a card shows now.
func (s *Service) card(ctx context.Context, approvalID string, revision int) (Card, error) {
	a, err := s.store.ApprovalGet(ctx, approvalID)
	if err != nil {
		return Card{}, fmt.Errorf("read approval: %w", err)
	}
	rev, err := s.store.RevisionGet(ctx, approvalID, revision)
	if err != nil {
		return Card{}, fmt.Errorf("read revision %d: %w", revision, err)
	}
	var req approval.Approval
	if err := json.Unmarshal(rev.Body, &req); err != nil {
		return Card{}, Permanent(fmt.Errorf("decode revision %d: %w", revision, err))
	}
	c, err := s.cardOf(a, &req, s.clock.Now())
	if err != nil {
		return Card{}, Permanent(err)
	}
	// Superseded when a newer revision exists: a resolve may name a higher
	// revision than any request the bot saw.
	if revision < a.Revision {
		if _, err := s.store.RevisionGet(ctx, approvalID, a.Revision); err == nil {
			c.Superseded = true
		}
	}
	if err := s.withTurn(ctx, &c); err != nil {
		return Card{}, err
	}
	return c, nil
}

// cardOf is the card of revision req, not superseded, the approval
// standing as a says; it reads nothing.
func (s *Service) cardOf(a *store.Approval, req *approval.Approval, now time.Time) (Card, error) {
	rec, err := recordOf(a)
	if err != nil {
		return Card{}, err
	}
	fz, err := frozenOf(a)
	if err != nil {
		return Card{}, err
	}
	return Card{Tenant: a.Tenant, Approval: req, State: rec.State, Decision: rec.Decision, Deciding: decidingCard(a),
		Frozen: fz, ladder: ladderStateOf(a), votes: s.liveVotes(a), HeldRevision: a.Revision, Now: now,
		TypedOnPage: s.typedOnPage(a.Tenant), Grants: s.grantsOnCard(a.Tenant, req, &fz)}, nil
}

// typedOnPage reports whether the decision page takes the tenant's typed
// confirmations: a page, approvals on it, and a backend that takes the
// value typed.
func (s *Service) typedOnPage(tenantID string) bool {
	if !s.typedConfirm || s.links == nil {
		return false
	}
	t, ok := s.tenants.Tenant(tenantID)
	return ok && t != nil && t.MailDecides(true)
}

// clickedCard is the clicked copy as the click's transaction wrote row,
// of revision req (its newest); nil when it cannot be built (logged), and
// the person is then told in words.
func (s *Service) clickedCard(row *store.Approval, req *approval.Approval, now time.Time) *Card {
	c, err := s.cardOf(row, req, now)
	if err != nil {
		s.log.Warn("build the clicked card", "tenant", row.Tenant, "approval_id", row.ID, "err", err.Error())
		return nil
	}
	return &c
}

// decidingCard is the decision in flight as a card shows it; nil for none.
func decidingCard(a *store.Approval) *templates.Deciding {
	d, ok := decidingOf(a)
	if !ok {
		return nil
	}
	return &templates.Deciding{Actor: d.Actor, Approve: d.Approve, Comment: d.Comment, At: d.At,
		Deadline: d.Surface == DeadlineSurface}
}

func sameDeciding(a, b *templates.Deciding) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// surfaceFor picks the surface a target names, or the fallback.
func (s *Service) surfaceFor(target string) (string, Surface) {
	if target == surfaceBackend {
		return surfaceBackend, s.fallback
	}
	if t, err := ladder.ParseTarget(target); err == nil {
		if t.IsMember() {
			return surfacePush, s.fallback // pushed by sendPush, not a surface
		}
		if t.Surface() == ladder.SurfaceEmail {
			return ladder.SurfaceEmail, s.fallback // mailed by sendMail, not a surface
		}
		if sf, ok := s.surfaces[t.Surface()]; ok {
			return t.Surface(), sf
		}
	}
	return surfaceLog, s.fallback
}
