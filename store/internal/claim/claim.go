// Package claim decides an outbox claim for the store drivers: which due
// rows it takes under their pace keys' budgets (GCRA), what it writes back
// to the pace table, and how many rounds it runs. The drivers read, lock
// and write; this package only computes, so both databases decide alike
// (docs/design.md#pacing-outbox-claims).
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

// BudgetOf turns an answer of store.OutboxClaimParams.Pace into a Budget,
// rounding every up to whole milliseconds; ok is false when every ≤ 0.
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

// Budgets memoises pace for one claim; a nil pace paces nothing.
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

// Keys returns the distinct paced keys among cands, sorted: the order a
// driver must lock pace rows in, so claims never wait in a cycle.
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
	// Write holds the pace rows to store: each key taken from, and each
	// without room whose ready_at lagged (the budget shrank), so the next
	// round's SQL passes over its rows.
	Write map[string]State
	// Skipped counts candidates passed over for want of room; after
	// Write, none of their keys is ready at now.
	Skipped int
}

// Plan decides one round at now: in claim order it takes up to limit
// cands, an unpaced row always, a paced one when its key has room. states
// holds the pace rows read in this round; a missing key is the zero State.
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

// RoundFunc runs one claim round in a transaction of its own, claiming up
// to need rows not in exclude; it reports the candidates read and skipped.
type RoundFunc func(need int, exclude []string) (rows []*store.OutboxRow, read, skipped int, err error)

// Run runs a claim's rounds until limit rows are claimed, the due rows run
// out, a round skips nothing, or MaxRounds have run, each excluding the
// rows taken before. On a failure it returns the rows claimed so far with
// the error (docs/design.md#what-a-claim-promises).
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

// MaxRounds bounds the rounds of one claim; the next claim goes on where
// it stopped.
const MaxRounds = 4

// Again reports whether to run another round: only when the last read as
// many as it asked for (more may be due) and passed some over.
func Again(need, read, took, skipped int) bool {
	return took < need && read >= need && skipped > 0
}
