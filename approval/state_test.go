package approval_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/approval"
)

// now is the test's clock: it stamps every decision Transition makes.
var now = time.Date(2026, 11, 29, 19, 30, 0, 0, time.UTC)

// stateEvents are the events of one approval (merge.json's), every one
// derived from a fixture.
type stateEvents struct {
	id, tenant string
	byName     map[string]*approval.Event
	names      []string // in table order
}

func (s stateEvents) ev(name string) *approval.Event { return s.byName[name] }

func loadStateEvents(t testing.TB) stateEvents {
	t.Helper()
	req := parseFixture(t, "merge.json", nil)
	id, tenant := req.Approval.ID, req.Tenant
	setRev := func(rev int) func(m map[string]any) {
		return func(m map[string]any) { obj(t, m, "data")["revision"] = rev }
	}
	resolved := func(status string, rev int) *approval.Event {
		return parseFixture(t, "merge-resolved.json", func(m map[string]any) {
			d := obj(t, m, "data")
			d["approval_id"], d["status"], d["revision"] = id, status, rev
		})
	}
	about := func(file string) *approval.Event {
		return parseFixture(t, file, func(m map[string]any) { obj(t, m, "data")["approval_id"] = id })
	}
	s := stateEvents{id: id, tenant: tenant, byName: map[string]*approval.Event{}}
	add := func(name string, ev *approval.Event) {
		s.byName[name] = ev
		s.names = append(s.names, name)
	}
	add("requested r1", parseFixture(t, "merge.json", setRev(1)))
	add("requested r2", parseFixture(t, "merge.json", setRev(2)))
	add("reasked r2", parseFixture(t, "merge-reasked.json", setRev(2)))
	add("reasked r3", parseFixture(t, "merge-reasked.json", setRev(3)))
	add("resolved approved r1", resolved("approved", 1))
	add("resolved approved r2", resolved("approved", 2))
	add("resolved denied r1", resolved("denied", 1))
	add("resolved denied r2", resolved("denied", 2))
	add("recheck_failed", about("refund-recheck.json"))
	add("cancelled", about("mail-cancelled.json"))
	add("call.finished", about("search-finished.json"))
	add("auto_granted", parseFixture(t, "auto.json", nil))
	// A question is kept as an approval: its events move the same record
	// (here about merge.json's id), asked as requested, answered as
	// resolved, cancelled as cancelled.
	asked := func(rev int) *approval.Event {
		return parseFixture(t, "question.json", func(m map[string]any) {
			d := obj(t, m, "data")
			d["id"], d["revision"] = id, rev
		})
	}
	answered := func(rev int, choice bool) *approval.Event {
		return parseFixture(t, "question-answered.json", func(m map[string]any) {
			d := obj(t, m, "data")
			d["question_id"], d["revision"] = id, rev
			if choice {
				d["answer"] = map[string]any{"choice": 1}
			}
		})
	}
	add("question.asked r1", asked(1))
	add("question.asked r3", asked(3))
	add("question.answered words r1", answered(1, false))
	add("question.answered choice r2", answered(2, true))
	add("question.cancelled", parseFixture(t, "question-cancelled.json", func(m map[string]any) {
		obj(t, m, "data")["question_id"] = id
	}))

	for _, name := range s.names {
		ev := s.byName[name]
		if ev.Type != approval.EventAutoGranted && (ev.ApprovalID() != id || ev.Tenant != tenant) {
			t.Fatalf("%s is about %s/%s, want %s/%s", name, ev.Tenant, ev.ApprovalID(), tenant, id)
		}
	}
	for _, typ := range approval.EventTypes() {
		if !slices.ContainsFunc(s.names, func(n string) bool { return s.byName[n].Type == typ }) {
			t.Fatalf("no state test event of type %s", typ)
		}
	}
	return s
}

// stateStart is a record as the store may hold it before an event.
type stateStart struct {
	name string
	rec  *approval.Record // nil: the bot holds nothing
}

// decisionBefore is the decision a record already closed in state s holds.
func decisionBefore(s approval.State) *approval.Decision {
	at := now.Add(-time.Hour)
	switch s {
	case approval.StateApproved:
		return &approval.Decision{Actor: "user:lee", Via: "slack", Comment: "looks right", Message: "The call runs.", At: at}
	case approval.StateDenied:
		return &approval.Decision{Actor: "user:lee", Via: "discord", Comment: "no", Message: "not made", At: at}
	case approval.StateExpired:
		return &approval.Decision{Actor: "system:deadline", Via: "deadline", Comment: "nobody answered", At: at}
	case approval.StateCancelled:
		return &approval.Decision{Comment: "the job was stopped", At: at}
	case approval.StateRefused:
		return &approval.Decision{Actor: "user:lee", Via: "slack", Message: "refused by the re-check", At: at}
	case approval.StateAnswered:
		return &approval.Decision{Actor: "user:lee", Via: "slack", Answer: "acct-2", Choice: 2, Message: "The job received the answer.", At: at}
	}
	return nil
}

// tombstoneRevision is the revision a tombstone gets from the event that
// makes it: a resolve carries one, a cancel or re-check does not.
func tombstoneRevision(s approval.State) int {
	switch s {
	case approval.StateCancelled, approval.StateRefused:
		return 0
	}
	return 1
}

func finalStates(t testing.TB) []approval.State {
	var fs []approval.State
	for _, s := range approval.States() {
		if s.Final() {
			fs = append(fs, s)
		} else if s != approval.StatePending {
			t.Fatalf("state %q is neither pending nor final", s)
		}
	}
	return fs
}

func stateStarts(t testing.TB, se stateEvents) []stateStart {
	rec := func(s approval.State, rev int, seen bool, d *approval.Decision) *approval.Record {
		return &approval.Record{ID: se.id, Tenant: se.tenant, Revision: rev, State: s, Seen: seen, Decision: d}
	}
	starts := []stateStart{{name: "none"}}
	for _, s := range finalStates(t) {
		starts = append(starts, stateStart{"tombstone " + string(s), rec(s, tombstoneRevision(s), false, decisionBefore(s))})
	}
	starts = append(starts,
		stateStart{"pending r1", rec(approval.StatePending, 1, true, nil)},
		stateStart{"pending r2", rec(approval.StatePending, 2, true, nil)})
	for _, s := range finalStates(t) {
		starts = append(starts, stateStart{string(s) + " seen", rec(s, 1, true, decisionBefore(s))})
	}
	return starts
}

// want is what one event must do to one record.
type want struct {
	next    *approval.Record // nil: nothing stored, Next is the start as it was
	effects []approval.Effect
	ignored bool
}

func (w want) changed() bool { return w.next != nil }

var (
	postCard  = approval.Effect{Kind: approval.EffectPostCard}
	supersede = approval.Effect{Kind: approval.EffectSupersede}
	editCards = approval.Effect{Kind: approval.EffectEditCards}
	audit     = approval.Effect{Kind: approval.EffectAudit}
)

func reply(text string) approval.Effect {
	return approval.Effect{Kind: approval.EffectThreadReply, Text: text}
}

// expectations encodes docs/protocol.md's state rules for every start × event:
//   - state only moves forward: pending → approved | denied | expired |
//     cancelled (a question's: answered | expired | cancelled); a re-check turns approved (or a pending whose approve is
//     still on its way) into refused; nothing else leaves a final state;
//   - a higher revision of a pending approval supersedes its cards; an
//     equal or lower one is a duplicate or stale and is ignored;
//   - a resolve or cancel (or re-check) for an approval the bot has not
//     seen is kept as a tombstone; a late request of it never posts a
//     live card and changes nothing: it stays a tombstone;
//   - only a decided approval whose cards exist edits them and says the
//     backend's message in their threads;
//   - call.finished is said in the threads of a card that exists, and
//     auto_granted is an audit notice about no stored approval.
func expectations(t testing.TB, se stateEvents, st stateStart) map[string]want {
	resolvedDecision := func(name string) *approval.Decision {
		r := se.ev(name).Resolved
		d := &approval.Decision{Actor: r.Actor, Comment: r.Comment, Via: r.Via, Message: r.Message, At: now}
		if a := r.Answer; a != nil {
			d.Answer = a.Text
			if a.Choice != nil {
				d.Choice = *a.Choice + 1
			}
		}
		return d
	}
	recheckMsg := se.ev("recheck_failed").RecheckFailed.Message
	cancelReason := se.ev("cancelled").Cancelled.Reason
	qCancelReason := se.ev("question.cancelled").Cancelled.Reason
	finished := reply(approval.FinishedText(se.ev("call.finished").Finished))
	moved := func(r approval.Record, effects ...approval.Effect) want { return want{next: &r, effects: effects} }
	ignored := want{ignored: true}
	notice := func(e approval.Effect) want { return want{effects: []approval.Effect{e}} }

	w := map[string]want{"auto_granted": notice(audit)}
	switch {
	case st.rec == nil:
		r := func(s approval.State, rev int, seen bool, d *approval.Decision) approval.Record {
			return approval.Record{ID: se.id, Tenant: se.tenant, Revision: rev, State: s, Seen: seen, Decision: d}
		}
		w["requested r1"] = moved(r(approval.StatePending, 1, true, nil), postCard)
		w["requested r2"] = moved(r(approval.StatePending, 2, true, nil), postCard)
		w["reasked r2"] = moved(r(approval.StatePending, 2, true, nil), postCard)
		w["reasked r3"] = moved(r(approval.StatePending, 3, true, nil), postCard)
		w["resolved approved r1"] = moved(r(approval.StateApproved, 1, false, resolvedDecision("resolved approved r1")))
		w["resolved approved r2"] = moved(r(approval.StateApproved, 2, false, resolvedDecision("resolved approved r2")))
		w["resolved denied r1"] = moved(r(approval.StateDenied, 1, false, resolvedDecision("resolved denied r1")))
		w["resolved denied r2"] = moved(r(approval.StateDenied, 2, false, resolvedDecision("resolved denied r2")))
		w["recheck_failed"] = moved(r(approval.StateRefused, 0, false, &approval.Decision{Message: recheckMsg, At: now}))
		w["cancelled"] = moved(r(approval.StateCancelled, 0, false, &approval.Decision{Comment: cancelReason, At: now}))
		w["call.finished"] = ignored
		w["question.asked r1"] = moved(r(approval.StatePending, 1, true, nil), postCard)
		w["question.asked r3"] = moved(r(approval.StatePending, 3, true, nil), postCard)
		w["question.answered words r1"] = moved(r(approval.StateAnswered, 1, false, resolvedDecision("question.answered words r1")))
		w["question.answered choice r2"] = moved(r(approval.StateAnswered, 2, false, resolvedDecision("question.answered choice r2")))
		w["question.cancelled"] = moved(r(approval.StateCancelled, 0, false, &approval.Decision{Comment: qCancelReason, At: now}))

	case !st.rec.Seen: // a tombstone
		// A late request of a tombstone changes nothing: it stays a
		// tombstone, so nothing later speaks of a card never posted.
		late := func(int) want { return ignored }
		w["requested r1"], w["requested r2"] = late(1), late(2)
		w["reasked r2"], w["reasked r3"] = late(2), late(3)
		w["question.asked r1"], w["question.asked r3"] = late(1), late(3)
		for _, n := range []string{"resolved approved r1", "resolved approved r2", "resolved denied r1", "resolved denied r2", "cancelled", "call.finished",
			"question.answered words r1", "question.answered choice r2", "question.cancelled"} {
			w[n] = ignored
		}
		w["recheck_failed"] = ignored
		if st.rec.State == approval.StateApproved {
			r := *st.rec
			r.State = approval.StateRefused
			r.Decision = &approval.Decision{Actor: st.rec.Decision.Actor, Via: st.rec.Decision.Via, Message: recheckMsg, At: now}
			w["recheck_failed"] = moved(r) // still a tombstone: no card to edit
		}

	case st.rec.State == approval.StatePending:
		at := func(s approval.State, rev int, d *approval.Decision) approval.Record {
			r := *st.rec
			r.State, r.Revision, r.Decision = s, rev, d
			return r
		}
		held := st.rec.Revision
		for _, rq := range []struct {
			name string
			rev  int
		}{{"requested r1", 1}, {"requested r2", 2}, {"reasked r2", 2}, {"reasked r3", 3}, {"question.asked r1", 1}, {"question.asked r3", 3}} {
			if rq.rev > held {
				w[rq.name] = moved(at(approval.StatePending, rq.rev, nil), supersede)
			} else {
				w[rq.name] = ignored
			}
		}
		for _, rs := range []struct {
			name  string
			state approval.State
			rev   int
		}{
			{"resolved approved r1", approval.StateApproved, 1}, {"resolved approved r2", approval.StateApproved, 2},
			{"resolved denied r1", approval.StateDenied, 1}, {"resolved denied r2", approval.StateDenied, 2},
			{"question.answered words r1", approval.StateAnswered, 1}, {"question.answered choice r2", approval.StateAnswered, 2},
		} {
			if rs.rev < held {
				w[rs.name] = ignored // a decision on a superseded revision
				continue
			}
			d := resolvedDecision(rs.name)
			w[rs.name] = moved(at(rs.state, rs.rev, d), editCards, reply(d.Message))
		}
		w["recheck_failed"] = moved(at(approval.StateRefused, held, &approval.Decision{Message: recheckMsg, At: now}),
			editCards, reply(recheckMsg))
		w["cancelled"] = moved(at(approval.StateCancelled, held, &approval.Decision{Comment: cancelReason, At: now}), editCards)
		w["question.cancelled"] = moved(at(approval.StateCancelled, held, &approval.Decision{Comment: qCancelReason, At: now}), editCards)
		w["call.finished"] = notice(finished)

	default: // final, with cards
		for _, n := range []string{"requested r1", "requested r2", "reasked r2", "reasked r3",
			"resolved approved r1", "resolved approved r2", "resolved denied r1", "resolved denied r2", "cancelled",
			"question.asked r1", "question.asked r3", "question.answered words r1", "question.answered choice r2", "question.cancelled"} {
			w[n] = ignored
		}
		w["recheck_failed"] = ignored
		if st.rec.State == approval.StateApproved {
			r := *st.rec
			r.State = approval.StateRefused
			r.Decision = &approval.Decision{Actor: st.rec.Decision.Actor, Via: st.rec.Decision.Via, Message: recheckMsg, At: now}
			w["recheck_failed"] = moved(r, editCards, reply(recheckMsg))
		}
		w["call.finished"] = notice(finished)
	}
	for _, n := range se.names {
		if _, ok := w[n]; !ok {
			t.Fatalf("no expectation for %s × %s", st.name, n)
		}
	}
	return w
}

func copyRecord(r *approval.Record) *approval.Record {
	if r == nil {
		return nil
	}
	c := *r
	if r.Decision != nil {
		d := *r.Decision
		c.Decision = &d
	}
	return &c
}

// TestTransitionMatrix checks every start × event against the rules.
func TestTransitionMatrix(t *testing.T) {
	t.Parallel()
	se := loadStateEvents(t)
	for _, st := range stateStarts(t, se) {
		w := expectations(t, se, st)
		for _, name := range se.names {
			t.Run(st.name+"/"+name, func(t *testing.T) {
				t.Parallel()
				want := w[name]
				cur := copyRecord(st.rec)
				res := approval.Transition(cur, se.ev(name), now)

				if diff := cmp.Diff(st.rec, cur); diff != "" {
					t.Errorf("Transition changed its input record (-before +after):\n%s", diff)
				}
				if res.Changed != want.changed() {
					t.Errorf("Changed = %v, want %v", res.Changed, want.changed())
				}
				switch {
				case want.next != nil:
					if diff := cmp.Diff(*want.next, res.Next); diff != "" {
						t.Errorf("Next (-want +got):\n%s", diff)
					}
				case st.rec != nil:
					// When nothing changed (auto_granted among them), Next is the
					// record as it was, not a zero Record.
					if diff := cmp.Diff(*st.rec, res.Next); diff != "" {
						t.Errorf("nothing changed, yet Next differs from the start (-start +Next):\n%s", diff)
					}
				default:
					if res.Next.State != "" || res.Next.Seen {
						t.Errorf("nothing held and nothing changed, yet Next = %+v", res.Next)
					}
				}
				if diff := cmp.Diff(want.effects, res.Effects, cmpEmpty); diff != "" {
					t.Errorf("Effects (-want +got):\n%s", diff)
				}
				if (res.Ignored != "") != want.ignored {
					t.Errorf("Ignored = %q, want non-empty exactly when nothing applied (%v)", res.Ignored, want.ignored)
				}
			})
		}
	}
}

// cmpEmpty lets a nil and an empty effects list be the same.
var cmpEmpty = cmp.Comparer(func(a, b []approval.Effect) bool {
	if len(a) == 0 && len(b) == 0 {
		return true
	}
	return slices.Equal(a, b)
})

// forward reports whether a record may go from one state to the next:
// pending to anything, approved to refused (the re-check), nothing else.
func forward(from, to approval.State) bool {
	switch {
	case from == to:
		return true
	case from == "" || from == approval.StatePending:
		return to != ""
	case from == approval.StateApproved:
		return to == approval.StateRefused
	}
	return false
}

// isNotice reports whether an event only informs: it carries no state,
// so a second delivery says it again (dedup by event id guards that).
func isNotice(ev *approval.Event) bool {
	return ev.Type == approval.EventCallFinished || ev.Type == approval.EventAutoGranted
}

func hasEffect(effects []approval.Effect, k approval.EffectKind) bool {
	return slices.ContainsFunc(effects, func(e approval.Effect) bool { return e.Kind == k })
}

// checkStep asserts the invariants of one transition from prev (nil: none).
func checkStep(t testing.TB, what string, prev *approval.Record, ev *approval.Event, res approval.Result) {
	t.Helper()
	if ev.Type == approval.EventAutoGranted {
		if res.Changed || !slices.Equal(res.Effects, []approval.Effect{audit}) {
			t.Errorf("%s: auto_granted gave Changed %v effects %v", what, res.Changed, res.Effects)
		}
		return
	}
	if !res.Changed && len(res.Effects) == 0 && res.Ignored == "" {
		t.Errorf("%s: nothing applied but Ignored is empty", what)
	}
	if hasEffect(res.Effects, approval.EffectPostCard) && prev != nil {
		t.Errorf("%s: posted a card for a record already held (%s, seen %v)", what, prev.State, prev.Seen)
	}
	from, prevRev, prevSeen := approval.State(""), 0, false
	if prev != nil {
		from, prevRev, prevSeen = prev.State, prev.Revision, prev.Seen
	}
	if (hasEffect(res.Effects, approval.EffectEditCards) || hasEffect(res.Effects, approval.EffectThreadReply)) && !prevSeen {
		t.Errorf("%s: edited or replied to cards never posted", what)
	}
	if !res.Changed {
		return
	}
	next := res.Next
	if !forward(from, next.State) {
		t.Errorf("%s: state went backward %q → %q", what, from, next.State)
	}
	if next.Revision < prevRev {
		t.Errorf("%s: revision went down %d → %d", what, prevRev, next.Revision)
	}
	if prevSeen && !next.Seen {
		t.Errorf("%s: a seen approval became a tombstone", what)
	}
	if next.State == approval.StateApproved && from != approval.StateApproved &&
		(ev.Type != approval.EventResolved || ev.Resolved.Status != approval.StateApproved) {
		t.Errorf("%s: %s made it approved; only a person's resolve may", what, ev.Type)
	}
	if next.State == approval.StateAnswered && from != approval.StateAnswered && ev.Type != approval.EventQuestionAnswered {
		t.Errorf("%s: %s made it answered; only an answer may", what, ev.Type)
	}
	if next.State.Final() != (next.Decision != nil) {
		t.Errorf("%s: state %s with decision %+v", what, next.State, next.Decision)
	}
	if hasEffect(res.Effects, approval.EffectSupersede) &&
		(prev == nil || prev.State != approval.StatePending || !prev.Seen || next.Revision <= prevRev) {
		t.Errorf("%s: superseded %+v → %+v", what, prev, next)
	}
	if !next.Seen && len(res.Effects) > 0 {
		t.Errorf("%s: a tombstone produced effects %v", what, res.Effects)
	}
}

// checkTwice asserts that the same event again changes nothing.
func checkTwice(t testing.TB, what string, cur *approval.Record, ev *approval.Event) {
	t.Helper()
	res := approval.Transition(copyRecord(cur), ev, now.Add(time.Minute))
	if res.Changed {
		t.Errorf("%s: applied twice, changed again: %+v", what, res.Next)
	}
	if !isNotice(ev) && len(res.Effects) > 0 {
		t.Errorf("%s: applied twice, effects again: %v", what, res.Effects)
	}
	if cur != nil && !isNotice(ev) {
		if diff := cmp.Diff(*cur, res.Next); diff != "" {
			t.Errorf("%s: applied twice, Next moved (-held +Next):\n%s", what, diff)
		}
	}
}

// TestTransitionProperties checks the invariants over the whole matrix,
// and that every event applied twice changes nothing the second time.
func TestTransitionProperties(t *testing.T) {
	t.Parallel()
	se := loadStateEvents(t)
	for _, st := range stateStarts(t, se) {
		for _, name := range se.names {
			what := st.name + " × " + name
			ev := se.ev(name)
			res := approval.Transition(copyRecord(st.rec), ev, now)
			checkStep(t, what, st.rec, ev, res)
			if st.rec != nil && !st.rec.Seen && hasEffect(res.Effects, approval.EffectPostCard) {
				t.Errorf("%s: a tombstone posted a live card", what)
			}
			after := st.rec
			if res.Changed {
				after = &res.Next
			}
			checkTwice(t, what, after, ev)
		}
	}
}

// TestTransitionRandomSequences plays random orders of the fixture-derived
// events (duplicates included) and checks the invariants at every step and
// over the whole sequence.
func TestTransitionRandomSequences(t *testing.T) {
	t.Parallel()
	se := loadStateEvents(t)
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
			for i := range 2000 {
				n := 1 + rng.IntN(20)
				var seq []string
				var rec *approval.Record
				posts, approvedBy := 0, ""
				for range n {
					name := se.names[rng.IntN(len(se.names))]
					seq = append(seq, name)
					what := fmt.Sprintf("seed %d sequence %d %q", seed, i, seq)
					ev := se.ev(name)
					res := approval.Transition(copyRecord(rec), ev, now)
					checkStep(t, what, rec, ev, res)
					if hasEffect(res.Effects, approval.EffectPostCard) {
						posts++
					}
					if res.Changed {
						r := res.Next
						rec = &r
					}
					if rec != nil && rec.State == approval.StateApproved && approvedBy == "" {
						approvedBy = name
					}
					checkTwice(t, what, rec, ev)
					if t.Failed() {
						t.FailNow()
					}
				}
				what := fmt.Sprintf("seed %d sequence %d %q", seed, i, seq)
				if posts > 1 {
					t.Fatalf("%s: %d cards posted for one approval", what, posts)
				}
				if approvedBy != "" && !slices.Contains([]string{"resolved approved r1", "resolved approved r2"}, approvedBy) {
					t.Fatalf("%s: approved by %s", what, approvedBy)
				}
				if firstDecision := slices.IndexFunc(seq, func(n string) bool {
					typ := se.ev(n).Type
					return typ == approval.EventResolved || typ == approval.EventCancelled || typ == approval.EventRecheckFailed ||
						typ == approval.EventQuestionAnswered || typ == approval.EventQuestionCancelled
				}); firstDecision >= 0 {
					firstRequest := slices.IndexFunc(seq, func(n string) bool { return se.ev(n).Approval != nil })
					if (firstRequest < 0 || firstRequest > firstDecision) && posts > 0 {
						t.Fatalf("%s: decided before requested, yet a card was posted", what)
					}
				}
			}
		})
	}
}

// TestTransitionStories plays the fixtures as they arrive, in every order.
func TestTransitionStories(t *testing.T) {
	t.Parallel()
	play := func(t *testing.T, evs []*approval.Event) (rec *approval.Record, effects []approval.Effect) {
		t.Helper()
		for _, ev := range evs {
			res := approval.Transition(copyRecord(rec), ev, now)
			checkStep(t, string(ev.Type), rec, ev, res)
			effects = append(effects, res.Effects...)
			if res.Changed {
				r := res.Next
				rec = &r
			}
		}
		return rec, effects
	}

	t.Run("merge, reasked, denied in every order", func(t *testing.T) {
		t.Parallel()
		files := []string{"merge.json", "merge-reasked.json", "merge-resolved.json"}
		resolved := parseFixture(t, "merge-resolved.json", nil).Resolved
		for _, order := range permutations(len(files)) {
			var evs []*approval.Event
			var names []string
			for _, i := range order {
				evs = append(evs, parseFixture(t, files[i], nil))
				names = append(names, files[i])
			}
			rec, effects := play(t, evs)
			if rec == nil || rec.State != approval.StateDenied || rec.Revision != resolved.Revision ||
				rec.Decision == nil || rec.Decision.Actor != resolved.Actor {
				t.Errorf("%v: ended %+v, want denied by %s at revision %d", names, rec, resolved.Actor, resolved.Revision)
				continue
			}
			wantPost := names[0] != "merge-resolved.json"
			if got := hasEffect(effects, approval.EffectPostCard); got != wantPost {
				t.Errorf("%v: card posted %v, want %v", names, got, wantPost)
			}
			if wantPost && !hasEffect(effects, approval.EffectEditCards) {
				t.Errorf("%v: the posted card was never edited to the decision", names)
			}
		}
	})

	t.Run("orphan resolve before its late request", func(t *testing.T) {
		t.Parallel()
		orphan := parseFixture(t, "orphan-resolved.json", nil)
		late := parseFixture(t, "late-requested.json", nil)
		if orphan.ApprovalID() != late.ApprovalID() {
			t.Fatalf("fixtures are about %s and %s", orphan.ApprovalID(), late.ApprovalID())
		}
		rec, effects := play(t, []*approval.Event{orphan, late})
		if len(effects) != 0 {
			t.Errorf("effects %v, want none: a late request never posts a live card", effects)
		}
		if rec == nil || rec.State != orphan.Resolved.Status || rec.Seen {
			t.Errorf("ended %+v, want %s, still a tombstone", rec, orphan.Resolved.Status)
		}
	})

	t.Run("recheck after approval", func(t *testing.T) {
		t.Parallel()
		req := parseFixture(t, "refund.json", nil)
		approve := parseFixture(t, "merge-resolved.json", func(m map[string]any) {
			d := obj(t, m, "data")
			d["approval_id"], d["status"], d["revision"] = req.Approval.ID, "approved", req.Approval.Revision
		})
		recheck := parseFixture(t, "refund-recheck.json", nil)
		rec, effects := play(t, []*approval.Event{req, approve, recheck})
		if rec == nil || rec.State != approval.StateRefused || rec.Decision.Actor != approve.Resolved.Actor {
			t.Fatalf("ended %+v, want refused, keeping who approved", rec)
		}
		if last := effects[len(effects)-1]; last != reply(recheck.RecheckFailed.Message) {
			t.Errorf("last effect %+v, want the re-check's message in the threads", last)
		}
		// The approve arriving after the re-check does not undo it.
		rec2, _ := play(t, []*approval.Event{req, recheck, approve})
		if rec2.State != approval.StateRefused {
			t.Errorf("re-check then late approve ended %s, want refused", rec2.State)
		}
	})

	t.Run("question asked, asked again, answered in every order", func(t *testing.T) {
		t.Parallel()
		files := []string{"question.json", "question.json r2", "question-answered.json"}
		answered := parseFixture(t, "question-answered.json", func(m map[string]any) { obj(t, m, "data")["revision"] = 2 })
		events := []*approval.Event{parseFixture(t, "question.json", nil),
			parseFixture(t, "question.json", func(m map[string]any) { obj(t, m, "data")["revision"] = 2 }), answered}
		for _, order := range permutations(len(files)) {
			var evs []*approval.Event
			var names []string
			for _, i := range order {
				evs = append(evs, events[i])
				names = append(names, files[i])
			}
			rec, effects := play(t, evs)
			if rec == nil || rec.State != approval.StateAnswered || rec.Revision != 2 || rec.Decision == nil ||
				rec.Decision.Actor != answered.Resolved.Actor || rec.Decision.Answer != answered.Resolved.Answer.Text || rec.Decision.Choice != 0 {
				t.Errorf("%v: ended %+v, want answered by %s at revision 2 in words", names, rec, answered.Resolved.Actor)
				continue
			}
			wantPost := names[0] != "question-answered.json"
			if got := hasEffect(effects, approval.EffectPostCard); got != wantPost {
				t.Errorf("%v: card posted %v, want %v", names, got, wantPost)
			}
			if wantPost && !slices.Contains(effects, reply(answered.Resolved.Message)) {
				t.Errorf("%v: effects %v, want the backend's message in the threads", names, effects)
			}
		}
	})

	t.Run("question cancelled after its answer stays answered", func(t *testing.T) {
		t.Parallel()
		rec, _ := play(t, []*approval.Event{parseFixture(t, "question.json", nil), parseFixture(t, "question-answered.json", nil),
			parseFixture(t, "question-cancelled.json", func(m map[string]any) { obj(t, m, "data")["question_id"] = "q-refund1" })})
		if rec == nil || rec.State != approval.StateAnswered {
			t.Errorf("ended %+v, want answered", rec)
		}
	})

	t.Run("search finished", func(t *testing.T) {
		t.Parallel()
		fin := parseFixture(t, "search-finished.json", nil)
		_, effects := play(t, []*approval.Event{parseFixture(t, "search.json", nil), fin})
		if want := []approval.Effect{postCard, reply(approval.FinishedText(fin.Finished))}; !slices.Equal(effects, want) {
			t.Errorf("effects %v, want %v", effects, want)
		}
	})
}

func permutations(n int) [][]int {
	if n == 0 {
		return [][]int{nil}
	}
	var out [][]int
	for _, p := range permutations(n - 1) {
		for i := 0; i <= len(p); i++ {
			q := slices.Insert(slices.Clone(p), i, n-1)
			out = append(out, q)
		}
	}
	return out
}

func TestFinishedText(t *testing.T) {
	t.Parallel()
	tests := []struct {
		f    approval.Finished
		want string
	}{
		{approval.Finished{Outcome: approval.OutcomeCompleted, Summary: "3 rows"}, "The call completed: 3 rows"},
		{approval.Finished{Outcome: approval.OutcomeCompleted}, "The call completed."},
		{approval.Finished{Outcome: approval.OutcomeFailed, Summary: "timeout"}, "The call failed: timeout"},
		{approval.Finished{Outcome: approval.OutcomeFailed}, "The call failed."},
	}
	for _, tt := range tests {
		if got := approval.FinishedText(&tt.f); got != tt.want {
			t.Errorf("FinishedText(%+v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}

func TestStates(t *testing.T) {
	t.Parallel()
	got := map[approval.State]bool{}
	for _, s := range approval.States() {
		if got[s] {
			t.Errorf("state %s listed twice", s)
		}
		got[s] = true
	}
	if approval.StatePending.Final() || approval.State("").Final() {
		t.Error("pending or no state counts as final")
	}
	for _, s := range []approval.State{approval.StateApproved, approval.StateDenied, approval.StateExpired,
		approval.StateCancelled, approval.StateRefused, approval.StateAnswered} {
		if !got[s] || !s.Final() {
			t.Errorf("state %s: listed %v, final %v", s, got[s], s.Final())
		}
	}
}

// TestTransitionRedactsFreeText: the free text of an event reaches the
// record it stores and the replies it enqueues only through RedactText.
func TestTransitionRedactsFreeText(t *testing.T) {
	t.Parallel()
	const secret = "ghp_abcdefghijklmnopqrstuvwxyz0123"
	text := "see GITHUB_TOKEN=" + secret
	want := approval.RedactText(text)
	if want == text {
		t.Fatalf("RedactText(%q) changed nothing", text)
	}
	seen := &approval.Record{ID: "a-1", Tenant: "acme", Revision: 1, State: approval.StatePending, Seen: true}
	approved := *seen
	approved.State = approval.StateApproved
	events := []struct {
		name string
		cur  *approval.Record
		ev   approval.Event
	}{
		{"resolved", seen, approval.Event{Type: approval.EventResolved, Resolved: &approval.Resolved{ApprovalID: "a-1", Revision: 1,
			Status: approval.StateDenied, Actor: "user:kevin " + text, Via: "cli " + text, Comment: text, Message: text}}},
		{"recheck failed", &approved, approval.Event{Type: approval.EventRecheckFailed, RecheckFailed: &approval.RecheckFailed{ApprovalID: "a-1", Message: text}}},
		{"cancelled", seen, approval.Event{Type: approval.EventCancelled, Cancelled: &approval.Cancelled{ApprovalID: "a-1", Reason: text}}},
		{"question answered", seen, approval.Event{Type: approval.EventQuestionAnswered, Resolved: &approval.Resolved{ApprovalID: "a-1", Revision: 1,
			Status: approval.StateAnswered, Actor: "user:kevin " + text, Via: "console " + text, Message: text, Answer: &approval.Answer{Text: text}}}},
		{"question cancelled", seen, approval.Event{Type: approval.EventQuestionCancelled, Cancelled: &approval.Cancelled{ApprovalID: "a-1", Reason: text}}},
		{"call finished", seen, approval.Event{Type: approval.EventCallFinished, Finished: &approval.Finished{ApprovalID: "a-1",
			Outcome: approval.OutcomeCompleted, Summary: text}}},
	}
	for _, tt := range events {
		tt.ev.Tenant = "acme"
		res := approval.Transition(tt.cur, &tt.ev, now)
		if d := res.Next.Decision; d != nil {
			if strings.Contains(d.Actor, secret) || strings.Contains(d.Via, secret) {
				t.Errorf("%s: decision by %q via %q keeps the secret", tt.name, d.Actor, d.Via)
			}
			if d.Comment != "" && d.Comment != want || d.Message != "" && d.Message != want {
				t.Errorf("%s: decision %+v, want its text %q", tt.name, d, want)
			}
			if d.Comment == "" && d.Message == "" {
				t.Errorf("%s: decision %+v keeps no text", tt.name, d)
			}
		}
		replies := 0
		for _, e := range res.Effects {
			if e.Kind != approval.EffectThreadReply {
				continue
			}
			replies++
			if !strings.Contains(e.Text, want) {
				t.Errorf("%s: reply %q, want it to say %q", tt.name, e.Text, want)
			}
		}
		if res.Next.Decision == nil && replies == 0 {
			t.Errorf("%s: neither a decision nor a reply: %+v", tt.name, res)
		}
		if strings.Contains(fmt.Sprintf("%+v", res), secret) {
			t.Errorf("%s: the result keeps the secret: %+v", tt.name, res)
		}
	}
}
