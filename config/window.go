package config

import (
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
)

// minRepeatEvery is the shortest gap between repetitions: under the
// tick, repetitions only merge.
const minRepeatEvery = time.Second

// zone decodes a time zone name; ok is false when it is empty or wrong.
func (d *decoder) zone(v *yaml.Node, p string) (ladder.Zone, bool) {
	name, ok := d.str(v, p)
	if !ok || name == "" {
		return ladder.Zone{}, false
	}
	z, err := ladder.LoadZone(name)
	if err != nil {
		d.problemf(v, p, "%v", err)
		return ladder.Zone{}, false
	}
	return z, true
}

// wholeNumber decodes an integer from lo to hi. A quoted number is
// refused as text is, unless it came from ${VAR}.
func (d *decoder) wholeNumber(v *yaml.Node, p string, lo, hi int) (int, bool) {
	s, ok := d.text(v, p, "a whole number")
	if !ok {
		return 0, false
	}
	n := deref(v)
	fromEnv := strings.Contains(n.Value, "${")
	x, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n.ShortTag() != "!!int" && !fromEnv {
		d.problemf(n, p, "expected a whole number, got %s", kindOf(n))
		return 0, false
	}
	if x < lo || x > hi {
		d.problemf(n, p, "%d is not %d to %d", x, lo, hi)
		return 0, false
	}
	return x, true
}

// repeatPos keeps where a step's repeat was written.
type repeatPos struct {
	key, timesN *yaml.Node
	path        string
}

// repeat decodes `repeat: {every: 30m, times: 3}`.
func (d *decoder) repeat(k, v *yaml.Node, p string) (*ladder.Repeat, repeatPos) {
	pos := repeatPos{key: k, path: p}
	if isNull(v) {
		return nil, pos
	}
	r := ladder.Repeat{}
	everyOK, timesOK := false, false
	seen, ok := d.mapping(v, p, map[string]field{
		"every": func(_, v *yaml.Node, p string) {
			x, ok := d.duration(v, p)
			if ok && x < minRepeatEvery {
				d.problemf(v, p, "%s is too short: at least %s", ladder.FormatDuration(x), ladder.FormatDuration(minRepeatEvery))
				ok = false
			}
			r.Every, everyOK = x, ok
		},
		"times": func(_, v *yaml.Node, p string) {
			pos.timesN = deref(v)
			r.Times, timesOK = d.wholeNumber(v, p, 1, ladder.MaxRepeat)
		},
	})
	if !ok {
		return nil, pos
	}
	at := deref(v)
	if !given(seen, "every") {
		d.problemf(at, joinKey(p, "every"), "missing: how long after each firing the step fires again, like 30m")
	}
	if !given(seen, "times") {
		d.problemf(at, joinKey(p, "times"), "missing: how many more times the step fires, 1 to %d", ladder.MaxRepeat)
	}
	if !everyOK || !timesOK {
		return nil, pos
	}
	return &r, pos
}

// repeatsUnderDeadline reports a repetition at or after the longest
// deadline its step runs under, always skipped. Windows only delay a
// repetition, so counting without them finds every one.
func (d *decoder) repeatsUnderDeadline(s stepPos, longest time.Duration) {
	r := s.step.Repeat
	if r == nil || s.repeat.timesN == nil {
		return
	}
	first := s.step.Offset(longest)
	if first >= longest || first < 0 {
		return // the step itself is reported, or it starts before the request
	}
	for k := 1; k <= r.Times; k++ {
		if at := first + time.Duration(k)*r.Every; at >= longest {
			d.problemf(s.repeat.timesN, joinKey(s.repeat.path, "times"),
				"repetition %d of %d falls at %s, at or after the deadline it runs under (%s), so it would always be skipped: at most %d %s",
				k, r.Times, ladder.FormatDuration(at), ladder.FormatDuration(longest), k-1, plural(k-1, "fits", "fit"))
			return
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// window decodes `during: {days: mon-fri, hours: "09:00-18:00"}`; its
// zone stays zero until windowZones gives it the tenant's.
func (d *decoder) window(v *yaml.Node, p string) *ladder.Window {
	if isNull(v) {
		return nil
	}
	w := &ladder.Window{Days: ladder.EveryDay, Hours: ladder.AllDay}
	failed := false
	seen, ok := d.mapping(v, p, map[string]field{
		"days": func(_, v *yaml.Node, p string) {
			s, ok := d.str(v, p)
			if !ok {
				failed = failed || !isNull(v)
				return
			}
			days, err := ladder.ParseDays(s)
			if err != nil {
				d.problemf(v, p, "%v", err)
				failed = true
				return
			}
			w.Days = days
		},
		"hours": func(_, v *yaml.Node, p string) {
			s, ok := d.str(v, p)
			if !ok {
				failed = failed || !isNull(v)
				return
			}
			h, err := ladder.ParseHours(s)
			if err != nil {
				d.problemf(v, p, "%q: %v", s, err)
				failed = true
				return
			}
			w.Hours = h
		},
		"zone": func(_, v *yaml.Node, p string) {
			z, ok := d.zone(v, p)
			failed = failed || !ok && !isNull(v)
			w.Zone = z
		},
	})
	if !ok {
		return nil
	}
	if !given(seen, "days") && !given(seen, "hours") {
		d.problemf(deref(v), p, "says neither days nor hours: give days (like mon-fri), hours (like \"09:00-18:00\") or both")
		return nil
	}
	if failed {
		return nil
	}
	return w
}

// windowZones gives the tenant's zone to each window that names none.
func windowZones(ladders []ladderPos, zone ladder.Zone) {
	for _, l := range ladders {
		for _, s := range l.steps {
			if w := s.step.During; w != nil && w.Zone.IsZero() {
				w.Zone = zone
			}
		}
	}
}

// formatLocal writes an instant for `bot check` in a zone.
func formatLocal(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("Mon 2006-01-02 15:04 MST")
}
