package templates

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// The tests of unexported functions. The rest of this package's tests are in
// package templates_test, which can use package templatestest.

// TestPlanLine: the ladder as frozen at request, on one line with
// absolute times, bounded, whatever the ladder holds.
func TestPlanLine(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	req := day.Add(9 * time.Hour)
	dl := day.Add(18 * time.Hour)
	step := func(h, m int, who string) PlanStep {
		return PlanStep{At: day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute), Who: who}
	}
	skipped := func(s PlanStep) PlanStep { s.Skipped = true; return s }
	var thirty []PlanStep
	for i := range 30 {
		thirty = append(thirty, step(9, 10+i, fmt.Sprintf("mention @p%d", i)))
	}
	const no = " · deadline 2026-11-30 18:00 UTC (no answer counts as a no)"
	tests := []struct {
		name     string
		steps    []PlanStep
		deadline time.Time
		want     string
	}{
		{"example", []PlanStep{step(15, 15, "mention @kevin"), step(16, 0, "email leads@acme.example"), skipped(step(19, 0, "dm lead"))}, dl,
			"ladder: 15:15 UTC mention @kevin · 16:00 UTC email leads@acme.example · 19:00 UTC dm lead (skipped: after the deadline)" + no},
		{"no steps: only the deadline", nil, dl, strings.TrimPrefix(no, " · ")},
		{"no steps, no deadline", nil, time.Time{}, ""},
		{"no deadline", []PlanStep{step(10, 0, "mention @kevin")}, time.Time{}, "ladder: 10:00 UTC mention @kevin"},
		{"another day shows its date", []PlanStep{step(9, 15, "mention @kevin"), step(33, 0, "dm kevin")}, day.Add(48 * time.Hour),
			"ladder: 09:15 UTC mention @kevin · 2026-12-01 09:00 UTC dm kevin · deadline 2026-12-02 00:00 UTC (no answer counts as a no)"},
		{"before the request", []PlanStep{skipped(step(8, 0, "mention @oncall")), step(10, 0, "dm lead")}, dl,
			"ladder: 08:00 UTC mention @oncall (skipped: before the request) · 10:00 UTC dm lead" + no},
		{"shown in UTC", []PlanStep{{At: day.Add(15 * time.Hour).In(time.FixedZone("CET", 3600)), Who: "mention @kevin"}}, dl,
			"ladder: 15:00 UTC mention @kevin" + no},
		{"no targets", []PlanStep{step(10, 0, "")}, dl, "ladder: 10:00 UTC no targets" + no},
		{"one line", []PlanStep{step(10, 0, "mention @a\n@b\u202e")}, dl, "ladder: 10:00 UTC mention @a @b[U+202E]" + no},
		{"one more step", append(thirty[:5:5], thirty[5]), dl,
			"ladder: 09:10 UTC mention @p0 · 09:11 UTC mention @p1 · 09:12 UTC mention @p2 · 09:13 UTC mention @p3 · 09:14 UTC mention @p4 · and 1 more step" + no},
		{"thirty steps", thirty, dl,
			"ladder: 09:10 UTC mention @p0 · 09:11 UTC mention @p1 · 09:12 UTC mention @p2 · 09:13 UTC mention @p3 · 09:14 UTC mention @p4 · and 25 more steps" + no},
		{"whom a step tells is cut", []PlanStep{step(10, 0, strings.Repeat("x", 500))}, dl,
			"ladder: 10:00 UTC " + strings.Repeat("x", planWhoMax-1) + "…" + no},
		// A window that stays shut until the deadline: the plan's reason,
		// at the time the step was due, in time order.
		{"the plan's reason", []PlanStep{step(10, 0, "mention @kevin"),
			{At: day.Add(20 * time.Hour), HeldFrom: day.Add(9*time.Hour + 30*time.Minute), Who: "dm lead", Skipped: true, Skip: SkipWindowShut}}, dl,
			"ladder: 09:30 UTC dm lead (skipped: its window does not open before the deadline) · 10:00 UTC mention @kevin" + no},
		{"a skipped step after the first five", append(thirty[:6:6], skipped(step(19, 0, "dm lead"))), dl,
			"ladder: 09:10 UTC mention @p0 · 09:11 UTC mention @p1 · 09:12 UTC mention @p2 · 09:13 UTC mention @p3 · 09:14 UTC mention @p4" +
				" · and 1 more step · 19:00 UTC dm lead (skipped: after the deadline)" + no},
		{"skipped steps are bounded", []PlanStep{skipped(step(18, 0, "dm a")), skipped(step(18, 1, "dm b")), skipped(step(18, 2, "dm c")),
			skipped(step(18, 3, "dm d")), skipped(step(18, 4, "dm e")), skipped(step(18, 5, "dm f")), skipped(step(18, 6, "dm g"))}, dl,
			"ladder: 18:00 UTC dm a (skipped: after the deadline) · 18:01 UTC dm b (skipped: after the deadline) · 18:02 UTC dm c (skipped: after the deadline)" +
				" · 18:03 UTC dm d (skipped: after the deadline) · 18:04 UTC dm e (skipped: after the deadline) · and 2 more steps" + no},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := planLine(LadderPlan{Steps: tt.steps, Deadline: tt.deadline}, tt.deadline, req, clock{zone: time.UTC, today: req}).done(0); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}

}

// TestCleanText: control characters and bidirectional overrides are shown,
// not obeyed.
func TestCleanText(t *testing.T) {
	tests := map[string]string{
		"plain":             "plain",
		"a\x1b[31mred":      "a[U+001B][31mred",
		"evil\u202Etxt.exe": "evil[U+202E]txt.exe",
		"a\r\nb\rc\u2029d":  "a\nb\nc\nd",
		"bad\xffutf8":       "bad\uFFFDutf8",
		"tab\tkept":         "tab\tkept",
	}
	for in, want := range tests {
		if got := cleanText(in); got != want {
			t.Errorf("cleanText(%q) = %q, want %q", in, got, want)
		}
	}
	if got := visibleJSON(`{"a":"x` + "\u202E" + `y"}`); got != `{"a":"x\u202ey"}` {
		t.Errorf("visibleJSON = %q", got)
	}
	if got := oneLine("a\nb\t c"); got != "a b c" {
		t.Errorf("oneLine = %q", got)
	}
}

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		45 * time.Second: "45s", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Minute: "1h30m",
		26 * time.Hour: "1d2h", 48 * time.Hour: "2d",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestPlanLineRepeats: a repeating step is said once with its
// repetitions; a repetition its window moved, one skipped, or one that
// tells someone else (a rotation's hand-off) stays an entry of its own.
func TestPlanLineRepeats(t *testing.T) {
	day := time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)
	req := day.Add(9 * time.Hour)
	dl := day.Add(18 * time.Hour)
	fire := func(index, repeat, h, m int, who string) PlanStep {
		return PlanStep{At: day.Add(time.Duration(h)*time.Hour + time.Duration(m)*time.Minute), Who: who,
			Index: index, Repeat: repeat, Every: 30 * time.Minute}
	}
	const no = " · deadline 2026-11-30 18:00 UTC (no answer counts as a no)"
	tests := []struct {
		name  string
		steps []PlanStep
		want  string
	}{
		{"said once", []PlanStep{fire(0, 0, 9, 15, "mention a"), fire(0, 1, 9, 45, "mention a"), fire(0, 2, 10, 15, "mention a"), fire(0, 3, 10, 45, "mention a")},
			"ladder: 09:15 UTC mention a, then every 30 minutes, 3 more times" + no},
		{"between other steps", []PlanStep{fire(0, 0, 9, 15, "mention a"), {At: day.Add(9*time.Hour + 30*time.Minute), Who: "email b", Index: 1},
			fire(0, 1, 9, 45, "mention a")},
			"ladder: 09:15 UTC mention a, then every 30 minutes, 1 more time · 09:30 UTC email b" + no},
		{"a hand-off splits it", []PlanStep{fire(0, 0, 9, 15, "mention a"), fire(0, 1, 9, 45, "mention a"), fire(0, 2, 10, 15, "mention c"), fire(0, 3, 10, 45, "mention c")},
			"ladder: 09:15 UTC mention a, then every 30 minutes, 1 more time · 10:15 UTC mention c, then every 30 minutes, 1 more time" + no},
		{"a repetition its window moved", []PlanStep{fire(0, 0, 9, 15, "mention a"), func() PlanStep {
			s := fire(0, 1, 12, 0, "mention a")
			s.HeldFrom = day.Add(9*time.Hour + 45*time.Minute)
			return s
		}(), fire(0, 2, 12, 30, "mention a")},
			"ladder: 09:15 UTC mention a · 12:00 UTC mention a, then every 30 minutes, 1 more time" + no},
		{"a skipped repetition", []PlanStep{fire(0, 0, 17, 15, "mention a"), fire(0, 1, 17, 45, "mention a"), func() PlanStep {
			s := fire(0, 2, 18, 15, "mention a")
			s.Skipped = true
			return s
		}()},
			"ladder: 17:15 UTC mention a, then every 30 minutes, 1 more time · 18:15 UTC mention a (skipped: after the deadline)" + no},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, _ := planLine(LadderPlan{Steps: tt.steps, Deadline: dl}, dl, req, clock{zone: time.UTC, today: req}).done(0); got != tt.want {
				t.Errorf("\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestEvery(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Second: "every second", 30 * time.Minute: "every 30 minutes", time.Hour: "every hour",
		90 * time.Minute: "every 1 hour 30 minutes", 2*time.Hour + time.Second: "every 2 hours 1 second",
		1500 * time.Millisecond: "every 1.5s",
	} {
		if got := every(d); got != want {
			t.Errorf("%v: %q, want %q", d, got, want)
		}
	}
}

// TestRoleTable: the columns are labelled and aligned; a cell longer
// than its column's bound widens only its own row.
func TestRoleTable(t *testing.T) {
	long := strings.Repeat("v", 50)
	got := roleTable([]RoleRow{
		{Argument: "to", Role: "recipient", Value: "x@evil.example", Origin: "something the job read", OutOfScope: true},
		{Argument: "to", Role: "recipient", Value: long, Origin: "a tenant record"},
		{Argument: "cc", Role: "recipient", Value: "ops@acme.example", Origin: "the request"},
	})
	pad := strings.Repeat(" ", 40-len("x@evil.example"))
	want := "  argument  role       value" + strings.Repeat(" ", 40-len("value")) + "  came from\n" +
		"⚠ to        recipient  x@evil.example" + pad + "  something the job read, out of scope\n" +
		"  to        recipient  " + long + "  a tenant record\n" +
		"  cc        recipient  ops@acme.example" + strings.Repeat(" ", 40-len("ops@acme.example")) + "  the request"
	if got != want {
		t.Errorf("\n got:\n%s\nwant:\n%s", got, want)
	}
	if roleTable(nil) != "" {
		t.Error("no rows, yet a table")
	}
}
