package config

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"approvalsbot/ladder"
	"approvalsbot/tenant"
)

// Rules of the step fields that reach people, where a rotation may stand
// for its member on duty and approvers for the members a quorum still
// waits for. A refusal keeps the plain rule's words.
var (
	mentionableOrRotation = orPeopleSets(mentionable)
	peopleOrRotation      = orPeopleSets(people)
	addressesOrRotation   = orPeopleSets(addresses)
)

func orPeopleSets(r targetRule) targetRule {
	return targetRule{want: r.want, ok: func(t ladder.Target) bool { return r.ok(t) || t.IsRotation() || t.IsApprovers() }}
}

// rotationRef is a step's rotation:NAME target and where it was written.
type rotationRef struct {
	name string
	verb string // ladder.VerbMention, VerbDM, VerbEmail or VerbPush
	path string
	n    *yaml.Node
}

// stepTargets is targets, recording where each rotation and member is
// named for the checks once the tenant is read.
func (d *decoder) stepTargets(v *yaml.Node, p string, rule targetRule, verb string, sp *stepPos) (ts []ladder.Target, given int) {
	given, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
		if t, ok := d.target(item, p, rule); ok {
			ts = append(ts, t)
			switch {
			case t.IsRotation():
				sp.rotations = append(sp.rotations, rotationRef{name: t.ID, verb: verb, path: p, n: deref(item)})
			case t.IsMember():
				sp.members = append(sp.members, memberRef{user: t.ID, path: p, n: deref(item)})
			}
		}
	})
	if !ok {
		return nil, -1
	}
	return ts, given
}

// userRef is a tenant user named in a rotation, and where.
type userRef struct {
	user string
	path string
	n    *yaml.Node
}

// localTime is a wall-clock time in a zone not yet known: an override's
// bounds are read in the rotation's zone, which may be the tenant's.
type localTime struct {
	date ladder.Date
	at   ladder.TimeOfDay
}

func (l localTime) in(loc *time.Location) time.Time {
	return time.Date(l.date.Year, l.date.Month, l.date.Day, int(l.at)/60, int(l.at)%60, 0, 0, loc)
}

type overridePos struct {
	member   userRef
	from, to localTime
	path     string
	n        *yaml.Node
	ok       bool
}

// rotationPos is a rotation as written, resolved against the tenant's
// members and zone once the tenant is read (tenantRotations).
type rotationPos struct {
	name      string
	path      string
	n         *yaml.Node
	members   []userRef
	everyDays int
	handoff   ladder.TimeOfDay
	weekday   *time.Weekday
	handoffN  *yaml.Node
	start     ladder.Date
	zone      ladder.Zone
	overrides []overridePos
	ok        bool // every key read without a problem
}

// everyPattern is a shift's length: 1d, 3d, 1w, 2w.
var everyPattern = regexp.MustCompile(`^(\d{1,3})\s*([dw])$`)

const maxShiftDays = 366

func (d *decoder) rotations(v *yaml.Node, p string) []rotationPos {
	if isNull(v) {
		return nil
	}
	v = deref(v)
	if v.Kind != yaml.MappingNode {
		d.problemf(v, p, "expected a mapping of rotation names, got %s", kindOf(v))
		return nil
	}
	var out []rotationPos
	d.pairs(v, p, func(k, rv *yaml.Node, name string) {
		rp := joinKey(p, name)
		r := d.rotation(k, rv, rp, name)
		if !ladder.IsRotationName(name) {
			d.problemf(k, rp, "%q is not a rotation name (%s)", name, ladder.RotationNameRule)
			r.ok = false
		}
		out = append(out, r)
	})
	return out
}

func (d *decoder) rotation(k, v *yaml.Node, p, name string) rotationPos {
	r := rotationPos{name: name, path: p, n: k, ok: true}
	fail := func() { r.ok = false }
	seen, ok := d.mapping(v, p, map[string]field{
		"members": func(k, v *yaml.Node, p string) {
			n, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
				if u, ok := d.str(item, p); ok && u != "" {
					r.members = append(r.members, userRef{user: u, path: p, n: deref(item)})
				} else {
					d.problemf(deref(item), p, "empty: name a tenant member by user id (like user:kevin)")
					fail()
				}
			})
			if ok && n == 0 {
				d.problemf(k, p, "has no members: list the tenant members who take turns, in order")
				fail()
			}
			if !ok {
				fail()
			}
		},
		"every": func(_, v *yaml.Node, p string) {
			s, ok := d.text(v, p, "a shift length")
			if !ok {
				fail()
				return
			}
			if days, ok := shiftDays(s); ok {
				r.everyDays = days
				return
			}
			d.problemf(v, p, "%q is not a shift length: write days or weeks, like 1d, 3d, 1w or 2w (daily and weekly too), at most a year", s)
			fail()
		},
		"handoff": func(_, v *yaml.Node, p string) {
			r.handoffN = deref(v)
			s, ok := d.text(v, p, "a hand-off time")
			if !ok {
				fail()
				return
			}
			wd, at, err := parseHandoff(s)
			if err != nil {
				d.problemf(v, p, "%v", err)
				fail()
				return
			}
			r.weekday, r.handoff = wd, at
		},
		"start": func(_, v *yaml.Node, p string) {
			s, ok := d.text(v, p, "a date")
			if !ok {
				fail()
				return
			}
			date, err := ladder.ParseDate(s)
			if err != nil {
				d.problemf(v, p, "%v", err)
				fail()
				return
			}
			r.start = date
		},
		"zone": func(_, v *yaml.Node, p string) {
			z, ok := d.zone(v, p)
			if !ok && !isNull(v) {
				fail()
			}
			r.zone = z
		},
		"overrides": func(_, v *yaml.Node, p string) {
			if _, ok := d.list(v, p, func(_ int, item *yaml.Node, p string) {
				r.overrides = append(r.overrides, d.override(item, p))
			}); !ok {
				fail()
			}
		},
	})
	if !ok {
		r.ok = false
		return r
	}
	at := deref(v)
	for _, m := range [][2]string{
		{"members", "the tenant members who take turns, in order (like [user:kevin, user:ada])"},
		{"every", "how long one turn lasts, like 1w or 1d"},
		{"handoff", "when turns change, in the rotation's zone: \"mon 09:00\" (weekly) or \"09:00\""},
		{"start", "the date the first member's first turn starts (YYYY-MM-DD)"},
	} {
		if !given(seen, m[0]) {
			d.problemf(at, joinKey(p, m[0]), "missing: %s", m[1])
			r.ok = false
		}
	}
	if r.ok && r.weekday != nil && r.everyDays%7 != 0 {
		d.problemf(r.handoffN, joinKey(p, "handoff"), "a hand-off on a weekday needs turns of whole weeks (like every: 1w), not %dd", r.everyDays)
		r.ok = false
	}
	return r
}

func shiftDays(s string) (int, bool) {
	switch strings.TrimSpace(s) {
	case "daily":
		return 1, true
	case "weekly":
		return 7, true
	}
	m := everyPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, false
	}
	n, _ := strconv.Atoi(m[1])
	if m[2] == "w" {
		n *= 7
	}
	return n, n >= 1 && n <= maxShiftDays
}

// parseHandoff reads "09:00" or "mon 09:00".
func parseHandoff(s string) (*time.Weekday, ladder.TimeOfDay, error) {
	fields := strings.Fields(s)
	var wd *time.Weekday
	switch len(fields) {
	case 1:
	case 2:
		w, err := ladder.ParseWeekday(fields[0])
		if err != nil {
			return nil, 0, err
		}
		wd = &w
		fields = fields[1:]
	default:
		return nil, 0, fmt.Errorf("%q is not a hand-off: write \"mon 09:00\" (a weekday and a time) or \"09:00\"", s)
	}
	at, err := ladder.ParseTimeOfDay(fields[0])
	if err == nil && at >= 24*60 {
		err = fmt.Errorf("%q: a hand-off is at 00:00 to 23:59", fields[0])
	}
	if err != nil {
		return nil, 0, err
	}
	return wd, at, nil
}

func (d *decoder) override(item *yaml.Node, p string) overridePos {
	o := overridePos{path: p, n: deref(item), ok: true}
	bound := func(dst *localTime) field {
		return func(_, v *yaml.Node, p string) {
			s, ok := d.text(v, p, "a date and time")
			if !ok {
				o.ok = false
				return
			}
			lt, err := parseLocal(s)
			if err != nil {
				d.problemf(v, p, "%v", err)
				o.ok = false
				return
			}
			*dst = lt
		}
	}
	seen, ok := d.mapping(item, p, map[string]field{
		"member": func(_, v *yaml.Node, p string) {
			u, ok := d.str(v, p)
			if !ok || u == "" {
				o.ok = false
				return
			}
			o.member = userRef{user: u, path: p, n: deref(v)}
		},
		"from": bound(&o.from),
		"to":   bound(&o.to),
	})
	if !ok {
		o.ok = false
		return o
	}
	for _, m := range [][2]string{
		{"member", "the tenant member on duty instead (like user:ada)"},
		{"from", "when the override starts, in the rotation's zone (\"2026-12-24 09:00\" or a date)"},
		{"to", "when it ends, in the rotation's zone (\"2026-12-28 09:00\" or a date)"},
	} {
		if !given(seen, m[0]) {
			d.problemf(o.n, joinKey(p, m[0]), "missing: %s", m[1])
			o.ok = false
		}
	}
	return o
}

// parseLocal reads "2026-12-24" (midnight) or "2026-12-24 09:00".
func parseLocal(s string) (localTime, error) {
	date, at, hasTime := strings.Cut(strings.TrimSpace(s), " ")
	d, err := ladder.ParseDate(date)
	if err != nil {
		return localTime{}, fmt.Errorf("%q is not a date and time: write \"2026-12-24 09:00\" or \"2026-12-24\" (midnight)", s)
	}
	lt := localTime{date: d}
	if hasTime {
		if lt.at, err = ladder.ParseTimeOfDay(at); err != nil || lt.at >= 24*60 {
			return localTime{}, fmt.Errorf("%q is not a date and time: write \"2026-12-24 09:00\" or \"2026-12-24\" (midnight)", s)
		}
	}
	return lt, nil
}

// tenantTimes finishes what needs the whole tenant: its zone, and its
// rotations, resolved and frozen into the ladders whose steps name them.
func (d *decoder) tenantTimes(t *tenant.Tenant, ladders []ladderPos, rotations []rotationPos) {
	zone := ladder.ZoneOf(t.Location())
	windowZones(ladders, zone)
	if t.Digest != nil && t.Digest.Zone == nil {
		t.Digest.Zone = t.Location()
	}

	defined := map[string]bool{}
	for _, rp := range rotations {
		defined[rp.name] = true
		r, ok := d.resolveRotation(t, rp, zone)
		if !ok {
			continue
		}
		if t.Rotations == nil {
			t.Rotations = map[string]ladder.Rotation{}
		}
		t.Rotations[r.Name] = r
	}

	for _, l := range ladders {
		used := map[string]ladder.Rotation{}
		for _, s := range l.steps {
			for _, ref := range s.rotations {
				r, ok := t.Rotations[ref.name]
				switch {
				case ok:
					d.reachable(t, ref, r)
					used[ref.name] = r
				case !defined[ref.name]:
					d.problemf(ref.n, ref.path, "rotation %q is not defined in tenants.%s.rotations%s", ref.name, t.ID, haveNames(t.ID, rotations))
				}
			}
		}
		if len(used) > 0 {
			lad := t.Ladders[l.name]
			lad.Rotations = used
			t.Ladders[l.name] = lad
		}
	}
}

func haveNames(tenant string, rotations []rotationPos) string {
	if len(rotations) == 0 {
		return " (it has none)"
	}
	names := make([]string, len(rotations))
	for i, r := range rotations {
		names[i] = r.name
	}
	slices.Sort(names)
	return " (it has " + strings.Join(names, ", ") + ")"
}

// resolveRotation turns a rotation as written into its frozen form, its
// first hand-off on the first date from start on the hand-off's weekday.
func (d *decoder) resolveRotation(t *tenant.Tenant, rp rotationPos, tenantZone ladder.Zone) (ladder.Rotation, bool) {
	ok := rp.ok
	member := func(u userRef) (ladder.RotationMember, bool) {
		m, found := t.MemberByUser(u.user)
		switch {
		case !found:
			d.problemf(u.n, u.path, "%s is not a member of tenant %s: a rotation's members are the tenant's (members[].user)", u.user, t.ID)
			return ladder.RotationMember{}, false
		case !m.Role.CanDecide():
			d.problemf(u.n, u.path, "%s is a %s and cannot decide: putting them on duty would page someone who cannot answer", u.user, m.Role)
			return ladder.RotationMember{}, false
		}
		return ladder.RotationMember{User: m.User, Chat: maps.Clone(m.Chat), Email: m.Email}, true
	}
	r := ladder.Rotation{Name: rp.name, EveryDays: rp.everyDays, Handoff: rp.handoff, Zone: rp.zone}
	if r.Zone.IsZero() {
		r.Zone = tenantZone
	}
	for _, u := range rp.members {
		m, good := member(u)
		ok = ok && good
		r.Members = append(r.Members, m)
	}
	r.First = rp.start
	if rp.weekday != nil {
		r.First = rp.start.AddDays(int(*rp.weekday-rp.start.Weekday()+7) % 7)
	}
	loc := r.Zone.Location()
	for _, op := range rp.overrides {
		if !op.ok {
			ok = false
			continue
		}
		m, good := member(op.member)
		o := ladder.Override{Member: m, From: op.from.in(loc), To: op.to.in(loc)}
		if !o.From.Before(o.To) {
			d.problemf(op.n, joinKey(op.path, "to"), "%s is not after from (%s)", formatLocal(o.To, loc), formatLocal(o.From, loc))
			good = false
		}
		for j, prev := range r.Overrides {
			if good && o.From.Before(prev.To) && prev.From.Before(o.To) {
				d.problemf(op.n, op.path, "overlaps override %d (%s to %s): who would be on duty?", j,
					formatLocal(prev.From, loc), formatLocal(prev.To, loc))
				good = false
			}
		}
		ok = ok && good
		if good {
			r.Overrides = append(r.Overrides, o)
		}
	}
	if !ok {
		return ladder.Rotation{}, false
	}
	if err := r.Validate(); err != nil {
		d.problemf(rp.n, rp.path, "%v", err)
		return ladder.Rotation{}, false
	}
	return r, true
}

// reachable reports each member a step's rotation can put on duty whom
// the step has no way to reach.
func (d *decoder) reachable(t *tenant.Tenant, ref rotationRef, r ladder.Rotation) {
	people := slices.Clone(r.Members)
	for _, o := range r.Overrides {
		people = append(people, o.Member)
	}
	reported := map[string]bool{}
	for _, m := range people {
		var lacks string
		switch ref.verb {
		case ladder.VerbEmail:
			if _, ok := m.EmailTarget(); !ok {
				lacks = "email address"
			}
		case ladder.VerbPush:
			// The address is the member's as configured now: a plan
			// holds no secret.
			if mm, ok := t.MemberByUser(m.User); !ok || mm.Push.IsZero() {
				lacks = "push address"
			}
		default:
			if len(m.ChatUsers()) == 0 {
				lacks = anyChatID()
			}
		}
		if lacks == "" || reported[m.User] {
			continue
		}
		reported[m.User] = true
		d.problemf(ref.n, ref.path, "rotation %s can put %s on duty, who has no %s to %s: give the member one (tenants.%s.members)",
			r.Name, m.User, lacks, verbWords(ref.verb), t.ID)
	}
}

// anyChatID is "Slack or Discord id", from the chat surfaces' titles.
func anyChatID() string {
	cs := ladder.ChatSurfaces()
	titles := make([]string, len(cs))
	for i, c := range cs {
		titles[i] = c.Title
	}
	if n := len(titles); n > 1 {
		return strings.Join(titles[:n-1], ", ") + " or " + titles[n-1] + " id"
	}
	return strings.Join(titles, "") + " id"
}

func verbWords(verb string) string {
	switch verb {
	case ladder.VerbEmail:
		return "be emailed"
	case ladder.VerbDM:
		return "be sent a DM"
	case ladder.VerbPush:
		return "be sent a push"
	}
	return "be mentioned"
}

// onDutyShown is how many shifts `bot check` shows per rotation.
const onDutyShown = 4

// rotationSummary writes each rotation, and who is on duty at now and
// after the next hand-offs (none for a zero now).
func rotationSummary(t *tenant.Tenant, b *strings.Builder, now time.Time) {
	names := make([]string, 0, len(t.Rotations))
	for n := range t.Rotations {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		r := t.Rotations[n]
		fmt.Fprintf(b, "  rotation %s: %s\n", n, r)
		if now.IsZero() {
			continue
		}
		loc := r.Zone.Location()
		for i, s := range r.Shifts(now, onDutyShown) {
			who := s.Member.User
			if s.Override {
				who += " (override)"
			}
			lead := "then"
			if i == 0 {
				lead = "on duty now:"
			}
			fmt.Fprintf(b, "    %s %s until %s\n", lead, who, formatLocal(s.To, loc))
		}
	}
}
