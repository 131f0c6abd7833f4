package slack

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"approvalsbot/internal/golden"
	"approvalsbot/templates"
	"approvalsbot/threads"
)

// TestGrantModalGolden: the grant dialog as Block Kit, with both scopes
// offered and with "these values" withheld (go test ./adapters/slack
// -update rewrites testdata/grant).
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
			m := grantModal(d, act, `{"a":"ab1|grant|a-merge1|1"}`)
			got, err := json.MarshalIndent(m, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata", "grant", name+".slack.json"), string(got)+"\n", *update)
		})
	}
}
