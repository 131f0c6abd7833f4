package templates_test

import (
	"path/filepath"
	"strings"
	"testing"

	"approvalsbot/internal/golden"
	"approvalsbot/templates"
	"approvalsbot/templates/templatestest"
)

// TestTurnGolden renders each turn case as the log shows it, and the
// first call's own card as its escalation mail shows it (mail shows each
// call on its own), comparing with testdata/turn (go test ./templates
// -run TurnGolden -update).
func TestTurnGolden(t *testing.T) {
	r := newRenderer(t)
	for _, c := range templatestest.TurnCases(t) {
		got := r.TurnText(templates.BuildTurn(c.Input))
		golden.Check(t, filepath.Join("testdata", "turn", c.Name+".txt"), got, *update)
	}
	first := templatestest.TurnCases(t)[0].Input.Rows[0].Input
	mail := r.Email(templates.Build(first))
	golden.Check(t, filepath.Join("testdata", "turn", "member.email.txt"), mail.Subject+"\n\n"+mail.Text, *update)
}

// TestBuildTurnOffers: Approve all N only when every call is here and
// waiting, and none blocks; Deny all while any waits; nothing once all
// are decided; the reason is said when Approve all is not offered.
func TestBuildTurnOffers(t *testing.T) {
	t.Parallel()
	want := map[string]struct {
		labels []string
		note   string
	}{
		"waiting":     {[]string{"Deny all", "Approve all 3"}, ""},
		"arriving":    {[]string{"Deny all"}, "not every call is here yet"},
		"destructive": {[]string{"Deny all"}, "acme_github.merge: it is destructive."},
		"reasked":     {[]string{"Deny all", "Approve all 3"}, ""},
		"deciding":    {nil, ""},
		"approved":    {nil, ""},
	}
	for _, c := range templatestest.TurnCases(t) {
		tc := templates.BuildTurn(c.Input)
		var labels []string
		for _, b := range tc.Buttons {
			labels = append(labels, b.Label)
			if _, err := templates.ParseTurnAction(b.Payload); err != nil {
				t.Errorf("%s: %s carries %q: %v", c.Name, b.Label, b.Payload, err)
			}
		}
		w := want[c.Name]
		if strings.Join(labels, ",") != strings.Join(w.labels, ",") || !strings.Contains(tc.NoApproveAll, w.note) || (w.note == "" && tc.NoApproveAll != "") {
			t.Errorf("%s: buttons %v, note %q; want %v, %q", c.Name, labels, tc.NoApproveAll, w.labels, w.note)
		}
		if !strings.Contains(tc.Note, "Denying any call ends the whole turn") {
			t.Errorf("%s: note %q", c.Name, tc.Note)
		}
	}
}
