package app_test

import (
	"testing"

	"approvalsbot/adapters/decidepage"
	"approvalsbot/config"
)

// The file's decoder refuses a link secret the page's signer would
// refuse, so a configuration that loads never fails at the first mail.
func TestLinkSecretMinimumAgrees(t *testing.T) {
	if config.MinHMACKey != decidepage.MinSecret {
		t.Fatalf("config.MinHMACKey = %d, decidepage.MinSecret = %d", config.MinHMACKey, decidepage.MinSecret)
	}
}
