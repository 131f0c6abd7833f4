package threads

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"approvalsbot/store"
)

// The outbox's lanes. Each lane has workers of its own, so an effect of
// one lane never waits for a worker busy with another: a decision (a
// person's, or the deadline's) never queues behind chat or mail, and a
// slow mail server holds up no card.
const (
	LaneBackend = store.LaneBackend // decisions sent to the job backend
	LaneChat    = store.LaneChat    // cards, edits, thread replies, private answers, notices
	LaneMail    = store.LaneMail    // escalation email
)

// Lanes lists every lane, in the order their loops start.
var Lanes = []string{LaneBackend, LaneChat, LaneMail}

// Priorities within the chat lane: what a person needs now comes first.
// A row of higher priority is claimed before an older row of lower
// priority. Card edits all change state (a decision, the deadline's deny,
// superseded, cancelled, refused): the ladder's plan is shown once when
// the card is posted (docs/cards.md), so firing a step edits no card.
const (
	// PriorityState: an edit that changes what a card says, and a private
	// answer to the person who clicked.
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
	case KindDecision:
		return LaneBackend
	case KindEmail:
		return LaneMail
	}
	return LaneChat
}

// priorityOf is the priority of a row's kind within its lane.
func priorityOf(kind string) int {
	switch kind {
	case KindEditCard, KindTell, KindDecision:
		return PriorityState
	case KindPostCard:
		return PriorityCard
	case KindReply:
		return PriorityReply
	}
	return PriorityNotice
}

// Paced is a surface whose platform limits how fast it may be called. The
// outbox paces its rows when it claims them, with the budget shared in the
// store: a row whose budget has no room stays in the outbox until it has,
// holding no worker, and replicas on one database share one budget per
// channel, as the platforms count it.
type Paced interface {
	// PaceKey names the budget a row's call spends (a channel's message
	// rate, a workspace's edit rate), prefixed with the surface's name
	// ("slack:…"); "" for a call that is not paced.
	PaceKey(kind, target string) string
	// Pace is a key's budget: a call every `every`, in bursts of up to
	// burst. every ≤ 0: not paced.
	Pace(key string) (every time.Duration, burst int)
}

// insert enqueues rows in the caller's transaction, each in its lane, with
// its priority and the budget it spends.
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

// pace is the budget of a pace key, from the surface its prefix names.
func (s *Service) pace(key string) (time.Duration, int) {
	name, _, _ := strings.Cut(key, ":")
	if p, ok := s.surfaces[name].(Paced); ok {
		return p.Pace(key)
	}
	return 0, 0
}

// dueTimes are the times rows this process enqueued for later fall due
// in one lane (the deadline's deny, sent once its grace is over): the
// lane wakes at the first instead of at its next poll, so such a row goes
// when it may, not up to a poll later. Rows other replicas enqueued are
// found by the poll, or by their own replica.
type dueTimes struct {
	mu    sync.Mutex
	times []time.Time // sorted, no two within dueGrain
}

// dueGrain merges due times this close: the rows of one burst of
// deadlines wake the lane once.
const dueGrain = 10 * time.Millisecond

// dueKept bounds the times kept; past it the latest are dropped, for the
// poll to find.
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

// next is how long from now until the first kept time, dropping those
// passed; ok is false when none is kept. A time that has passed gives 0
// once: the lane claims at once.
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
