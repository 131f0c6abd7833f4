package app

import (
	"slices"
	"testing"

	"approvalsbot/adapters/backend"
	"approvalsbot/config"
)

// The file's backend.features and the client's are one list: a name the
// file takes that the client does not know would stop the bot at start.
func TestTheFileAndTheClientKnowTheSameFeatures(t *testing.T) {
	if got, want := config.Features(), backend.KnownFeatures(); !slices.Equal(got, want) {
		t.Fatalf("config knows %q, the backend client %q", got, want)
	}
}
