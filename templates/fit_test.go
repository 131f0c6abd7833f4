package templates

import (
	"strings"
	"testing"
)

func TestCutText(t *testing.T) {
	code := "intro\n```\n" + strings.Repeat("line of code\n", 50) + "```"
	tests := []struct {
		name, in string
		max      int
		trim     func(string) string
		check    func(t *testing.T, got string)
	}{
		{"fits", "short", 10, trimSlack, func(t *testing.T, got string) {
			if got != "short" {
				t.Errorf("%q", got)
			}
		}},
		{"closes a fence", code, 120, trimSlack, func(t *testing.T, got string) {
			if strings.Count(got, "```")%2 != 0 {
				t.Errorf("fence left open:\n%s", got)
			}
		}},
		{"slack entity", strings.Repeat("a", 90) + strings.Repeat("&amp;", 40), 97 + len(slackCutMarker), trimSlack, func(t *testing.T, got string) { // the cut falls inside &amp;
			body := strings.TrimSuffix(got, "\n"+slackCutMarker)
			if i := strings.LastIndexByte(body, '&'); i >= 0 && !strings.Contains(body[i:], ";") {
				t.Errorf("cut entity: %q", body)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			marker := slackCutMarker
			got := cutText(tt.in, tt.max, marker, tt.trim)
			if charLen(got) > tt.max {
				t.Errorf("%d chars, max %d", charLen(got), tt.max)
			}
			if got != tt.in && !strings.HasSuffix(got, "\n"+marker) {
				t.Errorf("cut without the marker: %q", got)
			}
			tt.check(t, got)
		})
	}
}
