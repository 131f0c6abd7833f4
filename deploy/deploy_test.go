package deploy

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.yaml.in/yaml/v3"

	"approvalsbot/threads"
)

var update = flag.Bool("update", false, "write prometheus/dashboard.rules.yml again from the dashboard")

const (
	dashboardFile = "grafana/approvalsbot.json"
	alertsFile    = "prometheus/alerts.yml"
	// dashboardRules wraps the dashboard's queries as recording rules, so
	// that `promtool check rules` parses each one (.ci/run).
	dashboardRules = "prometheus/dashboard.rules.yml"
)

// grafanaVars are the variables Grafana replaces in a query before
// sending it, with the value the rules file checks it under.
var grafanaVars = map[string]string{"$__rate_interval": "5m", "$__interval": "1m", "$__range": "1h"}

type dashboard struct {
	Title  string  `json:"title"`
	UID    string  `json:"uid"`
	Panels []panel `json:"panels"`
}

type panel struct {
	ID         int    `json:"id"`
	Type       string `json:"type"`
	Title      string `json:"title"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

type query struct {
	record, panel, expr string
}

// dashboardQueries reads every query of the dashboard, with Grafana's
// variables replaced.
func dashboardQueries(t *testing.T) []query {
	t.Helper()
	raw, err := os.ReadFile(dashboardFile)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	var d dashboard
	if err := dec.Decode(&d); err != nil {
		t.Fatalf("%s: %v", dashboardFile, err)
	}
	if d.UID == "" || d.Title == "" {
		t.Errorf("%s: the dashboard needs a uid and a title", dashboardFile)
	}
	var qs []query
	ids := map[int]bool{}
	for _, p := range d.Panels {
		if ids[p.ID] {
			t.Errorf("%s: panel id %d twice", dashboardFile, p.ID)
		}
		ids[p.ID] = true
		if p.Type == "row" {
			continue
		}
		if p.Datasource == nil || p.Datasource.UID != "${datasource}" {
			t.Errorf("panel %q: its datasource must be the dashboard's ${datasource} variable", p.Title)
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			expr := tg.Expr
			for v, val := range grafanaVars {
				expr = strings.ReplaceAll(expr, v, val)
			}
			if strings.Contains(expr, "$") {
				t.Errorf("panel %q query %s: a variable the rules file cannot stand in for: %s", p.Title, tg.RefID, tg.Expr)
			}
			qs = append(qs, query{record: fmt.Sprintf("approvalsbot_dashboard:panel_%d_%s", p.ID, strings.ToLower(tg.RefID)),
				panel: p.Title, expr: expr})
		}
	}
	return qs
}

// renderRules is the rules file of the dashboard's queries.
func renderRules(qs []query) []byte {
	var b bytes.Buffer
	b.WriteString("# Generated from " + dashboardFile + " by `go test ./deploy -update`: do not edit.\n")
	b.WriteString("# Each query of the dashboard as a recording rule, so that `promtool check rules`\n")
	b.WriteString("# checks its PromQL (Grafana's $__rate_interval stands as 5m). Not for loading\n")
	b.WriteString("# into Prometheus: the dashboard queries the bot's metrics directly.\n")
	b.WriteString("groups:\n  - name: approvalsbot-dashboard-queries\n    rules:\n")
	for _, q := range qs {
		expr, _ := json.Marshal(q.expr) // a JSON string is a YAML double-quoted scalar
		title, _ := json.Marshal(q.panel)
		fmt.Fprintf(&b, "      - record: %s\n        expr: %s\n        labels:\n          panel: %s\n", q.record, expr, title)
	}
	return b.Bytes()
}

// The rules file promtool checks is the dashboard's queries, as they are
// now.
func TestDashboardRulesMatchTheDashboard(t *testing.T) {
	want := renderRules(dashboardQueries(t))
	if *update {
		if err := os.WriteFile(dashboardRules, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(dashboardRules)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the dashboard's queries: run go test ./deploy -update", dashboardRules)
	}
}

// metricName finds the metric names a PromQL expression reads.
var metricName = regexp.MustCompile(`\b((?:bot|go|process)_[a-z0-9_]+)\b`)

// exportedName finds where the bot's code names a metric it exports.
var exportedName = regexp.MustCompile(`(?:Name:\s*|NewDesc\(\s*)"(bot_[a-z0-9_]+)"`)

// exported lists every metric the bot serves on /metrics: those its code
// declares, and those of the Go and process collectors `bot serve`
// registers.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != ".." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range exportedName.FindAllSubmatch(src, -1) {
			names[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(names) == 0 {
		t.Fatal("found no metric the bot declares: the search is broken")
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}

// histogramOf is the histogram a series name reads (its _bucket, _sum or
// _count); "" for any other name.
func histogramOf(series string) string {
	for _, suffix := range []string{"_bucket", "_sum", "_count"} {
		if base, ok := strings.CutSuffix(series, suffix); ok {
			return base
		}
	}
	return ""
}

type ruleFile struct {
	Groups []struct {
		Name  string `yaml:"name"`
		Rules []struct {
			Alert       string            `yaml:"alert"`
			Record      string            `yaml:"record"`
			Expr        string            `yaml:"expr"`
			For         string            `yaml:"for"`
			Labels      map[string]string `yaml:"labels"`
			Annotations map[string]string `yaml:"annotations"`
		} `yaml:"rules"`
	} `yaml:"groups"`
}

// Every metric the alerts and the dashboard read is one the bot exports:
// a renamed metric would otherwise leave an alert that never fires.
func TestDeployedQueriesReadExportedMetrics(t *testing.T) {
	names := exported(t)
	raw, err := os.ReadFile(alertsFile)
	if err != nil {
		t.Fatal(err)
	}
	var rf ruleFile
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	if err := dec.Decode(&rf); err != nil {
		t.Fatalf("%s: %v", alertsFile, err)
	}
	exprs := map[string]string{}
	for _, g := range rf.Groups {
		for _, r := range g.Rules {
			if r.Alert == "" {
				t.Errorf("%s: a rule that is not an alert (%s)", alertsFile, r.Record)
				continue
			}
			if s := r.Labels["severity"]; s != "critical" && s != "warning" {
				t.Errorf("alert %s: severity %q, want critical (pages) or warning", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: needs a summary and a description", r.Alert)
			}
			exprs["alert "+r.Alert] = r.Expr
		}
	}
	for _, q := range dashboardQueries(t) {
		exprs["dashboard panel "+q.panel+" ("+q.record+")"] = q.expr
	}
	used := 0
	for where, expr := range exprs {
		for _, m := range metricName.FindAllStringSubmatch(expr, -1) {
			used++
			if !names[m[1]] && !names[histogramOf(m[1])] {
				t.Errorf("%s reads %s, which the bot does not export", where, m[1])
			}
		}
	}
	if used == 0 {
		t.Fatal("no query reads a metric: the search is broken")
	}
	// And the other way: every metric the bot declares is on the dashboard.
	var missing []string
	for name := range names {
		if !strings.HasPrefix(name, "bot_") {
			continue
		}
		shown := false
		for where, expr := range exprs {
			if strings.HasPrefix(where, "dashboard ") && regexp.MustCompile(`\b`+name+`(_bucket|_sum|_count)?\b`).MatchString(expr) {
				shown = true
			}
		}
		if !shown {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		t.Errorf("the dashboard shows none of %v: add a panel", missing)
	}
}

// The counter series the alerts on dead and failing rows read exist, at
// 0, from the start, before any row is performed: a series that first
// appears at 1 is no increase to increase() or rate(), and the first row
// to die would page nobody.
func TestDeliveryCountersStartAtZero(t *testing.T) {
	reg := prometheus.NewRegistry()
	threads.NewMetrics(reg)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "bot_deliveries_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			l := map[string]string{}
			for _, lp := range m.GetLabel() {
				l[lp.GetName()] = lp.GetValue()
			}
			have[l["surface"]+"/"+l["kind"]+"/"+l["result"]] = m.GetCounter().GetValue()
		}
	}
	// Each kind under the surfaces it is delivered to: a decision and a
	// grant's revocation to the job backend, an email by mail, a push to a member's push address,
	// the rest to a chat surface (or, when that surface is not
	// configured, the log).
	pairs := []string{"backend/decision", "backend/grant_revoke", "email/email", "push/push"}
	for _, surface := range []string{"slack", "discord", "log"} {
		for _, kind := range []string{"post_card", "edit_card", "reply", "tell", "notice"} {
			pairs = append(pairs, surface+"/"+kind)
		}
	}
	// ApprovalsBotDeadRows reads dead; ApprovalsBotDeliveriesFailing
	// reads retry, dead and unrecorded over everything else.
	for _, pair := range pairs {
		for _, result := range []string{"dead", "retry", "unrecorded", "ok", "lease_lost"} {
			key := pair + "/" + result
			v, ok := have[key]
			switch {
			case !ok:
				t.Errorf("bot_deliveries_total{surface/kind/result=%s} is not exported before a row is performed", key)
			case v != 0:
				t.Errorf("bot_deliveries_total{surface/kind/result=%s} starts at %v, want 0", key, v)
			}
		}
	}
	for key := range have {
		if !slices.Contains(pairs, key[:strings.LastIndex(key, "/")]) {
			t.Errorf("bot_deliveries_total{surface/kind/result=%s}: a kind under a surface it is never delivered to", key)
		}
	}
}

// The image's build context keeps every file git tracks, and .git: the
// go command stamps the binary from .git, and a tracked file the context
// leaves out reads to git as deleted, so `bot version` in the image would
// say "with changes not committed" of a clean checkout.
func TestImageContextKeepsTrackedFiles(t *testing.T) {
	out, err := exec.Command("git", "-C", "..", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("no git checkout to compare .dockerignore with: %v", err)
	}
	tracked := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	if len(tracked) < 10 || !slices.Contains(tracked, "Dockerfile") {
		t.Fatalf("git ls-files lists %d files, without the Dockerfile: the listing is broken", len(tracked))
	}
	raw, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	// Docker's rules for the patterns this file uses: a pattern, cleaned
	// and without a leading slash, is matched (path.Match) against a
	// path of the context and each of its parent directories.
	var patterns []string
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "!") || strings.Contains(line, "**") {
			t.Fatalf(".dockerignore: %q: this check does not read exceptions or **; extend it", line)
		}
		p := path.Clean(strings.TrimPrefix(line, "/"))
		if _, err := path.Match(p, ""); err != nil {
			t.Fatalf(".dockerignore: %q: %v", line, err)
		}
		patterns = append(patterns, p)
	}
	dropped := func(file string) string {
		parts := strings.Split(file, "/")
		for i := 1; i <= len(parts); i++ {
			prefix := strings.Join(parts[:i], "/")
			for _, p := range patterns {
				if ok, _ := path.Match(p, prefix); ok {
					return p
				}
			}
		}
		return ""
	}
	for _, file := range append(tracked, ".git/HEAD") {
		if p := dropped(file); p != "" {
			t.Errorf(".dockerignore's %q leaves %s out of the image's build context", p, file)
		}
	}
	// And it does leave out what it is for.
	for _, local := range []string{"bot", "bot.db", "bot.db-wal"} {
		if dropped(local) == "" {
			t.Errorf(".dockerignore keeps %s, local state, in the build context", local)
		}
	}
}
