package query

import (
	"cmp"
	"slices"
	"time"

	"approvalsbot/store"
)

// Scanner is one result row: *sql.Row, *sql.Rows, pgx.Row, pgx.CollectableRow.
type Scanner interface{ Scan(dest ...any) error }

// ScanApproval reads one row of ApprovalColumns.
func ScanApproval(r Scanner) (*store.Approval, error) {
	var (
		a                                  store.Approval
		seen                               int64
		nextStep, deadline                 *int64
		requested, created, updated, until int64
	)
	err := r.Scan(&a.ID, &a.Tenant, &a.Revision, &a.State, &seen, &a.Function,
		&a.Decision, &a.Plan, &a.StepsDone, &nextStep, &deadline,
		&requested, &created, &updated, &a.ClaimedBy, &until, &a.Deciding, &a.LadderState, &a.Votes)
	if err != nil {
		return nil, err
	}
	a.Seen = seen != 0
	a.NextStepAt = NullTime(nextStep)
	a.DeadlineAt = NullTime(deadline)
	a.RequestedAt = Time(requested)
	a.CreatedAt = Time(created)
	a.UpdatedAt = Time(updated)
	a.ClaimedUntil = Time(until)
	return &a, nil
}

// ScanOutboxRow reads one row of the outbox claim's RETURNING list.
func ScanOutboxRow(r Scanner) (*store.OutboxRow, error) {
	var (
		o                      store.OutboxRow
		next, until, createdAt int64
	)
	err := r.Scan(&o.ID, &o.Tenant, &o.ApprovalID, &o.Kind, &o.Target, &o.CoalesceKey,
		&o.Payload, &o.Attempts, &next, &o.ClaimedBy, &until, &o.LastError, &createdAt,
		&o.Lane, &o.Priority, &o.PaceKey)
	if err != nil {
		return nil, err
	}
	o.NextAttemptAt = Time(next)
	o.ClaimedUntil = Time(until)
	o.CreatedAt = Time(createdAt)
	return &o, nil
}

// ScanPost reads one row of PostList.
func ScanPost(r Scanner) (*store.Post, error) {
	var (
		p       store.Post
		created int64
	)
	if err := r.Scan(&p.ApprovalID, &p.Target, &p.Revision, &p.Channel, &p.Ref, &p.ThreadRef, &created); err != nil {
		return nil, err
	}
	p.CreatedAt = Time(created)
	return &p, nil
}

// SortByDue puts claimed approvals in the claim query's order.
func SortByDue(as []*store.Approval) {
	slices.SortFunc(as, func(a, b *store.Approval) int {
		return cmp.Or(dueAt(a).Compare(dueAt(b)), cmp.Compare(a.ID, b.ID))
	})
}

// SortOutbox puts claimed outbox rows in the claim query's order.
func SortOutbox(rows []*store.OutboxRow) {
	slices.SortFunc(rows, func(a, b *store.OutboxRow) int {
		return cmp.Or(cmp.Compare(b.Priority, a.Priority), a.NextAttemptAt.Compare(b.NextAttemptAt), cmp.Compare(a.ID, b.ID))
	})
}

// AddOutboxStats adds one row of OutboxStats to st: a lane's pending
// count and earliest due time, or the dead count (dead ≠ 0).
func AddOutboxStats(st *store.OutboxStats, now time.Time, dead int64, lane string, n, earliest int64) {
	if dead != 0 {
		st.Dead += int(n)
		return
	}
	if n == 0 {
		return
	}
	ls := store.LaneStats{Pending: int(n)}
	if earliest != 0 {
		ls.OldestAge = max(now.Sub(Time(earliest)), 0)
	}
	if st.Lanes == nil {
		st.Lanes = map[string]store.LaneStats{}
	}
	st.Lanes[lane] = ls
	st.Pending += ls.Pending
	st.OldestAge = max(st.OldestAge, ls.OldestAge)
}

// dueAt is the earlier of a's next step and deadline, whichever are set,
// as the claim query orders them.
func dueAt(a *store.Approval) time.Time {
	switch {
	case a.NextStepAt.IsZero():
		return a.DeadlineAt
	case a.DeadlineAt.IsZero() || !a.DeadlineAt.Before(a.NextStepAt):
		return a.NextStepAt
	default:
		return a.DeadlineAt
	}
}
