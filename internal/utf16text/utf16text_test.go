package utf16text

import (
	"strings"
	"testing"
	"unicode/utf16"
)

func TestLenCountsUTF16CodeUnits(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]int{
		"": 0, "abc": 3, "é": 1, "…": 1, "⚠": 1, "😀": 2, "a😀b": 4, "aé😀": 4,
		"bad\xff\xfe": 5, "\xe2\x80": 2, // invalid bytes: one each, as JSON's U+FFFD
	} {
		if got := Len(s); got != want {
			t.Errorf("Len(%q) = %d, want %d", s, got, want)
		}
		if valid := strings.ToValidUTF8(s, "\uFFFD"); valid == s && len(utf16.Encode([]rune(s))) != Len(s) {
			t.Errorf("Len(%q) = %d, JavaScript counts %d", s, Len(s), len(utf16.Encode([]rune(s))))
		}
	}
}

func TestPrefixNeverSplitsARune(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		max  int
		want string
	}{
		{"a😀b", 2, "a"}, {"a😀b", 3, "a😀"}, {"abc", 0, ""}, {"abc", -1, ""}, {"abc", 5, "abc"},
	} {
		if got := Prefix(c.in, c.max); got != c.want {
			t.Errorf("Prefix(%q, %d) = %q, want %q", c.in, c.max, got, c.want)
		}
	}
}

func TestCutMarksTheCutAndStaysWithinMax(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		in   string
		max  int
		want string
	}{
		{"fits", "hello", 5, "hello"},
		{"cut", "hello world", 6, "hello…"},
		{"pair not split", "ab😀cd", 4, "ab…"},
		{"pair kept", "ab😀cd", 5, "ab😀…"},
	} {
		got := Cut(c.in, c.max)
		if got != c.want {
			t.Errorf("%s: Cut(%q, %d) = %q, want %q", c.name, c.in, c.max, got, c.want)
		}
		if Len(got) > c.max {
			t.Errorf("%s: %d code units, max %d", c.name, Len(got), c.max)
		}
	}
}

func TestFitCutsVisiblyWithinMax(t *testing.T) {
	t.Parallel()
	const marker = "[cut]"
	code := "intro\n```\n" + strings.Repeat("line of code\n", 50) + "```"
	keep := func(s string) string { return s }
	for _, c := range []struct {
		name, in string
		max      int
		trim     func(string) string
		check    func(t *testing.T, got string)
	}{
		{"fits", "short", 10, keep, func(t *testing.T, got string) {
			if got != "short" {
				t.Errorf("%q", got)
			}
		}},
		{"closes a fence", code, 120, keep, func(t *testing.T, got string) {
			if strings.Count(got, "```")%2 != 0 {
				t.Errorf("fence left open:\n%s", got)
			}
		}},
		{"prefers a line end", strings.Repeat("a line\n", 40), 100, keep, func(t *testing.T, got string) {
			if body := strings.TrimSuffix(got, "\n"+marker); strings.HasSuffix(body, "a lin") || strings.HasSuffix(body, "\n") {
				t.Errorf("cut inside a line: %q", body)
			}
		}},
		{"trims the cut", strings.Repeat("ab&", 60), 60, func(s string) string { return strings.TrimRight(s, "&") }, func(t *testing.T, got string) {
			if strings.Contains(got, "&\n") {
				t.Errorf("trim not applied: %q", got)
			}
		}},
		{"marker alone", strings.Repeat("x", 50), 4, keep, func(t *testing.T, got string) {
			if got != "[cut" {
				t.Errorf("%q", got)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Fit(c.in, c.max, marker, c.trim)
			if Len(got) > c.max {
				t.Errorf("%d code units, max %d", Len(got), c.max)
			}
			if got != c.in && c.max > Len(marker) && !strings.HasSuffix(got, "\n"+marker) {
				t.Errorf("cut without the marker: %q", got)
			}
			c.check(t, got)
		})
	}
}
