package store_test

import (
	"testing"

	"approvalsbot/approval"
	"approvalsbot/store"
)

// The SQL names the pending state as a literal ('pending'), because the
// partial indexes are used only when a query repeats their predicate
// literally. This pins that literal to the domain's constant.
func TestPendingLiteralIsTheDomainsPendingState(t *testing.T) {
	if approval.StatePending != "pending" {
		t.Fatalf("approval.StatePending = %q; the store's SQL and migrations say 'pending'", approval.StatePending)
	}
}

func TestMigrationsAreWellFormed(t *testing.T) {
	ms, err := store.Migrations()
	if err != nil {
		t.Fatalf("Migrations: %v", err)
	}
	for i, m := range ms {
		if m.Version != i+1 {
			t.Errorf("migration %s has version %d, want %d (numbered from 1 without gaps)", m.Name, m.Version, i+1)
		}
		if m.SQL == "" {
			t.Errorf("migration %s is empty", m.Name)
		}
	}
}
