package threads

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/ladder"
	"approvalsbot/store"
)

// Metrics are the counters threads keeps.
type Metrics struct {
	Deliveries  *prometheus.CounterVec // surface, kind, result
	AutoGranted *prometheus.CounterVec // tenant
	Pruned      *prometheus.CounterVec // what: PrunedApprovals, PrunedOutbox, …
	// IngestGroup is how many events each ingest transaction committed.
	IngestGroup prometheus.Histogram
	// IngestReworked counts events whose content work was redone inside their
	// transaction: another writer changed the approval meanwhile.
	IngestReworked prometheus.Counter

	// The figures of approval fatigue (fatigue.go), counted once the
	// transaction they describe commits. Labels are the tenant's and its
	// ladders' configured names and small fixed sets, never a value from
	// a request.
	Decided         *prometheus.HistogramVec // tenant, outcome, effect
	FirstLook       *prometheus.HistogramVec // tenant
	StepsFired      *prometheus.CounterVec   // tenant, ladder, how
	DeadlineDenies  *prometheus.CounterVec   // tenant, ladder
	QuickApprovals  *prometheus.CounterVec   // tenant, surface
	RepeatApprovals *prometheus.CounterVec   // tenant
}

// Buckets of the fatigue histograms: from seconds (a click on a card just
// posted) to the days a deadline may allow.
var (
	decidedBuckets   = []float64{5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400, 43200, 86400, 259200}
	firstLookBuckets = []float64{1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 14400, 86400}
)

// The values of bot_ladder_steps_fired_total's how label.
const (
	StepsByTime   = "time"   // the ladder's schedule fired them
	StepsByPerson = "person" // a person pressed Escalate now
)

// NewMetrics registers the counters with reg (nil: unregistered, for tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Deliveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_deliveries_total",
			Help: "Outbox rows performed, by surface, kind and result (ok, retry, dead, lease_lost).",
		}, []string{"surface", "kind", "result"}),
		AutoGranted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_auto_granted_total",
			Help: "approval.auto_granted events: calls that ran unattended, by tenant.",
		}, []string{"tenant"}),
		Pruned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_pruned_total",
			Help: "What retention removed: approvals cut to tombstones, tombstones and event ids forgotten, finished outbox rows deleted, expired chat handles dropped.",
		}, []string{"what"}),
		IngestGroup: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "bot_ingest_group_events",
			Help:    "Events committed by each ingest transaction: events that arrive while one commits share the next.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64},
		}),
		IngestReworked: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "bot_ingest_reworked_total",
			Help: "Events whose redaction and reask were worked out again inside their transaction, because another writer changed the approval in between.",
		}),
		Decided: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bot_approval_decision_seconds",
			Help:    "From an approval's request to its close, by tenant, outcome (the final state) and effect (reads_only, write, destructive, egress, unknown).",
			Buckets: decidedBuckets,
		}, []string{"tenant", "outcome", "effect"}),
		FirstLook: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "bot_approval_first_look_seconds",
			Help:    "From an approval's request to the first act a person recorded on it through the bot (I'm looking, Escalate now, an approval towards a quorum, the decision), observed when it closes, by tenant.",
			Buckets: firstLookBuckets,
		}, []string{"tenant"}),
		StepsFired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_ladder_steps_fired_total",
			Help: "Ladder steps fired, by tenant, ladder and how (time: the schedule; person: Escalate now).",
		}, []string{"tenant", "ladder", "how"}),
		DeadlineDenies: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_deadline_denies_total",
			Help: "Approvals the deadline denied (expired), by tenant and ladder.",
		}, []string{"tenant", "ladder"}),
		QuickApprovals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_quick_destructive_approvals_total",
			Help: "Approves of destructive calls given within 5 s of the card being posted where that person decided, by tenant and surface: a rubber-stamp signal.",
		}, []string{"tenant", "surface"}),
		RepeatApprovals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "bot_repeat_approvals_total",
			Help: "Approvals of a call whose function and arguments digest were approved within the previous 24 h, by tenant.",
		}, []string{"tenant"}),
	}
	// Every label set starts at 0, so the first row to die is an increase:
	// a series born at 1 is none to increase() and rate(), and the alerts on
	// dead and failing rows (deploy/prometheus/alerts.yml) would miss it.
	for _, d := range deliverySeries() {
		m.Deliveries.WithLabelValues(d.Surface, d.Kind, d.Result)
	}
	if reg != nil {
		reg.MustRegister(m.Deliveries, m.AutoGranted, m.Pruned, m.IngestGroup, m.IngestReworked,
			m.Decided, m.FirstLook, m.StepsFired, m.DeadlineDenies, m.QuickApprovals, m.RepeatApprovals)
	}
	return m
}

// The values of bot_deliveries_total's result label.
const (
	resultOK         = "ok"         // performed and recorded
	resultWait       = "wait"       // waits for its card to be posted
	resultRetry      = "retry"      // failed; tried again later
	resultDead       = "dead"       // failed for good
	resultStopped    = "stopped"    // cut short by a stop; due again at the next start
	resultLeaseLost  = "lease_lost" // another worker holds the row now
	resultUnrecorded = "unrecorded" // the store refused the result
)

// deliveryResults lists every result.
var deliveryResults = []string{resultOK, resultWait, resultRetry, resultDead, resultStopped, resultLeaseLost, resultUnrecorded}

// Surfaces a delivery is counted under besides the chat surfaces and
// email: the backend's for decisions, "log" for the fallback, and
// "push" for push notices.
const (
	surfaceBackend = "backend" // decisions, sent to the job backend
	surfaceLog     = "log"
	surfacePush    = "push" // push notices, sent to members' push addresses
)

// chatSurfaces are the surfaces a chat-lane row is counted under.
var chatSurfaces = []string{ladder.SurfaceSlack, ladder.SurfaceDiscord, surfaceLog}

// outboxKinds lists every kind of outbox row.
var outboxKinds = []string{KindDecision, KindPostCard, KindEditCard, KindReply, KindTell, KindNotice, KindEmail, KindPush, KindRevoke}

// deliveryLabels is one label set of bot_deliveries_total.
type deliveryLabels struct{ Surface, Kind, Result string }

// deliverySeries lists every label set of bot_deliveries_total the bot
// can count: each kind under its lane's surfaces, with every result.
func deliverySeries() []deliveryLabels {
	var out []deliveryLabels
	for _, kind := range outboxKinds {
		var surfaces []string
		switch laneOf(kind) {
		case LaneBackend:
			surfaces = []string{surfaceBackend}
		case LaneMail:
			surfaces = []string{ladder.SurfaceEmail}
		case LanePush:
			surfaces = []string{surfacePush}
		default:
			surfaces = chatSurfaces
		}
		for _, surface := range surfaces {
			for _, result := range deliveryResults {
				out = append(out, deliveryLabels{Surface: surface, Kind: kind, Result: result})
			}
		}
	}
	return out
}

// OutboxCollector reports the outbox's depth at each scrape.
type OutboxCollector struct {
	Store store.Store
	Clock Clock
}

var (
	descPending = prometheus.NewDesc("bot_outbox_pending", "Outbox rows waiting to be performed.", nil, nil)
	descOldest  = prometheus.NewDesc("bot_outbox_oldest_seconds", "Age of the oldest due outbox row.", nil, nil)
	descDead    = prometheus.NewDesc("bot_outbox_dead", "Outbox rows given up for good (permanent failures).", nil, nil)
	descUp      = prometheus.NewDesc("bot_store_up", "1 when the store answered the last scrape.", nil, nil)
	// Per lane: a decision waiting shows apart from a chat backlog.
	descLanePending = prometheus.NewDesc("bot_outbox_lane_pending", "Outbox rows waiting to be performed, by lane.", []string{"lane"}, nil)
	descLaneOldest  = prometheus.NewDesc("bot_outbox_lane_oldest_seconds", "Age of the oldest due outbox row, by lane.", []string{"lane"}, nil)
)

// Describe implements prometheus.Collector.
func (c OutboxCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descPending
	ch <- descOldest
	ch <- descDead
	ch <- descUp
	ch <- descLanePending
	ch <- descLaneOldest
}

// Collect implements prometheus.Collector.
func (c OutboxCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := c.Store.OutboxStats(ctx, c.Clock.Now())
	if err != nil {
		ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 0)
		return
	}
	ch <- prometheus.MustNewConstMetric(descUp, prometheus.GaugeValue, 1)
	ch <- prometheus.MustNewConstMetric(descPending, prometheus.GaugeValue, float64(st.Pending))
	ch <- prometheus.MustNewConstMetric(descOldest, prometheus.GaugeValue, st.OldestAge.Seconds())
	ch <- prometheus.MustNewConstMetric(descDead, prometheus.GaugeValue, float64(st.Dead))
	for _, lane := range Lanes { // every lane, 0 when idle, so alerts see a series
		ls := st.Lanes[lane]
		ch <- prometheus.MustNewConstMetric(descLanePending, prometheus.GaugeValue, float64(ls.Pending), lane)
		ch <- prometheus.MustNewConstMetric(descLaneOldest, prometheus.GaugeValue, ls.OldestAge.Seconds(), lane)
	}
}
