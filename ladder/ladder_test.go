package ladder_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"approvalsbot/ladder"
)

func TestParseTargetGood(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want ladder.Target
	}{
		{"slack:C0APPROVALS", ladder.Target{Kind: ladder.KindSlackChannel, ID: "C0APPROVALS"}},
		{"slack:G0PRIVATE", ladder.Target{Kind: ladder.KindSlackChannel, ID: "G0PRIVATE"}},
		{"slack:U0KEVIN", ladder.Target{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}},
		{"slack:W0GRID123", ladder.Target{Kind: ladder.KindSlackUser, ID: "W0GRID123"}},
		{"slack:S0ONCALL", ladder.Target{Kind: ladder.KindSlackUserGroup, ID: "S0ONCALL"}},
		{"discord:channel:112233445566778899", ladder.Target{Kind: ladder.KindDiscordChannel, ID: "112233445566778899"}},
		{"discord:user:12345678901234567", ladder.Target{Kind: ladder.KindDiscordUser, ID: "12345678901234567"}},
		{"discord:role:99887766554433221100", ladder.Target{Kind: ladder.KindDiscordRole, ID: "99887766554433221100"}},
		{"leads@acme.example", ladder.Target{Kind: ladder.KindEmail, ID: "leads@acme.example"}},
		{"first.last+tag@sub.acme.example", ladder.Target{Kind: ladder.KindEmail, ID: "first.last+tag@sub.acme.example"}},
		{"rotation:primary", ladder.Target{Kind: ladder.KindRotation, ID: "primary"}},
		{"rotation:ops.eu-2", ladder.Target{Kind: ladder.KindRotation, ID: "ops.eu-2"}},
		{"user:kevin", ladder.Target{Kind: ladder.KindMember, ID: "user:kevin"}},
		{"user:kevin@acme", ladder.Target{Kind: ladder.KindMember, ID: "user:kevin@acme"}},
		{"user:åsa.b", ladder.Target{Kind: ladder.KindMember, ID: "user:åsa.b"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ladder.ParseTarget(tt.in)
			if err != nil {
				t.Fatalf("ParseTarget(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseTarget(%q) = %+v, want %+v", tt.in, got, tt.want)
			}
			if got.String() != tt.in {
				t.Errorf("String() = %q, want the input %q back", got.String(), tt.in)
			}
		})
	}
}

func TestParseTargetBad(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in string
		// wantIn are fragments the error must carry: it must say which form
		// was wanted.
		wantIn []string
	}{
		{"empty", "", []string{"empty target", "slack:C…"}},
		{"no prefix", "C0APPROVALS", []string{`"C0APPROVALS" is not a target`, "discord:channel:ID", "email address"}},
		{"unknown surface", "teams:abc", []string{`"teams:abc" is not a target`}},
		{"slack empty id", "slack:", []string{"has no Slack id", "slack:U…"}},
		{"slack lower case", "slack:c0approvals", []string{"upper-case", "slack:C…"}},
		{"slack DM channel", "slack:D0DIRECT", []string{`starting with "D"`, "slack:S…"}},
		{"slack with space", "slack:C0 X", []string{"upper-case"}},
		{"discord no kind", "discord:112233445566778899", []string{"discord:channel:ID"}},
		{"discord bad kind", "discord:guild:112233445566778899", []string{`"guild" is not channel, user or role`}},
		{"discord short id", "discord:channel:1234", []string{`"1234" is not a snowflake`, "17 to 20 digit"}},
		{"discord long id", "discord:role:123456789012345678901", []string{"is not a snowflake"}},
		{"discord letters", "discord:user:1122334455667788aa", []string{"is not a snowflake"}},
		{"email with name", "Leads <leads@acme.example>", []string{"write the bare address leads@acme.example"}},
		{"email brackets", "<leads@acme.example>", []string{"write the bare address leads@acme.example"}},
		{"email broken", "leads@", []string{`"leads@" is not an email address`}},
		{"email two", "a@x.example, b@x.example", []string{"is not an email address"}},
		{"rotation without a name", "rotation:", []string{`"" is not a rotation name`}},
		{"rotation name with a colon", "rotation:a:b", []string{`"a:b" is not a rotation name`, "A-Z a-z 0-9"}},
		{"no prefix names the rotation form", "primary", []string{"rotation:NAME"}},
		{"member without a name", "user:", []string{`"user:" is not a member's user id`, "user:NAME"}},
		{"member with a space", "user:kevin smith", []string{"is not a member's user id", "one word"}},
		{"member with an invisible character", "user:kev\u200bin", []string{"is not a member's user id"}},
		{"member too long", "user:" + strings.Repeat("k", 300), []string{"at most 256"}},
		{"no prefix names the member form", "kevin", []string{"user:NAME"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := ladder.ParseTarget(tt.in)
			if err == nil {
				t.Fatalf("ParseTarget(%q) = %+v, want an error", tt.in, got)
			}
			for _, w := range tt.wantIn {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("ParseTarget(%q) error %q does not contain %q", tt.in, err, w)
				}
			}
		})
	}
}

func TestTargetKinds(t *testing.T) {
	t.Parallel()
	// Every kind has exactly one category and a surface, so callers can
	// switch on the helpers without a default case.
	want := map[ladder.TargetKind]struct {
		surface              string
		channel, user, group bool
	}{
		ladder.KindSlackChannel:   {"slack", true, false, false},
		ladder.KindSlackUser:      {"slack", false, true, false},
		ladder.KindSlackUserGroup: {"slack", false, false, true},
		ladder.KindDiscordChannel: {"discord", true, false, false},
		ladder.KindDiscordUser:    {"discord", false, true, false},
		ladder.KindDiscordRole:    {"discord", false, false, true},
		ladder.KindEmail:          {"email", false, false, false},
		ladder.KindRotation:       {"", false, false, false},
		ladder.KindApprovers:      {"", false, false, false},
		ladder.KindMember:         {"", false, false, false},
	}
	if len(ladder.TargetKinds()) != len(want) {
		t.Fatalf("TargetKinds() has %d kinds, the test knows %d", len(ladder.TargetKinds()), len(want))
	}
	for _, k := range ladder.TargetKinds() {
		w, ok := want[k]
		if !ok {
			t.Errorf("kind %q not covered by this test", k)
			continue
		}
		tg := ladder.Target{Kind: k, ID: "x"}
		if tg.Surface() != w.surface || tg.IsChannel() != w.channel || tg.IsUser() != w.user || tg.IsGroup() != w.group {
			t.Errorf("%s: surface %q channel %v user %v group %v, want %+v",
				k, tg.Surface(), tg.IsChannel(), tg.IsUser(), tg.IsGroup(), w)
		}
	}
	if (ladder.Target{}).Surface() != "" || !(ladder.Target{}).IsZero() {
		t.Error("the zero Target has a surface or is not zero")
	}
}

func TestTargetJSON(t *testing.T) {
	t.Parallel()
	in := []ladder.Target{
		mustTarget(t, "slack:C0APPROVALS"),
		mustTarget(t, "discord:role:998877665544332211"),
		mustTarget(t, "ops@acme.example"),
		{},
	}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["slack:C0APPROVALS","discord:role:998877665544332211","ops@acme.example",""]`; string(b) != want {
		t.Errorf("json = %s, want %s", b, want)
	}
	var out []ladder.Target
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip (-in +out):\n%s", diff)
	}
	if err := json.Unmarshal([]byte(`["slack:lower"]`), &out); err == nil {
		t.Error("unmarshal of a bad target succeeded")
	}
}

func TestFormatDuration(t *testing.T) {
	t.Parallel()
	tests := map[time.Duration]string{
		0:                         "0s",
		30 * time.Second:          "30s",
		20 * time.Second:          "20s",
		15 * time.Minute:          "15m",
		90 * time.Second:          "1m30s",
		time.Hour:                 "1h",
		90 * time.Minute:          "1h30m",
		23 * time.Hour:            "23h",
		36 * time.Hour:            "36h",
		time.Hour + 5*time.Second: "1h5s",
		1500 * time.Millisecond:   "1.5s",
		-time.Hour:                "-1h",
		time.Hour + 30*time.Minute + 10*time.Second: "1h30m10s",
	}
	for d, want := range tests {
		if got := ladder.FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestDeadline(t *testing.T) {
	t.Parallel()
	requested := time.Date(2026, 11, 29, 10, 0, 0, 0, time.UTC)
	own := time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)
	zero := time.Time{}
	tests := []struct {
		name         string
		own          *time.Time
		tool, tenant time.Duration
		want         time.Time
	}{
		{"request's own wins", &own, 2 * time.Hour, 48 * time.Hour, own},
		{"tool override next", nil, 2 * time.Hour, 48 * time.Hour, requested.Add(2 * time.Hour)},
		{"zero own time counts as unset", &zero, 2 * time.Hour, 48 * time.Hour, requested.Add(2 * time.Hour)},
		{"tenant next", nil, 0, 48 * time.Hour, requested.Add(48 * time.Hour)},
		{"default last", nil, 0, 0, requested.Add(ladder.DefaultDeadline)},
		{"negative counts as unset", nil, -time.Hour, 0, requested.Add(24 * time.Hour)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := ladder.Deadline(tt.own, requested, tt.tool, tt.tenant)
			if !got.Equal(tt.want) {
				t.Errorf("Deadline = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestStepValidate(t *testing.T) {
	t.Parallel()
	who := []ladder.Target{{Kind: ladder.KindSlackUser, ID: "U0KEVIN"}}
	tests := []struct {
		name    string
		step    ladder.Step
		wantErr string
	}{
		{"after zero is fine", ladder.Step{Anchor: ladder.AnchorRequest, Mention: who}, ""},
		{"before deadline", ladder.Step{Anchor: ladder.AnchorDeadline, BeforeDeadline: time.Hour, DM: who}, ""},
		{"no anchor", ladder.Step{After: time.Hour, DM: who}, `anchor "" is not`},
		{"both", ladder.Step{Anchor: ladder.AnchorRequest, After: time.Hour, BeforeDeadline: time.Hour, DM: who}, "has no before_deadline"},
		{"negative", ladder.Step{Anchor: ladder.AnchorRequest, After: -time.Minute, DM: who}, "after -1m is negative"},
		{"zero before deadline", ladder.Step{Anchor: ladder.AnchorDeadline, DM: who}, "before_deadline 0s is not positive"},
		{"no targets", ladder.AfterStep(time.Hour), "no targets"},
		{"a rotation is no channel", ladder.Step{Anchor: ladder.AnchorRequest, Post: []ladder.Target{{Kind: ladder.KindRotation, ID: "primary"}}}, "a rotation is people, not a channel"},
		{"a push to a member", ladder.Step{Anchor: ladder.AnchorRequest, Push: []ladder.Target{{Kind: ladder.KindMember, ID: "user:kevin"}, ladder.Approvers}}, ""},
		{"a push reaches members only", ladder.Step{Anchor: ladder.AnchorRequest, Push: who}, "a push reaches members (user:NAME), a rotation or approvers"},
		{"repeat every zero", ladder.Step{Anchor: ladder.AnchorRequest, DM: who, Repeat: &ladder.Repeat{Times: 2}}, "repeat every 0s is not positive"},
		{"repeat no times", ladder.Step{Anchor: ladder.AnchorRequest, DM: who, Repeat: &ladder.Repeat{Every: time.Minute}}, "repeat times 0 is not 1 to 50"},
		{"repeat fine", ladder.Step{Anchor: ladder.AnchorRequest, DM: who, Repeat: &ladder.Repeat{Every: time.Minute, Times: 50}}, ""},
		{"window without days", ladder.Step{Anchor: ladder.AnchorRequest, DM: who, During: &ladder.Window{Hours: ladder.AllDay}}, "the window has no days"},
		{"window never open", ladder.Step{Anchor: ladder.AnchorRequest, DM: who, During: &ladder.Window{Days: ladder.EveryDay, Hours: ladder.Hours{Open: 540, Close: 540}}}, "never open"},
		{"window fine", ladder.Step{Anchor: ladder.AnchorRequest, DM: who, During: &ladder.Window{Days: ladder.EveryDay, Hours: ladder.AllDay}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.step.Validate()
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("Validate() = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestIsSlackUserIDAndSnowflake(t *testing.T) {
	t.Parallel()
	for id, want := range map[string]bool{"U0KEVIN": true, "W0X": true, "C0X": false, "u0kevin": false, "U": false} {
		if got := ladder.IsSlackUserID(id); got != want {
			t.Errorf("IsSlackUserID(%q) = %v, want %v", id, got, want)
		}
	}
	for id, want := range map[string]bool{"12345678901234567": true, "12345678901234567890": true, "1234567890123456": false, "123456789012345678901": false, "1234567890123456a": false} {
		if got := ladder.IsSnowflake(id); got != want {
			t.Errorf("IsSnowflake(%q) = %v, want %v", id, got, want)
		}
	}
}

func mustTarget(t *testing.T, s string) ladder.Target {
	t.Helper()
	tg, err := ladder.ParseTarget(s)
	if err != nil {
		t.Fatalf("ParseTarget(%q): %v", s, err)
	}
	return tg
}

func mustTargets(t *testing.T, ss ...string) []ladder.Target {
	t.Helper()
	out := make([]ladder.Target, len(ss))
	for i, s := range ss {
		out[i] = mustTarget(t, s)
	}
	return out
}

func TestStepTargetsWordsWhomAStepTells(t *testing.T) {
	s := ladder.AfterStep(time.Hour)
	if got := s.Targets(); got != "" {
		t.Fatalf("a step with no targets: %q", got)
	}
	u, _ := ladder.ParseTarget("slack:U0LEAD")
	m, _ := ladder.ParseTarget("leads@acme.example")
	s.DM, s.Email = []ladder.Target{u}, []ladder.Target{m}
	if got, want := s.Targets(), "dm slack:U0LEAD · email leads@acme.example"; got != want {
		t.Fatalf("Targets() = %q, want %q", got, want)
	}
	s.Push = mustTargets(t, "user:kevin", "rotation:primary")
	if got, want := s.Targets(), "dm slack:U0LEAD · email leads@acme.example · push user:kevin rotation:primary"; got != want {
		t.Fatalf("Targets() = %q, want %q", got, want)
	}
}
