package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"approvalsbot/store"
)

// reportPage is how many outcomes one read of the report takes: the
// report streams, holding one page at a time, whatever the window holds.
const reportPage = 500

// reportColumns are the report's columns, in order: ids, times, the
// ladder, who decided where, and what the call was by its effect, never
// its arguments, values or agent text.
var reportColumns = []string{"tenant", "approval_id", "job_id", "function", "requested_at", "decided_at",
	"wait_seconds", "first_look_at", "steps", "outcome", "deadline", "actor", "surface", "effect", "quick", "grant"}

// cmdReport writes one row per approval decided in a window, from the
// store the bot is configured with, beside a running bot.
func cmdReport(ctx context.Context, args []string, stdout io.Writer, getenv env, now time.Time) error {
	fs := newFlags("report", stdout, nil,
		"Writes one row per approval decided in a window (ids, times, steps reached, who decided and where, "+
			"outcome, effect, grant), never arguments, values or agent text, from the store the configuration names, "+
			"beside a running bot. It reads only the store section.",
		"bot report --config bot.yaml --since 7d --format csv > approvals.csv")
	path := configFlag(fs.FlagSet)
	since := fs.String("since", "7d", "the window's start: a duration back from now (7d, 24h, 90m) or an RFC 3339 time or date (2026-11-01)")
	until := fs.String("until", "", "the window's end, exclusive, in the same forms as --since; empty: now")
	tenantID := fs.String("tenant", "", "one tenant's approvals; empty: every tenant's")
	format := fs.String("format", "csv", "csv (with a header row) or json (one object per line)")
	if _, err := fs.parse(args); err != nil {
		return err
	}
	from, err := parseWhen(*since, now)
	if err != nil {
		return fs.usageErr("--since: %v", err)
	}
	to := now
	if *until != "" {
		if to, err = parseWhen(*until, now); err != nil {
			return fs.usageErr("--until: %v", err)
		}
	}
	if !from.Before(to) {
		return fs.usageErr("--since %s is not before --until %s: the window is empty", stamp(from), stamp(to))
	}
	var w reportWriter
	switch *format {
	case "csv":
		w = newCSVReport(stdout)
	case "json":
		w = jsonReport{enc: json.NewEncoder(stdout)}
	default:
		return fs.usageErr("--format %q: want csv or json", *format)
	}
	st, err := passkeyStore(ctx, *path, getenv)
	if err != nil {
		return err
	}
	if err := w.header(); err != nil {
		return err
	}
	if st == nil {
		return w.flush() // no store yet: nothing was decided
	}
	defer st.Close()
	p := store.OutcomeListParams{Tenant: *tenantID, Since: from, Until: to, Limit: reportPage}
	for {
		page, err := st.OutcomeList(ctx, p)
		if err != nil {
			return fmt.Errorf("read the outcomes (a store the bot has not migrated since the report came needs bot migrate): %w", err)
		}
		for _, o := range page {
			if err := w.row(reportRow(o)); err != nil {
				return err
			}
		}
		if len(page) < p.Limit {
			return w.flush()
		}
		last := page[len(page)-1]
		p.AfterAt, p.AfterID = last.DecidedAt, last.ApprovalID
	}
}

// parseWhen reads a report bound: a duration back from now (with d for
// days), or an RFC 3339 time, or a date (midnight UTC).
func parseWhen(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 && n <= 3660 {
			return now.Add(-time.Duration(n) * 24 * time.Hour), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d <= 0 {
			return time.Time{}, fmt.Errorf("%q: want a duration back from now above 0", s)
		}
		return now.Add(-d), nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.UTC(), nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q: want a duration (7d, 24h, 90m), an RFC 3339 time (2026-11-01T09:00:00Z) or a date (2026-11-01)", s)
}

// reportRow is one outcome's cells in reportColumns order.
func reportRow(o *store.Outcome) []string {
	when := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339)
	}
	wait := o.DecidedAt.Sub(o.RequestedAt).Seconds()
	if wait < 0 {
		wait = 0
	}
	return []string{o.Tenant, o.ApprovalID, o.Job, o.Function, when(o.RequestedAt), when(o.DecidedAt),
		strconv.FormatFloat(wait, 'f', 3, 64), when(o.FirstLookAt), strconv.Itoa(o.Steps), o.State,
		strconv.FormatBool(o.State == "expired"), o.Actor, o.Surface, o.Effect, strconv.FormatBool(o.Quick), o.Grant}
}

// reportWriter writes the report in one format.
type reportWriter interface {
	header() error
	row(cells []string) error
	flush() error
}

// csvReport writes CSV with a header row; a cell a spreadsheet would
// take for a formula is quoted as text (safeCell).
type csvReport struct{ w *csv.Writer }

func newCSVReport(out io.Writer) csvReport { return csvReport{w: csv.NewWriter(out)} }

func (c csvReport) header() error { return c.w.Write(reportColumns) }

func (c csvReport) row(cells []string) error {
	safe := make([]string, len(cells))
	for i, s := range cells {
		safe[i] = safeCell(s)
	}
	return c.w.Write(safe)
}

func (c csvReport) flush() error {
	c.w.Flush()
	return c.w.Error()
}

// safeCell keeps a spreadsheet from running a cell as a formula: ids and
// function names come from requests, and may be anyone's. A cell that
// begins with = + - @, a tab or a carriage return is prefixed with '.
func safeCell(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// jsonReport writes one JSON object per line, keyed by reportColumns.
type jsonReport struct{ enc *json.Encoder }

func (jsonReport) header() error { return nil }

func (j jsonReport) row(cells []string) error {
	if len(cells) != len(reportColumns) {
		return errors.New("report row does not match its columns")
	}
	obj := make(map[string]any, len(cells))
	for i, c := range cells {
		var v any = c
		switch reportColumns[i] {
		case "wait_seconds":
			v, _ = strconv.ParseFloat(c, 64)
		case "steps":
			v, _ = strconv.Atoi(c)
		case "deadline", "quick":
			v = c == "true"
		}
		obj[reportColumns[i]] = v
	}
	return j.enc.Encode(obj)
}

func (jsonReport) flush() error { return nil }
