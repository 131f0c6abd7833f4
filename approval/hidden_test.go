package approval

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// TestInvisibleSet: every class of character a reader cannot see is in
// the set, and text people write is not.
func TestInvisibleSet(t *testing.T) {
	hidden := []rune{
		0x00, 0x1b, 0x7f, 0x85, // controls
		0x061c, 0x200e, 0x200f, 0x202a, 0x202e, 0x2066, 0x2069, // bidi
		0x200b, 0x200c, 0x200d, 0x2060, 0xfeff, // zero width
		0x115f, 0x1160, 0x3164, 0xffa0, // Hangul fillers
		0xe0000, 0xe0001, 0xe0020, 0xe0041, 0xe007f, // tags
		0x00ad, 0x034f, 0x17b4, 0x17b5, 0x180b, 0x180e, 0x180f, 0x2061, 0x2064, 0x2065, 0x206a, 0x206f,
		0xfe00, 0xfe0f, 0xe0100, 0xe01ef, 0x1d173, 0x1d17a, 0xfff0, 0xfff8, 0xfff9, 0xfffb, 0xe0fff, // default ignorable
		0x0600, 0x110bd, 0x13430, 0x1bca0, // other format controls
		0xe000, 0xf8ff, 0xf0000, 0x10fffd, // private use
		0xfdd0, 0xfdef, 0xfffe, 0xffff, 0x1fffe, 0x10ffff, // noncharacters
	}
	for _, r := range hidden {
		if !Invisible(r) {
			t.Errorf("Invisible(U+%04X) = false", r)
		}
	}
	for _, r := range "aZ09 .-_@/:é日本語ひらカナ한국аοא٣😀❤→\u00a0\u2028\u2029\ufffd" {
		if Invisible(r) {
			t.Errorf("Invisible(U+%04X %q) = true", r, r)
		}
	}
	// Every format control Unicode knows is in the set.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if unicode.Is(unicode.Cf, r) && !Invisible(r) {
			t.Errorf("format control U+%04X not in the set", r)
		}
	}
}

func TestHiddenOrMixed(t *testing.T) {
	for _, c := range []struct {
		s             string
		hidden, mixed bool
	}{
		{"acme_github.merge", false, false},
		{"acme_github.\u200bmerge", true, false},
		{"acme_github\u2060.merge", true, false},
		{"acme_github.merge\ufeff", true, false},
		{"acme\u3164github.merge", true, false},
		{"acme_github.merge\U000E0069\U000E0067\U000E006E", true, false}, // tag characters ("ign")
		{"acme_github.merge\u00ad", true, false},
		{"acme_github.merge\ufe0f", true, false},
		{"p\u0430ypal.com", false, true},                    // Cyrillic а
		{"g\u03bfogle.com", false, true},                    // Greek ο
		{"\u0430\u0440\u0440\u04cf\u0435.com", false, true}, // all-Cyrillic label beside a Latin one
		{"p\u0430ypal\u200b.com", true, true},
		{"пример.рф", false, false},            // Cyrillic alone
		{"παράδειγμα", false, false},           // Greek alone, with a combining accent
		{"東京の天気を調べる", false, false},            // Han and Hiragana
		{"カタカナ・ひらがな・漢字 ABC 123", false, false}, // Japanese with Latin
		{"서울 Seoul 漢字", false, false},          // Hangul, Latin, Han
		{"ㄅㄆㄇ 注音 abc", false, false},           // Bopomofo, Han, Latin
		{"ひらがな한국어", false, true},               // Hiragana with Hangul is not a usual combination
		{"café-2024_v1.0 (beta) #3 ~!@$%^&*", false, false},
		{"١٢٣ 456", false, false}, // digits of two kinds are Common
		{"", false, false},
		{"\xff\xfe", false, false}, // broken UTF-8 is neither
		{"a\tb", true, false},
	} {
		hidden, mixed := HiddenOrMixed(c.s)
		if hidden != c.hidden || mixed != c.mixed {
			t.Errorf("HiddenOrMixed(%+q) = %v, %v; want %v, %v", c.s, hidden, mixed, c.hidden, c.mixed)
		}
	}
}

func TestIdentityWarnings(t *testing.T) {
	a := &Approval{
		Call: Call{Function: "acme_github.\u200bmerge"},
		Roles: []Role{
			{Argument: "to", Role: RoleRecipient, Values: []RoleValue{
				{Value: "ops@acme.example"},
				{Value: "billing@p\u0430ypal.com"},
				{Value: "bob@g\u03bfogle.com"},
			}},
			{Argument: "host", Role: RoleHost, Values: []RoleValue{{Value: "api.acme.example\U000E0041\U000E0042"}}},
			{Argument: "repo", Role: RoleRepository, Values: []RoleValue{{Value: "acme/東京"}}},
			{Argument: "cc", Role: RoleRecipient, Values: []RoleValue{
				{Value: "x\u200c@acme.example"}, {Value: "y\u200d@acme.example"}, {Value: "z@\u0430cme.example"},
			}},
		},
	}
	got := a.IdentityWarnings()
	want := []string{
		"The function name acme_github.[U+200B]merge holds an invisible character (U+200B)",
		"2 values of to (recipient) mix scripts (Latin, Cyrillic, Greek)",
		"A value of host (host) holds invisible characters (U+E0041, U+E0042)",
		"2 values of cc (recipient) hold invisible characters (U+200C, U+200D); a value mixes scripts (Latin, Cyrillic)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("IdentityWarnings =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, l := range got {
		for _, v := range []string{"ops@", "billing", "p\u0430ypal", "bob@", "api.acme", "x\u200c", "\u200b"} {
			if strings.Contains(l, v) {
				t.Errorf("line %q quotes a value (%q)", l, v)
			}
		}
	}

	a = &Approval{Call: Call{Function: "p\u0430y\u200b\u200c\u200d\u2060.send"}}
	want = []string{
		"The function name p\u0430y[U+200B][U+200C][U+200D][U+2060].send holds invisible characters (U+200B, U+200C, U+200D and others)",
		"The function name p\u0430y[U+200B][U+200C][U+200D][U+2060].send mixes scripts (Latin, Cyrillic)",
	}
	if got := a.IdentityWarnings(); !slices.Equal(got, want) {
		t.Errorf("IdentityWarnings =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	if got := (&Approval{Call: Call{Function: "acme_github.merge"}, Roles: []Role{{Argument: "q", Role: RoleHost,
		Values: []RoleValue{{Value: "例え.jp"}, {Value: "10.0.0.1:443"}}}}}).IdentityWarnings(); got != nil {
		t.Errorf("clean call: %q", got)
	}
}

// TestIdentityWarningsBounded: a line names a few code points and
// scripts however many there are, and quotes a name cut short.
func TestIdentityWarningsBounded(t *testing.T) {
	var vals []RoleValue
	var all strings.Builder
	for r := rune(0xe0020); r < 0xe0080; r++ {
		all.WriteRune(r)
	}
	for _, v := range []string{"aаαאاअ", all.String(), "ok"} {
		vals = append(vals, RoleValue{Value: v})
	}
	a := &Approval{Call: Call{Function: strings.Repeat("f", 500) + "\u200b"},
		Roles: []Role{{Argument: strings.Repeat("k", 500), Role: RoleHost, Values: vals}}}
	got := a.IdentityWarnings()
	if len(got) != 2 {
		t.Fatalf("%d lines: %q", len(got), got)
	}
	for _, l := range got {
		if len(l) > 400 {
			t.Errorf("line of %d bytes: %q", len(l), l)
		}
	}
	if !strings.Contains(got[1], "(U+E0020, U+E0021, U+E0022 and others)") ||
		!strings.Contains(got[1], "(Latin, Cyrillic, Greek, Hebrew and 2 more)") {
		t.Errorf("role line %q", got[1])
	}
}

// BenchmarkHiddenOrMixed: the cost per byte, to compare across sizes; a
// rune of another script each time defeats the last-range shortcut.
func BenchmarkHiddenOrMixed(b *testing.B) {
	var unit strings.Builder
	for _, tab := range []*unicode.RangeTable{unicode.Latin, unicode.Cyrillic, unicode.Greek, unicode.Han,
		unicode.Arabic, unicode.Devanagari, unicode.Cherokee, unicode.Runic} {
		unit.WriteRune(rune(tab.R16[len(tab.R16)/2].Lo))
		unit.WriteString("\u200b.")
	}
	for _, size := range []int{1 << 10, 64 << 10, 1 << 20} {
		s := strings.Repeat(unit.String(), size/unit.Len())
		b.Run(fmt.Sprint(size), func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				HiddenOrMixed(s)
			}
		})
	}
}

func ExampleApproval_IdentityWarnings() {
	a := &Approval{Call: Call{Function: "acme_github.merge"}, Roles: []Role{
		{Argument: "to", Role: RoleRecipient, Values: []RoleValue{{Value: "billing@p\u0430ypal.com"}}}}}
	fmt.Println(strings.Join(a.IdentityWarnings(), "\n"))
	// Output: A value of to (recipient) mixes scripts (Latin, Cyrillic)
}

// A warning names the function and the argument, which the agent shapes:
// a secret in either stays redacted there, as everywhere else.
func TestIdentityWarningsRedactNames(t *testing.T) {
	a := &Approval{
		Call:  Call{Function: "mail.s\u200bend?token=hunter2secret"},
		Roles: []Role{{Argument: "to Bearer abcdefghijklmnop", Role: RoleRecipient, Values: []RoleValue{{Value: "x\u200b@example.com", Origin: OriginRequest}}}},
	}
	lines := strings.Join(a.IdentityWarnings(), "\n")
	if strings.Contains(lines, "hunter2secret") || strings.Contains(lines, "abcdefghijklmnop") || !strings.Contains(lines, "U+200B") {
		t.Errorf("warnings %q", lines)
	}
}

// The audit notice of a call that ran unattended says what the bot
// posts, everywhere: each part of the event redacted, and a warning for a
// function the policy does not cover or a policy id that mimics a known
// one, its hidden characters shown.
func TestAutoGrantedNotice(t *testing.T) {
	notice := func(fn, job, agent, policy string) string {
		ag := &AutoGranted{PolicyID: policy}
		ag.Call.Function, ag.Job.ID, ag.Job.Agent = fn, job, agent
		return ag.Notice()
	}
	for _, tt := range []struct {
		name       string
		got, want  string
		notContain string
	}{
		{"routine", notice("run_command", "j-1", "bot", "sandbox.workspace.v1"),
			"Ran unattended: run_command · job j-1 · agent bot · policy sandbox.workspace.v1", ""},
		{"no agent", notice("write_file", "j-1", "", "pol-7"), "Ran unattended: write_file · job j-1 · agent - · policy pol-7", ""},
		{"not covered", notice("request_approval", "j-1", "bot", "sandbox.workspace.v1"),
			"Warning: request_approval ran unattended under policy sandbox.workspace.v1, which does not cover it (it covers only run_command, write_file and edit_file) · job j-1 · agent bot", ""},
		{"look-alike", notice("run_command", "j-1", "bot", "sandbox.workspace.v1\u200b"),
			"Warning: run_command ran unattended under policy \"sandbox.workspace.v1[U+200B]\", which looks like sandbox.workspace.v1 but is not it · job j-1 · agent bot", ""},
		{"secrets", notice("run_command ghp_abcdefghijklmnopqrstuvwxyz", "j-1 token=hunter2hunter2", "bot Bearer abcdefghijklmnop", "pol?api_key=zzzzzzzz"),
			"", "hunter2"},
	} {
		if tt.want != "" && tt.got != tt.want {
			t.Errorf("%s: %q, want %q", tt.name, tt.got, tt.want)
		}
		if tt.notContain != "" {
			for _, s := range []string{"hunter2", "abcdefghijklmnopqrstuvwxyz", "abcdefghijklmnop", "zzzzzzzz"} {
				if strings.Contains(tt.got, s) {
					t.Errorf("%s: %q shows %s", tt.name, tt.got, s)
				}
			}
		}
	}
}
