package ladder

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Date is a calendar date with no time and no zone.
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate reads 2006-01-02.
func ParseDate(s string) (Date, error) {
	t, err := time.Parse(time.DateOnly, strings.TrimSpace(s))
	if err != nil {
		return Date{}, fmt.Errorf("%q is not a date (YYYY-MM-DD)", strings.TrimSpace(s))
	}
	return DateOf(t), nil
}

// DateOf is the date of t in t's own location.
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date{y, m, d}
}

// AddDays is the date n days later (earlier for negative n).
func (d Date) AddDays(n int) Date { return DateOf(d.noon().AddDate(0, 0, n)) }

// Weekday is the date's day of the week.
func (d Date) Weekday() time.Weekday { return d.noon().Weekday() }

// noon is the date at 12:00 UTC: whole days apart from any other noon.
func (d Date) noon() time.Time { return time.Date(d.Year, d.Month, d.Day, 12, 0, 0, 0, time.UTC) }

// daysUntil counts the days from d to e (negative when e is earlier).
func (d Date) daysUntil(e Date) int { return int(e.noon().Sub(d.noon()) / (24 * time.Hour)) }

// IsZero reports whether the date was never set.
func (d Date) IsZero() bool { return d == Date{} }

// String writes 2006-01-02.
func (d Date) String() string { return d.noon().Format(time.DateOnly) }

// MarshalText writes 2006-01-02.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads 2006-01-02.
func (d *Date) UnmarshalText(b []byte) error {
	p, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = p
	return nil
}

// RotationMember is one person a rotation can put on duty, copied with the
// ways they are reached, so a stored plan reaches them without the config.
type RotationMember struct {
	// User is the tenant user id ("user:kevin").
	User string
	// Chat and Email are how they are reached; either may be empty.
	Chat  ChatIDs
	Email string
}

// ChatUsers are the member's chat users in ChatSurfaces order.
func (m RotationMember) ChatUsers() []Target { return m.Chat.Users() }

// UserOn is the member's user on a chat surface, if any.
func (m RotationMember) UserOn(surface string) (Target, bool) { return m.Chat.UserOn(surface) }

// MarshalJSON writes the member as stored plans have always held one:
// {"user":"user:kevin","slack":"U0KEVIN","email":"kevin@acme.example"}.
func (m RotationMember) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	member := func(key, value string) {
		if b.Len() > 0 {
			b.WriteByte(',')
		} else {
			b.WriteByte('{')
		}
		k, _ := json.Marshal(key) // a string: cannot fail
		v, _ := json.Marshal(value)
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	member("user", m.User)
	for _, c := range chatSurfaces {
		if id := m.Chat[c.Name]; id != "" {
			member(c.Name, id)
		}
	}
	if m.Email != "" {
		member("email", m.Email)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes, passing over unknown keys so
// a plan frozen by a release with one more chat surface still reads.
func (m *RotationMember) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	str := func(key string) (string, error) {
		var s string
		if v, ok := raw[key]; ok {
			if err := json.Unmarshal(v, &s); err != nil {
				return "", fmt.Errorf("rotation member %s: %w", key, err)
			}
		}
		return s, nil
	}
	var out RotationMember
	var err error
	if out.User, err = str("user"); err != nil {
		return err
	}
	if out.Email, err = str("email"); err != nil {
		return err
	}
	for _, c := range chatSurfaces {
		id, err := str(c.Name)
		if err != nil {
			return err
		}
		if id != "" {
			if out.Chat == nil {
				out.Chat = ChatIDs{}
			}
			out.Chat[c.Name] = id
		}
	}
	*m = out
	return nil
}

// EmailTarget is the member's address, if they have one.
func (m RotationMember) EmailTarget() (Target, bool) {
	if m.Email == "" {
		return Target{}, false
	}
	return Target{Kind: KindEmail, ID: m.Email}, true
}

// MemberTarget is the member as a push step reaches them: by user id,
// their push address read when the notice goes (it is a secret, and no
// plan holds it).
func (m RotationMember) MemberTarget() (Target, bool) {
	if m.User == "" {
		return Target{}, false
	}
	return Target{Kind: KindMember, ID: m.User}, true
}

// Override puts Member on duty from From until To, whatever the turns say.
type Override struct {
	Member RotationMember `json:"member"`
	From   time.Time      `json:"from"`
	To     time.Time      `json:"to"`
}

// Rotation is an on-call rotation: members take turns of EveryDays days,
// Members[0] from Handoff (wall-clock time in Zone) on First. Turns run
// before First too, so someone is always on duty (docs/ladders.md,
// "Rotations").
type Rotation struct {
	Name      string           `json:"name"`
	Members   []RotationMember `json:"members"`
	EveryDays int              `json:"every_days"`
	First     Date             `json:"first"`
	Handoff   TimeOfDay        `json:"handoff"`
	Zone      Zone             `json:"zone"`
	Overrides []Override       `json:"overrides,omitempty"`
}

// rotationName is what a rotation's name may hold (rotation:NAME).
var rotationName = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// RotationNameRule says what rotationName allows, for errors.
const RotationNameRule = "1 to 64 of A-Z a-z 0-9 . _ -"

// IsRotationName reports whether s may name a rotation.
func IsRotationName(s string) bool { return rotationName.MatchString(s) }

// Validate checks the rotation can put someone on duty at any time.
func (r Rotation) Validate() error {
	var errs []error
	if !IsRotationName(r.Name) {
		errs = append(errs, fmt.Errorf("%q is not a rotation name (%s)", r.Name, RotationNameRule))
	}
	if len(r.Members) == 0 {
		errs = append(errs, fmt.Errorf("rotation %s has no members", r.Name))
	}
	if r.EveryDays < 1 {
		errs = append(errs, fmt.Errorf("rotation %s: a shift of %d days", r.Name, r.EveryDays))
	}
	if r.First.IsZero() {
		errs = append(errs, fmt.Errorf("rotation %s has no first hand-off date", r.Name))
	}
	if r.Handoff < 0 || r.Handoff >= dayMinutes {
		errs = append(errs, fmt.Errorf("rotation %s: hand-off at %s is not a time of day", r.Name, r.Handoff))
	}
	for i, o := range r.Overrides {
		if !o.From.Before(o.To) {
			errs = append(errs, fmt.Errorf("rotation %s: override %d ends before it starts", r.Name, i))
		}
		for j := range i {
			if p := r.Overrides[j]; o.From.Before(p.To) && p.From.Before(o.To) {
				errs = append(errs, fmt.Errorf("rotation %s: override %d overlaps override %d", r.Name, i, j))
			}
		}
	}
	return errors.Join(errs...)
}

// Shift is a stretch of time one member is on duty.
type Shift struct {
	Member RotationMember
	From   time.Time
	To     time.Time
	// Override: an override put Member there, not the turns.
	Override bool
}

// HandoffAt is when turn k starts: turn 0 is Members[0]'s on First.
func (r Rotation) HandoffAt(k int) time.Time {
	return r.Handoff.on(r.First.Year, r.First.Month, r.First.Day+k*r.every(), r.Zone.Location())
}

func (r Rotation) every() int { return max(r.EveryDays, 1) }

// turn is the turn running at t.
func (r Rotation) turn(t time.Time) int {
	n := r.First.daysUntil(DateOf(t.In(r.Zone.Location())))
	k := floorDiv(n, r.every())
	// t's date is turn k's hand-off date or later within the turn; before
	// the hand-off time on that date it is still the turn before.
	for t.Before(r.HandoffAt(k)) {
		k--
	}
	for !t.Before(r.HandoffAt(k + 1)) {
		k++
	}
	return k
}

func floorDiv(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// OnDuty is the shift running at t; a hand-off at exactly t has happened.
func (r Rotation) OnDuty(t time.Time) Shift {
	for _, o := range r.Overrides {
		if !t.Before(o.From) && t.Before(o.To) {
			return Shift{Member: o.Member, From: o.From, To: o.To, Override: true}
		}
	}
	if len(r.Members) == 0 {
		return Shift{}
	}
	k := r.turn(t)
	s := Shift{Member: r.Members[mod(k, len(r.Members))], From: r.HandoffAt(k), To: r.HandoffAt(k + 1)}
	// An override that ended inside this turn started this part of it; one
	// that starts inside it ends it.
	for _, o := range r.Overrides {
		if !o.To.After(t) && o.To.After(s.From) {
			s.From = o.To
		}
		if o.From.After(t) && o.From.Before(s.To) {
			s.To = o.From
		}
	}
	return s
}

func mod(a, n int) int { return (a%n + n) % n }

// Shifts lists n shifts from the one running at t.
func (r Rotation) Shifts(t time.Time, n int) []Shift {
	if len(r.Members) == 0 {
		return nil
	}
	out := make([]Shift, 0, n)
	for len(out) < n {
		s := r.OnDuty(t)
		out = append(out, s)
		t = s.To
	}
	return out
}

// Period writes the shift length: 1d, 3d, 1w, 2w.
func (r Rotation) Period() string {
	if r.EveryDays%7 == 0 {
		return fmt.Sprintf("%dw", r.EveryDays/7)
	}
	return fmt.Sprintf("%dd", r.EveryDays)
}

// String describes the rotation for `bot check` ("user:kevin, user:ada
// take turns of 1w, handing off mon 09:00 Europe/Berlin, …").
func (r Rotation) String() string {
	users := make([]string, len(r.Members))
	for i, m := range r.Members {
		users[i] = m.User
	}
	handoff := r.Handoff.String()
	if r.EveryDays%7 == 0 {
		handoff = strings.ToLower(r.First.Weekday().String()[:3]) + " " + handoff
	}
	s := fmt.Sprintf("%s take turns of %s, handing off %s %s, the first on %s",
		strings.Join(users, ", "), r.Period(), handoff, r.Zone, r.First)
	switch n := len(r.Overrides); n {
	case 0:
	case 1:
		s += "; 1 override"
	default:
		s += fmt.Sprintf("; %d overrides", n)
	}
	return s
}

// between is the rotation with only the overrides that touch [from, to):
// what an approval alive in that span can need.
func (r Rotation) between(from, to time.Time) Rotation {
	r.Overrides = slices.DeleteFunc(slices.Clone(r.Overrides), func(o Override) bool {
		return !o.To.After(from) || !o.From.Before(to)
	})
	if len(r.Overrides) == 0 {
		r.Overrides = nil
	}
	r.Members = slices.Clone(r.Members)
	return r
}
