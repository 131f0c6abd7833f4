package templates_test

import (
	"errors"
	"strings"
	"testing"

	"approvalsbot/templates"
)

func TestTurnActionRoundTrip(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 64)
	check := templates.TurnCheck([]templates.TurnMember{{ApprovalID: long, Revision: 1 << 40}, {ApprovalID: "a-2", Revision: 3}})
	for _, a := range []templates.TurnAction{
		{Approve: true, ApprovalID: long, Check: check},
		{ApprovalID: "a-7Q2K9", Check: check},
	} {
		s := templates.EncodeTurnAction(a)
		if len(s) > templates.MaxActionLen {
			t.Errorf("%q: %d bytes, over Discord's custom_id", s, len(s))
		}
		if !templates.IsTurnAction(s) {
			t.Errorf("%q: not seen as a turn action", s)
		}
		got, err := templates.ParseTurnAction(s)
		if err != nil || got != a {
			t.Errorf("ParseTurnAction(%q) = %+v, %v; want %+v", s, got, err, a)
		}
		if _, err := templates.ParseAction(s); err == nil {
			t.Errorf("ParseAction took the turn action %q: a single decision must never read it", s)
		}
	}
}

func TestTurnCheckBindsEveryRevision(t *testing.T) {
	t.Parallel()
	base := []templates.TurnMember{{"a-1", 1}, {"a-2", 1}, {"a-3", 1}}
	c := templates.TurnCheck(base)
	changed := [][]templates.TurnMember{
		{{"a-1", 1}, {"a-2", 2}, {"a-3", 1}},
		{{"a-1", 1}, {"a-2", 1}},
		{{"a-2", 1}, {"a-1", 1}, {"a-3", 1}},
		{{"a-1", 1}, {"a-2", 1}, {"a-3", 1}, {"a-4", 1}},
		{{"a-1", 11}, {"a-2", 1}, {"a-3", 1}},
	}
	for _, m := range changed {
		if templates.TurnCheck(m) == c {
			t.Errorf("%v has the check of %v", m, base)
		}
	}
}

func TestParseTurnActionRejects(t *testing.T) {
	t.Parallel()
	for _, s := range []string{
		"ab1|turn_approve|a-1",
		"ab1|turn_approve|a-1|0123456789abcdeF",
		"ab1|turn_approve|a-1|0123456789abcde",
		"ab1|turn_approve|a 1|0123456789abcdef",
		"ab1|turn_maybe|a-1|0123456789abcdef",
		"ab2|turn_deny|a-1|0123456789abcdef",
		"ab1|turn_deny|a-1|0123456789abcdef|x",
		"ab1|approve|a-1|1",
	} {
		if _, err := templates.ParseTurnAction(s); !errors.Is(err, templates.ErrBadAction) {
			t.Errorf("ParseTurnAction(%q) = %v, want ErrBadAction", s, err)
		}
	}
}
