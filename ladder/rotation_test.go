package ladder_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

var (
	kevin = ladder.RotationMember{User: "user:kevin", Chat: ladder.ChatIDs{"slack": "U0KEVIN", "discord": "223344556677889900"}, Email: "kevin@acme.example"}
	ada   = ladder.RotationMember{User: "user:ada", Chat: ladder.ChatIDs{"slack": "U0ADA"}, Email: "ada@acme.example"}
	lee   = ladder.RotationMember{User: "user:lee", Chat: ladder.ChatIDs{"discord": "334455667788990011"}, Email: "lee@acme.example"}
)

// weekly is kevin, ada and lee taking weekly turns, handing off Monday
// 09:00 in Berlin, kevin first on Monday 2026-11-30.
func weekly(t *testing.T) ladder.Rotation {
	t.Helper()
	return ladder.Rotation{Name: "primary", Members: []ladder.RotationMember{kevin, ada, lee},
		EveryDays: 7, First: ladder.Date{Year: 2026, Month: time.November, Day: 30}, Handoff: 9 * 60,
		Zone: zone(t, "Europe/Berlin")}
}

func TestRotationOnDuty(t *testing.T) {
	t.Parallel()
	r := weekly(t)
	berlin := r.Zone
	at := func(m time.Month, d, hh, mm int) time.Time { return local(t, berlin, 2026, m, d, hh, mm) }
	y27 := func(m time.Month, d, hh, mm int) time.Time { return local(t, berlin, 2027, m, d, hh, mm) }
	daily := r
	daily.EveryDays = 1
	fortnightly := r
	fortnightly.EveryDays = 14
	tests := []struct {
		name     string
		rotation ladder.Rotation
		t        time.Time
		want     string
		from, to time.Time
	}{
		{"the first hand-off, exactly", r, at(11, 30, 9, 0), "user:kevin", at(11, 30, 9, 0), at(12, 7, 9, 0)},
		{"a second before it: the turn before, backwards", r, at(11, 30, 9, 0).Add(-time.Second), "user:lee", at(11, 23, 9, 0), at(11, 30, 9, 0)},
		{"midweek", r, at(12, 3, 15, 0), "user:kevin", at(11, 30, 9, 0), at(12, 7, 9, 0)},
		{"monday before 09:00 is still last week", r, at(12, 7, 8, 59), "user:kevin", at(11, 30, 9, 0), at(12, 7, 9, 0)},
		{"the second week", r, at(12, 7, 9, 0), "user:ada", at(12, 7, 9, 0), at(12, 14, 9, 0)},
		{"round the list", r, at(12, 21, 9, 0), "user:kevin", at(12, 21, 9, 0), at(12, 28, 9, 0)},
		{"long before the first: 48 turns back", r, at(1, 1, 12, 0), "user:kevin", at(12, 29, 9, 0).AddDate(-1, 0, 0), at(1, 5, 9, 0)},
		// Summer time starts 2027-03-28: the hand-off stays at 09:00 there
		// (turn 17, lee's).
		{"the hand-off after spring forward is 09:00 CEST", r, y27(3, 29, 9, 0), "user:lee", y27(3, 29, 9, 0), y27(4, 5, 9, 0)},
		{"08:30 CEST that monday is the week before", r, y27(3, 29, 8, 30), "user:ada", y27(3, 22, 9, 0), y27(3, 29, 9, 0)},
		{"daily", daily, at(12, 2, 10, 0), "user:lee", at(12, 2, 9, 0), at(12, 3, 9, 0)},
		{"daily before the hand-off", daily, at(12, 2, 8, 0), "user:ada", at(12, 1, 9, 0), at(12, 2, 9, 0)},
		{"fortnightly", fortnightly, at(12, 20, 10, 0), "user:ada", at(12, 14, 9, 0), at(12, 28, 9, 0)},
	}
	for _, tt := range tests {
		s := tt.rotation.OnDuty(tt.t)
		if s.Member.User != tt.want || !s.From.Equal(tt.from) || !s.To.Equal(tt.to) || s.Override {
			t.Errorf("%s: OnDuty(%s) = %s from %s to %s (override %v); want %s from %s to %s",
				tt.name, tt.t, s.Member.User, s.From, s.To, s.Override, tt.want, tt.from, tt.to)
		}
	}
	// Turn 18 is kevin's again, from 09:00 CEST.
	if h := r.HandoffAt(18); !h.Equal(y27(4, 5, 9, 0)) || !cmp.Equal(r.OnDuty(h).Member, kevin) {
		t.Errorf("turn 18 starts %s with %+v", h, r.OnDuty(h).Member)
	}
}

func TestRotationOverrides(t *testing.T) {
	t.Parallel()
	r := weekly(t)
	at := func(d, hh, mm int) time.Time { return local(t, r.Zone, 2026, 12, d, hh, mm) }
	r.Overrides = []ladder.Override{
		{Member: lee, From: at(2, 12, 0), To: at(3, 12, 0)},
		{Member: kevin, From: at(10, 0, 0), To: at(11, 0, 0)}, // inside ada's week
	}
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	type shift struct {
		User     string
		From, To time.Time
		Override bool
	}
	var got []shift
	for _, s := range r.Shifts(at(1, 10, 0), 7) {
		got = append(got, shift{s.Member.User, s.From, s.To, s.Override})
	}
	want := []shift{
		{"user:kevin", local(t, r.Zone, 2026, 11, 30, 9, 0), at(2, 12, 0), false},
		{"user:lee", at(2, 12, 0), at(3, 12, 0), true},
		{"user:kevin", at(3, 12, 0), at(7, 9, 0), false},
		{"user:ada", at(7, 9, 0), at(10, 0, 0), false},
		{"user:kevin", at(10, 0, 0), at(11, 0, 0), true},
		{"user:ada", at(11, 0, 0), at(14, 9, 0), false},
		{"user:lee", at(14, 9, 0), at(21, 9, 0), false},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shifts (-want +got):\n%s", diff)
	}
	// An override's start is exact, as a hand-off's is.
	if s := r.OnDuty(at(2, 12, 0)); !cmp.Equal(s.Member, lee) || !s.Override {
		t.Errorf("at the override's start: %+v", s)
	}
	if s := r.OnDuty(at(3, 12, 0)); !cmp.Equal(s.Member, kevin) || s.Override {
		t.Errorf("at the override's end: %+v", s)
	}
}

func TestRotationValidate(t *testing.T) {
	t.Parallel()
	r := weekly(t)
	at := func(d, hh int) time.Time { return local(t, r.Zone, 2026, 12, d, hh, 0) }
	tests := []struct {
		name string
		edit func(*ladder.Rotation)
		want string
	}{
		{"no members", func(r *ladder.Rotation) { r.Members = nil }, "rotation primary has no members"},
		{"no shift length", func(r *ladder.Rotation) { r.EveryDays = 0 }, "a shift of 0 days"},
		{"no first date", func(r *ladder.Rotation) { r.First = ladder.Date{} }, "no first hand-off date"},
		{"bad name", func(r *ladder.Rotation) { r.Name = "on call" }, `"on call" is not a rotation name`},
		{"override backwards", func(r *ladder.Rotation) {
			r.Overrides = []ladder.Override{{Member: ada, From: at(3, 0), To: at(2, 0)}}
		}, "override 0 ends before it starts"},
		{"overrides overlap", func(r *ladder.Rotation) {
			r.Overrides = []ladder.Override{{Member: ada, From: at(2, 0), To: at(4, 0)}, {Member: lee, From: at(3, 0), To: at(5, 0)}}
		}, "override 1 overlaps override 0"},
	}
	for _, tt := range tests {
		r := weekly(t)
		tt.edit(&r)
		if err := r.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
	r.Overrides = []ladder.Override{{Member: ada, From: at(2, 0), To: at(4, 0)}, {Member: lee, From: at(4, 0), To: at(5, 0)}}
	if err := r.Validate(); err != nil {
		t.Errorf("back-to-back overrides: %v", err)
	}
}

func TestRotationString(t *testing.T) {
	t.Parallel()
	r := weekly(t)
	if got, want := r.String(), "user:kevin, user:ada, user:lee take turns of 1w, handing off mon 09:00 Europe/Berlin, the first on 2026-11-30"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	r.EveryDays = 2
	r.Overrides = make([]ladder.Override, 2)
	if got, want := r.String(), "user:kevin, user:ada, user:lee take turns of 2d, handing off 09:00 Europe/Berlin, the first on 2026-11-30; 2 overrides"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

// A plan freezes the rotations its steps name, with the overrides that
// touch its life, and reads them back from JSON.
func TestPlanFreezesRotations(t *testing.T) {
	t.Parallel()
	r := weekly(t)
	at := func(d, hh int) time.Time { return local(t, r.Zone, 2026, 12, d, hh, 0) }
	r.Overrides = []ladder.Override{
		{Member: lee, From: at(1, 0), To: at(2, 0)},   // before the request
		{Member: ada, From: at(3, 12), To: at(3, 14)}, // during it
		{Member: lee, From: at(9, 0), To: at(10, 0)},  // after the deadline
	}
	s := ladder.AfterStep(15 * time.Minute)
	s.Mention = mustTargets(t, "rotation:primary", "slack:S0ONCALL")
	unused := r
	unused.Name = "secondary"
	l := ladder.Ladder{Name: "default", Steps: []ladder.Step{s},
		Rotations: map[string]ladder.Rotation{"primary": r, "secondary": unused}}
	req := at(3, 10)
	p := l.Plan(req, req.Add(24*time.Hour))
	if len(p.Rotations) != 1 {
		t.Fatalf("plan rotations %v: want only the one the steps name", p.Rotations)
	}
	frozen := p.Rotations["primary"]
	if len(frozen.Overrides) != 1 || !cmp.Equal(frozen.Overrides[0].Member, ada) {
		t.Errorf("frozen overrides %+v, want only the one during the approval's life", frozen.Overrides)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`"rotation:primary"`, `"zone":"Europe/Berlin"`, `"first":"2026-11-30"`, `"handoff":"09:00"`, `"every_days":7`} {
		if !strings.Contains(string(b), w) {
			t.Errorf("plan JSON lacks %s:\n%s", w, b)
		}
	}
	var back ladder.Plan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p, back); diff != "" {
		t.Errorf("JSON round trip (-before +after):\n%s", diff)
	}
	// The override moved nothing in the original.
	if len(l.Rotations["primary"].Overrides) != 3 {
		t.Error("planning cut the ladder's own overrides")
	}
}

func TestResolve(t *testing.T) {
	t.Parallel()
	r := weekly(t)
	at := func(d, hh int) time.Time { return local(t, r.Zone, 2026, 12, d, hh, 0) }
	l := ladder.Ladder{Name: "default", Steps: []ladder.Step{{Anchor: ladder.AnchorRequest, DM: mustTargets(t, "rotation:primary")}},
		Rotations: map[string]ladder.Rotation{"primary": r}}
	p := l.Plan(at(1, 10), at(31, 10))
	str := func(ts []ladder.Target) string {
		s := make([]string, len(ts))
		for i, t := range ts {
			s[i] = t.String()
		}
		return strings.Join(s, " ")
	}
	rot := mustTargets(t, "slack:S0ONCALL", "rotation:primary")
	tests := []struct {
		name     string
		verb     string
		surfaces []string
		t        time.Time
		want     string
	}{
		{"kevin's week, a Slack thread", ladder.VerbMention, []string{"slack"}, at(2, 10), "slack:S0ONCALL slack:U0KEVIN"},
		{"kevin's week, a Discord thread", ladder.VerbMention, []string{"discord"}, at(2, 10), "slack:S0ONCALL discord:user:223344556677889900"},
		{"kevin's week, DMs where the cards are", ladder.VerbDM, []string{"slack", "discord"}, at(2, 10), "slack:S0ONCALL slack:U0KEVIN discord:user:223344556677889900"},
		{"at the hand-off it is ada's", ladder.VerbMention, []string{"slack"}, at(7, 9), "slack:S0ONCALL slack:U0ADA"},
		{"ada has no Discord: her Slack user, named", ladder.VerbMention, []string{"discord"}, at(8, 9), "slack:S0ONCALL slack:U0ADA"},
		{"lee by email", ladder.VerbEmail, nil, at(15, 9), "slack:S0ONCALL lee@acme.example"},
		// A push reaches the member: their address is read when it goes.
		{"kevin by push", ladder.VerbPush, nil, at(2, 10), "slack:S0ONCALL user:kevin"},
	}
	for _, tt := range tests {
		if got := str(p.Resolve(rot, tt.verb, tt.surfaces, tt.t)); got != tt.want {
			t.Errorf("%s: Resolve = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := p.Resolve(mustTargets(t, "rotation:unknown"), ladder.VerbDM, []string{"slack"}, at(2, 10)); len(got) != 0 {
		t.Errorf("a rotation the plan does not hold reached %v", got)
	}
}
