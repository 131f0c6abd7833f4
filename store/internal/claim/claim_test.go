package claim

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
)

func TestBudgetOf(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		every time.Duration
		burst int
		want  Budget
		ok    bool
	}{
		{time.Second, 3, Budget{Every: 1000, Burst: 3}, true},
		{1500 * time.Microsecond, 1, Budget{Every: 2, Burst: 1}, true}, // rounded up
		{time.Nanosecond, 5, Budget{Every: 1, Burst: 5}, true},
		{time.Second, 0, Budget{Every: 1000, Burst: 1}, true},
		{time.Second, -4, Budget{Every: 1000, Burst: 1}, true},
		{0, 3, Budget{}, false},
		{-time.Second, 3, Budget{}, false},
	} {
		got, ok := BudgetOf(c.every, c.burst)
		if got != c.want || ok != c.ok {
			t.Errorf("BudgetOf(%v, %d) = %+v, %v; want %+v, %v", c.every, c.burst, got, ok, c.want, c.ok)
		}
	}
}

// TestGCRA walks one key through a burst, its steady rate, an idle spell
// and a partial refill.
func TestGCRA(t *testing.T) {
	t.Parallel()
	b := Budget{Every: 1000, Burst: 3}
	var st State // never paced
	take := func(now int64) bool {
		if !st.Allows(now, b) {
			return false
		}
		st = st.Take(now, b)
		return true
	}
	count := func(now int64) int {
		n := 0
		for take(now) {
			n++
		}
		return n
	}
	for _, c := range []struct {
		now  int64
		want int
	}{
		{10_000, 3}, // a fresh key: the burst
		{10_000, 0}, // spent
		{10_999, 0}, // not yet one every later
		{11_000, 1}, // one per every
		{13_000, 2}, // two every later: two
		{20_000, 3}, // idle long enough: the whole burst, no more
		{21_500, 1}, // one and a half every later: one
		{22_000, 1}, // the half caught up
		{22_000, 0}, // and no more
	} {
		if got := count(c.now); got != c.want {
			t.Fatalf("at %d: %d calls, want %d (state %+v)", c.now, got, c.want, st)
		}
		// ready_at says exactly when the next call may go.
		if st.ReadyAt <= c.now {
			t.Fatalf("at %d after spending: ready_at %d is not later", c.now, st.ReadyAt)
		}
		if !(State{TAT: st.TAT}).Allows(st.ReadyAt, b) || (State{TAT: st.TAT}).Allows(st.ReadyAt-1, b) {
			t.Fatalf("ready_at %d is not the first instant tat %d allows", st.ReadyAt, st.TAT)
		}
	}
	// A hold as PaceHold writes it: ready_at to the hold, tat by as much.
	hold := int64(60_000)
	st = State{TAT: st.TAT + (hold - st.ReadyAt), ReadyAt: hold}
	if got := count(hold - 1); got != 0 {
		t.Fatalf("before the hold: %d calls", got)
	}
	if got := count(hold); got != 1 {
		t.Fatalf("at the hold: %d calls, want 1 (the steady pace, not a burst)", got)
	}
	if got := count(hold + 1000); got != 1 {
		t.Fatalf("a second after the hold: %d calls, want 1", got)
	}
}

func budgets(m map[string]Budget) func(string) (Budget, bool) {
	return func(k string) (Budget, bool) {
		b, ok := m[k]
		return b, ok
	}
}

func TestPlan(t *testing.T) {
	t.Parallel()
	const now = 100_000
	b := Budget{Every: 1000, Burst: 2}
	budget := budgets(map[string]Budget{"A": b, "B": b, "C": b})
	cands := []Candidate{
		{"a1", "A"}, {"a2", "A"}, {"a3", "A"}, {"u1", ""}, {"b1", "B"}, {"c1", "C"}, {"x1", "unpaced"}, {"a4", "A"},
	}
	states := map[string]State{
		"B": {TAT: now + 1500, ReadyAt: now + 500}, // spent, and its row says so
		"C": {TAT: now + 1500, ReadyAt: now - 500}, // spent by a larger budget's standard: a stale ready_at
	}
	got := Plan(now, 10, cands, budget, states)
	want := Round{
		Take: []string{"a1", "a2", "u1", "x1"},
		Write: map[string]State{
			"A": {TAT: now + 2000, ReadyAt: now + 1000},
			"C": {TAT: now + 1500, ReadyAt: now + 500}, // corrected, so SQL passes over it next round
		},
		Skipped: 4, // a3, b1, c1, a4
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Plan (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"A", "B", "C"}, Keys(cands, budget)); diff != "" {
		t.Errorf("Keys (-want +got):\n%s", diff)
	}

	// The limit stops the walk: nothing after it is taken or spent.
	got = Plan(now, 1, cands, budget, nil)
	if diff := cmp.Diff(Round{Take: []string{"a1"}, Write: map[string]State{"A": {TAT: now + 1000, ReadyAt: now}}}, got); diff != "" {
		t.Errorf("Plan with limit 1 (-want +got):\n%s", diff)
	}
}

func TestBudgetsAsksOncePerKey(t *testing.T) {
	t.Parallel()
	asked := map[string]int{}
	budget := Budgets(func(k string) (time.Duration, int) {
		asked[k]++
		return time.Second, 1
	})
	for range 3 {
		budget("A")
		budget("B")
		if _, ok := budget(""); ok {
			t.Fatal("the empty key is paced")
		}
	}
	if diff := cmp.Diff(map[string]int{"A": 1, "B": 1}, asked); diff != "" {
		t.Errorf("pace asked (-want +got):\n%s", diff)
	}
	if _, ok := Budgets(nil)("A"); ok {
		t.Error("a nil pace paces")
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	rows := func(ids ...string) []*store.OutboxRow {
		var rs []*store.OutboxRow
		for _, id := range ids {
			rs = append(rs, &store.OutboxRow{ID: id})
		}
		return rs
	}
	type call struct {
		need    int
		exclude []string
	}
	type result struct {
		rows          []*store.OutboxRow
		read, skipped int
		err           error
	}
	boom := errors.New("boom")
	for _, c := range []struct {
		name    string
		results []result
		want    []string
		wantErr error
		calls   []call
	}{
		{"filled at once", []result{{rows("a", "b", "c"), 3, 0, nil}}, []string{"a", "b", "c"}, nil,
			[]call{{3, []string{"x"}}}},
		{"ran out of due rows", []result{{rows("a"), 2, 1, nil}}, []string{"a"}, nil,
			[]call{{3, []string{"x"}}}},
		{"skipped: reads on", []result{{rows("a"), 3, 2, nil}, {rows("b", "c"), 2, 0, nil}}, []string{"a", "b", "c"}, nil,
			[]call{{3, []string{"x"}}, {2, []string{"x", "a"}}}},
		{"a later round fails", []result{{rows("a"), 3, 2, nil}, {nil, 0, 0, boom}}, []string{"a"}, boom,
			[]call{{3, []string{"x"}}, {2, []string{"x", "a"}}}},
		{"the first round fails", []result{{nil, 0, 0, boom}}, []string{}, boom,
			[]call{{3, []string{"x"}}}},
		{"at most MaxRounds", []result{{nil, 3, 3, nil}, {nil, 3, 3, nil}, {nil, 3, 3, nil}, {nil, 3, 3, nil}, {rows("z"), 3, 0, nil}}, []string{}, nil,
			[]call{{3, []string{"x"}}, {3, []string{"x"}}, {3, []string{"x"}}, {3, []string{"x"}}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			exclude := make([]string, 1, 8) // room to append: Run must not write into it
			exclude[0] = "x"
			var calls []call
			got, err := Run(3, exclude, func(need int, ex []string) ([]*store.OutboxRow, int, int, error) {
				calls = append(calls, call{need, append([]string(nil), ex...)})
				r := c.results[len(calls)-1]
				return r.rows, r.read, r.skipped, r.err
			})
			if !errors.Is(err, c.wantErr) {
				t.Errorf("error %v, want %v", err, c.wantErr)
			}
			ids := []string{}
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if diff := cmp.Diff(c.want, ids); diff != "" {
				t.Errorf("rows (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(c.calls, calls, cmp.AllowUnexported(call{})); diff != "" {
				t.Errorf("rounds (-want +got):\n%s", diff)
			}
			if got := fmt.Sprint(exclude[:cap(exclude)][1:2]); got != "[]" {
				t.Errorf("Run wrote %s into the caller's Exclude array", got)
			}
		})
	}
}
