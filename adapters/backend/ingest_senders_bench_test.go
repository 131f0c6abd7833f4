//go:build unix

package backend_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql's "pgx" driver, for the raw baselines
	"github.com/prometheus/client_golang/prometheus"

	"approvalsbot/adapters/backend"
	"approvalsbot/adapters/backend/backendtest"
	"approvalsbot/adapters/backend/standin"
	"approvalsbot/config"
	"approvalsbot/internal/fixtures"
	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// BenchmarkIngestSenders measures POST /v1/events under concurrent
// senders against the durable floor under it, all in one run, on SQLite
// on disk and, when BOT_TEST_POSTGRES_URL is set, on PostgreSQL (a fresh
// schema per run). b.N is the number of events (or requests) of each
// sub-benchmark: run it with -benchtime 2000x or so.
//
//   - floor-S: S senders post the events to a loopback server that only
//     reads the body and answers 202: what HTTP alone costs (p50-ms,
//     p99-ms of the answer).
//   - raw-tx: the rows one event makes (read from a real ingest, as
//     BenchmarkIngest's raw does), INSERTed with database/sql on a
//     database the store migrated, one transaction per event, from one
//     goroutine.
//   - raw-batched: the same rows, 64 events per transaction: what a
//     group commit could at best come to.
//   - bot-S: S senders, each on its own keep-alive connection, post
//     distinct signed approval.requested events to the real handler over
//     the real threads.Service. Every answer must be 202. Besides events/s
//     and the answer's p50-ms and p99-ms, it reports p50-x-floor (its p50
//     over floor-S's) and x-raw-batched (raw-batched events/s over its
//     own): the aim "within 1.5× of raw batched" reads x-raw-batched ≤ 1.5.
//   - click-during-flood: 8 senders flood events as bot-8 does while a
//     person clicks Approve every 20 ms (Service.Decide on approvals
//     ingested before); click-p99-ms is what the click waits for its
//     decision to be recorded, calm-p99-ms the same clicks' wait before
//     the flood, p99-x-calm their ratio. Every click must be recorded,
//     and once the timing is over the outbox delivers each decision to a
//     fake backend, which must accept it.
//
// The references (floor-S's p50, raw-batched's events/s) are taken from
// the latest run of their own sub-benchmark in this run when it made more
// than one iteration, else measured on the spot over 2000 events, so a
// filtered run (-bench IngestSenders/sqlite/bot-8) still reports them.
// The outbox does not run while the timers do: these measure the ingest
// path and a click's record against it, not the chat calls after.
func BenchmarkIngestSenders(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchSenders(b, &senderRefs{store: sqliteBeds{}}) })
	b.Run("postgres", func(b *testing.B) {
		base := os.Getenv(pgSendersEnv)
		if base == "" {
			b.Skipf("PostgreSQL needs %s, e.g. %s=postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
				pgSendersEnv, pgSendersEnv)
		}
		benchSenders(b, &senderRefs{store: pgBeds{base: base}})
	})
}

// senderCounts are the numbers of concurrent senders measured.
var senderCounts = []int{1, 8, 32}

const (
	// refEvents is the size of a reference measured on the spot.
	refEvents = 2000
	// rawBatch is raw-batched's events per transaction: threads'
	// maxGroup, the most a group commit puts in one.
	rawBatch = 64
	// clickEvery paces the clicks; calmClicks are measured before the
	// flood, and at most floodClicks during it.
	clickEvery  = 20 * time.Millisecond
	calmClicks  = 50
	floodClicks = 250
	// floodSenders post the flood the clicks meet.
	floodSenders = 8
	// watchEvery is how often the backend's decisions are looked at: the
	// resolution of a click's time to the backend.
	watchEvery   = 5 * time.Millisecond
	pgSendersEnv = "BOT_TEST_POSTGRES_URL"
)

func benchSenders(b *testing.B, refs *senderRefs) {
	for _, s := range senderCounts {
		b.Run(fmt.Sprintf("floor-%d", s), func(b *testing.B) {
			lat := floorRun(b, b, s, b.N)
			reportLatency(b, lat)
			if b.N > 1 {
				refs.setFloor(s, floorOf(lat))
			}
		})
	}
	b.Run("raw-tx", func(b *testing.B) { rawRun(b, b, refs, b.N, 1) })
	b.Run("raw-batched", func(b *testing.B) {
		rate := rawRun(b, b, refs, b.N, rawBatch)
		if b.N > 1 {
			refs.setRawBatched(rate)
		}
	})
	for _, s := range senderCounts {
		b.Run(fmt.Sprintf("bot-%d", s), func(b *testing.B) {
			floor, raw := refs.floor(b, s), refs.rawBatched(b)
			bed := newSenderBed(b, refs.store)
			bodies, sigs := benchEvents(b, bed.secret, "b", b.N)
			txs0, evs0 := bed.groups(b)
			lat, rate := flood(b, b, bed.url, s, bodies, sigs, nil)
			txs, evs := bed.groups(b)
			reportLatency(b, lat)
			b.ReportMetric((evs-evs0)/(txs-txs0), "events/group")
			b.ReportMetric(float64(percentile(lat, 0.50))/float64(floor.p50), "p50-x-floor")
			b.ReportMetric(float64(percentile(lat, 0.99))/float64(floor.p99), "p99-x-floor")
			b.ReportMetric(raw/rate, "x-raw-batched")
			bed.checkCommitted(b, b.N)
		})
	}
	b.Run("click-during-flood", func(b *testing.B) { clickDuringFlood(b, refs) })
}

// senderRefs holds one store's references for the run, and how to make
// its databases.
type senderRefs struct {
	store bedMaker

	mu        sync.Mutex
	floors    map[int]floor // floor-S's answers, by S
	raw       float64       // raw-batched events/s; 0: not yet
	sample    []sampleRow
	sampleIDs [2]string // the sample's event and approval ids
	shapeOK   bool      // the store makes the sample's rows (checkSampleShape)
}

// floor is the loopback floor's answer latency.
type floor struct{ p50, p99 time.Duration }

func floorOf(lat []time.Duration) floor {
	return floor{p50: percentile(lat, 0.50), p99: percentile(lat, 0.99)}
}

func (r *senderRefs) setFloor(senders int, f floor) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.floors == nil {
		r.floors = map[int]floor{}
	}
	r.floors[senders] = f
}

func (r *senderRefs) setRawBatched(rate float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.raw = rate
}

// floor is floor-S's answers, measured now when floor-S did not run.
func (r *senderRefs) floor(tb testing.TB, senders int) floor {
	r.mu.Lock()
	f, ok := r.floors[senders]
	r.mu.Unlock()
	if !ok {
		f = floorOf(floorRun(tb, nil, senders, refEvents))
		r.setFloor(senders, f)
	}
	return f
}

// rawBatched is raw-batched's events/s, measured now when it did not run.
func (r *senderRefs) rawBatched(tb testing.TB) float64 {
	r.mu.Lock()
	rate := r.raw
	r.mu.Unlock()
	if rate == 0 {
		rate = rawRun(tb, nil, r, refEvents, rawBatch)
		r.setRawBatched(rate)
	}
	return rate
}

// rows is the sample of one event's rows, read once from a real ingest
// on SQLite with readSample (the rows and their values are threads', the
// same on either store; r's store is checked to make as many of each).
func (r *senderRefs) rows(tb testing.TB) ([]sampleRow, string, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sample == nil {
		bed := newSenderBed(tb, sqliteBeds{})
		bodies, sigs := benchEvents(tb, bed.secret, "s", 1)
		if err := ingestSigned(context.Background(), bed.wiring, sigs[0], bodies[0]); err != nil {
			tb.Fatalf("ingest the sample event: %v", err)
		}
		ev, ap := benchIDs("s", 0)
		db, err := sql.Open(bed.driver, bed.dsn)
		if err != nil {
			tb.Fatal(err)
		}
		defer db.Close()
		r.sample, r.sampleIDs = readSample(tb, db, ev, ap), [2]string{ev, ap}
	}
	if !r.shapeOK {
		checkSampleShape(tb, r.store, r.sample)
		r.shapeOK = true
	}
	return r.sample, r.sampleIDs[0], r.sampleIDs[1]
}

// bedMaker opens fresh, migrated databases of one kind.
type bedMaker interface {
	// open returns a store on a fresh database, closed when tb ends,
	// and the database/sql driver and DSN that reach the same database.
	open(tb testing.TB) (st store.Store, driver, dsn string)
}

type sqliteBeds struct{}

func (sqliteBeds) open(tb testing.TB) (store.Store, string, string) {
	path := filepath.Join(tb.TempDir(), "bot.db")
	return openStore(tb, path), "sqlite", sqlite.DSN(path)
}

// pgBeds makes each database a schema of its own, as store/postgres's
// tests do: far cheaper than a database, and just as separate.
type pgBeds struct{ base string }

func (p pgBeds) open(tb testing.TB) (store.Store, string, string) {
	tb.Helper()
	ctx := context.Background()
	var b [8]byte
	rand.Read(b[:])
	name := "bot_bench_" + hex.EncodeToString(b[:])
	schema := pgx.Identifier{name}.Sanitize()
	pgExec(tb, p.base, "CREATE SCHEMA "+schema)
	// Registered first, so it runs last: after the store is closed.
	tb.Cleanup(func() { pgExec(tb, p.base, "DROP SCHEMA "+schema+" CASCADE") })
	u, err := url.Parse(p.base)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		tb.Fatalf("%s must be a postgres:// URL", pgSendersEnv)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	st, err := postgres.Open(ctx, postgres.Options{DSN: u.String()})
	if err != nil {
		tb.Fatalf("postgres.Open: %v", err)
	}
	tb.Cleanup(func() { st.Close() })
	if err := st.Migrate(ctx); err != nil {
		tb.Fatalf("Migrate: %v", err)
	}
	return st, "pgx", u.String()
}

// pgExec runs one statement on a connection of its own.
func pgExec(tb testing.TB, dsn, stmt string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		tb.Fatalf("connect to %s: %v", pgSendersEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		tb.Fatalf("%s: %v", stmt, err)
	}
}

// sendersConfig is botConfig with a member who may decide, for the clicks.
const sendersConfig = botConfig + `    members:
      - {user: "user:kevin", role: operator, content: true, slack: U0KEVIN}
`

// senderBed is the events endpoint served on loopback over the real
// service on a fresh database, the service deciding through the real
// backend client to a fake backend.
type senderBed struct {
	*wiring     // verifier and service, for ingestSigned; store is unset
	st          store.Store
	driver, dsn string // database/sql's way to the same database
	secret      []byte // the current events secret
	fake        *backendtest.Fake
	url         string // POST events here
	metrics     *prometheus.Registry
}

func newSenderBed(tb testing.TB, m bedMaker) *senderBed {
	tb.Helper()
	cfg, err := config.Parse("bot.yaml", []byte(sendersConfig), lookupBotEnv)
	if err != nil {
		tb.Fatalf("config.Parse: %v", err)
	}
	calls := [][]byte{[]byte(cfg.Backend.CallsSecrets[0].Reveal())}
	fake := backendtest.New(tb, standin.Options{Secrets: calls})
	client, err := backend.NewClient(backend.ClientOptions{BaseURL: fake.URL(), Secrets: calls, MaxElapsed: 10 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	st, driver, dsn := m.open(tb)
	log := slog.New(slog.DiscardHandler)
	reg := prometheus.NewRegistry()
	svc, err := threads.New(threads.Options{Store: st, Tenants: cfg, Clock: wallClock{}, Logger: log,
		Fallback: discardSurface{}, Surfaces: map[string]threads.Surface{"slack": pacedDiscard{}},
		Backend: client.ForThreads(), Metrics: threads.NewMetrics(reg)})
	if err != nil {
		tb.Fatalf("threads.New: %v", err)
	}
	var secrets [][]byte
	for _, s := range cfg.Backend.EventsSecrets {
		secrets = append(secrets, []byte(s.Reveal()))
	}
	w := &wiring{service: svc, verifier: backend.Verifier{Secrets: secrets}, secrets: secrets}
	h := backend.NewHandler(backend.HandlerOptions{Verifier: w.verifier, Ingester: svc, Logger: log,
		Registry: prometheus.NewRegistry()})
	srv := httptest.NewServer(h)
	tb.Cleanup(srv.Close)
	return &senderBed{wiring: w, st: st, driver: driver, dsn: dsn, secret: secrets[0], fake: fake,
		url: srv.URL + "/v1/events", metrics: reg}
}

// groups is how many ingest transactions ran and the events they
// committed, from the service's bot_ingest_group_events.
func (bed *senderBed) groups(tb testing.TB) (txs, events float64) {
	tb.Helper()
	mfs, err := bed.metrics.Gather()
	if err != nil {
		tb.Fatalf("gather metrics: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "bot_ingest_group_events" && len(mf.GetMetric()) == 1 {
			h := mf.GetMetric()[0].GetHistogram()
			return float64(h.GetSampleCount()), h.GetSampleSum()
		}
	}
	tb.Fatal("no bot_ingest_group_events among the service's metrics")
	return 0, 0
}

// pacedDiscard is the bed's Slack: it performs nothing, paced as Slack
// paces a channel's messages (about one a second, in bursts of 3), so that
// the chat lane does beside a flood what it would against Slack rather
// than post thousands of cards a second beside the clicks.
type pacedDiscard struct{ discardSurface }

var _ threads.Paced = pacedDiscard{}

func (pacedDiscard) PaceKey(kind, target string) string { return "slack:" + target }
func (pacedDiscard) Pace(string) (time.Duration, int)   { return time.Second, 3 }

// checkCommitted fails unless the store holds at least n events' outbox
// rows: every 202 was a commit.
func (bed *senderBed) checkCommitted(tb testing.TB, n int) {
	tb.Helper()
	st, err := bed.st.OutboxStats(context.Background(), time.Now())
	if err != nil {
		tb.Fatalf("OutboxStats: %v", err)
	}
	if st.Pending < n {
		tb.Fatalf("%d outbox rows after %d events answered 202", st.Pending, n)
	}
}

// senderClients are keep-alive clients, one per sender, each with its
// own Transport and its connection already open.
func senderClients(tb testing.TB, target string, n int) []*http.Client {
	tb.Helper()
	clients := make([]*http.Client, n)
	for i := range clients {
		tr := &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}
		tb.Cleanup(tr.CloseIdleConnections)
		clients[i] = &http.Client{Transport: tr, Timeout: time.Minute}
		// A GET opens the connection without ingesting anything (the
		// events endpoint answers it 405).
		resp, err := clients[i].Get(target)
		if err != nil {
			tb.Fatalf("open sender %d's connection: %v", i, err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	return clients
}

// flood posts bodies from senders goroutines, each taking the next event
// until none is left, and returns each event's answer latency and the
// events/s over the whole. With a timer, the benchmark's timer runs over
// the posts alone, and events/s and CPU time are reported. started, when
// not nil, is closed as the first posts go. It fails tb unless every
// event is answered 202.
func flood(tb testing.TB, timer *testing.B, target string, senders int, bodies [][]byte, sigs []string,
	started chan<- struct{}) ([]time.Duration, float64) {
	tb.Helper()
	clients := senderClients(tb, target, senders)
	lat := make([]time.Duration, len(bodies))
	var next atomic.Int64
	var failed atomic.Bool
	var failMu sync.Mutex
	var failure string
	fail := func(format string, args ...any) {
		failMu.Lock()
		defer failMu.Unlock()
		if !failed.Swap(true) {
			failure = fmt.Sprintf(format, args...)
		}
	}
	var wg sync.WaitGroup
	if timer != nil {
		timer.ResetTimer()
	}
	cpu := cpuTime()
	start := time.Now()
	if started != nil {
		close(started)
	}
	for _, c := range clients {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(bodies) {
					return
				}
				req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(bodies[i]))
				if err != nil {
					fail("event %d: %v", i, err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				if sigs != nil {
					req.Header.Set(backend.SignatureHeader, sigs[i])
				}
				t0 := time.Now()
				resp, err := c.Do(req)
				if err != nil {
					fail("event %d: %v (not answered)", i, err)
					return
				}
				raw, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				lat[i] = time.Since(t0)
				if err != nil {
					fail("event %d: read the answer: %v", i, err)
					return
				}
				if resp.StatusCode != http.StatusAccepted {
					fail("event %d answered %d, want 202: %s", i, resp.StatusCode, raw)
					return
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	cpu = cpuTime() - cpu
	if timer != nil {
		timer.StopTimer()
	}
	if failed.Load() {
		tb.Fatal(failure)
	}
	if timer != nil {
		reportRates(timer, cpu)
	}
	return lat, float64(len(bodies)) / wall.Seconds()
}

// floorRun posts n events from senders to a loopback server that reads
// the body and answers 202 as the events endpoint does, and returns each
// answer's latency; with a timer, as flood does.
func floorRun(tb testing.TB, timer *testing.B, senders, n int) []time.Duration {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = io.WriteString(w, `{"status":"accepted"}`+"\n")
	}))
	defer srv.Close()
	bodies, _ := benchEvents(tb, []byte("floor"), "f", n)
	lat, _ := flood(tb, timer, srv.URL, senders, bodies, nil, nil)
	return lat
}

// rawRun INSERTs n events' rows, perTx events per transaction, on a fresh
// database the store migrated, and returns events/s. With a timer, the
// benchmark's timer covers the inserts alone, and events/s and CPU time
// are reported.
func rawRun(tb testing.TB, timer *testing.B, refs *senderRefs, n, perTx int) float64 {
	tb.Helper()
	ctx := context.Background()
	sample, sampleEvent, sampleApproval := refs.rows(tb)
	st, driver, dsn := refs.store.open(tb)
	if err := st.Close(); err != nil { // written only raw from here
		tb.Fatal(err)
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ops := make([][]rawInsert, n)
	for i := range ops {
		ops[i] = rawRows(sample, sampleEvent, sampleApproval, i)
	}
	if err := db.PingContext(ctx); err != nil {
		tb.Fatal(err)
	}

	if timer != nil {
		timer.ResetTimer()
	}
	cpu := cpuTime()
	start := time.Now()
	for first := 0; first < n; first += perTx {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			tb.Fatal(err)
		}
		for i := first; i < min(first+perTx, n); i++ {
			for _, ins := range ops[i] {
				if _, err := tx.ExecContext(ctx, ins.sql, ins.args...); err != nil {
					tb.Fatalf("event %d: %v", i, err)
				}
			}
		}
		if err := tx.Commit(); err != nil {
			tb.Fatal(err)
		}
	}
	wall := time.Since(start)
	cpu = cpuTime() - cpu
	if timer != nil {
		timer.StopTimer()
		reportRates(timer, cpu)
	}
	return float64(n) / wall.Seconds()
}

// checkSampleShape fails unless an ingest on m's store makes as many rows
// of each table as the sample holds, so that the raw rows stand for what
// that store writes too.
func checkSampleShape(tb testing.TB, m bedMaker, sample []sampleRow) {
	tb.Helper()
	bed := newSenderBed(tb, m)
	bodies, sigs := benchEvents(tb, bed.secret, "s", 1)
	if err := ingestSigned(context.Background(), bed.wiring, sigs[0], bodies[0]); err != nil {
		tb.Fatalf("ingest the sample event: %v", err)
	}
	db, err := sql.Open(bed.driver, bed.dsn)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	want := map[string]int{}
	for _, r := range sample {
		want[r.table]++
	}
	ev, ap := benchIDs("s", 0)
	for table, n := range want {
		key, val := "approval_id", ap
		switch table {
		case "events":
			key, val = "id", ev
		case "approvals":
			key = "id"
		}
		var got int
		if err := db.QueryRow(`SELECT count(*) FROM `+table+` WHERE `+key+` = $1`, val).Scan(&got); err != nil {
			tb.Fatalf("count %s: %v", table, err)
		}
		if got != n {
			tb.Fatalf("an ingest on this store made %d %s rows; the sample has %d", got, table, n)
		}
	}
}

// clickDuringFlood measures a click, calm and then while floodSenders
// post b.N events: how long Service.Click takes to record it, and how
// long from the click until the job backend receives its decision.
func clickDuringFlood(b *testing.B, refs *senderRefs) {
	bed := newSenderBed(b, refs.store)
	f := clicksDuringFlood(b, b, bed, b.N)
	b.ReportMetric(float64(len(f.during)), "clicks")
	b.ReportMetric(ms(percentile(f.during, 0.50)), "click-p50-ms")
	b.ReportMetric(ms(percentile(f.during, 0.99)), "click-p99-ms")
	b.ReportMetric(ms(percentile(f.calm, 0.99)), "calm-p99-ms")
	b.ReportMetric(float64(percentile(f.during, 0.99))/float64(percentile(f.calm, 0.99)), "p99-x-calm")
	b.ReportMetric(ms(percentile(f.backend, 0.50)), "backend-p50-ms")
	b.ReportMetric(ms(percentile(f.backend, 0.99)), "backend-p99-ms")
	b.ReportMetric(ms(percentile(f.calmBackend, 0.99)), "calm-backend-p99-ms")
}

// clickFigures are the latencies of clicks, calm and during a flood: to
// their record (Service.Click's answer), and to the backend's receipt of
// their decision.
type clickFigures struct {
	calm, during               []time.Duration
	calmBackend, backend       []time.Duration
	events                     float64 // the flood's events/s
	floodTxs, floodGroupEvents float64 // its ingest transactions and their events
}

// clicksDuringFlood clicks Approve every clickEvery, calmClicks times on a
// quiet bot and then from the start to the end of a flood of n events from
// floodSenders, with the outbox running throughout (its backend lane
// sends the decisions; its chat lane posts every card, the flood's too).
// With a timer, the benchmark's timer runs over the flood. It fails tb
// unless every click is recorded, every event answered 202, and the
// backend accepts every decision within 30 s.
func clicksDuringFlood(tb testing.TB, timer *testing.B, bed *senderBed, n int) clickFigures {
	tb.Helper()
	ctx := context.Background()
	args, err := fixtures.Arguments("a-merge1.json")
	if err != nil {
		tb.Fatal(err)
	}
	// The approvals clicked, ingested before anything is timed; the
	// backend knows them, so that their decisions are accepted.
	const pool = calmClicks + floodClicks
	cb, cs := benchEvents(tb, bed.secret, "c", pool)
	ids := make([]string, pool)
	for i := range cb {
		if err := ingestSigned(ctx, bed.wiring, cs[i], cb[i]); err != nil {
			tb.Fatalf("ingest approval %d to click: %v", i, err)
		}
		_, ids[i] = benchIDs("c", i)
		bed.fake.AddApproval(ids[i], 1, args, false)
	}
	bodies, sigs := benchEvents(tb, bed.secret, "b", n)

	octx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() { stop(); running.Wait() }()
	running.Go(func() { _ = bed.service.RunOutbox(octx, threads.WorkerOptions{Concurrency: 1}) })
	arrivals := watchDecisions(octx, &running, bed.fake)

	var mu sync.Mutex
	clickedAt := map[string]time.Time{}
	click := func(id string) (time.Duration, error) {
		t0 := time.Now()
		res := bed.service.Click(ctx, threads.ClickRequest{Do: threads.ClickRecord,
			Action: templates.Action{Kind: templates.ActionApprove, ApprovalID: id, Revision: 1}, Comment: "ok by me",
			Person: threads.Person{Surface: "slack", User: "U0KEVIN", Channel: "C0APPROVALS", Reply: "https://hooks.example/U0KEVIN"}})
		d := time.Since(t0)
		if !res.Sent {
			return d, fmt.Errorf("click on %s not recorded: %q", id, res.Reason)
		}
		mu.Lock()
		clickedAt[id] = t0
		mu.Unlock()
		return d, nil
	}

	// Calm: the same clicks at the same pace, nothing else running but
	// the outbox.
	var f clickFigures
	tick := time.NewTicker(clickEvery)
	for i := range calmClicks {
		d, err := click(ids[i])
		if err != nil {
			tb.Fatal(err)
		}
		f.calm = append(f.calm, d)
		<-tick.C
	}
	tick.Stop()

	// The flood, with a click every clickEvery from its start to its end.
	started, done := make(chan struct{}), make(chan struct{})
	var clickErr error
	var clicker sync.WaitGroup
	last := calmClicks
	clicker.Go(func() {
		<-started
		tick := time.NewTicker(clickEvery)
		defer tick.Stop()
		for i := calmClicks; i < pool; i++ {
			if i > calmClicks { // the first click goes at once
				select {
				case <-done:
					return
				case <-tick.C:
				}
			}
			d, err := click(ids[i])
			if err != nil {
				clickErr = err
				return
			}
			f.during = append(f.during, d)
			last = i + 1
		}
	})
	txs0, evs0 := bed.groups(tb)
	_, f.events = flood(tb, timer, bed.url, floodSenders, bodies, sigs, started)
	close(done)
	clicker.Wait()
	txs, evs := bed.groups(tb)
	f.floodTxs, f.floodGroupEvents = txs-txs0, evs-evs0
	if clickErr != nil {
		tb.Fatal(clickErr)
	}
	if len(f.during) == 0 {
		tb.Fatal("no click was made during the flood")
	}
	bed.checkCommitted(tb, n)
	got := bed.awaitDecisions(tb, arrivals, ids[:last])
	for i, id := range ids[:last] {
		d := got[id].Sub(clickedAt[id])
		if i < calmClicks {
			f.calmBackend = append(f.calmBackend, d)
		} else {
			f.backend = append(f.backend, d)
		}
	}
	return f
}

// arrival is when the backend was first seen to have a decision on an
// approval.
type arrival struct {
	id string
	at time.Time
}

// watchDecisions notes when the fake backend first received a decision
// on each approval, looking every watchEvery until ctx ends (each look
// copies every decision received: more often costs the flood), and sends
// each arrival on the channel it returns.
func watchDecisions(ctx context.Context, wg *sync.WaitGroup, fake *backendtest.Fake) <-chan arrival {
	out := make(chan arrival, calmClicks+floodClicks)
	wg.Go(func() {
		seen := map[string]bool{}
		tick := time.NewTicker(watchEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			now := time.Now()
			for _, d := range fake.Decisions() {
				if !seen[d.ApprovalID] {
					seen[d.ApprovalID] = true
					select {
					case out <- arrival{id: d.ApprovalID, at: now}:
					default: // not one of the clicks'
					}
				}
			}
		}
	})
	return out
}

// awaitDecisions fails tb unless the backend receives a decision on each
// approval within 30 s and accepts it as an approval, signed; it returns
// when each arrived (as watchDecisions saw it).
func (bed *senderBed) awaitDecisions(tb testing.TB, arrivals <-chan arrival, ids []string) map[string]time.Time {
	tb.Helper()
	at := map[string]time.Time{}
	timeout := time.After(30 * time.Second)
	for len(at) < len(ids) {
		select {
		case a := <-arrivals:
			at[a.id] = a.at
		case <-timeout:
			tb.Fatalf("the backend received a decision on %d of %d approvals clicked within 30 s", len(at), len(ids))
		}
	}
	answers := map[string]standin.ReceivedDecision{}
	for _, d := range bed.fake.Decisions() {
		if prev, ok := answers[d.ApprovalID]; !ok || prev.Status != http.StatusOK {
			answers[d.ApprovalID] = d
		}
	}
	for _, id := range ids {
		if d, ok := answers[id]; !ok || !d.SignatureOK || d.Status != http.StatusOK || d.Request.Decision != "approve" {
			tb.Fatalf("the backend did not accept the decision on %s: answered %d %q, signature ok %v, decision %q",
				id, d.Status, d.Code, d.SignatureOK, d.Request.Decision)
		}
	}
	return at
}

// reportLatency reports the answers' p50 and p99.
func reportLatency(b *testing.B, lat []time.Duration) {
	b.ReportMetric(ms(percentile(lat, 0.50)), "p50-ms")
	b.ReportMetric(ms(percentile(lat, 0.99)), "p99-ms")
}

// percentile is the nearest-rank p-quantile of d (0 when empty).
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(float64(len(s))*p+0.999999) - 1
	return s[max(0, min(i, len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
