package config_test

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/config"
	"approvalsbot/ladder"
)

func loadOncall(t *testing.T) *config.Config {
	t.Helper()
	c, err := config.Load(filepath.Join("testdata", "oncall.yaml"), envOf(fullEnv))
	if err != nil {
		t.Fatalf("Load oncall.yaml: %v", err)
	}
	return c
}

func mustZone(t *testing.T, name string) ladder.Zone {
	t.Helper()
	z, err := ladder.LoadZone(name)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func TestLoadOncall(t *testing.T) {
	t.Parallel()
	acme := loadOncall(t).Tenants["acme"]
	berlin, ny, utc := mustZone(t, "Europe/Berlin"), mustZone(t, "America/New_York"), mustZone(t, "UTC")
	if acme.Location().String() != "Europe/Berlin" {
		t.Errorf("tenant zone %s", acme.Location())
	}
	if acme.Digest.Zone.String() != "Europe/Berlin" {
		t.Errorf("a digest naming no zone is read in %s, want the tenant's", acme.Digest.Zone)
	}
	kevin := ladder.RotationMember{User: "user:kevin", Chat: ladder.ChatIDs{"slack": "U0KEVIN", "discord": "223344556677889900"}, Email: "kevin@acme.example"}
	ada := ladder.RotationMember{User: "user:ada", Chat: ladder.ChatIDs{"slack": "U0ADA"}, Email: "ada@acme.example"}
	lee := ladder.RotationMember{User: "user:lee", Chat: ladder.ChatIDs{"discord": "334455667788990011"}, Email: "lee@acme.example"}
	primary := ladder.Rotation{Name: "primary", Members: []ladder.RotationMember{kevin, ada, lee}, EveryDays: 7,
		First: ladder.Date{Year: 2026, Month: time.November, Day: 30}, Handoff: 9 * 60, Zone: berlin,
		Overrides: []ladder.Override{{Member: lee,
			From: time.Date(2026, 12, 24, 18, 0, 0, 0, berlin.Location()),
			To:   time.Date(2026, 12, 28, 0, 0, 0, 0, berlin.Location())}}}
	sun := ladder.Rotation{Name: "follow-the-sun", Members: []ladder.RotationMember{ada, kevin}, EveryDays: 1,
		First: ladder.Date{Year: 2026, Month: time.December, Day: 1}, Handoff: 8 * 60, Zone: ny}
	want := map[string]ladder.Rotation{"primary": primary, "follow-the-sun": sun}
	if diff := cmp.Diff(want, acme.Rotations, cmpOpts); diff != "" {
		t.Errorf("rotations (-want +got):\n%s", diff)
	}
	l := acme.Ladders["default"]
	if diff := cmp.Diff(want, l.Rotations, cmpOpts); diff != "" {
		t.Errorf("the ladder carries (-want +got):\n%s", diff)
	}
	if r := l.Steps[0].Repeat; r == nil || *r != (ladder.Repeat{Every: 30 * time.Minute, Times: 3}) {
		t.Errorf("repeat %+v", r)
	}
	office := ladder.Window{Days: mustDaysC(t, "mon-fri"), Hours: ladder.Hours{Open: 9 * 60, Close: 18 * 60}, Zone: berlin}
	if diff := cmp.Diff(&office, l.Steps[1].During); diff != "" {
		t.Errorf("a window naming no zone takes the tenant's (-want +got):\n%s", diff)
	}
	if w := l.Steps[2].During; w == nil || w.Days != ladder.EveryDay || !w.Zone.Equal(utc) || w.Hours.String() != "08:00-22:00" {
		t.Errorf("window with hours only %+v", w)
	}
	if got := l.Steps[1].Email; len(got) != 2 || !got[0].IsRotation() || got[0].ID != "follow-the-sun" {
		t.Errorf("email targets %v", got)
	}
}

func mustDaysC(t *testing.T, s string) ladder.Days {
	t.Helper()
	d, err := ladder.ParseDays(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// `bot check` shows the zone, each rotation with who is on duty now and
// at the next hand-offs (an override among them), and the timelines with
// repetitions and windows.
func TestSummaryShowsOnDutyRepeatsAndWindows(t *testing.T) {
	t.Parallel()
	c := loadOncall(t)
	now := time.Date(2026, 12, 22, 10, 0, 0, 0, time.UTC) // Tuesday 11:00 in Berlin
	s := c.SummaryAt(now)
	want := `tenant acme: deadline 24h, 3 members (3 can decide)
  zone Europe/Berlin
  post slack:C0APPROVALS discord:channel:112233445566778899
  digest "0 9 * * 1-5" in Europe/Berlin to slack:C0APPROVALS
  rotation follow-the-sun: user:ada, user:kevin take turns of 1d, handing off 08:00 America/New_York, the first on 2026-12-01
    on duty now: user:ada until Tue 2026-12-22 08:00 EST
    then user:kevin until Wed 2026-12-23 08:00 EST
    then user:ada until Thu 2026-12-24 08:00 EST
    then user:kevin until Fri 2026-12-25 08:00 EST
  rotation primary: user:kevin, user:ada, user:lee take turns of 1w, handing off mon 09:00 Europe/Berlin, the first on 2026-11-30; 1 override
    on duty now: user:kevin until Thu 2026-12-24 18:00 CET
    then user:lee (override) until Mon 2026-12-28 00:00 CET
    then user:kevin until Mon 2026-12-28 09:00 CET
    then user:ada until Mon 2027-01-04 09:00 CET
  ladder default, deadline 24h:
    0s post slack:C0APPROVALS discord:channel:112233445566778899
    15m mention rotation:primary (then every 30m, 3 more times)
    45m mention rotation:primary (repeat 1 of 3)
    1h dm rotation:primary · email rotation:follow-the-sun leads@acme.example · during mon-fri 09:00-18:00 Europe/Berlin: may wait up to 63h, so skipped when the deadline comes first
    1h15m mention rotation:primary (repeat 2 of 3)
    1h45m mention rotation:primary (repeat 3 of 3)
    23h mention slack:S0ONCALL (1h before the deadline) · during every day 08:00-22:00 UTC: may wait up to 10h, so skipped when the deadline comes first
    24h deadline: denied, nobody answered
    any time: I'm looking holds the steps to come 30m (never the deadline) · Escalate now fires the next one at once
`
	if i := strings.Index(s, "tenant acme"); i < 0 || s[i:] != want {
		t.Errorf("summary of acme:\n%s\nwant:\n%s", s[max(i, 0):], want)
	}
	// Without a time, who is on duty is not said: it would be a guess.
	if plain := c.Summary(); strings.Contains(plain, "on duty") || !strings.Contains(plain, "rotation primary: user:kevin") {
		t.Errorf("Summary():\n%s", plain)
	}
	// A rotation is no target on a surface that is off.
	if strings.Contains(s, "surface off") {
		t.Errorf("summary lists a rotation as off:\n%s", s)
	}
}

// oncallBase adds to base a zone and members that rotations can name.
// Its first appended line is line 17.
const oncallBase = base + `    zone: Europe/Berlin
    members:
      - {user: user:kevin, role: operator, slack: U0KEVIN, email: kevin@acme.example}
      - {user: user:ada, role: owner, discord: "223344556677889900"}
      - {user: user:vic, role: viewer, slack: U0VIC}
      - {user: user:nochat, role: operator, email: nochat@acme.example}
`

// rotation is a valid rotation to build cases on, from line 17.
const rotation = `    rotations:
      primary:
        members: [user:kevin, user:ada]
        every: 1w
        handoff: "mon 09:00"
        start: 2026-11-30
`

func TestOncallProblems(t *testing.T) {
	t.Parallel()
	step := func(lines string) string { return "    ladders:\n      default:\n        - after: 15m\n" + lines }
	tests := []struct {
		name string
		add  string
		want []string
	}{
		// The tenant's zone, and a window's.
		{"unknown tenant zone", strings.Replace(oncallBase, "zone: Europe/Berlin", "zone: Europe/Berlinn", 1), []string{
			`bot.yaml:11: tenants.acme.zone: "Europe/Berlinn" is not a time zone (like Europe/Berlin or UTC)`,
		}},
		{"tenant zone Local", strings.Replace(oncallBase, "zone: Europe/Berlin", "zone: Local", 1), []string{
			`bot.yaml:11: tenants.acme.zone: Local depends on the machine: name a zone like Europe/Berlin or UTC`,
		}},
		{"a window with neither days nor hours", oncallBase + step("          mention: [slack:U0KEVIN]\n          during: {zone: UTC}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].during: says neither days nor hours: give days (like mon-fri), hours (like "09:00-18:00") or both`,
		}},
		{"bad days, hours and zone", oncallBase + step("          mention: [slack:U0KEVIN]\n          during:\n            days: weekdays\n            hours: 9-18\n            zone: Mars/Olympus\n"), []string{
			`bot.yaml:22: tenants.acme.ladders.default[0].during.days: "weekdays" is not a day (mon, tue, wed, thu, fri, sat, sun)`,
			`bot.yaml:23: tenants.acme.ladders.default[0].during.hours: "9-18": "9" is not a time of day (HH:MM, 00:00 to 24:00)`,
			`bot.yaml:24: tenants.acme.ladders.default[0].during.zone: "Mars/Olympus" is not a time zone (like Europe/Berlin or UTC)`,
		}},
		{"a window never open", oncallBase + step("          mention: [slack:U0KEVIN]\n          during: {hours: \"09:00-09:00\"}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].during.hours: "09:00-09:00": opens and closes at 09:00, so it is never open: for the whole day write 00:00-24:00 or leave hours out`,
		}},
		{"unknown window key", oncallBase + step("          mention: [slack:U0KEVIN]\n          during: {days: mon-fri, hour: \"09:00-18:00\"}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].during.hour: unknown key (did you mean hours?)`,
		}},

		// Repeat.
		{"repeat missing keys", oncallBase + step("          mention: [slack:U0KEVIN]\n          repeat: {}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.every: missing: how long after each firing the step fires again, like 30m`,
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.times: missing: how many more times the step fires, 1 to 50`,
		}},
		{"repeat bad values", oncallBase + step("          mention: [slack:U0KEVIN]\n          repeat: {every: 500ms, times: 0}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.every: 500ms is too short: at least 1s`,
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.times: 0 is not 1 to 50`,
		}},
		{"repeat times as text", oncallBase + step("          mention: [slack:U0KEVIN]\n          repeat: {every: 30m, times: \"3\"}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.times: expected a whole number, got a string`,
		}},
		{"repeat times too many", oncallBase + step("          mention: [slack:U0KEVIN]\n          repeat: {every: 1m, times: 51}\n"), []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.times: 51 is not 1 to 50`,
		}},
		{"a repetition always after the deadline", strings.Replace(oncallBase, "    zone:", "    deadline: 2h\n    zone:", 1) + step("          mention: [slack:U0KEVIN]\n          repeat: {every: 30m, times: 5}\n"), []string{
			`bot.yaml:22: tenants.acme.ladders.default[0].repeat.times: repetition 4 of 5 falls at 2h15m, at or after the deadline it runs under (2h), so it would always be skipped: at most 3 fit`,
		}},
		{"a last call's repetition at the deadline", oncallBase + "    ladders:\n      default:\n        - before_deadline: 1h\n          mention: [slack:U0KEVIN]\n          repeat: {every: 30m, times: 2}\n", []string{
			`bot.yaml:21: tenants.acme.ladders.default[0].repeat.times: repetition 2 of 2 falls at 24h, at or after the deadline it runs under (24h), so it would always be skipped: at most 1 fits`,
		}},

		// Rotations.
		{"unknown rotation", oncallBase + step("          mention: [rotation:primry]\n"), []string{
			`bot.yaml:20: tenants.acme.ladders.default[0].mention[0]: rotation "primry" is not defined in tenants.acme.rotations (it has none)`,
		}},
		{"unknown rotation among others", oncallBase + rotation + step("          dm: [rotation:secondary]\n"), []string{
			`bot.yaml:26: tenants.acme.ladders.default[0].dm[0]: rotation "secondary" is not defined in tenants.acme.rotations (it has primary)`,
		}},
		{"a rotation cannot be posted to", oncallBase + rotation + step("          post: [rotation:primary]\n"), []string{
			`bot.yaml:26: tenants.acme.ladders.default[0].post[0]: rotation:primary is not a channel (slack:C…, slack:G… or discord:channel:ID)`,
		}},
		{"bad rotation name", oncallBase + "    rotations:\n      \"on call\": {members: [user:kevin], every: 1d, handoff: \"09:00\", start: 2026-12-01}\n", []string{
			`bot.yaml:18: tenants.acme.rotations["on call"]: "on call" is not a rotation name (1 to 64 of A-Z a-z 0-9 . _ -)`,
		}},
		{"a rotation with no members", oncallBase + strings.Replace(rotation, "[user:kevin, user:ada]", "[]", 1), []string{
			`bot.yaml:19: tenants.acme.rotations.primary.members: has no members: list the tenant members who take turns, in order`,
		}},
		{"a rotation missing everything", oncallBase + "    rotations:\n      primary: {}\n", []string{
			`bot.yaml:18: tenants.acme.rotations.primary.members: missing: the tenant members who take turns, in order (like [user:kevin, user:ada])`,
			`bot.yaml:18: tenants.acme.rotations.primary.every: missing: how long one turn lasts, like 1w or 1d`,
			`bot.yaml:18: tenants.acme.rotations.primary.handoff: missing: when turns change, in the rotation's zone: "mon 09:00" (weekly) or "09:00"`,
			`bot.yaml:18: tenants.acme.rotations.primary.start: missing: the date the first member's first turn starts (YYYY-MM-DD)`,
		}},
		{"members who are no members, or cannot decide", oncallBase + strings.Replace(rotation, "[user:kevin, user:ada]", "[user:kevin, user:bob, user:vic]", 1), []string{
			`bot.yaml:19: tenants.acme.rotations.primary.members[1]: user:bob is not a member of tenant acme: a rotation's members are the tenant's (members[].user)`,
			`bot.yaml:19: tenants.acme.rotations.primary.members[2]: user:vic is a viewer and cannot decide: putting them on duty would page someone who cannot answer`,
		}},
		{"bad every, handoff, start and zone", oncallBase + "    rotations:\n      primary:\n        members: [user:kevin]\n        every: fortnightly\n        handoff: \"monday 9\"\n        start: 30.11.2026\n        zone: Berlin\n", []string{
			`bot.yaml:20: tenants.acme.rotations.primary.every: "fortnightly" is not a shift length: write days or weeks, like 1d, 3d, 1w or 2w (daily and weekly too), at most a year`,
			`bot.yaml:21: tenants.acme.rotations.primary.handoff: "9" is not a time of day (HH:MM, 00:00 to 24:00)`,
			`bot.yaml:22: tenants.acme.rotations.primary.start: "30.11.2026" is not a date (YYYY-MM-DD)`,
			`bot.yaml:23: tenants.acme.rotations.primary.zone: "Berlin" is not a time zone (like Europe/Berlin or UTC)`,
		}},
		{"a weekday hand-off with daily turns", oncallBase + strings.Replace(rotation, "every: 1w", "every: 3d", 1), []string{
			`bot.yaml:21: tenants.acme.rotations.primary.handoff: a hand-off on a weekday needs turns of whole weeks (like every: 1w), not 3d`,
		}},
		{"a hand-off at 24:00", oncallBase + strings.Replace(rotation, `"mon 09:00"`, `"24:00"`, 1), []string{
			`bot.yaml:21: tenants.acme.rotations.primary.handoff: "24:00": a hand-off is at 00:00 to 23:59`,
		}},
		{"overrides that cannot work", oncallBase + rotation + "        overrides:\n" +
			"          - {member: user:ada, from: \"2026-12-24 18:00\", to: 2026-12-28}\n" +
			"          - {member: user:kevin, from: 2026-12-27, to: 2026-12-29}\n" +
			"          - {member: user:kevin, from: 2027-01-02, to: 2027-01-01}\n" +
			"          - {member: user:zed, from: 2027-02-01 9:00, to: \"tomorrow\"}\n" +
			"          - {from: 2027-03-01}\n", []string{
			`bot.yaml:25: tenants.acme.rotations.primary.overrides[1]: overlaps override 0 (Thu 2026-12-24 18:00 CET to Mon 2026-12-28 00:00 CET): who would be on duty?`,
			`bot.yaml:26: tenants.acme.rotations.primary.overrides[2].to: Fri 2027-01-01 00:00 CET is not after from (Sat 2027-01-02 00:00 CET)`,
			`bot.yaml:27: tenants.acme.rotations.primary.overrides[3].to: "tomorrow" is not a date and time: write "2026-12-24 09:00" or "2026-12-24" (midnight)`,
			`bot.yaml:28: tenants.acme.rotations.primary.overrides[4].member: missing: the tenant member on duty instead (like user:ada)`,
			`bot.yaml:28: tenants.acme.rotations.primary.overrides[4].to: missing: when it ends, in the rotation's zone ("2026-12-28 09:00" or a date)`,
		}},
		{"an override's member must be a member", oncallBase + rotation + "        overrides:\n          - {member: user:zed, from: 2027-02-01, to: 2027-02-02}\n", []string{
			`bot.yaml:24: tenants.acme.rotations.primary.overrides[0].member: user:zed is not a member of tenant acme: a rotation's members are the tenant's (members[].user)`,
		}},
		{"a rotation's members must be reachable the way the step reaches them", oncallBase + strings.Replace(rotation, "[user:kevin, user:ada]", "[user:kevin, user:ada, user:nochat]", 1) +
			step("          mention: [rotation:primary]\n          email: [rotation:primary]\n"), []string{
			`bot.yaml:26: tenants.acme.ladders.default[0].mention[0]: rotation primary can put user:nochat on duty, who has no Slack or Discord id to be mentioned: give the member one (tenants.acme.members)`,
			`bot.yaml:27: tenants.acme.ladders.default[0].email[0]: rotation primary can put user:ada on duty, who has no email address to be emailed: give the member one (tenants.acme.members)`,
		}},
		{"an override's member must be reachable too", oncallBase + rotation + "        overrides:\n          - {member: user:nochat, from: 2027-02-01, to: 2027-02-02}\n" +
			step("          dm: [rotation:primary]\n"), []string{
			`bot.yaml:28: tenants.acme.ladders.default[0].dm[0]: rotation primary can put user:nochat on duty, who has no Slack or Discord id to be sent a DM: give the member one (tenants.acme.members)`,
		}},
		{"a broken rotation is not also reported where it is used", oncallBase + strings.Replace(rotation, "every: 1w", "every: 1y", 1) + step("          mention: [rotation:primary]\n"), []string{
			`bot.yaml:20: tenants.acme.rotations.primary.every: "1y" is not a shift length: write days or weeks, like 1d, 3d, 1w or 2w (daily and weekly too), at most a year`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, got := parse(t, tt.add)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("problems (-want +got):\n%s", diff)
			}
		})
	}
}

// The cases above build on a base that must itself be valid, with a
// rotation and every way of naming it.
func TestOncallBaseIsValid(t *testing.T) {
	t.Parallel()
	text := oncallBase + rotation + "        zone: UTC\n    ladders:\n      default:\n        - after: 15m\n          mention: [rotation:primary]\n          dm: [rotation:primary]\n          repeat: {every: 1s, times: 50}\n          during: {days: \"fri-mon\", hours: \"22:00-06:00\"}\n"
	c, problems := parse(t, text)
	if problems != nil {
		t.Fatalf("problems:\n%s", strings.Join(problems, "\n"))
	}
	acme := c.Tenants["acme"]
	if r := acme.Rotations["primary"]; r.Zone.String() != "UTC" || r.First != (ladder.Date{Year: 2026, Month: time.November, Day: 30}) {
		t.Errorf("rotation %+v", r)
	}
	if acme.Digest != nil {
		t.Error("a digest appeared")
	}
}
