package threads

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"approvalsbot/store"
)

// The outbox's lanes, each with workers of its own: a decision never
// queues behind chat or mail, and a slow mail server holds up no card.
const (
	LaneBackend = store.LaneBackend // decisions sent to the job backend
	LaneChat    = store.LaneChat    // cards, edits, thread replies, private answers, notices
	LaneMail    = store.LaneMail    // escalation email
	LanePush    = store.LanePush    // push notices
)

// Lanes lists every lane.
var Lanes = []string{LaneBackend, LaneChat, LaneMail, LanePush}

// Priorities within the chat lane: a row of higher priority is claimed
// before an older one of lower. Every card edit changes state; firing a
// ladder step edits no card (docs/cards.md).
const (
	// PriorityState: a card edit, a private answer to who clicked.
	PriorityState = 40
	// PriorityCard: a new card (the request, a reask, a ladder step's DM).
	PriorityCard = 30
	// PriorityReply: a thread reply (the backend's message, an escalation).
	PriorityReply = 20
	// PriorityNotice: the audit channel and the digest of what waits.
	PriorityNotice = 10
)

// laneOf is the lane of an outbox row's kind.
func laneOf(kind string) string {
	switch kind {
	case KindDecision, KindRevoke:
		return LaneBackend
	case KindEmail:
		return LaneMail
	case KindPush:
		return LanePush
	}
	return LaneChat
}

// priorityOf is the priority of a row's kind within its lane.
func priorityOf(kind string) int {
	switch kind {
	case KindEditCard, KindTell, KindDecision, KindRevoke:
		return PriorityState
	case KindPostCard:
		return PriorityCard
	case KindReply:
		return PriorityReply
	}
	return PriorityNotice
}

// Paced is a surface whose platform limits how fast it may be called. The
// outbox paces rows when it claims them, against budgets kept in the
// store, shared by replicas (see docs/design.md#pacing-outbox-claims).
type Paced interface {
	// PaceKey names the budget a row's call spends (a channel's message
	// rate), prefixed with the surface's name ("slack:…"); "" for none.
	PaceKey(kind, target string) string
	// Pace is a key's budget: a call every `every`, in bursts of burst;
	// every ≤ 0: not paced.
	Pace(key string) (every time.Duration, burst int)
}

// insert enqueues rows in tx, each with its lane, priority and budget.
func (s *Service) insert(ctx context.Context, tx store.Tx, rows []store.OutboxInsertParams) error {
	for i := range rows {
		r := &rows[i]
		r.Lane = laneOf(r.Kind)
		r.Priority = priorityOf(r.Kind)
		if r.NotBefore.After(r.Now) {
			s.due[r.Lane].add(r.NotBefore) // the lane wakes then (a row rolled back wakes it for nothing)
		}
		if r.Lane == LaneChat {
			_, surface := s.surfaceFor(r.Target)
			if p, ok := surface.(Paced); ok {
				r.PaceKey = p.PaceKey(r.Kind, r.Target)
			}
		}
	}
	return tx.OutboxInsert(ctx, rows)
}

// pace is a key's budget, from the surface its prefix names.
func (s *Service) pace(key string) (time.Duration, int) {
	name, _, _ := strings.Cut(key, ":")
	if p, ok := s.surfaces[name].(Paced); ok {
		return p.Pace(key)
	}
	return 0, 0
}

// dueTimes are when rows this process enqueued for later (the deadline's
// deny after its grace) fall due in one lane, which wakes then rather
// than at its next poll. Other replicas' rows are found by the poll.
type dueTimes struct {
	mu    sync.Mutex
	times []time.Time // sorted, no two within dueGrain
}

// dueGrain merges due times this close: a burst wakes the lane once.
const dueGrain = 10 * time.Millisecond

// dueKept bounds the times kept; the poll finds the rest.
const dueKept = 1024

func dues() map[string]*dueTimes {
	d := map[string]*dueTimes{}
	for _, lane := range Lanes {
		d[lane] = &dueTimes{}
	}
	return d
}

// add keeps t, rounded up to dueGrain.
func (d *dueTimes) add(t time.Time) {
	if rem := t.Sub(t.Truncate(dueGrain)); rem > 0 {
		t = t.Add(dueGrain - rem)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	i, found := slices.BinarySearchFunc(d.times, t, time.Time.Compare)
	if found || len(d.times) >= dueKept && i == len(d.times) {
		return
	}
	d.times = slices.Insert(d.times, i, t)
	if len(d.times) > dueKept {
		d.times = d.times[:dueKept]
	}
}

// next is how long until the first kept time, dropping those passed (a
// passed one gives 0, once); false when none is kept.
func (d *dueTimes) next(now time.Time) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	passed := 0
	for passed < len(d.times) && !d.times[passed].After(now) {
		passed++
	}
	if passed > 0 {
		d.times = d.times[passed:]
		return 0, true
	}
	if len(d.times) == 0 {
		return 0, false
	}
	return d.times[0].Sub(now), true
}
