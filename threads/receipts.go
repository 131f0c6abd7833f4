package threads

import (
	"context"
	"sync"
	"time"

	"approvalsbot/store"
)

// A Receipt is a click (or a decision page's POST) the bot has received
// and not yet answered. A surface takes one as soon as a click is
// verified, judges the click by its At, and ends it once the click has
// been answered: recorded, refused, or failed.
//
// Where the store is this process's alone (store.Alone: SQLite as the bot
// serves it), the receipts open are every click that may still be
// recorded, so the deadline need not wait RecordBound for clicks nobody
// made: its deny goes at the deadline's tick unless a click received
// before the deadline is still open, and then waits its grace as on a
// shared store. On a shared store (PostgreSQL, several replicas) a click
// may be in flight at another replica, and the deny always waits.
type Receipt struct {
	// At is when the bot received the click (on the service's clock):
	// what the deadline judges it by.
	At    time.Time
	began time.Time // on the real clock, for Bound
	book  *receipts
	id    uint64
	once  sync.Once
}

// Bound is ctx as a person's own path (ForPerson) that ends when a
// decision the click makes must be recorded by: RecordBound after the
// click was received, on the real clock (a context's), whatever was done
// with the click before it is recorded.
func (r *Receipt) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ForPerson(ctx), r.began.Add(RecordBound))
}

// ForPerson marks ctx as a person's own path (store.ForPerson): what a
// surface does for a click until it has answered it, and what makes the
// clicked card change or a dialog open after the answer; not listings,
// nor the decision page's views. Where the store pools connections, it
// keeps some for such contexts that the outbox's lanes and the ticks
// cannot take. Click marks its own for decisions, dialogs and ladder clicks.
func ForPerson(ctx context.Context) context.Context { return store.ForPerson(ctx) }

// Receive opens a receipt for a click received now.
func (s *Service) Receive() *Receipt {
	return s.receipts.open(s.clock)
}

// Done ends the receipt: the click has been answered. It may be called
// more than once.
func (r *Receipt) Done() {
	r.once.Do(func() { r.book.close(r.id) })
}

// receipts are the receipts open in this process.
type receipts struct {
	mu   sync.Mutex
	next uint64
	at   map[uint64]time.Time // by receipt, when received
	// floor is the latest time before found no receipt received before:
	// a deadline whose deny then went at once. No receipt is stamped
	// before it, even when the wall clock steps back.
	floor time.Time
}

// open stamps a receipt under the lock that before takes, so that a
// receipt before does not see was stamped after before looked: at or
// after the deadline that before was asked about, once that deadline
// has passed (and, should the clock have stepped back since, at that
// deadline: floor).
func (b *receipts) open(c Clock) *Receipt {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.at == nil {
		b.at = map[uint64]time.Time{}
	}
	b.next++
	at := c.Now()
	if at.Before(b.floor) {
		at = b.floor
	}
	b.at[b.next] = at
	return &Receipt{At: at, began: time.Now(), book: b, id: b.next}
}

func (b *receipts) close(id uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.at, id)
}

// before reports whether a receipt open now was received before t; when
// none was, no receipt opened later is stamped before t.
func (b *receipts) before(t time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, at := range b.at {
		if at.Before(t) {
			return true
		}
	}
	if t.After(b.floor) {
		b.floor = t
	}
	return false
}

// alone reports whether st is this process's alone (store.Alone).
func alone(st store.Store) bool {
	a, ok := st.(store.Alone)
	return ok && a.Alone()
}

// denyAt is when the deadline's deny, recorded now, is sent: once no
// click received before the deadline can still be being recorded. On a
// store of this process's alone, that is now unless such a click is
// open here; elsewhere, RecordBound after the deadline.
func (s *Service) denyAt(deadline, now time.Time) time.Time {
	if s.alone && !s.receipts.before(deadline) {
		return now
	}
	if send := deadline.Add(RecordBound); send.After(now) {
		return send
	}
	return now
}
