package threads_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/config"
	"approvalsbot/internal/golden"
	"approvalsbot/store"
	"approvalsbot/threads"
	"approvalsbot/threads/threadstest"
)

// fatigueHarness decides through the fake backend with the metrics kept.
func fatigueHarness(t *testing.T) (*decideHarness, *threads.Metrics) {
	t.Helper()
	m := threads.NewMetrics(prometheus.NewRegistry())
	h := newDecideHarnessFrom(t, testConfig, time.Minute, func(o *threads.Options) { o.Metrics = m })
	return h, m
}

// ingestCopy ingests fixture name as approval id (event evID): the same
// call, function and digest, asked again.
func (h *decideHarness) ingestCopy(t *testing.T, name, from, id, evID string) {
	t.Helper()
	body, _ := threadstest.Event(t, name)
	body = bytes.ReplaceAll(body, []byte(`"`+from+`"`), []byte(`"`+id+`"`))
	body = bytes.Replace(body, []byte(`"evt-0001"`), []byte(`"`+evID+`"`), 1)
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
}

func outcomes(t *testing.T, st store.Store) map[string]*store.Outcome {
	t.Helper()
	got, err := st.OutcomeList(context.Background(), store.OutcomeListParams{Since: time.Unix(1, 0), Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*store.Outcome{}
	for _, o := range got {
		out[o.ApprovalID] = o
	}
	return out
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var pb dto.Metric
	if err := c.Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetCounter().GetValue()
}

func histogramCount(t *testing.T, h *prometheus.HistogramVec, labels ...string) uint64 {
	t.Helper()
	c, err := h.GetMetricWithLabelValues(labels...)
	if err != nil {
		t.Fatal(err)
	}
	var pb dto.Metric
	if err := c.(prometheus.Metric).Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetHistogram().GetSampleCount()
}

// A destructive call approved at once where its card was posted counts as
// quick; the same call approved again within the day counts as a repeat;
// the outcome row says who, where, when, and nothing of the arguments.
func TestFatigueQuickAndRepeatedApprovals(t *testing.T) {
	h, m := fatigueHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t) // the cards are posted now
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("not sent: %s", res.Reason.String())
	}
	h.drain(t)
	if got := counterValue(t, m.QuickApprovals.WithLabelValues("acme", "slack")); got != 1 {
		t.Errorf("quick approvals = %v, want 1", got)
	}
	if got := counterValue(t, m.RepeatApprovals.WithLabelValues("acme")); got != 0 {
		t.Errorf("repeats after the first = %v, want 0", got)
	}
	if n := histogramCount(t, m.Decided, "acme", "approved", threads.EffectLabelDestructive); n != 1 {
		t.Errorf("decisions observed = %d, want 1", n)
	}
	if n := histogramCount(t, m.FirstLook, "acme"); n != 1 {
		t.Errorf("first looks observed = %d, want 1", n)
	}

	// The same call again, approved after reading it for a minute: a
	// repeat, not quick.
	h.fake.AddApproval("a-merge2", 1, arguments(t, "a-merge1.json"), false)
	h.ingestCopy(t, "merge.json", "a-merge1", "a-merge2", "evt-copy-2")
	h.drain(t)
	h.clock.Advance(time.Minute)
	if res := h.decide(t, "a-merge2", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("not sent: %s", res.Reason.String())
	}
	h.drain(t)
	if got := counterValue(t, m.QuickApprovals.WithLabelValues("acme", "slack")); got != 1 {
		t.Errorf("quick approvals = %v, want still 1", got)
	}
	if got := counterValue(t, m.RepeatApprovals.WithLabelValues("acme")); got != 1 {
		t.Errorf("repeats = %v, want 1", got)
	}

	rows := outcomes(t, h.store)
	first, second := rows["a-merge1"], rows["a-merge2"]
	if first == nil || second == nil {
		t.Fatalf("outcome rows: %v", rows)
	}
	if first.State != "approved" || first.Actor != "user:kevin" || first.Surface != "slack" || !first.Quick ||
		first.Effect != threads.EffectLabelDestructive || first.Function != "acme_github.merge" || first.Job != "j-42" ||
		first.Ladder != "default" || first.FirstLookAt.IsZero() || !first.FirstLookAt.Equal(first.DecidedAt) {
		t.Errorf("first outcome %+v", first)
	}
	if second.Quick || second.ArgsSHA256 != first.ArgsSHA256 || second.DecidedAt.Sub(second.RequestedAt) < time.Minute {
		t.Errorf("second outcome %+v", second)
	}
}

// The deadline's deny counts under its ladder; nobody looked, so no
// first look is observed; the steps the ladder fired on its way count by
// time, and one pressed by a person by person.
func TestFatigueDeadlineAndSteps(t *testing.T) {
	h, m := fatigueHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	if res := h.escalateNow(t, "a-merge1", 1, 0, "U0KEVIN"); !res.Done {
		t.Fatalf("escalate now: %s", res.Reason.String())
	}
	if got := counterValue(t, m.StepsFired.WithLabelValues("acme", "default", threads.StepsByPerson)); got != 1 {
		t.Errorf("steps fired by a person = %v, want 1", got)
	}
	h.at(t, 2*time.Hour)
	h.tick(t)
	h.drain(t)
	if got := counterValue(t, m.StepsFired.WithLabelValues("acme", "default", threads.StepsByTime)); got != 1 {
		t.Errorf("steps fired by time = %v, want 1 (the 1h step)", got)
	}
	h.at(t, 25*time.Hour)
	h.tick(t)
	h.clock.Advance(2 * threads.RecordBound)
	h.drain(t)
	if a := h.state(t, "a-merge1"); a.State != "expired" {
		t.Fatalf("state %s, want expired", a.State)
	}
	if got := counterValue(t, m.DeadlineDenies.WithLabelValues("acme", "default")); got != 1 {
		t.Errorf("deadline denies = %v, want 1", got)
	}
	if n := histogramCount(t, m.Decided, "acme", "expired", threads.EffectLabelDestructive); n != 1 {
		t.Errorf("expired decisions observed = %d, want 1", n)
	}
	o := outcomes(t, h.store)["a-merge1"]
	if o == nil || o.State != "expired" || o.Surface != threads.DeadlineSurface || o.Steps < 2 || o.FirstLookAt.IsZero() {
		// Escalate now is an act a person recorded: the first look.
		t.Errorf("outcome %+v", o)
	}
}

func TestEffectLabel(t *testing.T) {
	yes, no := true, false
	cases := []struct {
		name string
		ann  approval.Annotations
		kind approval.Kind
		cls  string
		want string
	}{
		{"nothing said", approval.Annotations{}, approval.KindCall, "", threads.EffectLabelUnknown},
		{"reads only", approval.Annotations{ReadOnlyHint: &yes, DestructiveHint: &no, OpenWorldHint: &yes}, approval.KindCall, "", threads.EffectLabelReadsOnly},
		{"reads only, class write", approval.Annotations{ReadOnlyHint: &yes}, approval.KindCall, approval.ClassWrite, threads.EffectLabelWrite},
		{"destructive", approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &yes}, approval.KindCall, "", threads.EffectLabelDestructive},
		{"class destructive", approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &no, OpenWorldHint: &no}, approval.KindCall, approval.ClassDestructive, threads.EffectLabelDestructive},
		{"class egress", approval.Annotations{ReadOnlyHint: &yes}, approval.KindCall, approval.ClassEgress, threads.EffectLabelEgress},
		{"write outside", approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &no}, approval.KindCall, "", threads.EffectLabelEgress},
		{"write inside", approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &no, OpenWorldHint: &no}, approval.KindCall, "", threads.EffectLabelWrite},
		{"changeset", approval.Annotations{}, approval.KindChanges, "", threads.EffectLabelWrite},
		{"question", approval.Annotations{}, approval.KindQuestion, "", threads.EffectLabelQuestion},
		{"question, whatever its annotations say", approval.Annotations{ReadOnlyHint: &no, DestructiveHint: &yes}, approval.KindQuestion, approval.ClassDestructive, threads.EffectLabelQuestion},
	}
	for _, c := range cases {
		a := &approval.Approval{Kind: c.kind, Call: approval.Call{Annotations: c.ann}}
		if c.cls != "" {
			a.Flags.ClassAbove = &approval.ClassAbove{Class: c.cls}
		}
		if got := threads.EffectLabel(a); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

// weekOfOutcomes writes a tenant's week into st as the bot would have
// recorded it, around now: a call approved 6 times by 3 people (a
// grant's case), one approved 4 times (below the threshold), a hostile
// function name approved 5 times, a ladder whose decisions mostly came
// after step 2, two expiries, agents' questions answered late and
// unanswered, a quick destructive Approve, and
// decisions older than the week that count for nothing.
func weekOfOutcomes(t *testing.T, st store.Store, now time.Time) {
	t.Helper()
	type o struct {
		id, tenant, function, digest, ladder, state, actor, surface string
		effect                                                      string // write when ""
		steps                                                       int
		wait                                                        time.Duration
		ago                                                         time.Duration
		quick, restricted                                           bool
	}
	var rows []o
	add := func(n int, r o) {
		for i := range n {
			c := r
			c.id = fmt.Sprintf("%s-%d", r.id, i)
			c.ago = r.ago + time.Duration(i)*time.Hour
			c.actor = []string{"user:kevin", "user:ada", "user:lee"}[i%3]
			c.wait = r.wait + time.Duration(i)*10*time.Second
			rows = append(rows, c)
		}
	}
	add(6, o{id: "comment", tenant: "acme", function: "acme_github.comment", digest: "d-comment", ladder: "default",
		state: "approved", surface: "slack", wait: 20 * time.Second, ago: time.Hour})
	add(4, o{id: "label", tenant: "acme", function: "acme_github.label", digest: "d-label", ladder: "default",
		state: "approved", surface: "discord", wait: time.Minute, ago: 2 * time.Hour})
	add(5, o{id: "evil", tenant: "acme", function: "evil\n• fake line <!channel> =cmd", digest: "d-evil", ladder: "default",
		state: "approved", surface: "slack", wait: 3 * time.Minute, ago: 3 * time.Hour})
	add(6, o{id: "pay", tenant: "acme", function: "payments.refund", digest: "", ladder: "payments",
		state: "denied", surface: "slack", steps: 2, wait: time.Hour, ago: 4 * time.Hour})
	add(3, o{id: "pay-early", tenant: "acme", function: "payments.refund", digest: "", ladder: "payments",
		state: "approved", surface: "email", steps: 1, wait: 10 * time.Minute, ago: 5 * time.Hour})
	add(2, o{id: "pay-late", tenant: "acme", function: "payments.refund", digest: "", ladder: "payments",
		state: "expired", surface: threads.DeadlineSurface, steps: 3, wait: 2 * time.Hour, ago: 6 * time.Hour})
	add(6, o{id: "hidden", tenant: "acme", function: "acme_private.send", digest: "d-hidden", ladder: "default",
		state: "approved", surface: "slack", wait: time.Second, ago: time.Hour, restricted: true})
	add(1, o{id: "merge", tenant: "acme", function: "acme_github.merge", digest: "d-merge", ladder: "default",
		state: "approved", surface: "slack", wait: 3 * time.Second, ago: 7 * time.Hour, quick: true})
	// Agents' questions: answered (people's decisions of the ladder, late
	// ones among them) and closed by the deadline (unanswered, never a
	// call that expired), none ever a grant's case.
	add(5, o{id: "ask", tenant: "acme", function: "question", ladder: "questions", effect: threads.EffectLabelQuestion,
		state: "answered", surface: "slack", steps: 2, wait: time.Hour, ago: 2 * time.Hour})
	add(2, o{id: "ask-late", tenant: "acme", function: "question", ladder: "questions", effect: threads.EffectLabelQuestion,
		state: "expired", surface: threads.DeadlineSurface, steps: 3, wait: 24 * time.Hour, ago: 3 * time.Hour})
	add(6, o{id: "old", tenant: "acme", function: "acme_github.old", digest: "d-old", ladder: "default",
		state: "approved", surface: "slack", wait: time.Second, ago: 8 * 24 * time.Hour})
	add(6, o{id: "zeta", tenant: "zeta", function: "zeta.call", digest: "d-zeta", ladder: "default",
		state: "approved", surface: "slack", wait: time.Second, ago: time.Hour})
	err := st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for _, r := range rows {
			decided := now.Add(-r.ago)
			if err := tx.OutcomeRequest(ctx, store.OutcomeRequestParams{ApprovalID: r.id, Tenant: r.tenant, Job: "j",
				Function: r.function, ArgsSHA256: r.digest, Effect: cmp.Or(r.effect, threads.EffectLabelWrite), Ladder: r.ladder,
				Restricted: r.restricted, Revision: 1, RequestedAt: decided.Add(-r.wait)}); err != nil {
				return err
			}
			if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: r.id, State: r.state, Actor: r.actor,
				Surface: r.surface, Steps: r.steps, Quick: r.quick, DecidedAt: decided}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// The digest gains the week's lines a lead can act on, from the store;
// a function name from a request stays on its own line, redacted.
func TestDigestGolden(t *testing.T) {
	h := newHarness(t)
	h.ingest(t, "merge.json")
	weekOfOutcomes(t, h.store, h.clock.Now())
	if err := h.svc.Digest(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if len(h.surf.notices) != 1 {
		t.Fatalf("notices %+v", h.surf.notices)
	}
	n := h.surf.notices[0]
	if !n.Lines {
		t.Error("the digest's notice does not keep its lines")
	}
	golden.Check(t, "testdata/digest/acme.txt", n.Text, *update)
	for _, not := range []string{"acme_github.label", "acme_github.old", "zeta", "d-comment", "\nfake line", "acme_private"} {
		if strings.Contains(n.Text, not) {
			t.Errorf("the digest says %q:\n%s", not, n.Text)
		}
	}
}

// A week without anything worth a line leaves the digest as it was.
func TestDigestWithoutFatigueLines(t *testing.T) {
	h := newHarness(t)
	if err := h.svc.Digest(context.Background(), "acme"); err != nil {
		t.Fatal(err)
	}
	h.drain(t)
	if len(h.surf.notices) != 1 || h.surf.notices[0].Text != "Nothing waits for a decision in acme." {
		t.Fatalf("notices %+v", h.surf.notices)
	}
}

// Each configured tenant's and ladder's counters start at 0, so the first
// quick Approve is an increase a dashboard sees.
func TestStartFiguresAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := threads.NewMetrics(reg)
	h := newHarnessWith(t, func(o *threads.Options) { o.Metrics = m })
	cfg, err := config.Parse("bot.yaml", []byte(testConfig), testEnv)
	if err != nil {
		t.Fatal(err)
	}
	h.svc.StartFigures(cfg.Tenants)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, mf := range mfs {
		for _, mm := range mf.GetMetric() {
			if mm.GetCounter().GetValue() != 0 {
				t.Errorf("%s starts at %v", mf.GetName(), mm.GetCounter().GetValue())
			}
			got[mf.GetName()]++
		}
	}
	// acme and quiet: 3 surfaces each; a repeat series each; the default
	// ladder (acme configures only that one) by how, and its deadline.
	want := map[string]int{"bot_quick_destructive_approvals_total": 6, "bot_repeat_approvals_total": 2,
		"bot_ladder_steps_fired_total": 4, "bot_deadline_denies_total": 2}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s: %d series, want %d", name, got[name], n)
		}
	}
}

// An approval a re-check refuses is counted once, as approved; its
// outcome row takes the refusal and keeps who approved it and when.
func TestFatigueRecheckCountsOnce(t *testing.T) {
	h, m := fatigueHarness(t)
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	h.clock.Advance(30 * time.Second)
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("not sent: %s", res.Reason.String())
	}
	h.drain(t)
	approved := outcomes(t, h.store)["a-merge1"]
	h.clock.Advance(time.Minute)
	h.ingestCopy(t, "refund-recheck.json", "a-refund1", "a-merge1", "evt-unused")
	h.drain(t)
	o := outcomes(t, h.store)["a-merge1"]
	if o == nil || approved == nil || o.State != "refused" || o.Actor != "user:kevin" || !o.DecidedAt.Equal(approved.DecidedAt) {
		t.Fatalf("outcome after the re-check %+v (before %+v)", o, approved)
	}
	effect := o.Effect
	if n := histogramCount(t, m.Decided, "acme", "approved", effect); n != 1 {
		t.Errorf("approvals observed = %d, want 1", n)
	}
	if n := histogramCount(t, m.Decided, "acme", "refused", effect); n != 0 {
		t.Errorf("refusals observed = %d, want 0: the approval was counted", n)
	}
}

// A value from a request is kept for the figures as a card's line shows
// it: redacted, one line, invisible characters shown, cut.
func TestOutcomeTextAsCardsShowIt(t *testing.T) {
	h := newHarness(t)
	body, _ := threadstest.Event(t, "merge.json")
	hostile := "acme_github.merge\u202e\n\tevil " + strings.Repeat("x", 300)
	raw, err := json.Marshal(hostile)
	if err != nil {
		t.Fatal(err)
	}
	body = bytes.Replace(body, []byte(`"acme_github.merge"`), raw, 1)
	ev, err := approval.Parse(body)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.ingestBody(body, ev); err != nil {
		t.Fatal(err)
	}
	// Closed by the console, so the row is listed.
	h.ingest(t, "merge-resolved.json")
	o := outcomes(t, h.store)["a-merge1"]
	if o == nil {
		t.Fatal("no outcome row")
	}
	if strings.ContainsAny(o.Function, "\n\t\u202e") || !strings.Contains(o.Function, "[U+202E]") || !strings.HasSuffix(o.Function, "…") ||
		len([]rune(o.Function)) > 200 {
		t.Errorf("function kept as %q", o.Function)
	}
	if o.State != "denied" || o.Surface != "console" || o.Actor != "user:kevin" || !o.FirstLookAt.IsZero() {
		t.Errorf("outcome of a decision made in the console: %+v", o)
	}
}

// Outcomes are kept as long as closed approvals' content, and at least 8
// days, so that a short retention still leaves the digest its week.
func TestOutcomesKeptAtLeastAWeek(t *testing.T) {
	h := newHarness(t)
	now := h.clock.Now()
	err := h.store.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for id, ago := range map[string]time.Duration{"week": 7 * 24 * time.Hour, "older": 9 * 24 * time.Hour} {
			if err := tx.OutcomeRequest(ctx, store.OutcomeRequestParams{ApprovalID: id, Tenant: "acme", Function: "f",
				Effect: threads.EffectLabelWrite, Ladder: "default", Revision: 1, RequestedAt: now.Add(-ago)}); err != nil {
				return err
			}
			if err := tx.OutcomeClose(ctx, store.OutcomeCloseParams{ApprovalID: id, State: "approved", DecidedAt: now.Add(-ago)}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.svc.Pruner(threads.Retention{Closed: 24 * time.Hour, Tombstones: 365 * 24 * time.Hour}).Prune(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res[threads.PrunedOutcomes] != 1 {
		t.Errorf("pruned %v, want one outcome", res)
	}
	left := outcomes(t, h.store)
	if left["week"] == nil || left["older"] != nil {
		t.Errorf("left %v, want the week's alone", left)
	}
}

// Under a quorum each approval is a person's Approve: the one given at
// once counts as quick, the one given after reading for a minute does
// not; the first look is the first approval; the ladder is the quorum's.
func TestFatigueQuorumApprovals(t *testing.T) {
	m := threads.NewMetrics(prometheus.NewRegistry())
	h := newDecideHarnessWith(t, quorumConfig, time.Minute, []string{backend.FeatureApprovers}, func(o *threads.Options) { o.Metrics = m })
	h.fake.AddApproval("a-merge1", 1, arguments(t, "a-merge1.json"), false)
	h.ingest(t, "merge.json")
	h.drain(t)
	first := h.clock.Now()
	if res := h.decide(t, "a-merge1", 1, true, "U0KEVIN"); !res.Sent {
		t.Fatalf("kevin: %s", res.Reason.String())
	}
	h.clock.Advance(time.Minute)
	if res := h.decide(t, "a-merge1", 1, true, "U0LEE"); !res.Sent {
		t.Fatalf("lee: %s", res.Reason.String())
	}
	h.drain(t)
	if a := h.state(t, "a-merge1"); a.State != "approved" {
		t.Fatalf("state %s", a.State)
	}
	if got := counterValue(t, m.QuickApprovals.WithLabelValues("acme", "slack")); got != 1 {
		t.Errorf("quick approvals = %v, want 1 (kevin's)", got)
	}
	o := outcomes(t, h.store)["a-merge1"]
	if o == nil || !o.Quick || o.Actor != "user:lee" || o.Ladder != "quorum" || !o.FirstLookAt.Equal(first) {
		t.Errorf("outcome %+v, want quick, decided by lee, on the quorum ladder, first looked at %v", o, first)
	}
}

// An agent's question's outcome is named by its kind, never its text,
// with the question's effect: answered by the person who answered, or
// closed by the deadline with nobody's answer; the digest then counts it
// on its ladder as a question, never as a call.
func TestQuestionOutcomes(t *testing.T) {
	h := newAnsweringHarness(t, time.Minute)
	h.ingest(t, "question.json")
	h.ingest(t, "question-private.json")
	h.drain(t)
	if out := h.answer(t, "q-refund1", 1, 1, "", "U0KEVIN"); !out.Sent {
		t.Fatalf("answer: %s", out.Reason.String())
	}
	h.drain(t)
	h.at(t, 24*time.Hour+threads.RecordBound)
	h.tick(t)
	h.at(t, 24*time.Hour+2*threads.RecordBound)
	h.drain(t)
	got := outcomes(t, h.store)
	for id, want := range map[string]struct{ state, actor, surface string }{
		"q-refund1": {"answered", "user:kevin", "slack"},
		"q-priv1":   {"expired", threads.DeadlineActor, threads.DeadlineSurface},
	} {
		o := got[id]
		if o == nil || o.Function != "question" || o.Effect != threads.EffectLabelQuestion || o.State != want.state ||
			o.Actor != want.actor || o.Surface != want.surface || o.ArgsSHA256 != "" {
			t.Errorf("outcome of %s: %+v, want a question %s by %s on %s", id, o, want.state, want.actor, want.surface)
		}
	}
	f, err := threads.DigestFiguresOf(h.svc, "acme", h.clock.Now())
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Lad) != 1 || f.Lad[0].Decided != 1 || f.Lad[0].Unanswered != 1 || f.Lad[0].Expired != 0 {
		t.Errorf("the digest's ladders %+v: want one answer and one question nobody answered, no call expired", f.Lad)
	}
}
