//go:build unix

package backend_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"approvalsbot/adapters/backend"
	"approvalsbot/approval"
	"approvalsbot/store/sqlite"
	"approvalsbot/threads"
)

// BenchmarkIngest measures the ingest of one approval.requested event on
// SQLite on disk, beside a floor measured in the same run:
//
//   - pipeline: a signed event is verified (Verifier.Verify), parsed
//     (approval.Parse), digested and ingested (Service.Ingest), which
//     commits the events, approvals, revisions and outbox rows in one
//     transaction: what POST /v1/events does, without HTTP;
//   - raw: the same rows, with the values one pipeline ingest stores (ids
//     changed, sizes kept), INSERTed through database/sql in one
//     transaction each, on a database the store migrated (same schema and
//     indexes) and opened with sqlite.DSN (same pragmas).
//
// The aim (the issue): pipeline ≤ 1.5 × raw per event, and ≥ 1,000
// events/s on one core (-cpu 1). Events, their signatures and the raw
// rows are made before the timer starts. Besides events/s (wall time),
// each reports cpu-ns/op, the process's CPU time per event, which waiting
// for a busy machine's cores does not inflate.
//
// Unix only: the CPU time comes from getrusage.
func BenchmarkIngest(b *testing.B) {
	b.Run("pipeline", benchmarkIngestPipeline)
	b.Run("raw", benchmarkIngestRaw)
}

// benchEvents makes n signed, distinct approval.requested events from
// merge.json, requested now (so a click on one is not past its deadline,
// whatever the date): event ids evt-bench-<kind><10 digits> and approval
// ids a-bench-<kind><10 digits>, so every event (and every row) is the
// same size.
func benchEvents(tb testing.TB, secret []byte, kind string, n int) (bodies [][]byte, sigs []string) {
	tb.Helper()
	const evMark, apMark = "EVENT-ID-MARK", "APPROVAL-ID-MARK"
	now := time.Now()
	at := now.UTC().Format(time.RFC3339)
	tmpl := editEvent(tb, "merge.json", map[string]any{"id": evMark, "data.id": apMark, "time": at, "data.requested_at": at})
	if bytes.Count(tmpl, []byte(evMark)) != 1 || bytes.Count(tmpl, []byte(apMark)) != 1 {
		tb.Fatal("the ids' marks must each appear once in the event")
	}
	bodies, sigs = make([][]byte, n), make([]string, n)
	for i := range n {
		ev, ap := benchIDs(kind, i)
		body := bytes.Replace(tmpl, []byte(evMark), []byte(ev), 1)
		bodies[i] = bytes.Replace(body, []byte(apMark), []byte(ap), 1)
		sigs[i] = backend.Sign(secret, now, bodies[i])
	}
	return bodies, sigs
}

func benchIDs(kind string, i int) (eventID, approvalID string) {
	return fmt.Sprintf("evt-bench-%s%010d", kind, i), fmt.Sprintf("a-bench-%s%010d", kind, i)
}

// ingestSigned is what the events endpoint does with a body once it is
// read: verify, parse, digest, ingest.
func ingestSigned(ctx context.Context, w *wiring, sig string, body []byte) error {
	if err := w.verifier.Verify(sig, body); err != nil {
		return err
	}
	ev, err := approval.Parse(body)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	res, err := w.service.Ingest(ctx, threads.IngestRequest{Event: ev, BodySHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return err
	}
	if res.Duplicate || res.Ignored != "" {
		return fmt.Errorf("event %s: duplicate %v, ignored %q; want a new approval", ev.ID, res.Duplicate, res.Ignored)
	}
	return nil
}

// outboxPerEvent ingests one event into w's store, which must be empty,
// and says how many outbox rows it made, as the store counts them.
func outboxPerEvent(tb testing.TB, w *wiring, sig string, body []byte) int {
	tb.Helper()
	ctx := context.Background()
	if err := ingestSigned(ctx, w, sig, body); err != nil {
		tb.Fatalf("ingest a sample event: %v", err)
	}
	st, err := w.store.OutboxStats(ctx, time.Now())
	if err != nil {
		tb.Fatalf("OutboxStats: %v", err)
	}
	if st.Pending < 1 {
		tb.Fatalf("a new approval made %d outbox rows, want at least 1", st.Pending)
	}
	return st.Pending
}

func benchmarkIngestPipeline(b *testing.B) {
	ctx := context.Background()
	w := wire(b, slog.New(slog.DiscardHandler))
	bodies, sigs := benchEvents(b, w.secrets[0], "p", b.N)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		if err := ingestSigned(ctx, w, sigs[i], bodies[i]); err != nil {
			b.Fatalf("ingest event %d: %v", i, err)
		}
	}
	cpu = cpuTime() - cpu
	b.StopTimer()
	reportRates(b, cpu)

	// Every event was committed with its rows.
	st, err := w.store.OutboxStats(ctx, time.Now())
	if err != nil {
		b.Fatalf("OutboxStats: %v", err)
	}
	if st.Pending < b.N {
		b.Fatalf("%d outbox rows after %d events", st.Pending, b.N)
	}
}

// sampleRow is one row as a pipeline ingest stored it.
type sampleRow struct {
	table string
	cols  []string
	vals  []any
}

// readSample reads every row one ingest stored for an event and its
// approval, table by table in the order the pipeline writes them.
func readSample(tb testing.TB, db *sql.DB, eventID, approvalID string) []sampleRow {
	tb.Helper()
	var out []sampleRow
	for _, q := range []struct{ table, key, val string }{
		{"events", "id", eventID},
		{"approvals", "id", approvalID},
		{"revisions", "approval_id", approvalID},
		{"outbox", "approval_id", approvalID},
	} {
		rows, err := db.Query(`SELECT * FROM `+q.table+` WHERE `+q.key+` = $1 ORDER BY rowid`, q.val)
		if err != nil {
			tb.Fatalf("read %s: %v", q.table, err)
		}
		cols, err := rows.Columns()
		if err != nil {
			tb.Fatal(err)
		}
		n := 0
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				tb.Fatalf("scan %s: %v", q.table, err)
			}
			out = append(out, sampleRow{table: q.table, cols: cols, vals: vals})
			n++
		}
		if err := rows.Err(); err != nil {
			tb.Fatal(err)
		}
		rows.Close()
		if n == 0 {
			tb.Fatalf("the sample ingest stored no %s row", q.table)
		}
	}
	return out
}

// rawInsert is one INSERT with its arguments.
type rawInsert struct {
	sql  string
	args []any
}

// rawRows turns the sample into event i's INSERTs: the same columns and
// values, with the event, approval and outbox ids replaced by ones of the
// same length, also inside the revision's body.
func rawRows(sample []sampleRow, sampleEvent, sampleApproval string, i int) []rawInsert {
	ev, ap := benchIDs("r", i)
	out := make([]rawInsert, len(sample))
	for n, r := range sample {
		args := make([]any, len(r.vals))
		for c, v := range r.vals {
			switch s, _ := v.(string); {
			case r.table == "outbox" && r.cols[c] == "id" && len(s) > 12:
				// The service's id with its tail replaced: same length and
				// prefix, unique per event and row.
				args[c] = fmt.Sprintf("%s%012d", s[:len(s)-12], i*len(sample)+n)
			case s == sampleEvent:
				args[c] = ev
			case s == sampleApproval:
				args[c] = ap
			case r.table == "revisions" && r.cols[c] == "body":
				args[c] = strings.ReplaceAll(s, sampleApproval, ap)
			default:
				args[c] = v
			}
		}
		marks := make([]string, len(r.cols))
		for c := range marks {
			marks[c] = fmt.Sprintf("$%d", c+1)
		}
		out[n] = rawInsert{
			sql:  `INSERT INTO ` + r.table + ` (` + strings.Join(r.cols, ", ") + `) VALUES (` + strings.Join(marks, ", ") + `)`,
			args: args,
		}
	}
	return out
}

func benchmarkIngestRaw(b *testing.B) {
	ctx := context.Background()

	// One pipeline ingest on its own database shows what rows an event
	// makes and with what values.
	w := wire(b, slog.New(slog.DiscardHandler))
	sb, ss := benchEvents(b, w.secrets[0], "s", 1)
	perEvent := outboxPerEvent(b, w, ss[0], sb[0])
	sampleEvent, sampleApproval := benchIDs("s", 0)
	sampleDB, err := sql.Open("sqlite", sqlite.DSN(w.path))
	if err != nil {
		b.Fatal(err)
	}
	sample := readSample(b, sampleDB, sampleEvent, sampleApproval)
	sampleDB.Close()
	if got := len(sample) - 3; got != perEvent {
		b.Fatalf("sample has %d outbox rows; the store counts %d", got, perEvent)
	}

	// The raw database: migrated by the store, then written only raw.
	path := filepath.Join(b.TempDir(), "raw.db")
	if err := openStore(b, path).Close(); err != nil {
		b.Fatal(err)
	}
	db, err := sql.Open("sqlite", sqlite.DSN(path))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	ops := make([][]rawInsert, b.N)
	for i := range ops {
		ops[i] = rawRows(sample, sampleEvent, sampleApproval, i)
	}

	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for i := 0; i < b.N; i++ {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, ins := range ops[i] {
			if _, err := tx.ExecContext(ctx, ins.sql, ins.args...); err != nil {
				b.Fatalf("event %d: %v", i, err)
			}
		}
		if err := tx.Commit(); err != nil {
			b.Fatal(err)
		}
	}
	cpu = cpuTime() - cpu
	b.StopTimer()
	reportRates(b, cpu)
}

// reportRates reports events/s of wall time, and the process's CPU time
// per event (user + system, every thread: GC and the driver included).
// On a shared machine the wall time also counts waiting for a core; the
// CPU time does not, so it is the steadier figure to compare.
func reportRates(b *testing.B, cpu time.Duration) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	if cpu > 0 {
		b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}

// cpuTime is the CPU time this process has used so far; 0 when unknown.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
