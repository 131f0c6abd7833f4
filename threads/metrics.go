package threads

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/store"
)

// Metrics are the counters threads keeps.
type Metrics struct {
	Deliveries  *prometheus.CounterVec // surface, kind, result
	AutoGranted *prometheus.CounterVec // tenant
	Pruned      *prometheus.CounterVec // what: PrunedApprovals, PrunedOutbox, …
}

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
	}
	if reg != nil {
		reg.MustRegister(m.Deliveries, m.AutoGranted, m.Pruned)
	}
	return m
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
	// Per lane (backend, chat, mail): a decision waiting behind nothing
	// shows here, apart from a chat backlog.
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
