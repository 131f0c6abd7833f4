package threads

import (
	"context"
	"sync"
	"time"

	"approvalsbot/store"
)

// A Receipt is a click (or a decision page's POST) received and not yet
// answered. A surface takes one as soon as a click is verified, judges the
// click by its At, and ends it once the click is answered. On a store of
// this process's alone, the deadline's deny waits only for open receipts
// (see docs/design.md#the-deadline-and-the-clicks-before-it).
type Receipt struct {
	// At is when the bot received the click, on the service's clock.
	At    time.Time
	began time.Time // on the real clock, for Bound
	book  *receipts
	id    uint64
	once  sync.Once
}

// Bound is ctx as a person's own path (ForPerson), ending when a decision
// the click makes must be recorded by: RecordBound after the click was
// received, on the real clock.
func (r *Receipt) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithDeadline(ForPerson(ctx), r.began.Add(RecordBound))
}

// ForPerson marks ctx as a person's own path (store.ForPerson): what a
// surface does for a click until it has answered, and the clicked card's
// change or dialog after; not listings, nor the decision page's views. A
// pooling store keeps connections for them that the outbox and the ticks
// cannot take.
func ForPerson(ctx context.Context) context.Context { return store.ForPerson(ctx) }

// Receive opens a receipt for a click received now.
func (s *Service) Receive() *Receipt {
	return s.receipts.open(s.clock)
}

// Done ends the receipt once the click is answered; calling it again is safe.
func (r *Receipt) Done() {
	r.once.Do(func() { r.book.close(r.id) })
}

// receipts are the receipts open in this process.
type receipts struct {
	mu   sync.Mutex
	next uint64
	at   map[uint64]time.Time // by receipt, when received
	// floor is the latest time before found no receipt received before: no
	// receipt is stamped earlier, even when the wall clock steps back.
	floor time.Time
}

// open stamps a receipt under before's lock, so a receipt before did not
// see is stamped at or after the deadline it was asked about (floor).
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

// denyAt is when the deadline's deny, recorded now, is sent: once no click
// received before the deadline can still be being recorded.
func (s *Service) denyAt(deadline, now time.Time) time.Time {
	if s.alone && !s.receipts.before(deadline) {
		return now
	}
	if send := deadline.Add(RecordBound); send.After(now) {
		return send
	}
	return now
}
