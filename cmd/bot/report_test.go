package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/store"
	"approvalsbot/store/postgres"
	"approvalsbot/store/sqlite"
)

// reportFixture writes outcomes into st around now: two decided in the
// last week (one by a hostile function name and job id, one by the
// deadline), one decided before the week, one still pending, one of
// another tenant.
func reportFixture(t *testing.T, st store.Store, now time.Time) {
	t.Helper()
	type o struct {
		req   store.OutcomeRequestParams
		close *store.OutcomeCloseParams
	}
	day := 24 * time.Hour
	rows := []o{
		{store.OutcomeRequestParams{ApprovalID: "a-1", Tenant: "acme", Job: "j-1", Function: "acme_github.merge",
			ArgsSHA256: "secret-digest", Effect: "destructive", Ladder: "default", Revision: 1, RequestedAt: now.Add(-2 * day)},
			&store.OutcomeCloseParams{ApprovalID: "a-1", State: "approved", Actor: "user:kevin", Surface: "slack", Steps: 1,
				Quick: true, DecidedAt: now.Add(-2*day + 90*time.Second), FirstLookAt: now.Add(-2*day + 30*time.Second)}},
		{store.OutcomeRequestParams{ApprovalID: "=HYPERLINK(\"x\")", Tenant: "acme", Job: "-2+3", Function: "@SUM(A1:A9)",
			Effect: "egress", Ladder: "default", Revision: 1, RequestedAt: now.Add(-day)},
			&store.OutcomeCloseParams{ApprovalID: "=HYPERLINK(\"x\")", State: "expired", Actor: "system:deadline", Surface: "deadline",
				Steps: 3, DecidedAt: now.Add(-day + time.Hour)}},
		{store.OutcomeRequestParams{ApprovalID: "a-old", Tenant: "acme", Job: "j-0", Function: "f", Effect: "write",
			Ladder: "default", Revision: 1, RequestedAt: now.Add(-9 * day)},
			&store.OutcomeCloseParams{ApprovalID: "a-old", State: "denied", Actor: "user:ada", Surface: "discord", DecidedAt: now.Add(-8 * day)}},
		{store.OutcomeRequestParams{ApprovalID: "a-pending", Tenant: "acme", Job: "j-3", Function: "f", Effect: "write",
			Ladder: "default", Revision: 1, RequestedAt: now.Add(-time.Hour)}, nil},
		{store.OutcomeRequestParams{ApprovalID: "z-1", Tenant: "zeta", Job: "j-9", Function: "g", Effect: "reads_only",
			Ladder: "default", Revision: 1, RequestedAt: now.Add(-3 * day)},
			&store.OutcomeCloseParams{ApprovalID: "z-1", State: "cancelled", Actor: "", Surface: "", DecidedAt: now.Add(-3 * day)}},
	}
	err := st.InTx(context.Background(), func(ctx context.Context, tx store.Tx) error {
		for _, r := range rows {
			if err := tx.OutcomeRequest(ctx, r.req); err != nil {
				return err
			}
			if r.close != nil {
				if err := tx.OutcomeClose(ctx, *r.close); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func runReport(t *testing.T, cfg string, now time.Time, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := cmdReport(context.Background(), append([]string{"--config", cfg}, args...), &out, lookup(nil), now)
	return out.String(), err
}

// checkReport runs the report's cases against the store cfg names.
func checkReport(t *testing.T, cfg string, now time.Time) {
	t.Helper()
	out, err := runReport(t, cfg, now, "--since", "7d", "--tenant", "acme", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatalf("the CSV does not parse: %v\n%s", err, out)
	}
	at := func(d time.Duration) string { return now.Add(d).UTC().Format(time.RFC3339) }
	day := 24 * time.Hour
	want := [][]string{
		reportColumns,
		{"acme", "a-1", "j-1", "acme_github.merge", at(-2 * day), at(-2*day + 90*time.Second), "90.000",
			at(-2*day + 30*time.Second), "1", "approved", "false", "user:kevin", "slack", "destructive", "true", ""},
		{"acme", "'=HYPERLINK(\"x\")", "'-2+3", "'@SUM(A1:A9)", at(-day), at(-day + time.Hour), "3600.000",
			"", "3", "expired", "true", "system:deadline", "deadline", "egress", "false", ""},
	}
	if diff := cmp.Diff(want, recs); diff != "" {
		t.Errorf("acme's week as CSV (-want +got):\n%s", diff)
	}
	if strings.Contains(out, "secret-digest") {
		t.Error("the report shows an arguments digest")
	}

	// Every tenant, from a date, as JSON lines.
	from := now.Add(-4 * day).UTC().Format(time.DateOnly)
	out, err = runReport(t, cfg, now, "--since", from, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for line := range strings.Lines(out) {
		var row map[string]any
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		ids = append(ids, fmt.Sprint(row["approval_id"]))
		if row["approval_id"] == "a-1" && (row["steps"] != 1.0 || row["quick"] != true || row["wait_seconds"] != 90.0) {
			t.Errorf("a-1 as JSON: %v", row)
		}
	}
	if diff := cmp.Diff([]string{"z-1", "a-1", "=HYPERLINK(\"x\")"}, ids); diff != "" {
		t.Errorf("every tenant since %s (-want +got):\n%s", from, diff)
	}

	// A window with an end: the old decision alone.
	out, err = runReport(t, cfg, now, "--since", "10d", "--until", now.Add(-7*day).Format(time.RFC3339))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(out, "\n"); n != 2 || !strings.Contains(out, "a-old") {
		t.Errorf("10d until 7d ago:\n%s", out)
	}
}

// bot report reads a SQLite store on disk beside the bot: one row per
// approval decided in the window, ids and function names that a
// spreadsheet would run quoted as text, and no digest or argument.
func TestReportSQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "bot.db")
	cfg := writeConfig(t, dir, `store: {driver: sqlite, dsn: "file:`+db+`"}`+"\n")
	now := time.Now().UTC().Truncate(time.Millisecond)
	// No store yet: a header and nothing else.
	if out, err := runReport(t, cfg, now); err != nil || out != strings.Join(reportColumns, ",")+"\n" {
		t.Errorf("before any store: %q, %v", out, err)
	}
	migratedStore(t, db)
	st, err := sqlite.Open(context.Background(), sqlite.Options{Path: db})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	reportFixture(t, st, now)
	checkReport(t, cfg, now)
}

// The same report from PostgreSQL.
func TestReportPostgres(t *testing.T) {
	db := newPGDatabase(t)
	st, err := postgres.Open(context.Background(), postgres.Options{DSN: db.dsn})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	reportFixture(t, st, now)
	cfg := writeConfig(t, t.TempDir(), "store:\n  driver: postgres\n  dsn: \""+db.dsn+"\"\n")
	checkReport(t, cfg, now)
}

// Bad bounds and formats are usage errors that say what is wanted.
func TestReportUsage(t *testing.T) {
	t.Parallel()
	cfg := writeConfig(t, t.TempDir(), `store: {driver: sqlite, dsn: "file:`+filepath.Join(t.TempDir(), "bot.db")+`"}`+"\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--since", "yesterday"}, `bot report: --since: "yesterday": want a duration (7d, 24h, 90m)`},
		{[]string{"--since", "-5h"}, `bot report: --since: "-5h": want a duration back from now above 0`},
		{[]string{"--since", "1h", "--until", "2h"}, "is not before --until"},
		{[]string{"--format", "xlsx"}, `bot report: --format "xlsx": want csv or json`},
	} {
		code, _, errOut := runBot(t, nil, append([]string{"report", "--config", cfg}, c.args...)...)
		if code != 2 || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, code, errOut, c.want)
		}
	}
	for _, in := range []string{"7d", "24h", "90m", "2026-11-01", "2026-11-01T09:00:00Z"} {
		if _, err := parseWhen(in, time.Now()); err != nil {
			t.Errorf("parseWhen(%q): %v", in, err)
		}
	}
}
