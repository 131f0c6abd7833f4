package discord

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"approvalsbot/internal/golden"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TestGrantModalGolden: the grant dialog as Discord's modal, with both
// scopes offered and with "these values" withheld (go test
// ./adapters/discord -run Golden -update rewrites testdata/grant).
func TestGrantModalGolden(t *testing.T) {
	act := templates.Action{Kind: templates.ActionGrant, ApprovalID: "a-merge1", Revision: 1}
	base := threads.Dialog{Function: "acme_github.merge", Effect: "DESTRUCTIVE · reaches outside the tenant", Destructive: true}
	for name, offer := range map[string]threads.GrantOffer{
		"both-scopes": {Call: "this exact call of acme_github.merge (the same arguments)",
			Values: "acme_github.merge to acme/api only, method and pr may differ",
			TTLs:   []time.Duration{15 * time.Minute, time.Hour, 8 * time.Hour}, Uses: []int{1, 3, 5, 10, 20}},
		"call-only": {Call: "this exact call of acme_github.merge (the same arguments)",
			ValuesWhyNot: "values of repo were left out",
			TTLs:         []time.Duration{15 * time.Minute}, Uses: []int{1}},
	} {
		t.Run(name, func(t *testing.T) {
			d := base
			d.Grant = &offer
			got, err := json.MarshalIndent(grantModal(d, act), "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "grant", name+".discord.json"), string(got)+"\n", *update)
		})
	}
}

// TestGrantChoiceReadsTheSelects: the submission's three selects, where
// Discord nests them in labels, and a missing or doubled one refused.
func TestGrantChoiceReadsTheSelects(t *testing.T) {
	sel := func(id string, values ...string) grantSubmitted {
		return grantSubmitted{Type: 18, Component: &grantSubmitted{Type: componentStringSelect, CustomID: id, Values: values}}
	}
	got, err := grantChoice([]grantSubmitted{{Type: 10}, sel(grantScopeID, "values"), sel(grantTTLID, "1h0m0s"), sel(grantUsesID, "5")})
	if err != nil || got.Scope != "values" || got.TTL != time.Hour || got.Uses != 5 {
		t.Fatalf("%+v %v", got, err)
	}
	for _, bad := range [][]grantSubmitted{
		{sel(grantScopeID, "values"), sel(grantTTLID, "1h0m0s")},
		{sel(grantScopeID, "values", "call"), sel(grantTTLID, "1h0m0s"), sel(grantUsesID, "5")},
		{sel(grantScopeID, "values"), sel(grantTTLID, "an hour"), sel(grantUsesID, "5")},
	} {
		if _, err := grantChoice(bad); err == nil {
			t.Errorf("accepted %+v", bad)
		}
	}
}
