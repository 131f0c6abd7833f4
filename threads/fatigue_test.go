package threads_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"approvalsbot/approval"
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
