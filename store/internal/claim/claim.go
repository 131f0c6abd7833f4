// Package claim decides an outbox claim for the store drivers: which of
// the due rows a claim takes under their pace keys' budgets, what it
// writes back to the pace table, and how many rounds it runs. The drivers
// read, lock and write the rows; this package only computes, so SQLite
// and PostgreSQL decide alike and the arithmetic is tested without a
// database.
//
// Pacing is GCRA, kept in two numbers per key in Unix milliseconds: tat,
// the theoretical arrival time of the key's next call, and ready_at, the
// earliest instant the key allows one, which SQL tests without knowing
// the budget and a Retry-After raises. The rule:
// docs/design.md#pacing-outbox-claims.
package claim

import (
	"slices"
	"time"

	"approvalsbot/store"
)

// Budget is a pace key's allowance: one call per Every milliseconds, up
// to Burst at once.
type Budget struct {
	Every int64 // > 0
	Burst int64 // ≥ 1
}

// BudgetOf turns the answer of store.OutboxClaimParams.Pace into a
// Budget: every in whole milliseconds, rounded up so a sub-millisecond
// budget still paces; a burst below 1 counts as 1. ok is false when every
// ≤ 0: the key is not paced.
func BudgetOf(every time.Duration, burst int) (b Budget, ok bool) {
	if every <= 0 {
		return Budget{}, false
	}
	ms := int64((every + time.Millisecond - 1) / time.Millisecond)
	return Budget{Every: ms, Burst: max(int64(burst), 1)}, true
}

// allowance is how far ahead of now tat may be and still allow a call.
func (b Budget) allowance() int64 { return (b.Burst - 1) * b.Every }

// State is a key's row of the pace table; the zero State is a key never
// paced (no row).
type State struct {
	TAT     int64
	ReadyAt int64
}

// Allows reports whether the key has room for one call at now.
func (s State) Allows(now int64, b Budget) bool {
	return s.ReadyAt <= now && s.TAT <= now+b.allowance()
}

// Take spends one call at now; call it only when Allows.
func (s State) Take(now int64, b Budget) State {
	tat := max(s.TAT, now) + b.Every
	return State{TAT: tat, ReadyAt: tat - b.allowance()}
}

// Budgets memoises pace for one claim, which asks for a key once per
// candidate row. A nil pace paces nothing.
func Budgets(pace func(key string) (time.Duration, int)) func(key string) (Budget, bool) {
	type answer struct {
		b  Budget
		ok bool
	}
	seen := map[string]answer{}
	return func(key string) (Budget, bool) {
		if pace == nil || key == "" {
			return Budget{}, false
		}
		if a, ok := seen[key]; ok {
			return a.b, a.ok
		}
		b, ok := BudgetOf(pace(key))
		seen[key] = answer{b, ok}
		return b, ok
	}
}

// Candidate is a due row as a claim round reads it, in claim order.
type Candidate struct {
	ID  string
	Key string // pace key; empty: not paced
}

// Keys returns the distinct paced keys among cands, sorted: the order in
// which a driver that locks pace rows must lock them, so that two claims
// wanting the same keys never wait for each other in a cycle.
func Keys(cands []Candidate, budget func(string) (Budget, bool)) []string {
	var keys []string
	for _, c := range cands {
		if _, ok := budget(c.Key); ok {
			keys = append(keys, c.Key)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// Round is the decision of one claim round.
type Round struct {
	// Take lists the ids to claim, in claim order.
	Take []string
	// Write holds the pace rows to store, by key: each key a row was
	// taken for, and each key found without room whose ready_at was
	// earlier than its tat allows (the budget shrank since it was
	// written), so that the next round's SQL passes over its rows.
	Write map[string]State
	// Skipped counts candidates passed over for want of room. Every key
	// skipped is not ready at now after Write, so the next round at the
	// same now reads none of its rows.
	Skipped int
}

// Plan decides one round at now: it walks cands in claim order and takes
// up to limit of them, an unpaced row always, a paced one when its key
// has room, spending it. states holds the pace rows of the paced keys
// among cands as read (locked) in this round; a key missing from it has
// the zero State.
func Plan(now int64, limit int, cands []Candidate, budget func(string) (Budget, bool), states map[string]State) Round {
	r := Round{Write: map[string]State{}}
	cur := map[string]State{}
	for _, c := range cands {
		if len(r.Take) >= limit {
			break
		}
		b, paced := budget(c.Key)
		if !paced {
			r.Take = append(r.Take, c.ID)
			continue
		}
		st, ok := cur[c.Key]
		if !ok {
			st = states[c.Key]
		}
		if !st.Allows(now, b) {
			r.Skipped++
			if ready := st.TAT - b.allowance(); ready > st.ReadyAt {
				st.ReadyAt = ready
				r.Write[c.Key] = st
			}
			cur[c.Key] = st
			continue
		}
		st = st.Take(now, b)
		cur[c.Key] = st
		r.Write[c.Key] = st
		r.Take = append(r.Take, c.ID)
	}
	return r
}

// RoundFunc runs one claim round in a transaction of its own: it claims
// up to need rows whose ids are not in exclude and reports how many
// candidates it read and how many of them it skipped for want of room.
type RoundFunc func(need int, exclude []string) (rows []*store.OutboxRow, read, skipped int, err error)

// Run runs a claim's rounds until limit rows are claimed, the due rows run
// out, a round skips nothing, or MaxRounds have run. Each round excludes
// the rows the earlier ones took (a lease of zero would make them due
// again). When a round after the first fails, Run returns the rows
// claimed so far together with that error: they are leased already, and
// the caller hands them on rather than let them wait out their lease.
func Run(limit int, exclude []string, round RoundFunc) ([]*store.OutboxRow, error) {
	exclude = slices.Clip(exclude) // appends below never write into the caller's array
	var out []*store.OutboxRow
	for range MaxRounds {
		need := limit - len(out)
		rows, read, skipped, err := round(need, exclude)
		if err != nil {
			return out, err
		}
		out = append(out, rows...)
		for _, r := range rows {
			exclude = append(exclude, r.ID)
		}
		if !Again(need, read, len(rows), skipped) {
			break
		}
	}
	return out, nil
}

// MaxRounds bounds the rounds of one claim. A round after the first runs
// only when the one before skipped rows for want of room and left its
// limit unfilled, which takes a backlog of several keys that had room
// for fewer rows than they had queued; a handful of rounds covers that,
// and the next claim goes on where this one stopped.
const MaxRounds = 4

// Again reports whether a claim that asked a round for need rows, read
// read candidates of which it took took and skipped skipped, should run
// another: only when the round read as many as it asked for (more may
// be due behind them) and passed some over.
func Again(need, read, took, skipped int) bool {
	return took < need && read >= need && skipped > 0
}
