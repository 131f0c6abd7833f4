package ladder_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
	// The zones the tests name load on a machine without a zone database.
	_ "time/tzdata"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

func zone(t *testing.T, name string) ladder.Zone {
	t.Helper()
	z, err := ladder.LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// local is a wall-clock time in a zone.
func local(t *testing.T, z ladder.Zone, y int, m time.Month, d, hh, mm int) time.Time {
	t.Helper()
	return time.Date(y, m, d, hh, mm, 0, 0, z.Location())
}

func TestParseDays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want string
	}{
		{"mon-fri", "mon-fri"},
		{"sat,sun", "sat-sun"},
		{"Sat, Sun", "sat-sun"},
		{"mon,wed,fri", "mon,wed,fri"},
		{"mon-fri, sun", "mon-fri,sun"},
		{"fri-mon", "mon,fri-sun"}, // wraps round the week end
		{"monday-sunday", "mon-sun"},
		{"tue", "tue"},
		{"thu-thu", "thu"},
	}
	for _, tt := range tests {
		d, err := ladder.ParseDays(tt.in)
		if err != nil {
			t.Errorf("ParseDays(%q): %v", tt.in, err)
			continue
		}
		if d.String() != tt.want {
			t.Errorf("ParseDays(%q) = %s, want %s", tt.in, d, tt.want)
		}
		if back, err := ladder.ParseDays(d.String()); err != nil || back != d {
			t.Errorf("%s does not read back: %v, %v", d, back, err)
		}
	}
	for in, want := range map[string]string{
		"":         "no days",
		"weekdays": `"weekdays" is not a day (mon, tue`,
		"mon-":     `"" is not a day`,
		"mon–fri":  `is not a day`, // an en dash
	} {
		if _, err := ladder.ParseDays(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseDays(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestParseHours(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"09:00-18:00": "09:00-18:00",
		"9:00-18:30":  "09:00-18:30",
		"22:00-06:00": "22:00-06:00",
		"22:00-00:00": "22:00-24:00",
		"00:00-24:00": "00:00-24:00",
		"18:00-09:00": "18:00-09:00",
	} {
		h, err := ladder.ParseHours(in)
		if err != nil || h.String() != want {
			t.Errorf("ParseHours(%q) = %s, %v; want %s", in, h, err, want)
		}
	}
	for in, want := range map[string]string{
		"09:00":       "write them like 09:00-18:00",
		"09:00-09:00": "never open",
		"00:00-00:00": "closes at 00:00",
		"24:00-06:00": "the day's last opening is 23:59",
		"25:00-06:00": `"25:00" is not a time of day`,
		"09:60-10:00": `"09:60" is not a time of day`,
		"9-17":        `"9" is not a time of day`,
		"24:30-01:00": `"24:30" is not a time of day`,
	} {
		if _, err := ladder.ParseHours(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseHours(%q) = %v, want an error containing %q", in, err, want)
		}
	}
}

func TestLoadZone(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":               "empty time zone",
		"Local":          "Local depends on the machine",
		"Europe/Berlinn": `"Europe/Berlinn" is not a time zone`,
	} {
		if _, err := ladder.LoadZone(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("LoadZone(%q) = %v, want an error containing %q", in, err, want)
		}
	}
	if z := (ladder.Zone{}); z.String() != "UTC" || !z.IsZero() {
		t.Errorf("the zero Zone is %s", z)
	}
}

func TestWindowNext(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	office := ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "09:00-18:00"), Zone: berlin}
	night := ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "22:00-06:00"), Zone: berlin}
	weekend := ladder.Window{Days: mustDays(t, "sat-sun"), Hours: ladder.AllDay, Zone: berlin}
	// 2026-12-04 is a Friday.
	at := func(d, hh, mm int) time.Time { return local(t, berlin, 2026, 12, d, hh, mm) }
	tests := []struct {
		name   string
		window ladder.Window
		t      time.Time
		want   time.Time
	}{
		{"open: itself", office, at(2, 10, 0), at(2, 10, 0)},
		{"at the opening", office, at(2, 9, 0), at(2, 9, 0)},
		{"before the opening", office, at(2, 7, 30), at(2, 9, 0)},
		{"at the close: the next day", office, at(2, 18, 0), at(3, 9, 0)},
		{"friday evening: monday", office, at(4, 18, 5), at(7, 9, 0)},
		{"saturday: monday", office, at(5, 12, 0), at(7, 9, 0)},
		{"just after midnight sunday to monday", office, at(7, 0, 0).Add(-time.Minute), at(7, 9, 0)},
		{"past midnight: still friday's night", night, at(5, 3, 0), at(5, 3, 0)},
		{"friday's night closes saturday 06:00", night, at(5, 6, 0), at(7, 22, 0)},
		{"sunday night does not open (sunday is not listed)", night, at(6, 23, 0), at(7, 22, 0)},
		{"monday early: sunday opened nothing", night, at(7, 2, 0), at(7, 22, 0)},
		{"tuesday 01:00: monday's night", night, at(8, 1, 0), at(8, 1, 0)},
		{"weekend: friday waits for saturday midnight", weekend, at(4, 23, 59), at(5, 0, 0)},
		{"weekend: sunday 23:59 is open", weekend, at(6, 23, 59), at(6, 23, 59)},
		{"weekend: monday waits a week less two days", weekend, at(7, 0, 0), at(12, 0, 0)},
		{"a time given in another zone", office, at(2, 8, 0).UTC(), at(2, 9, 0)},
	}
	for _, tt := range tests {
		got := tt.window.Next(tt.t)
		if !got.Equal(tt.want) {
			t.Errorf("%s: Next(%s) = %s, want %s", tt.name, tt.t.In(berlin.Location()), got.In(berlin.Location()), tt.want)
		}
		if open := got.Equal(tt.t); open != tt.window.Contains(tt.t) {
			t.Errorf("%s: Contains(%s) = %v", tt.name, tt.t, !open)
		}
	}
}

// Across daylight saving changes, a window keeps its wall-clock hours:
// 09:00 in Berlin is 08:00 UTC in winter and 07:00 UTC in summer.
func TestWindowAcrossDST(t *testing.T) {
	t.Parallel()
	berlin := zone(t, "Europe/Berlin")
	office := ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "09:00-18:00"), Zone: berlin}
	utc := func(m time.Month, d, hh, mm int) time.Time { return time.Date(2026, m, d, hh, mm, 0, 0, time.UTC) }
	// Summer time starts Sunday 2026-03-29 02:00 CET; it ends Sunday
	// 2026-10-25 03:00 CEST.
	tests := []struct {
		name    string
		t, want time.Time
	}{
		{"friday evening before spring: monday 09:00 CEST", utc(3, 27, 17, 30), utc(3, 30, 7, 0)},
		{"friday evening before autumn: monday 09:00 CET", utc(10, 23, 16, 30), utc(10, 26, 8, 0)},
		{"monday 07:30 UTC in summer is 09:30 there: open", utc(3, 30, 7, 30), utc(3, 30, 7, 30)},
		{"monday 16:30 UTC in summer is 18:30 there: shut", utc(3, 30, 16, 30), utc(3, 31, 7, 0)},
		{"monday 16:30 UTC in winter is 17:30 there: open", utc(10, 26, 16, 30), utc(10, 26, 16, 30)},
	}
	for _, tt := range tests {
		if got := office.Next(tt.t); !got.Equal(tt.want) {
			t.Errorf("%s: Next(%s) = %s, want %s", tt.name, tt.t, got.UTC(), tt.want)
		}
	}

	// A night window on the night the clocks go forward is an hour short,
	// and on the night they go back an hour long.
	nights := ladder.Window{Days: ladder.EveryDay, Hours: mustHours(t, "01:00-04:00"), Zone: berlin}
	openFor := func(from time.Time) time.Duration {
		open := nights.Next(from)
		end := open
		for nights.Contains(end) {
			end = end.Add(time.Minute)
		}
		return end.Sub(open)
	}
	if got := openFor(utc(3, 28, 12, 0)); got != 2*time.Hour {
		t.Errorf("the spring night is open %s, want 2h", got)
	}
	if got := openFor(utc(10, 24, 12, 0)); got != 4*time.Hour {
		t.Errorf("the autumn night is open %s, want 4h", got)
	}
	if got := openFor(utc(6, 1, 12, 0)); got != 3*time.Hour {
		t.Errorf("a summer night is open %s, want 3h", got)
	}
}

// Midnight in the window's zone, not in UTC, ends its day.
func TestWindowMidnightInItsZone(t *testing.T) {
	t.Parallel()
	ny := zone(t, "America/New_York")
	late := ladder.Window{Days: mustDays(t, "mon"), Hours: mustHours(t, "22:00-02:00"), Zone: ny}
	// Monday 2026-11-30 22:30 in New York is Tuesday 03:30 UTC.
	tue := time.Date(2026, 12, 1, 3, 30, 0, 0, time.UTC)
	if !late.Contains(tue) {
		t.Errorf("Monday 22:30 in New York (%s) is outside mon 22:00-02:00", tue)
	}
	// Tuesday 01:59 there is still Monday's window; 02:00 closes it.
	if !late.Contains(local(t, ny, 2026, 12, 1, 1, 59)) || late.Contains(local(t, ny, 2026, 12, 1, 2, 0)) {
		t.Error("Monday's window does not close at 02:00 on Tuesday in New York")
	}
	if got, want := late.Next(local(t, ny, 2026, 12, 1, 2, 0)), local(t, ny, 2026, 12, 7, 22, 0); !got.Equal(want) {
		t.Errorf("next after Tuesday 02:00: %s, want the next Monday %s", got, want)
	}
}

func TestWindowLongestClosedAndString(t *testing.T) {
	t.Parallel()
	utc := zone(t, "UTC")
	tests := []struct {
		days, hours string
		want        time.Duration
		text        string
	}{
		{"mon-fri", "09:00-18:00", 63 * time.Hour, "mon-fri 09:00-18:00 UTC"},
		{"mon-sun", "00:00-24:00", 0, "every day all day UTC"},
		{"mon-sun", "22:00-06:00", 16 * time.Hour, "every day 22:00-06:00 UTC"},
		{"sat-sun", "00:00-24:00", 120 * time.Hour, "sat-sun all day UTC"},
		{"mon", "09:00-10:00", 167 * time.Hour, "mon 09:00-10:00 UTC"},
		{"fri-mon", "22:00-06:00", 88 * time.Hour, "mon,fri-sun 22:00-06:00 UTC"},
	}
	for _, tt := range tests {
		w := ladder.Window{Days: mustDays(t, tt.days), Hours: mustHours(t, tt.hours), Zone: utc}
		if got := w.LongestClosed(); got != tt.want {
			t.Errorf("%s: LongestClosed = %s, want %s", w, got, tt.want)
		}
		if w.String() != tt.text {
			t.Errorf("String() = %q, want %q", w, tt.text)
		}
	}
}

func TestWindowJSON(t *testing.T) {
	t.Parallel()
	w := ladder.Window{Days: mustDays(t, "mon-fri"), Hours: mustHours(t, "09:00-18:00"), Zone: zone(t, "Europe/Berlin")}
	b, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"days":"mon-fri","hours":"09:00-18:00","zone":"Europe/Berlin"}`; string(b) != want {
		t.Errorf("json %s, want %s", b, want)
	}
	var back ladder.Window
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(w, back); diff != "" {
		t.Errorf("round trip (-before +after):\n%s", diff)
	}
	for _, bad := range []string{`{"days":"","hours":"09:00-18:00","zone":"UTC"}`, `{"days":"mon","hours":"9","zone":"UTC"}`, `{"days":"mon","hours":"09:00-18:00","zone":"Mars/Olympus"}`} {
		if err := json.Unmarshal([]byte(bad), &back); err == nil {
			t.Errorf("%s read back", bad)
		}
	}
}

func mustDays(t *testing.T, s string) ladder.Days {
	t.Helper()
	d, err := ladder.ParseDays(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func mustHours(t *testing.T, s string) ladder.Hours {
	t.Helper()
	h, err := ladder.ParseHours(s)
	if err != nil {
		t.Fatal(err)
	}
	return h
}
