package templates

import (
	"errors"
	"strings"
	"testing"
)

func TestActionRoundTrip(t *testing.T) {
	longID := strings.Repeat("a", 62) + ".:"
	tests := []Action{
		{Kind: ActionApprove, ApprovalID: "a-7Q2K9", Revision: 1},
		{Kind: ActionDeny, ApprovalID: "a-merge1", Revision: 2},
		{Kind: ActionShowArgs, ApprovalID: "x", Revision: 1},
		{Kind: ActionLook, ApprovalID: "a-merge1", Revision: 3},
		{Kind: ActionEscalate, ApprovalID: "a-merge1", Revision: 1},
		{Kind: ActionEscalate, ApprovalID: "a-merge1", Revision: 1, Escalations: 12},
		// The longest: the longest kind, a 64-byte id, 18 digits.
		{Kind: ActionShowDetails, ApprovalID: longID, Revision: 999999999999999999},
		// And Escalate now's, with its count.
		{Kind: ActionEscalate, ApprovalID: longID, Revision: 999999999999999999, Escalations: MaxEscalations},
	}
	for _, k := range ActionKinds() {
		tests = append(tests, Action{Kind: k, ApprovalID: longID, Revision: 999999999999999999})
	}
	for _, a := range tests {
		s := EncodeAction(a)
		if len(s) > MaxActionLen {
			t.Errorf("%q is %d bytes, over a platform limit", s, len(s))
		}
		got, err := ParseAction(s)
		if err != nil || got != a {
			t.Errorf("ParseAction(%q) = %+v, %v; want %+v", s, got, err, a)
		}
	}
}

func TestParseActionRejects(t *testing.T) {
	tests := map[string]string{
		"empty":              "",
		"other prefix":       "ab2|approve|a-1|1",
		"no prefix":          "approve|a-1|1",
		"unknown kind":       "ab1|approve_all|a-1|1",
		"kind case":          "ab1|Approve|a-1|1",
		"empty id":           "ab1|approve||1",
		"id charset":         "ab1|approve|a 1|1",
		"id slash":           "ab1|approve|a/1|1",
		"id too long":        "ab1|deny|" + strings.Repeat("a", 65) + "|1",
		"revision zero":      "ab1|approve|a-1|0",
		"revision negative":  "ab1|approve|a-1|-1",
		"revision plus":      "ab1|approve|a-1|+1",
		"revision leading 0": "ab1|approve|a-1|01",
		"revision hex":       "ab1|approve|a-1|0x1",
		"revision float":     "ab1|approve|a-1|1.0",
		"revision empty":     "ab1|approve|a-1|",
		"revision spaces":    "ab1|approve|a-1| 1",
		"revision too big":   "ab1|approve|a-1|1234567890123456789",
		"extra part":         "ab1|approve|a-1|1|x",
		"missing part":       "ab1|approve|a-1",
		"over 100":           "ab1|show_details|" + strings.Repeat("a", 64) + "|" + strings.Repeat("9", 19),
		"unicode digit":      "ab1|approve|a-1|١",
		"trailing newline":   "ab1|approve|a-1|1\n",
		"look with a count":  "ab1|look|a-1|1|0",
		"escalate, no count": "ab1|escalate|a-1|1",
		"count empty":        "ab1|escalate|a-1|1|",
		"count leading 0":    "ab1|escalate|a-1|1|01",
		"count negative":     "ab1|escalate|a-1|1|-1",
		"count too big":      "ab1|escalate|a-1|1|1000",
		"count float":        "ab1|escalate|a-1|1|1.0",
		"count and more":     "ab1|escalate|a-1|1|0|0",
		"only a prefix":      "ab1",
	}
	for name, s := range tests {
		if a, err := ParseAction(s); err == nil || !errors.Is(err, ErrBadAction) {
			t.Errorf("%s: ParseAction(%q) = %+v, %v; want ErrBadAction", name, s, a, err)
		}
	}
}

// FuzzParseAction: whatever ParseAction accepts is exactly what
// EncodeAction writes for it, so one action has one payload.
func FuzzParseAction(f *testing.F) {
	for _, s := range []string{"ab1|approve|a-1|1", "ab1|deny|a.b:c-d_|12", "ab1|show_args|x|0", "ab1||a|1", "ab1|approve|a-1|01",
		"ab1|escalate|a-1|1|0", "ab1|escalate|a-1|1|07", "ab1|look|a-1|1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAction(s)
		if err != nil {
			return
		}
		if got := EncodeAction(a); got != s {
			t.Errorf("ParseAction(%q) = %+v, which encodes as %q", s, a, got)
		}
		if a.Revision < 1 || len(s) > MaxActionLen || a.Escalations < 0 || a.Escalations > MaxEscalations {
			t.Errorf("accepted %q", s)
		}
	})
}
