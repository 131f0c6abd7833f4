package ladder

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Zone is a time zone by its IANA name, which is its text form, so a
// stored plan stays readable; reading it back is the package's one lookup
// (the binary embeds the database). The zero Zone is UTC.
type Zone struct{ loc *time.Location }

// LoadZone finds a zone by name. "Local" is refused: it would mean
// whatever the machine running the bot is set to.
func LoadZone(name string) (Zone, error) {
	switch name {
	case "":
		return Zone{}, errors.New("empty time zone: name one like Europe/Berlin or UTC")
	case "Local":
		//lint:ignore ST1005 the message opens with the zone's name as written
		return Zone{}, errors.New("Local depends on the machine: name a zone like Europe/Berlin or UTC")
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return Zone{}, fmt.Errorf("%q is not a time zone (like Europe/Berlin or UTC)", name)
	}
	return Zone{loc: loc}, nil
}

// ZoneOf wraps a location; nil gives UTC.
func ZoneOf(loc *time.Location) Zone { return Zone{loc: loc} }

// Location is the zone's *time.Location, UTC for the zero Zone.
func (z Zone) Location() *time.Location {
	if z.loc == nil {
		return time.UTC
	}
	return z.loc
}

// IsZero reports whether the zone was never set.
func (z Zone) IsZero() bool { return z.loc == nil }

// String is the zone's name.
func (z Zone) String() string { return z.Location().String() }

// Equal compares zones by name (go-cmp uses it too).
func (z Zone) Equal(o Zone) bool { return z.String() == o.String() }

// MarshalText writes the zone's name.
func (z Zone) MarshalText() ([]byte, error) { return []byte(z.String()), nil }

// UnmarshalText reads a zone's name.
func (z *Zone) UnmarshalText(b []byte) error {
	p, err := LoadZone(string(b))
	if err != nil {
		return err
	}
	*z = p
	return nil
}

// Days is a set of weekdays: bit i is time.Weekday(i).
type Days uint8

// EveryDay holds all seven days.
const EveryDay Days = 1<<7 - 1

// dayNames are the days, Monday first.
var dayNames = []struct {
	short, long string
	day         time.Weekday
}{
	{"mon", "monday", time.Monday}, {"tue", "tuesday", time.Tuesday},
	{"wed", "wednesday", time.Wednesday}, {"thu", "thursday", time.Thursday},
	{"fri", "friday", time.Friday}, {"sat", "saturday", time.Saturday},
	{"sun", "sunday", time.Sunday},
}

const dayForms = "mon, tue, wed, thu, fri, sat, sun"

// ParseWeekday reads one day: mon or monday, in any case.
func ParseWeekday(s string) (time.Weekday, error) {
	w := strings.ToLower(strings.TrimSpace(s))
	for _, d := range dayNames {
		if w == d.short || w == d.long {
			return d.day, nil
		}
	}
	return 0, fmt.Errorf("%q is not a day (%s)", strings.TrimSpace(s), dayForms)
}

// ParseDays reads days and ranges separated by commas ("mon-fri, sun"); a
// range may wrap round the week end ("fri-mon").
func ParseDays(s string) (Days, error) {
	if strings.TrimSpace(s) == "" {
		return 0, fmt.Errorf("no days: write them like mon-fri or sat,sun (%s)", dayForms)
	}
	var set Days
	for part := range strings.SplitSeq(s, ",") {
		from, to, isRange := strings.Cut(part, "-")
		a, err := ParseWeekday(from)
		if err != nil {
			return 0, err
		}
		b := a
		if isRange {
			if b, err = ParseWeekday(to); err != nil {
				return 0, err
			}
		}
		for d := a; ; d = (d + 1) % 7 {
			set |= 1 << d
			if d == b {
				break
			}
		}
	}
	return set, nil
}

// Has reports whether the set holds day w.
func (d Days) Has(w time.Weekday) bool { return d&(1<<w) != 0 }

// String writes the set Monday first, runs as ranges: "mon-fri",
// "sat-sun", "mon,wed,fri", "mon-sun"; "" for no days.
func (d Days) String() string {
	var parts []string
	for i := 0; i < len(dayNames); {
		if !d.Has(dayNames[i].day) {
			i++
			continue
		}
		j := i
		for j+1 < len(dayNames) && d.Has(dayNames[j+1].day) {
			j++
		}
		if j > i {
			parts = append(parts, dayNames[i].short+"-"+dayNames[j].short)
		} else {
			parts = append(parts, dayNames[i].short)
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// MarshalText writes the set as String does.
func (d Days) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads the set as ParseDays does.
func (d *Days) UnmarshalText(b []byte) error {
	p, err := ParseDays(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// TimeOfDay is a wall-clock time in minutes, 0 to 24*60 (24:00 ends a day).
type TimeOfDay int

// dayMinutes is 24:00.
const dayMinutes TimeOfDay = 24 * 60

// ParseTimeOfDay reads HH:MM (9:00 is read too), 00:00 to 24:00.
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	h, m, ok := strings.Cut(strings.TrimSpace(s), ":")
	hh, herr := strconv.Atoi(h)
	mm, merr := strconv.Atoi(m)
	if !ok || herr != nil || merr != nil || len(h) < 1 || len(h) > 2 || len(m) != 2 ||
		hh < 0 || hh > 24 || mm < 0 || mm > 59 || hh == 24 && mm != 0 {
		return 0, fmt.Errorf("%q is not a time of day (HH:MM, 00:00 to 24:00)", strings.TrimSpace(s))
	}
	return TimeOfDay(hh*60 + mm), nil
}

// String writes HH:MM.
func (t TimeOfDay) String() string { return fmt.Sprintf("%02d:%02d", int(t)/60, int(t)%60) }

// MarshalText writes HH:MM.
func (t TimeOfDay) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads HH:MM.
func (t *TimeOfDay) UnmarshalText(b []byte) error {
	p, err := ParseTimeOfDay(string(b))
	if err != nil {
		return err
	}
	*t = p
	return nil
}

// on is t on the date in loc; a time DST skips moves past the gap (time.Date).
func (t TimeOfDay) on(y int, m time.Month, d int, loc *time.Location) time.Time {
	return time.Date(y, m, d, int(t)/60, int(t)%60, 0, 0, loc)
}

// Hours is a daily span from Open to Close; a Close at or before Open runs
// past midnight (22:00-06:00). 00:00-24:00 is the whole day.
type Hours struct {
	Open, Close TimeOfDay
}

// AllDay is 00:00-24:00.
var AllDay = Hours{Open: 0, Close: dayMinutes}

// ParseHours reads "09:00-18:00", or "22:00-06:00" past midnight.
func ParseHours(s string) (Hours, error) {
	a, b, ok := strings.Cut(s, "-")
	if !ok {
		return Hours{}, fmt.Errorf("%q is not hours: write them like 09:00-18:00 (or 22:00-06:00 past midnight)", s)
	}
	open, err := ParseTimeOfDay(a)
	if err != nil {
		return Hours{}, err
	}
	cls, err := ParseTimeOfDay(b)
	if err != nil {
		return Hours{}, err
	}
	if cls == 0 && open > 0 {
		cls = dayMinutes // "22:00-00:00" runs to midnight
	}
	h := Hours{Open: open, Close: cls}
	if err := h.Validate(); err != nil {
		return Hours{}, err
	}
	return h, nil
}

// Validate checks the span opens before 24:00 and is not empty.
func (h Hours) Validate() error {
	switch {
	case h.Open < 0 || h.Open >= dayMinutes:
		return fmt.Errorf("opens at %s: the day's last opening is 23:59", h.Open)
	case h.Close <= 0 || h.Close > dayMinutes:
		return fmt.Errorf("closes at %s: write midnight as 24:00 at the end of a span", h.Close)
	case h.Open == h.Close:
		return fmt.Errorf("opens and closes at %s, so it is never open: for the whole day write 00:00-24:00 or leave hours out", h.Open)
	}
	return nil
}

// overnight reports whether the span closes on the next day.
func (h Hours) overnight() bool { return h.Close <= h.Open }

// length is how long the span is open on a day without a clock change.
func (h Hours) length() TimeOfDay {
	if h.overnight() {
		return dayMinutes - h.Open + h.Close
	}
	return h.Close - h.Open
}

// String writes "09:00-18:00".
func (h Hours) String() string { return h.Open.String() + "-" + h.Close.String() }

// MarshalText writes "09:00-18:00".
func (h Hours) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText reads "09:00-18:00".
func (h *Hours) UnmarshalText(b []byte) error {
	p, err := ParseHours(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// Window is when a step may fire: on Days, during Hours, wall-clock times
// in Zone. A span past midnight belongs to the day it opens on.
type Window struct {
	Days  Days  `json:"days"`
	Hours Hours `json:"hours"`
	Zone  Zone  `json:"zone"`
}

// Validate checks the window can ever be open.
func (w Window) Validate() error {
	var errs []error
	if w.Days&EveryDay == 0 {
		errs = append(errs, errors.New("the window has no days"))
	}
	if err := w.Hours.Validate(); err != nil {
		errs = append(errs, fmt.Errorf("hours %s: %w", w.Hours, err))
	}
	return errors.Join(errs...)
}

// Next is the first instant at or after t that the window is open: t
// itself while it is open, else its next opening.
func (w Window) Next(t time.Time) time.Time {
	loc := w.Zone.Location()
	y, m, d := t.In(loc).Date()
	// From the day before (a span past midnight still open) to a week and
	// a day ahead, which holds an opening of any window with a day.
	for i := -1; i <= 8; i++ {
		if !w.Days.Has(weekday(y, m, d+i)) {
			continue
		}
		open := w.Hours.Open.on(y, m, d+i, loc)
		closeDay := d + i
		if w.Hours.overnight() {
			closeDay++
		}
		cls := w.Hours.Close.on(y, m, closeDay, loc)
		switch {
		case !t.Before(cls):
			continue
		case t.Before(open):
			return open
		default:
			return t
		}
	}
	// Only a window with no days (Validate refuses it) gets here.
	return time.Time{}
}

// Contains reports whether the window is open at t.
func (w Window) Contains(t time.Time) bool { return w.Next(t).Equal(t) }

// weekday is the day of the week of a civil date (d may overflow the month).
func weekday(y int, m time.Month, d int) time.Weekday {
	return time.Date(y, m, d, 12, 0, 0, 0, time.UTC).Weekday()
}

// LongestClosed is the longest the window stays shut in a week without a
// clock change: how long a step may wait for it. Zero if it never closes.
func (w Window) LongestClosed() time.Duration {
	const week = 7 * int(dayMinutes)
	type span struct{ from, to int }
	var open []span
	for i, dn := range dayNames { // i: days after Monday 00:00
		if w.Days.Has(dn.day) {
			from := i*int(dayMinutes) + int(w.Hours.Open)
			open = append(open, span{from, from + int(w.Hours.length())})
		}
	}
	if len(open) == 0 {
		return 0
	}
	slices.SortFunc(open, func(a, b span) int { return a.from - b.from })
	longest := 0
	for i, s := range open {
		next := open[(i+1)%len(open)].from
		if i+1 == len(open) {
			next += week
		}
		longest = max(longest, next-s.to)
	}
	return time.Duration(longest) * time.Minute
}

// String writes the window as the config reads it ("mon-fri 09:00-18:00
// Europe/Berlin", "every day all day UTC").
func (w Window) String() string {
	days := w.Days.String()
	if w.Days&EveryDay == EveryDay {
		days = "every day"
	}
	hours := w.Hours.String()
	if w.Hours == AllDay {
		hours = "all day"
	}
	return days + " " + hours + " " + w.Zone.String()
}

// Repeat makes a step fire Times more times, each Every after the one
// before (after its window, when it has one).
type Repeat struct {
	Every time.Duration `json:"every"`
	Times int           `json:"times"`
}

// MaxRepeat bounds Repeat.Times: fifty pages say what a step can, and the
// plan frozen into every approval stays small.
const MaxRepeat = 50

// Validate checks a repeat fires at least once more, forward in time.
func (r Repeat) Validate() error {
	var errs []error
	if r.Every <= 0 {
		errs = append(errs, fmt.Errorf("repeat every %s is not positive", FormatDuration(r.Every)))
	}
	if r.Times < 1 || r.Times > MaxRepeat {
		errs = append(errs, fmt.Errorf("repeat times %d is not 1 to %d", r.Times, MaxRepeat))
	}
	return errors.Join(errs...)
}
