package threads

import (
	"testing"
	"time"

	"approvalsbot/store"
)

// The answer to one person goes to their own user on the surface they
// clicked on, in the text stored rows have always held, and the handle
// their click left lapses after the surface's own lifetime.
func TestTellTargetAndHandleLifetime(t *testing.T) {
	t.Parallel()
	s := &Service{}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	row := &store.Approval{ID: "a-1", Tenant: "acme"}
	for _, tt := range []struct {
		surface, user, target string
		lifetime              time.Duration
	}{
		{"slack", "U0KEVIN", "slack:U0KEVIN", 30 * time.Minute},
		{"discord", "223344556677889900", "discord:user:223344556677889900", 15 * time.Minute},
		{"other", "someone", "other:someone", 15 * time.Minute}, // no known handle: the shortest lifetime
	} {
		p := s.tellRow(row, deciding{Surface: tt.surface, User: tt.user, Reply: "handle"}, "hello", now)
		if p.Target != tt.target || p.Kind != KindTell {
			t.Errorf("%s: tell row %s to %q, want %s to %q", tt.surface, p.Kind, p.Target, KindTell, tt.target)
		}
		if got := handleLifetime(tt.surface); got != tt.lifetime {
			t.Errorf("%s: handle lifetime %v, want %v", tt.surface, got, tt.lifetime)
		}
	}
	if got := shortestHandleLifetime(); got != 15*time.Minute {
		t.Errorf("shortest handle lifetime %v, want Discord's 15m", got)
	}
}
