package approval_test

import (
	"testing"

	"approvalsbot/approval"
)

// TestContentRestricted: a private chat's call is restricted whatever
// content.restricted says, and only it is decided by content holders
// alone; a walled job's call is restricted but decided by anyone who may.
func TestContentRestricted(t *testing.T) {
	for _, c := range []struct {
		private, restricted, want, holdersOnly bool
	}{
		{false, false, false, false},
		{false, true, true, false},
		{true, false, true, true},
		{true, true, true, true},
	} {
		a := approval.Approval{Job: approval.Job{PrivateChat: c.private}, Content: approval.Content{Restricted: c.restricted}}
		if got := a.ContentRestricted(); got != c.want {
			t.Errorf("private_chat %v, restricted %v: ContentRestricted %v, want %v", c.private, c.restricted, got, c.want)
		}
		if got := a.DecidedByContentHolders(); got != c.holdersOnly {
			t.Errorf("private_chat %v, restricted %v: DecidedByContentHolders %v, want %v", c.private, c.restricted, got, c.holdersOnly)
		}
	}
}

// TestStoredFormOfAPrivateChatKeepsNoContent: a private chat's call
// whose content.restricted is false is stored as a restricted one is.
func TestStoredFormOfAPrivateChatKeepsNoContent(t *testing.T) {
	a := approval.Approval{ID: "a-1", Job: approval.Job{PrivateChat: true}, AgentSays: "my diary",
		Call: approval.Call{Arguments: []byte(`{"note":"my diary"}`)}}
	s, err := approval.StoredForm(&a)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Form.ContentWithheld || s.Call.Arguments != nil || s.AgentSays != "" {
		t.Fatalf("stored %+v", s)
	}
}
